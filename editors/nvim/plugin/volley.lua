-- Volley for Neovim: `.http`/`.rest` files are filetype `http`, served by `volley lsp`.
-- Call `require('volley').setup({...})` to change the defaults; without it the plugin
-- starts with them the first time an `http` buffer opens.
if vim.g.loaded_volley then
  return
end
vim.g.loaded_volley = true

vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
  pattern = { '*.http', '*.rest' },
  callback = function(args)
    vim.bo[args.buf].filetype = 'http'
  end,
})

vim.api.nvim_create_autocmd('FileType', {
  pattern = 'http',
  callback = function(args)
    if vim.g.volley_treesitter ~= false then
      require('volley.treesitter').start(args.buf)
    end
    -- `vim.g.volley_autostart = false` when nvim-lspconfig starts the server.
    if vim.g.volley_autostart ~= false then
      require('volley').attach(args.buf)
    end
  end,
})

vim.api.nvim_create_user_command('VolleySend', function()
  require('volley').send()
end, { desc = 'Send the request under the cursor' })

vim.api.nvim_create_user_command('VolleySendAll', function()
  require('volley').send_all()
end, { desc = 'Send every request of the file' })

vim.api.nvim_create_user_command('VolleyProfile', function(command)
  require('volley').profile(command.args ~= '' and command.args or nil)
end, {
  nargs = '?',
  desc = 'Show or select the active configuration profile (`none` selects none)',
  complete = function(prefix)
    return require('volley').profile_names(prefix)
  end,
})
