-- The response window: one scratch buffer, `volley://response`, in a split or a float,
-- that keeps the sends of the session as its own history. Buffer-local keys switch its
-- view (lua/volley/response.lua builds the lines), step through that history, jump from
-- a Send All's summary to a request, filter the body with jq (lua/volley/filter.lua),
-- send again, compare with the stored response before (lua/volley/history.lua), open
-- the whole body of a cut one, cancel and close; its winbar names the request, the
-- status, the time, the active profile, the jq filter and the view. Large JSON bodies
-- (or the preview of a cut one) are re-indented a slice at a time, between which the
-- editor answers keys.
local response = require('volley.response')
local text_lines = require('volley.text')
local filter = require('volley.filter')

local M = {}

local buffer_name = 'volley://response'

-- The keys of the response buffer (`response_keymaps` of setup), by action.
M.default_keys = {
  all = 'A',
  body = 'B',
  headers = 'H',
  verbose = 'V',
  stats = 'S',
  script = 'O',
  filter = 'F',
  new_filter = 'f',
  previous = '[',
  next = ']',
  jump = '<CR>',
  rerun = 'R',
  compare = 'C',
  open_body = 'gf',
  cancel = '<C-c>',
  close = 'q',
}

-- The sends shown in this buffer, oldest first (each `{outcomes, cancelled, send,
-- profile, label, at}`), the one shown, the view, where a Send All's sections are, and
-- what is being sent.
local state = { entries = {}, index = 0, view = nil, sections = {}, sending = nil }

-- The most sends the window keeps (each may hold bodies of up to 4 MiB).
local HISTORY_CAP = 50

-- Bodies up to this size are made into lines at each drawing; the lines of larger ones
-- are kept, and a JSON body is re-indented a slice at a time.
local AT_ONCE_BYTES = 64 * 1024
-- How much of a body one slice re-indents (a few milliseconds of work).
local SLICE_BYTES = 32 * 1024

-- The lines of large bodies by response (forgotten with the response), and the JSON
-- bodies being re-indented.
local prepared = setmetatable({}, { __mode = 'k' })
local formatting = setmetatable({}, { __mode = 'k' })

local function options()
  return require('volley').options()
end

local render

-- `true` when the send shown holds `received`.
local function shows(received)
  local entry = state.entries[state.index]
  for _, outcome in ipairs(entry and entry.outcomes or {}) do
    if outcome.response == received then
      return true
    end
  end
  return false
end

-- Re-indents a large JSON body a slice per event-loop turn, then draws again.
local function format_later(received)
  if formatting[received] then
    return
  end
  formatting[received] = true
  local text = response.shown_text(received)
  local job = coroutine.create(function()
    return text_lines.json_lines(text, SLICE_BYTES)
  end)
  local function step()
    local ok, lines = coroutine.resume(job)
    if coroutine.status(job) ~= 'dead' then
      vim.defer_fn(step, 0)
      return
    end
    formatting[received] = nil
    prepared[received] = ok and lines or text_lines.split(text)
    if shows(received) then
      render()
    end
  end
  vim.defer_fn(step, 0)
end

