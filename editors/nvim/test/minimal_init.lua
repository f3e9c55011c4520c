-- The test's only configuration: this plugin on the runtimepath, the volley binary
-- under test as the server.
local root = os.getenv('VOLLEY_TEST_ROOT')
vim.opt.runtimepath:prepend(root .. '/editors/nvim')
vim.opt.swapfile = false
vim.cmd('runtime plugin/volley.lua')
require('volley').setup({ cmd = { os.getenv('VOLLEY_TEST_BIN'), 'lsp' }, stream_window_ms = 200 })
