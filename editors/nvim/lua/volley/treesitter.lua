-- Highlighting with the volley_http tree-sitter grammar, when its parser is on the
-- runtimepath (`parser/volley_http.so`: `scripts/build-parser`, or an nvim-treesitter
-- install of the grammar) and this Neovim can load it. Without it, nothing happens: the
-- language server still works.
local M = {}

--- The parser is generated for tree-sitter ABI 15, which Neovim loads from 0.11 on.
M.ABI = 15

--- `true` when this Neovim can load the parser's ABI.
function M.supported()
  local version = vim.treesitter.language_version
  if type(version) == 'function' then
    version = version()
  end
  return (version or 0) >= M.ABI
end

--- Starts tree-sitter highlighting of `buf`; `true` when it did.
function M.start(buf)
  local parsers = vim.api.nvim_get_runtime_file('parser/volley_http.so', false)
  if #parsers == 0 or not M.supported() then
    return false
  end
  local ok, err = pcall(function()
    if vim.treesitter.language.register then
      vim.treesitter.language.register('volley_http', 'http')
    end
    if vim.treesitter.start then
      vim.treesitter.start(buf, 'volley_http')
    else
      -- Neovim 0.7: load the parser by path and highlight by hand.
      vim.treesitter.require_language('volley_http', parsers[1])
      vim.treesitter.highlighter.new(vim.treesitter.get_parser(buf, 'volley_http'))
    end
  end)
  if not ok then
    vim.notify('volley: tree-sitter highlighting is off: ' .. tostring(err), vim.log.levels.WARN)
  end
  return ok
end

return M
