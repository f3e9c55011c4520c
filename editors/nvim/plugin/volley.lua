-- Volley for Neovim: `.http`/`.rest` files are filetype `http`, served by `volley lsp`.
-- Call `require('volley').setup({...})` to change the defaults; without it the plugin
-- starts with them the first time an `http` buffer opens. The commands are
-- buffer-local (lua/volley/init.lua, `buffer_commands`), but for :VolleyScratch, which
-- opens an `http` buffer from anywhere.
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
    require('volley').setup_buffer(args.buf)
  end,
})

vim.api.nvim_create_user_command('VolleyScratch', function()
  require('volley').scratch()
end, { desc = 'Open a scratch .http buffer (never written)' })
