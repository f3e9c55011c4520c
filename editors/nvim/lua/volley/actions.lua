-- Volley for Neovim: the actions on the session's responses (send again, save or open a
-- whole body, copy as curl, show the request as sent, pick one of the session's
-- responses, empty the cookie jar),
-- and those that add requests (a curl command from the clipboard, a scratch buffer).
-- `require('volley')` exposes each under the same name; the client (`execute`, `last`,
-- `history`, the last send) is required when an action runs, so neither file requires
-- the other while loading.
local M = {}

local function notify(message, level)
  require('volley')._notify(message, level)
end

local function uri_of(buf)
  return vim.uri_from_bufnr(buf)
end

--- Sends the request(s) of the response shown again: the last send (a request, a Send
--- All, a selection), or the one picked from :VolleyResponses or stepped to in the window.
function M.rerun()
  local volley = require('volley')
  local send = volley.shown and volley.shown.send or volley._last_send()
  if not send or not vim.api.nvim_buf_is_valid(send.buf) then
    notify('nothing has been sent yet', vim.log.levels.WARN)
    return
  end
  volley.resend(send)
end

-- The outcome whose body the response window shows: in a Send All, the one whose
-- section holds the window's cursor; else the last with a response of what it shows (a
-- send's, or the one picked from :VolleyResponses), else the newest of the session that
-- has a response.
local function last_response_outcome()
  local volley = require('volley')
  local picked, _, by_cursor = require('volley.window').target(function(outcome)
    return type(outcome.response) == 'table'
  end)
  if picked and by_cursor then
    return picked
  end
  local shown = volley.last or {}
  for i = #shown, 1, -1 do
    if type(shown[i].response) == 'table' then
      return shown[i]
    end
  end
  for i = #volley.history, 1, -1 do
    local outcome = volley.history[i].outcome
    if type(outcome.response) == 'table' then
      return outcome
    end
  end
  return nil
end

local base64_alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

