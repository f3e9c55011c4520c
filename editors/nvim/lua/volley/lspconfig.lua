-- A server definition in nvim-lspconfig's format, for people who start servers with it:
--
--   local configs = require('lspconfig.configs')
--   configs.volley = require('volley.lspconfig')
--   require('lspconfig').volley.setup({})
--
-- (Keep the plugin on the runtimepath for `:VolleySend` and the response split.)
return {
  default_config = {
    cmd = { 'volley', 'lsp' },
    filetypes = { 'http' },
    root_dir = function(path)
      return require('volley').root_dir(path)
    end,
    init_options = { profile = nil },
    single_file_support = true,
  },
  docs = {
    description = 'volley lsp: diagnostics, completion, hover and code lenses that send requests for .http files',
  },
}
