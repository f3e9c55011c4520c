-- The response of a send as lines of a scratch buffer: a status line, the headers, the
-- body (JSON re-indented, key order kept), then the `@assert` results and the first
-- events or messages of a stream. Pure functions, so the test can check them too.
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

--- `true` when the response says its body is JSON.
function M.is_json(response)
  local content_type = (response.contentType or ''):lower()
  return content_type:find('json', 1, true) ~= nil and response.bodyEncoding == 'text'
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

--- The lines of one outcome of `volley.send`, and whether its body is JSON.
function M.lines(outcome)
  local lines = {}
  local request = present(outcome.request) or {}
  local title = present(request.name)
    or ((present(request.method) or '') .. ' ' .. (present(request.url) or ''))
  lines[#lines + 1] = '# ' .. title
  local error = present(outcome.error)
  if error then
    append(lines, split(string.format('error[%s]: %s', present(error.kind) or '?', present(error.message) or '')))
    return lines, false
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
  lines[#lines + 1] = ''
  local json = M.is_json(response)
  if response.bodyEncoding == 'base64' then
    lines[#lines + 1] = string.format('(binary body, %d bytes of base64)', #response.body)
  elseif response.body ~= '' then
    append(lines, split(json and M.pretty_json(response.body) or response.body))
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
  -- A buffer line holds no newline: split what came with some (header values, events).
  local flat = {}
  for _, line in ipairs(lines) do
    append(flat, split(line))
  end
  return flat, json
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

local function display(lines, filetype)
  local buf = vim.fn.bufnr(buffer_name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, buffer_name)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  if vim.fn.bufwinid(buf) == -1 then
    local current = vim.api.nvim_get_current_win()
    vim.cmd('botright vsplit')
    vim.api.nvim_win_set_buf(0, buf)
    vim.api.nvim_set_current_win(current)
  end
  return buf
end

--- Shows the streams of a send while the server still listens.
function M.show_live(live)
  return display(M.live_lines(live), 'text')
end

--- Shows outcomes in the response split (one buffer, reused): filetype `json` when the
--- only outcome has a JSON body, plain text otherwise. `cancelled`: a Send All that
--- stopped early.
function M.show(outcomes, cancelled)
  local lines, json = {}, false
  for index, outcome in ipairs(outcomes) do
    if index > 1 then
      lines[#lines + 1] = ''
    end
    local more, is_json = M.lines(outcome)
    append(lines, more)
    json = is_json and #outcomes == 1
  end
  if cancelled then
    lines[#lines + 1] = ''
    lines[#lines + 1] = '(cancelled: the other requests were not sent)'
  end
  return display(lines, json and 'json' or 'text')
end

return M
