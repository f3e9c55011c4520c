-- The response of a send as lines of a scratch buffer: a status line, the headers, the
-- body (JSON re-indented, key order kept), then the `@assert` and script test results,
-- the scripts' log lines and the first events or messages of a stream. Pure functions,
-- so the test can check them too.
local M = {}

--- Re-indents JSON text (two spaces), keeping its key order and string contents; text
--- that is not JSON comes out re-indented as far as its brackets go.
function M.pretty_json(text)
  local out, depth, in_string, escaped = {}, 0, false, false
  local function newline()
    out[#out + 1] = '\n' .. string.rep('  ', depth)
  end
  local i, n = 1, #text
  while i <= n do
    local c = text:sub(i, i)
    if in_string then
      out[#out + 1] = c
      if escaped then
        escaped = false
      elseif c == '\\' then
        escaped = true
      elseif c == '"' then
        in_string = false
      end
    elseif c == '"' then
      in_string = true
      out[#out + 1] = c
    elseif c == '{' or c == '[' then
      -- An empty object or array stays on one line.
      local close = c == '{' and '}' or ']'
      local rest = text:sub(i + 1):match('^%s*()' .. '%' .. close)
      if rest then
        out[#out + 1] = c .. close
        i = i + rest
      else
        depth = depth + 1
        out[#out + 1] = c
        newline()
      end
    elseif c == '}' or c == ']' then
      depth = math.max(depth - 1, 0)
      newline()
      out[#out + 1] = c
    elseif c == ',' then
      out[#out + 1] = c
      newline()
    elseif c == ':' then
      out[#out + 1] = ': '
    elseif not c:match('%s') then
      out[#out + 1] = c
    end
    i = i + 1
  end
  return table.concat(out)
end

--- The kind of a response's body, by its content type: `json`, `xml`, `html`, or `nil`
--- (anything else, or a body that is not text).
function M.body_kind(response)
  if response.bodyEncoding ~= 'text' then
    return nil
  end
  local content_type = (response.contentType or ''):lower()
  if content_type:find('json', 1, true) then
    return 'json'
  elseif content_type:find('html', 1, true) then
    return 'html'
  elseif content_type:find('xml', 1, true) then
    return 'xml'
  end
  return nil
end

--- `true` when the response says its body is JSON.
function M.is_json(response)
  return M.body_kind(response) == 'json'
end

local function split(text)
  local lines = {}
  for line in (text .. '\n'):gmatch('(.-)\r?\n') do
    lines[#lines + 1] = line
  end
  return lines
end

local function append(lines, more)
  for _, line in ipairs(more) do
    lines[#lines + 1] = line
  end
end

-- JSON `null` arrives as `vim.NIL`; treat it as absent.
local function present(value)
  if value == vim.NIL then
    return nil
  end
  return value
end

-- One event or message of a stream: `[12 ms] event #id: data`.
local function item_line(item)
  local label = present(item.event) or 'message'
  if present(item.id) then
    label = label .. ' #' .. tostring(item.id)
  end
  return string.format('[%.0f ms] %s: %s', present(item.atMs) or 0, label, tostring(present(item.data) or ''))
end

-- What the request's scripts logged (`client.log`): a blank line, then `log …` per
-- line logged (a line logged with line breaks goes on, indented, on the next lines).
local function log_lines(outcome)
  local logs = present(outcome.logs) or {}
  if #logs == 0 then
    return {}
  end
  local lines = { '' }
  for _, logged in ipairs(logs) do
    for index, part in ipairs(split(tostring(logged))) do
      lines[#lines + 1] = (index == 1 and 'log ' or '    ') .. part
    end
  end
  return lines
end

--- The lines of one outcome of `volley.send`, and where its body is:
--- `{first, last, kind}` (1-based lines of the returned list, kind `json`, `xml` or
--- `html`), or `nil` when there is no body of such a kind.
function M.lines(outcome)
  local lines = {}
  local request = present(outcome.request) or {}
  local title = present(request.name)
    or ((present(request.method) or '') .. ' ' .. (present(request.url) or ''))
  local description = present(request.description)
  if description and description ~= '' then
    -- One line: a description written over several lines is joined.
    title = title .. ' — ' .. (description:gsub('%s*\n%s*', ' '))
  end
  lines[#lines + 1] = '# ' .. title
  local error = present(outcome.error)
  if error then
    append(lines, split(string.format('error[%s]: %s', present(error.kind) or '?', present(error.message) or '')))
    append(lines, log_lines(outcome))
    return lines, nil
  end
  local response = outcome.response
  local timing = present(response.timing) or {}
  lines[#lines + 1] = string.format(
    '%s %d %s  %.1f ms',
    response.httpVersion,
    response.status,
    present(response.statusText) or '',
    present(timing.totalMs) or 0
  )
  for _, header in ipairs(response.headers) do
    lines[#lines + 1] = header[1] .. ': ' .. header[2]
  end
  -- Header values may hold newlines: split them now, so the body's lines are counted.
  local flat_head = {}
  for _, line in ipairs(lines) do
    append(flat_head, split(line))
  end
  lines = flat_head
  lines[#lines + 1] = ''
  local kind = M.body_kind(response)
  local body
  if response.bodyEncoding == 'base64' then
    lines[#lines + 1] = string.format('(binary body, %d bytes of base64)', #response.body)
  elseif response.body ~= '' then
    local first = #lines + 1
    append(lines, split(kind == 'json' and M.pretty_json(response.body) or response.body))
    if kind then
      body = { first, #lines, kind }
    end
  end
  if response.truncated then
    lines[#lines + 1] = '(truncated)'
  end
  local assertions = present(response.assertions) or {}
  if #assertions > 0 then
    lines[#lines + 1] = ''
    for _, check in ipairs(assertions) do
      local message = present(check.message)
      if check.passed then
        lines[#lines + 1] = '✓ ' .. check.expression
      else
        lines[#lines + 1] = '✗ ' .. check.expression .. (message and (' — ' .. message) or '')
      end
    end
  end
  append(lines, log_lines(outcome))
  local stream = present(response.stream)
  if stream then
    lines[#lines + 1] = ''
    lines[#lines + 1] = string.format('%s: %d item(s), stopped: %s', stream.kind, #stream.items, stream.stopped)
    if present(stream.error) then
      lines[#lines + 1] = 'stream error: ' .. tostring(stream.error)
    end
    for _, item in ipairs(stream.items) do
      lines[#lines + 1] = item_line(item)
    end
  end
  -- A buffer line holds no newline: split what came with some (messages, events).
  local flat = {}
  for _, line in ipairs(lines) do
    append(flat, split(line))
  end
  return flat, body
end

--- The lines of the request an outcome sent (its `sent`, redacted by the server), or
--- `nil` when it was not sent.
function M.sent_lines(outcome)
  local sent = present(outcome.sent)
  if not sent then
    return nil
  end
  local request = present(outcome.request) or {}
  local lines = { '# sent: ' .. (present(request.name) or ('request #' .. tostring((present(request.index) or 0) + 1))) }
  local first = sent.method .. ' ' .. sent.url
  if present(sent.httpVersion) then
    first = first .. ' ' .. sent.httpVersion
  end
  lines[#lines + 1] = first
  for _, header in ipairs(sent.headers or {}) do
    lines[#lines + 1] = header[1] .. ': ' .. header[2]
  end
  local body = present(sent.body)
  if body and body ~= '' then
    lines[#lines + 1] = ''
    if sent.bodyEncoding == 'base64' then
      lines[#lines + 1] = string.format('(binary body, %d bytes of base64)', #body)
    else
      append(lines, split(body))
    end
  end
  if sent.truncated then
    lines[#lines + 1] = '(truncated)'
  end
  if present(sent.partial) then
    lines[#lines + 1] = '# sent through ' .. (present(outcome.server) or 'an execution server')
      .. ': its answer gives the method and URL, not the headers and body'
  end
  local flat = {}
  for _, line in ipairs(lines) do
    append(flat, split(line))
  end
  return flat
end

local buffer_name = 'volley://response'

--- The lines of the streams of a send still listening (`live`: what init.lua gathers
--- from `volley/stream` notifications).
function M.live_lines(live)
  local lines = { 'listening…' }
  for _, index in ipairs(live.order) do
    local stream = live.streams[index]
    local count = #stream.items + stream.dropped
    lines[#lines + 1] = ''
    lines[#lines + 1] = string.format('request #%d: %s%s, %d item(s) so far%s', index + 1, tostring(stream.kind),
      stream.status and (', status ' .. tostring(stream.status)) or '', count,
      stream.dropped > 0 and string.format(' (the first %d no longer shown)', stream.dropped) or '')
    for _, item in ipairs(stream.items) do
      lines[#lines + 1] = item_line(item)
    end
  end
  local flat = {}
  for _, line in ipairs(lines) do
    append(flat, split(line))
  end
  return flat
end

-- Puts `lines` into the scratch buffer `name` (created once, reused), filetype
-- `volley_response` with the body regions `bodies`, shown in a split on the right with
-- its view at the top; the cursor stays where it was.
local function display(lines, bodies, name)
  name = name or buffer_name
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    require('volley').buffer_commands(buf, false)
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.b[buf].volley_bodies = bodies or {}
  -- Setting the filetype (again) reloads the syntax, with the new body regions.
  vim.bo[buf].filetype = 'volley_response'
  if vim.fn.bufwinid(buf) == -1 then
    local current = vim.api.nvim_get_current_win()
    vim.cmd('botright vsplit')
    vim.api.nvim_win_set_buf(0, buf)
    vim.api.nvim_set_current_win(current)
  end
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_set_cursor(win, { 1, 0 })
    vim.api.nvim_win_call(win, function()
      vim.cmd('normal! zt')
    end)
  end
  return buf
end

--- Shows the streams of a send while the server still listens.
function M.show_live(live)
  return display(M.live_lines(live), {})
end

--- Shows the request an outcome sent in its own split (`volley://sent`); `false` when
--- the outcome has none.
function M.show_sent(outcome)
  local lines = M.sent_lines(outcome)
  if not lines then
    return false
  end
  return display(lines, {}, 'volley://sent')
end

--- Shows outcomes in the response split (one buffer, reused, filetype
--- `volley_response`, each body highlighted by its content type). `cancelled`: a Send
--- All that stopped early.
function M.show(outcomes, cancelled)
  local lines, bodies = {}, {}
  for index, outcome in ipairs(outcomes) do
    if index > 1 then
      lines[#lines + 1] = ''
    end
    local offset = #lines
    local more, body = M.lines(outcome)
    append(lines, more)
    if body then
      bodies[#bodies + 1] = { body[1] + offset, body[2] + offset, body[3] }
    end
  end
  if cancelled then
    lines[#lines + 1] = ''
    lines[#lines + 1] = '(cancelled: the other requests were not sent)'
  end
  return display(lines, bodies)
end

--- What a finished send says on the command line: `200 OK · 12 ms · 2/2 assertions`,
--- or `error[kind]: message`; for several outcomes, how many answered and failed.
function M.summary(outcomes, cancelled)
  local passed, total = 0, 0
  local answered, failed = 0, 0
  for _, outcome in ipairs(outcomes) do
    local response = present(outcome.response)
    if response then
      answered = answered + 1
      for _, check in ipairs(present(response.assertions) or {}) do
        total = total + 1
        passed = passed + (check.passed and 1 or 0)
      end
    else
      failed = failed + 1
    end
  end
  local parts = {}
  if #outcomes == 1 then
    local outcome = outcomes[1]
    local error = present(outcome.error)
    if error then
      local message = (present(error.message) or ''):gsub('\n.*', '')
      return string.format('error[%s]: %s', present(error.kind) or '?', message), true
    end
    local response = outcome.response
    local timing = present(response.timing) or {}
    parts[1] = (tostring(response.status) .. ' ' .. (present(response.statusText) or '')):gsub('%s+$', '')
    parts[2] = string.format('%.0f ms', present(timing.totalMs) or 0)
  else
    parts[1] = string.format('%d request(s): %d answered, %d failed', #outcomes, answered, failed)
  end
  if total > 0 then
    parts[#parts + 1] = string.format('%d/%d assertions', passed, total)
  end
  if cancelled then
    parts[#parts + 1] = 'cancelled'
  end
  return table.concat(parts, ' · '), failed > 0 or passed < total
end

return M
