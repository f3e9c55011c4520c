-- The stored response history: every response the language server sends (and `volley
-- run --history` runs) is kept by the server, per project, the last ones of each
-- request (docs/lsp.md, `volley.history`). Here: pick one (`vim.ui.select`, newest
-- first) and open it, pick two and diff them in a tab of their own, compare the last
-- response of a request with the one before in one action, and clear the store. An
-- entry opens as the text file the server writes for it (status line, headers, blank
-- line, body pretty-printed when JSON), with the response buffer's highlighting.
local M = {}

local function volley()
  return require('volley')
end

local function notify(message, level)
  volley()._notify(message, level)
end

local present = require('volley.text').present

-- A moment of the server (`2026-11-29T08:00:00.123Z`, UTC) in local time.
local function local_time(at)
  local year, month, day, hour, min, sec = tostring(at or ''):match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
  if not year then
    return tostring(at or '?')
  end
  local fields = { year = tonumber(year), month = tonumber(month), day = tonumber(day), hour = tonumber(hour),
    min = tonumber(min), sec = tonumber(sec), isdst = false }
  -- os.time reads fields as local time: shift by this zone's offset from UTC.
  local now = os.time()
  local offset = os.difftime(now, os.time(os.date('!*t', now)))
  return os.date('%Y-%m-%d %H:%M:%S', os.time(fields) + offset)
end

