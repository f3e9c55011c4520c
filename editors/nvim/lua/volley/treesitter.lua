-- Highlighting with the volley_http tree-sitter grammar, when its parser is on the
-- runtimepath (`parser/volley_http.so`: `scripts/build-parser`, or an nvim-treesitter
-- install of the grammar) and this Neovim can load it. Without a parser nothing is said;
-- a parser that does not load (built for another ABI, or not a parser) is said once per
-- session. Either way the caller falls back to the syntax file (syntax/volley_http.vim),
-- and `M.why` keeps the reason.
local M = {}

-- Capture names of queries/volley_http/highlights.scm that Neovim 0.7's table of
-- captures does not know (0.8+ highlights `@capture` groups instead).
local legacy_groups = {
  ['attribute'] = 'PreProc',
  ['variable'] = 'Identifier',
  ['markup.heading'] = 'Title',
  ['markup.raw'] = 'String',
  ['keyword.import'] = 'Include',
  ['function.method'] = 'Function',
}

local loaded -- nil: not tried yet; else { ok, err }

--- Loads the parser once; returns `true`, or `false` and why not (no parser found, or
--- one this Neovim cannot load: the committed grammar is ABI 14, which Neovim 0.7 and
--- later load, but an older build or another install may not be).
function M.load()
  if loaded then
    return loaded[1], loaded[2]
  end
  local parsers = vim.api.nvim_get_runtime_file('parser/volley_http.so', false)
  if #parsers == 0 then
    loaded = { false, 'no parser/volley_http.so on the runtimepath (run editors/nvim/scripts/build-parser)' }
    return loaded[1], loaded[2]
  end
  local ok, err = pcall(function()
    if vim.treesitter.language.add then
      vim.treesitter.language.add('volley_http', { path = parsers[1] })
    else
      vim.treesitter.require_language('volley_http', parsers[1])
    end
  end)
  if not ok then
    -- The first line of the error, without the Lua file and line it was raised at.
    local reason = tostring(err):gsub('\n.*', ''):gsub('^%S*:%d+: ', '')
    err = string.format('%s does not load on this Neovim (%s): highlighting with the syntax file; '
      .. 'rebuild it with editors/nvim/scripts/build-parser', parsers[1], reason)
    -- Said once, after the file opened (a message while it opens could wait for ENTER).
    vim.schedule(function()
      require('volley')._notify(err, vim.log.levels.WARN)
    end)
  end
  loaded = { ok, err }
  return loaded[1], loaded[2]
end

--- Starts tree-sitter highlighting of `buf`; `true` when it did, else `false` and the
--- reason (also kept in `M.why`).
function M.start(buf)
  local ok, err = M.load()
  if ok then
    ok, err = pcall(function()
      if vim.treesitter.language.register then
        vim.treesitter.language.register('volley_http', 'http')
      end
      if vim.treesitter.start then
        vim.treesitter.start(buf, 'volley_http')
      else
        -- Neovim 0.7: map the capture names it does not know, then highlight by hand.
        local map = vim.treesitter.highlighter.hl_map
        for capture, group in pairs(legacy_groups) do
          local current = map and rawget(map, capture)
          if map and (current == nil or current == '__notfound') then
            rawset(map, capture, group)
          end
        end
        vim.treesitter.highlighter.new(vim.treesitter.get_parser(buf, 'volley_http'))
      end
    end)
  end
  M.why = not ok and tostring(err) or nil
  return ok, M.why
end

return M