-- The lines of a large body: those kept, else its text split (and kept), or for a JSON
-- body to re-indent a line saying it is under way (starting it). Small bodies: `nil`,
-- response.lua makes their lines.
local function body_lines(received)
  if prepared[received] then
    return prepared[received]
  end
  if received.bodyEncoding ~= 'text' then
    return nil
  end
  local text = response.shown_text(received)
  if #text <= AT_ONCE_BYTES then
    return nil
  end
  if not response.formats(received) then
    prepared[received] = text_lines.split(text)
    return prepared[received]
  end
  format_later(received)
  return { string.format('(re-indenting the JSON body, %d bytes…)', #text) }
end

-- `%` is special in a winbar.
local function escape(text)
  return (text:gsub('%%', '%%%%'))
end

-- The winbar of the response window: what is being sent, or the request (or Send All),
-- its outcome, the profile it was sent with, the view, and where the send is in the
-- window's history.
local function winbar()
  if state.sending then
    return 'sending ' .. escape(state.sending) .. '…'
  end
  local entry = state.entries[state.index]
  local parts = {}
  if entry then
    local title = entry.label or response.title(entry.outcomes[1])
    parts[#parts + 1] = '%#Title#' .. escape(title) .. '%*'
    parts[#parts + 1] = escape((response.summary(entry.outcomes, entry.cancelled, entry.label ~= nil)))
    parts[#parts + 1] = 'profile ' .. escape(entry.profile or 'none')
    local shown = #entry.outcomes == 1 and type(entry.outcomes[1].response) == 'table'
      and filter.shown(entry.outcomes[1].response)
    if shown then
      parts[#parts + 1] = 'jq ' .. escape(tostring(shown.expression):gsub('%s*\n%s*', ' '))
        .. (shown.error and shown.error ~= vim.NIL and ' ✗' or '')
    end
    parts[#parts + 1] = 'view ' .. state.view
    parts[#parts + 1] = string.format('%d/%d', state.index, #state.entries)
  end
  return table.concat(parts, ' · ')
end

local function set_winbar(buf)
  if vim.fn.exists('+winbar') == 0 then
    return
  end
  local bar = winbar()
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.wo[win].winbar = bar
  end
end

-- Opens a window on `buf` where the options say (a split on the right by default, or a
-- float); a split leaves the cursor where it was, a float takes it.
local function open(buf)
  local position = options().response.position
  if position == 'float' then
    local width = math.max(40, math.floor(vim.o.columns * 0.8))
    local height = math.max(10, math.floor((vim.o.lines - 2) * 0.8))
    vim.api.nvim_open_win(buf, true, {
      relative = 'editor',
      width = width,
      height = height,
      row = math.floor((vim.o.lines - 2 - height) / 2),
      col = math.floor((vim.o.columns - width) / 2),
      border = 'rounded',
    })
    return
  end
  local split = ({ right = 'botright vsplit', left = 'topleft vsplit', below = 'botright split',
    above = 'topleft split' })[position] or 'botright vsplit'
  local current = vim.api.nvim_get_current_win()
  vim.cmd(split)
  vim.api.nvim_win_set_buf(0, buf)
  vim.api.nvim_set_current_win(current)
end

local map_keys

-- Puts `lines` into the scratch buffer `name` (created once, reused), filetype
-- `volley_response` with the body regions `regions`, shown with its view at the top
-- (`keep`: with the cursor where it was).
local function display(lines, regions, name, keep)
  name = name or buffer_name
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    require('volley').buffer_commands(buf, false)
    if name == buffer_name then
      map_keys(buf)
    end
  end
  local cursors = {}
  for _, win in ipairs(keep and vim.fn.win_findbuf(buf) or {}) do
    cursors[win] = vim.api.nvim_win_get_cursor(win)
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.b[buf].volley_bodies = regions or {}
  -- Setting the filetype (again) reloads the syntax, with the new body regions.
  vim.bo[buf].filetype = 'volley_response'
  if vim.fn.bufwinid(buf) == -1 then
    open(buf)
  end
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if cursors[win] then
      vim.api.nvim_win_set_cursor(win, { math.min(cursors[win][1], #lines), cursors[win][2] })
    else
      vim.api.nvim_win_set_cursor(win, { 1, 0 })
      vim.api.nvim_win_call(win, function()
        vim.cmd('normal! zt')
      end)
    end
  end
  if name == buffer_name then
    set_winbar(buf)
  end
  return buf
end

-- Draws the send at `state.index` in `state.view`, and makes it the one the commands
-- (save, rerun, copy as curl, sent, filter) act on; `keep`: the cursor stays where it
-- was.
render = function(keep)
  local entry = state.entries[state.index]
  if not entry then
    return
  end
  local volley = require('volley')
  volley.shown = entry
  volley.last = entry.outcomes
  local lines, regions, sections =
    response.compose(entry.outcomes, state.view, entry.cancelled, entry.label ~= nil, body_lines, filter.of)
  state.sections = sections
  return display(lines, regions, nil, keep)
end

--- Shows a send (`entry`: `{outcomes, cancelled, send, profile, label}`; a `label`
--- (`Send All of api.http`) for several requests) and keeps it in the window's history.
function M.push(entry)
  entry.at = entry.at or os.date('%H:%M:%S')
  state.entries[#state.entries + 1] = entry
  while #state.entries > HISTORY_CAP do
    table.remove(state.entries, 1)
  end
  state.index = #state.entries
  state.view = state.view or options().response.view
  state.sending = nil
  return render()
end

--- Shows the send shown last again; `false` when there is none.
function M.show_current()
  if state.index == 0 then
    return false
  end
  state.sending = nil
  render()
  return true
end

--- Says in the window that `what` is being sent (`[` and `]` still show the others).
function M.sending(what)
  state.sending = what
  local cancel = options().response_keymaps and options().response_keymaps.cancel
  display({ '# ' .. what, 'sending…' .. (cancel and (' (' .. cancel .. ' cancels)') or '') }, {})
end

--- The server refused the send (`message`: why): the window says so.
function M.refused(message)
  local what = state.sending or 'the request'
  state.sending = nil
  display({ '# ' .. what, 'not sent: ' .. message:gsub('\n.*', '') }, {})
end

--- The outcome a command on "the response shown" acts on, and the `.http` buffer it
--- was sent from: in the send shown, the outcome whose section (or summary line) holds
--- the window's cursor, else the first in the order shown; only outcomes for which
--- `wanted(outcome)` holds (by default: all). `nil` when the send shown has none. The
--- third value is `true` when the cursor picked it.
function M.target(wanted)
  wanted = wanted or function()
    return true
  end
  local entry = state.entries[state.index]
  if not entry then
    return nil
  end
  local function fits(index)
    local outcome = entry.outcomes[index]
    return (outcome and wanted(outcome)) and outcome or nil
  end
  local picked
  local win = vim.fn.bufwinid(buffer_name)
  if #state.sections > 0 and win ~= -1 then
    local line = vim.api.nvim_win_get_cursor(win)[1]
    for _, section in ipairs(state.sections) do
      if section.summary == line or (section.line and section.line <= line) then
        picked = section.outcome
      end
    end
  end
  local found = picked and fits(picked)
  local by_cursor = found ~= nil
  if not found then
    for _, index in ipairs(#state.sections > 0 and response.order(entry.outcomes) or { 1 }) do
      found = found or fits(index)
    end
  end
  local buf = entry.send and entry.send.buf
  return found, (buf and vim.api.nvim_buf_is_valid(buf)) and buf or nil, by_cursor
end

--- The response a filter is for, and the `.http` buffer it was sent from (see `target`:
--- among the outcomes with a response). `nil` when the send shown has none.
function M.filter_target()
  local outcome, buf = M.target(function(outcome)
    return type(outcome.response) == 'table'
  end)
  return outcome and outcome.response, buf
end

--- A filter of `received` changed (`shown`: it has one now; `false`: cleared). When the
--- window shows it: to the `filter` view (unless in `all`, which shows filters too), or
--- from it to the `body` view when cleared, and drawn again.
function M.filter_changed(received, shown)
  if not shows(received) then
    return
  end
  local view = state.view
  if shown and view ~= 'all' and view ~= 'filter' then
    state.view = 'filter'
  elseif not shown and view == 'filter' then
    state.view = 'body'
  end
  render(view == state.view)
end

--- Switches the view (`all`, `body`, `filter`, `headers`, `verbose`, `stats`, `script`).
function M.set_view(view)
  state.view = view
  render()
end

--- Shows the previous (`-1`) or next (`1`) send of the window's history.
function M.step(delta)
  local index = state.index + delta
  if index < 1 or index > #state.entries then
    require('volley')._notify(delta < 0 and 'no older response' or 'no newer response', vim.log.levels.WARN)
    return
  end
  state.index = index
  render()
end

--- On a Send All's summary line: the cursor to that request's section (elsewhere, the
--- next line, as `<CR>` does).
function M.jump()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  for _, section in ipairs(state.sections) do
    if section.summary == line then
      vim.api.nvim_win_set_cursor(0, { section.line, 0 })
      vim.cmd('normal! zt')
      return
    end
  end
  vim.cmd('normal! +')
end

--- Closes the response window(s).
function M.close()
  local buf = vim.fn.bufnr(buffer_name)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if not pcall(vim.api.nvim_win_close, win, false) then
      -- The last window: show another buffer in it.
      vim.api.nvim_win_call(win, function()
        vim.cmd('silent! bprevious')
      end)
    end
  end
end

--- Shows the streams of a send while the server still listens.
function M.show_live(live)
  return display(response.live_lines(live), {})
end

--- Shows the request an outcome sent in its own split (`volley://sent`); `false` when
--- the outcome has none.
function M.show_sent(outcome)
  local lines = response.sent_lines(outcome)
  if not lines then
    return false
  end
  return display(lines, {}, 'volley://sent')
end

local key_actions = {
  all = { function() M.set_view('all') end, 'status, headers, body, results' },
  body = { function() M.set_view('body') end, 'the body' },
  filter = { function() M.set_view('filter') end, "the jq filter's output" },
  new_filter = { function() filter.ask() end, 'filter the body with jq (empty: no filter)' },
  headers = { function() M.set_view('headers') end, 'the status and headers' },
  verbose = { function() M.set_view('verbose') end, 'the request as sent, then the response' },
  stats = { function() M.set_view('stats') end, 'timings and sizes' },
  script = { function() M.set_view('script') end, 'assertion and test results, log lines' },
  previous = { function() M.step(-1) end, 'the previous response' },
  next = { function() M.step(1) end, 'the next response' },
  jump = { function() M.jump() end, 'go to the request of a summary line' },
  rerun = { function() require('volley').rerun() end, 'send the request shown again' },
  compare = { function() require('volley.history').compare() end,
    'compare the response shown with the one stored before it (diff)' },
  open_body = { function() require('volley').open_body() end, 'open the whole body (a body the window shows cut)' },
  cancel = { function() require('volley').cancel() end, 'cancel the send under way' },
  close = { function() M.close() end, 'close the window' },
}

map_keys = function(buf)
  local keys = options().response_keymaps
  if keys == false then
    return
  end
  for action, lhs in pairs(keys) do
    local entry = key_actions[action]
    if entry and type(lhs) == 'string' and lhs ~= '' then
      -- `nowait`: `[` and `]` act at once, though `[d`, `]c`… exist.
      vim.keymap.set('n', lhs, entry[1], { buffer = buf, nowait = true, desc = 'Volley: ' .. entry[2] })
    end
  end
end

return M