--- An entry on one line: `2026-11-29 09:00:00  200 OK  POST login  12 ms` (the file's
--- name too with `with_file`; `volley run` for the terminal's runs).
function M.label(entry, with_file)
  local parts = { local_time(entry.at) }
  local error = present(entry.error)
  if present(entry.status) then
    parts[#parts + 1] = vim.trim(tostring(entry.status) .. ' ' .. tostring(present(entry.statusText) or ''))
  elseif error then
    parts[#parts + 1] = string.format('error[%s]', tostring(present(error.kind) or '?'))
  end
  local request = present(entry.request) or {}
  local what = present(request.name) or present(request.url) or ('request #' .. ((tonumber(request.index) or 0) + 1))
  parts[#parts + 1] = vim.trim((present(request.method) or '') .. ' ' .. tostring(what))
  if present(entry.durationMs) then
    parts[#parts + 1] = string.format('%.0f ms', entry.durationMs)
  end
  if with_file and present(entry.file) then
    parts[#parts + 1] = vim.fn.fnamemodify(entry.file, ':t')
  end
  if entry.source == 'cli' then
    parts[#parts + 1] = '(volley run)'
  end
  return table.concat(parts, '  ')
end

--- Asks the server for the stored entries (`query`: `{uri?, index?, name?, limit?}`),
--- newest first; `on_entries(entries)`.
function M.entries(query, buf, on_entries)
  volley().execute('volley.history', query, buf, function(result)
    on_entries(type(result) == 'table' and result.entries or {})
  end)
end

-- The entries :VolleyHistory and :VolleyHistoryDiff offer: the file's (`all`: the
-- project's), or says there are none.
local function listed(all, on_entries)
  local buf = volley().source_buf()
  local query = all and vim.empty_dict() or { uri = vim.uri_from_bufnr(buf) }
  M.entries(query, buf, function(entries)
    if #entries == 0 then
      notify(all and 'no stored responses' or 'no stored responses of this file',
        vim.log.levels.WARN)
      return
    end
    on_entries(entries, buf)
  end)
end

-- The server's file of an entry: `on_file(path, entry)`.
local function file_of(entry, buf, on_file)
  volley().execute('volley.historyEntry', { id = entry.id }, buf, function(result)
    on_file(result.path, present(result.entry) or entry)
  end)
end

--- Gives the buffer of an entry's file the response buffer's highlighting (its body a
--- region by its content type, when not too large to highlight), makes it read-only,
--- and (0.8+) names the entry in the winbar of `win`.
function M.decorate(buf, win, entry)
  local response = require('volley.response')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local blank, content_type
  for number, line in ipairs(lines) do
    if line == '' then
      blank = number
      break
    end
    local value = line:match('^[Cc]ontent%-[Tt]ype:%s*(.*)$')
    if value then
      content_type = value
    end
  end
  local regions = {}
  local kind = response.body_kind({ bodyEncoding = 'text', contentType = content_type })
  local bytes = vim.fn.getfsize(vim.api.nvim_buf_get_name(buf))
  if kind and blank and blank < #lines and bytes >= 0 and bytes <= response.format_max_bytes then
    regions[1] = { blank + 1, #lines, kind }
  end
  vim.b[buf].volley_bodies = regions
  vim.bo[buf].filetype = 'volley_response'
  vim.bo[buf].readonly = true
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  if win and vim.fn.exists('+winbar') == 1 then
    vim.wo[win].winbar = (M.label(entry, true):gsub('%%', '%%%%'))
  end
end

-- Opens `path` in the current window (`command`: `edit`, `vsplit`…) for `entry`.
local function show(command, path, entry)
  vim.cmd(command .. ' ' .. vim.fn.fnameescape(path))
  M.decorate(vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win(), entry)
end

--- Opens a stored entry in a split.
function M.open(entry, buf)
  file_of(entry, buf or volley().source_buf(), function(path, full)
    require('volley.actions').split(path)
    M.decorate(vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win(), full)
  end)
end

--- Diffs two stored entries in a new tab: `left` (the older) and `right` side by side
--- in diff mode.
function M.diff(left, right, buf)
  buf = buf or volley().source_buf()
  if left.at and right.at and tostring(left.at) > tostring(right.at) then
    left, right = right, left
  end
  file_of(left, buf, function(left_path, left_entry)
    file_of(right, buf, function(right_path, right_entry)
      show('tabedit', left_path, left_entry)
      vim.cmd('diffthis')
      show('rightbelow vsplit', right_path, right_entry)
      vim.cmd('diffthis')
      -- The cursor on the newer one, at the top.
      vim.cmd('normal! gg')
    end)
  end)
end

--- :VolleyHistory: picks a stored response of the file (`all`: of the project), newest
--- first, and opens it in a split.
function M.pick(all)
  listed(all, function(entries, buf)
    vim.ui.select(entries, {
      prompt = 'Volley history',
      format_item = function(entry)
        return M.label(entry, all)
      end,
    }, function(entry)
      if entry then
        M.open(entry, buf)
      end
    end)
  end)
end

--- :VolleyHistoryDiff: picks two stored responses (the second among the others) and
--- diffs them.
function M.pick_diff(all)
  listed(all, function(entries, buf)
    if #entries < 2 then
      notify('only one stored response: nothing to compare it with', vim.log.levels.WARN)
      return
    end
    local function format(entry)
      return M.label(entry, all)
    end
    vim.ui.select(entries, { prompt = 'Volley history: diff', format_item = format }, function(first)
      if not first then
        return
      end
      local others = vim.tbl_filter(function(entry)
        return entry.id ~= first.id
      end, entries)
      vim.ui.select(others, { prompt = 'Volley history: diff with', format_item = format }, function(second)
        if second then
          M.diff(first, second, buf)
        end
      end)
    end)
  end)
end

-- The request :VolleyCompare is about: `{uri, index}`, its buffer, and the id of the
-- stored entry of the response shown, if any. In a response buffer the request of the
-- response shown (in a Send All: the one whose section holds the cursor); in a `.http`
-- buffer, the one under the cursor.
local function compared_request()
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].filetype == 'volley_response' then
    local outcome, source = require('volley.window').target(function(outcome)
      return type(outcome.request) == 'table'
    end)
    if not outcome or not source then
      return nil, nil, nil, 'nothing has been sent yet'
    end
    return { uri = vim.uri_from_bufnr(source), index = tonumber(outcome.request.index) or 0 }, source,
      present(outcome.historyId)
  end
  local request = require('volley.requests').at(buf, vim.api.nvim_win_get_cursor(0)[1] - 1)
  if not request then
    return nil, nil, nil, 'no request under the cursor'
  end
  return { uri = vim.uri_from_bufnr(buf), index = request.index }, buf, nil
end

--- :VolleyCompare: diffs the last stored response of the request under the cursor (or
--- the response shown, from the response window) with the one stored before it.
function M.compare()
  local query, buf, id, why = compared_request()
  if not query then
    notify(why, vim.log.levels.WARN)
    return
  end
  M.entries(query, buf, function(entries)
    local position = 1
    for index, entry in ipairs(entries) do
      if id and entry.id == id then
        position = index
      end
    end
    local newer, older = entries[position], entries[position + 1]
    if not older then
      notify(newer and 'only one stored response of this request: send it again to compare'
        or 'no stored responses of this request', vim.log.levels.WARN)
      return
    end
    M.diff(older, newer, buf)
  end)
end

--- :VolleyHistoryClear: empties the store of the file (`all`: of the project).
function M.clear(all, on_done)
  local buf = volley().source_buf()
  local scope = all and vim.empty_dict() or { uri = vim.uri_from_bufnr(buf) }
  volley().execute('volley.historyClear', scope, buf, function(result)
    local cleared = tonumber(type(result) == 'table' and result.cleared) or 0
    notify(string.format('cleared %d stored response(s)%s', cleared, all and '' or ' of this file'))
    if on_done then
      on_done(cleared)
    end
  end)
end

return M