--- Decodes standard base64 (padding optional, whitespace ignored).
function M.base64_decode(text)
  local values = {}
  for i = 1, #base64_alphabet do
    values[base64_alphabet:byte(i)] = i - 1
  end
  local out, bits, count = {}, 0, 0
  for i = 1, #text do
    local value = values[text:byte(i)]
    if value then
      bits = bits * 64 + value
      count = count + 6
      if count >= 8 then
        count = count - 8
        local byte = math.floor(bits / 2 ^ count)
        out[#out + 1] = string.char(byte)
        bits = bits - byte * 2 ^ count
      end
    end
  end
  return table.concat(out)
end

local function present(value)
  return value ~= vim.NIL and value or nil
end

--- Writes the body of the response shown (the one stepped to with `[`/`]` or picked
--- from :VolleyResponses, else the last) to `path`, whole: a body the server cut is
--- copied from its `bodyFile` (the whole body as received, never read into the editor),
--- any other written as received (base64 bodies decoded). Refuses a cut body without
--- a file. Returns `true` when it wrote the file or began copying it; `on_done(ok)`,
--- when given, is called once the file is written (or could not be).
function M.save_body(path, on_done)
  on_done = on_done or function() end
  local outcome = last_response_outcome()
  if not outcome then
    notify('no response to save yet (send a request first)', vim.log.levels.ERROR)
    return false
  end
  local response = outcome.response
  local file = present(response.bodyFile)
  if response.truncated and not file then
    notify('the body was truncated (only its first 4 MiB were kept): not saving a partial body', vim.log.levels.ERROR)
    return false
  end
  if path == nil or path == '' then
    notify(':VolleySaveBody needs a file name', vim.log.levels.ERROR)
    return false
  end
  path = vim.fn.fnamemodify(vim.fn.expand(path), ':p')
  if file then
    -- Copied by libuv off the main loop: a body of gigabytes does not hold the editor.
    vim.loop.fs_copyfile(file, path, function(err)
      vim.schedule(function()
        if err then
          notify('cannot copy the body to ' .. path .. ': ' .. tostring(err), vim.log.levels.ERROR)
          on_done(false)
          return
        end
        notify(string.format('saved the whole body (%d bytes) to %s', vim.fn.getfsize(path), path))
        on_done(true)
      end)
    end)
    return true
  end
  local body = response.bodyEncoding == 'base64' and M.base64_decode(response.body) or response.body
  local written, err = io.open(path, 'wb')
  if not written then
    notify('cannot write ' .. path .. ': ' .. tostring(err), vim.log.levels.ERROR)
    on_done(false)
    return false
  end
  written:write(body)
  written:close()
  notify(string.format('saved the body (%d bytes) to %s', #body, path))
  on_done(true)
  return true
end

--- Opens the whole body of the response shown in a window (`:edit` of its `bodyFile`),
--- when the server wrote it to a file (a body over what an outcome keeps). Returns the
--- buffer opened.
function M.open_body()
  local outcome = last_response_outcome()
  local response = outcome and outcome.response
  local file = response and present(response.bodyFile)
  if not file then
    if response then
      notify('the window shows the whole body (only a body over 4 MiB is kept in a file)', vim.log.levels.WARN)
    else
      notify('no response yet (send a request first)', vim.log.levels.WARN)
    end
    return nil
  end
  if vim.fn.filereadable(file) == 0 then
    notify('the body file is gone: ' .. file, vim.log.levels.ERROR)
    return nil
  end
  M.split(file)
  local buf = vim.api.nvim_get_current_buf()
  -- The language server's file: read, not edited.
  vim.bo[buf].readonly = true
  local kind = require('volley.response').body_kind(response)
  if kind and vim.bo[buf].filetype == '' then
    vim.bo[buf].filetype = kind
  end
  return buf
end

--- Opens `path` in a split from a window that is not a float (the response float
--- included), and leaves the cursor there.
function M.split(path)
  if vim.api.nvim_win_get_config(0).relative ~= '' then
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.api.nvim_win_get_config(win).relative == '' then
        vim.api.nvim_set_current_win(win)
        break
      end
    end
  end
  vim.cmd('split ' .. vim.fn.fnameescape(path))
end

-- The request a command is about: the one under the cursor in a `.http` buffer; from a
-- response buffer, the one of the response shown (sent last, or picked from the history).
local function request_argument()
  local volley = require('volley')
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].filetype == 'volley_response' then
    local outcome, source = require('volley.window').target(function(outcome)
      return type(outcome.request) == 'table'
    end)
    if not outcome then
      outcome = volley.last and volley.last[#volley.last]
      source = volley.shown and volley.shown.send and volley.shown.send.buf
    end
    if not outcome or not source or not vim.api.nvim_buf_is_valid(source) then
      return nil
    end
    local index = type(outcome.request) == 'table' and tonumber(outcome.request.index) or 0
    return { uri = uri_of(source), index = index }, source, outcome
  end
  return { uri = uri_of(buf), line = vim.api.nvim_win_get_cursor(0)[1] - 1 }, buf
end
M.request_argument = request_argument

--- Copies the request under the cursor as a curl command line to the `"` register (and
--- `+` when there is a clipboard); `on_done` gets the command.
function M.copy_curl(on_done)
  local volley = require('volley')
  local argument, buf = request_argument()
  if not argument then
    notify('nothing has been sent yet', vim.log.levels.WARN)
    return
  end
  volley.execute('volley.copyAsCurl', argument, buf, function(result)
    vim.fn.setreg('"', result.curl)
    if vim.fn.has('clipboard') == 1 then
      pcall(vim.fn.setreg, '+', result.curl)
    end
    local warnings = result.warnings or {}
    if #warnings > 0 then
      notify('copied as curl; ' .. table.concat(warnings, '; '), vim.log.levels.WARN)
    else
      notify('copied as curl')
    end
    if on_done then
      on_done(result.curl)
    end
  end)
end

--- Shows the last request as it was sent (redacted by the server).
function M.show_sent()
  local volley = require('volley')
  local outcome = volley.last and volley.last[#volley.last]
  if not outcome or not require('volley.window').show_sent(outcome) then
    notify('no request has been sent yet', vim.log.levels.WARN)
  end
end

--- Lets the user pick a response of this session (`vim.ui.select`, newest first) and
--- shows it (:VolleyResponses; the stored history is lua/volley/history.lua).
function M.pick_response()
  local volley = require('volley')
  if #volley.history == 0 then
    notify('no responses yet', vim.log.levels.WARN)
    return
  end
  local entries = {}
  for i = #volley.history, 1, -1 do
    entries[#entries + 1] = volley.history[i]
  end
  vim.ui.select(entries, {
    prompt = 'Volley responses',
    format_item = function(entry)
      local outcome = entry.outcome
      local request = type(outcome.request) == 'table' and outcome.request or {}
      local what = type(request.name) == 'string' and request.name
        or ((request.method or '') .. ' ' .. (request.url or ''))
      local summary = require('volley.response').summary({ outcome })
      return entry.at .. '  ' .. what .. '  ' .. summary
    end,
  }, function(entry)
    if entry and vim.api.nvim_buf_is_valid(entry.buf) then
      -- Saving, copying and running it again act on this one now.
      local index = type(entry.outcome.request) == 'table' and tonumber(entry.outcome.request.index) or 0
      require('volley.window').push({
        outcomes = { entry.outcome },
        send = { command = 'volley.send', arguments = { { uri = uri_of(entry.buf), index = index } }, buf = entry.buf },
        at = entry.at,
      })
    end
  end)
end

--- Empties the cookie jar of the buffer's workspace.
function M.clear_cookies(on_done)
  local volley = require('volley')
  local buf = volley.source_buf()
  volley.execute('volley.clearCookies', { uri = uri_of(buf) }, buf, function(result)
    notify(string.format('cleared %d cookie(s)', tonumber(result.cleared) or 0))
    if on_done then
      on_done(result)
    end
  end)
end

-- The text of the clipboard (`+`), or of the unnamed register without one.
local function clipboard()
  if vim.fn.has('clipboard') == 1 then
    local ok, text = pcall(vim.fn.getreg, '+')
    if ok and text ~= '' then
      return text
    end
  end
  return vim.fn.getreg('"')
end

--- Adds the curl command of the clipboard as a request after the request under the
--- cursor (converted by the server's `volley.import`, as `volley import curl` does), and
--- puts the cursor on its request line.
function M.paste_curl()
  local volley = require('volley')
  local win, buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(win)[1] - 1
  local text = vim.trim(clipboard())
  if not text:match('^%$?%s*curl') then
    notify('the clipboard holds no curl command', vim.log.levels.WARN)
    return
  end
  volley.execute('volley.import', { format = 'curl', text = text }, buf, function(result)
    local file = result.files and result.files[1]
    if not file then
      notify('the curl command converted to nothing', vim.log.levels.WARN)
      return
    end
    local lines = vim.split(vim.trim(file.text), '\n', { plain = true })
    local owner = require('volley.requests').at(buf, cursor)
    local after = owner and owner.last + 1 or cursor + 1
    if after > 0 and not lines[1]:match('^###') then
      table.insert(lines, 1, '###')
    end
    vim.api.nvim_buf_set_lines(buf, after, after, false, lines)
    -- The cursor on the request line (the first of a method and a space), where it was.
    for offset, line in ipairs(lines) do
      if line:match('^%u+%s') and vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == buf then
        vim.api.nvim_win_set_cursor(win, { after + offset, 0 })
        break
      end
    end
    local notes = {}
    for _, note in ipairs(result.unconverted or {}) do
      notes[#notes + 1] = note.reason
    end
    if #notes > 0 then
      notify('pasted the curl command as a request; not converted: ' .. table.concat(notes, '; '), vim.log.levels.WARN)
    else
      notify('pasted the curl command as a request')
    end
  end)
end

-- What a new scratch buffer holds.
local scratch_lines = {
  '# A scratch buffer: not saved (`:saveas name.http` keeps it). Send with :VolleySend.',
  '### scratch',
  'GET https://example.com/',
}

--- Opens the scratch `.http` buffer (one per working directory, never written; it sees
--- the `volley.jsonc` of that directory, its variables and profiles).
function M.scratch()
  local name = vim.fn.getcwd() .. '/volley-scratch.http'
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(buf) == name then
      vim.api.nvim_set_current_buf(buf)
      return buf
    end
  end
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, scratch_lines)
  vim.api.nvim_set_current_buf(buf)
  vim.bo[buf].filetype = 'http'
  vim.api.nvim_win_set_cursor(0, { #scratch_lines, 0 })
  return buf
end

return M
