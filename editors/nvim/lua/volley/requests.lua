-- Where the requests of a `.http` buffer are, for the motions (`]r`, `[r`), the send of
-- a visual selection and the signs on request lines. The request lines come from the
-- language server (`textDocument/documentSymbol`: one symbol per request, in order);
-- a request owns its block, from its `###` line to the next (lines starting `###` are
-- separators, whatever surrounds them), as the server's `volley.send` reads a cursor.
local M = {}

local namespace = vim.api.nvim_create_namespace('volley_requests')

--- The requests of `buf`, in order: `{index, line, first, last}` (0-based: the request
--- line, and the first and last line of its block). Empty without a server.
function M.list(buf)
  local volley = require('volley')
  local client = volley.client(buf)
  if not client then
    return {}
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) } }
  local answer = volley._request_sync(client, 'textDocument/documentSymbol', params, 2000, buf)
  local symbols = answer and answer.result or {}
  local separators = {}
  for number, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:sub(1, 3) == '###' then
      separators[#separators + 1] = number - 1
    end
  end
  local count = vim.api.nvim_buf_line_count(buf)
  local requests = {}
  for index, symbol in ipairs(symbols) do
    local line = symbol.selectionRange.start.line
    local first, last = 0, count - 1
    for _, separator in ipairs(separators) do
      if separator <= line then
        first = separator
      else
        last = separator - 1
        break
      end
    end
    requests[#requests + 1] = { index = index - 1, line = line, first = first, last = last }
  end
  return requests
end

--- The requests whose blocks the lines `first`..`last` (0-based) touch.
function M.touched(buf, first, last)
  local touched = {}
  for _, request in ipairs(M.list(buf)) do
    if request.first <= last and request.last >= first then
      touched[#touched + 1] = request
    end
  end
  return touched
end

--- The request that owns line `line` (0-based), if any.
function M.at(buf, line)
  return M.touched(buf, line, line)[1]
end

--- Moves the cursor to the request line `count` requests after it (`count` < 0: before).
function M.jump(count)
  local buf = vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(0)[1] - 1
  local lines = {}
  for _, request in ipairs(M.list(buf)) do
    lines[#lines + 1] = request.line
  end
  local target
  if count > 0 then
    for _, line in ipairs(lines) do
      if line > cursor then
        target = line
        count = count - 1
        if count == 0 then
          break
        end
      end
    end
  else
    for i = #lines, 1, -1 do
      if lines[i] < cursor then
        target = lines[i]
        count = count + 1
        if count == 0 then
          break
        end
      end
    end
  end
  if target then
    vim.cmd("normal! m'")
    vim.api.nvim_win_set_cursor(0, { target + 1, 0 })
  end
end

local signs = {
  sending = { '…', 'Comment' },
  passed = { '✓', 'String' },
  failed = { '✗', 'WarningMsg' },
}

-- The text of each sign placed, by buffer and extmark (Neovim 0.7 does not give it back).
local placed = {}

--- Marks the request line `line` (0-based) of `buf` with a sign: `sending`, `passed` or
--- `failed` (replacing the one there); `nil` clears it.
function M.sign(buf, line, kind)
  if not vim.api.nvim_buf_is_valid(buf) or line >= vim.api.nvim_buf_line_count(buf) then
    return
  end
  placed[buf] = placed[buf] or {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, namespace, { line, 0 }, { line, -1 }, {})) do
    vim.api.nvim_buf_del_extmark(buf, namespace, mark[1])
    placed[buf][mark[1]] = nil
  end
  if kind then
    local id = vim.api.nvim_buf_set_extmark(buf, namespace, line, 0,
      { sign_text = signs[kind][1], sign_hl_group = signs[kind][2] })
    placed[buf][id] = signs[kind][1]
  end
end

--- The signs of `buf`: `{line (0-based), text}` per sign, in line order.
function M.signs(buf)
  local found = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, namespace, 0, -1, {})) do
    found[#found + 1] = { mark[2], (placed[buf] or {})[mark[1]] }
  end
  return found
end

return M
