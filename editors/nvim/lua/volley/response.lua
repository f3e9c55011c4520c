-- The outcomes of a send as lines of the response buffer, in one of its views: `all`
-- (status, headers, the jq filter's output, body, results, logs, stream), `body`,
-- `filter` (the jq filter's output), `headers`, `verbose` (the request as sent, then
-- everything received), `stats` (timings and sizes) and `script` (the `@assert` and
-- `client.test` results and the scripts' log lines); a Send All as a summary, failures
-- first, then one section per request. A body the server cut (over 4 MiB; the whole is
-- its `bodyFile`) shows as its first `preview_bytes`, between lines that say so. Pure
-- functions (the window is lua/volley/window.lua), so the test can check them too.
local M = {}

local present = require('volley.text').present

local text_lines = require('volley.text')
local split = text_lines.split

-- Appends `text` to `lines`, a line per line it holds (a buffer line holds no newline).
local function add(lines, text)
  if text:find('\n', 1, true) then
    for _, line in ipairs(split(text)) do
      lines[#lines + 1] = line
    end
  else
    lines[#lines + 1] = text
  end
end

local function append(lines, more)
  for _, line in ipairs(more) do
    lines[#lines + 1] = line
  end
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

local function size(bytes)
  if bytes >= 1024 * 1024 then
    return string.format('%.1f MB', bytes / (1024 * 1024))
  elseif bytes >= 1024 then
    return string.format('%.1f KB', bytes / 1024)
  end
  return bytes .. ' bytes'
end

--- A JSON body is re-indented unless what is shown of it is larger than this (bytes).
M.format_max_bytes = 2 * 1024 * 1024

--- Of a body the server cut (`truncated`: over the 4 MiB an outcome keeps), the window
--- shows this much (bytes); the whole body is a file (`bodyFile`).
M.preview_bytes = 1024 * 1024

--- The key that opens the whole body (said in the line above a cut body; `nil`: none).
M.open_key = 'gf'

-- How far back from the preview's end a line break is looked for (else it is cut
-- within a line).
local LINE_BREAK_LOOKBACK = 64 * 1024

-- The preview of each cut body (forgotten with the response).
local previews = setmetatable({}, { __mode = 'k' })

--- The size of the whole body in bytes: `bodySize` when the server gives it, else what
--- the outcome holds (base64 decoded).
function M.body_size(response)
  local whole = tonumber(present(response.bodySize))
  if whole then
    return whole
  end
  return response.bodyEncoding == 'base64' and math.floor(#response.body * 3 / 4) or #response.body
end

--- `true` when the outcome holds only the start of the body (the server cut it).
function M.is_cut(response)
  return response.truncated == true
end

--- The text of a body as the window shows it: the whole `body`, or for a cut one its
--- first `preview_bytes`, ending after a line break when one is near the end, and never
--- inside a UTF-8 character.
function M.shown_text(response)
  local body = response.body
  if not M.is_cut(response) or response.bodyEncoding ~= 'text' or #body <= M.preview_bytes then
    return body
  end
  local cached = previews[response]
  if cached and cached.limit == M.preview_bytes then
    return cached.text
  end
  local last = M.preview_bytes
  for at = last, math.max(1, last - LINE_BREAK_LOOKBACK), -1 do
    if body:byte(at) == 10 then
      last = at
      break
    end
  end
  if last == M.preview_bytes then
    -- Back to the end of a character: never before a continuation byte.
    while last > 0 and (body:byte(last + 1) or 0) >= 0x80 and (body:byte(last + 1) or 0) < 0xC0 do
      last = last - 1
    end
  end
  local text = body:sub(1, last)
  previews[response] = { limit = M.preview_bytes, text = text }
  return text
end

--- The lines around a cut body: above it, how much of how much is shown and how to get
--- the rest; below it, how much more there is. `nil` for a body that was not cut.
function M.cut_notes(response)
  if not M.is_cut(response) then
    return nil
  end
  local whole = M.body_size(response)
  local file = present(response.bodyFile)
  local shown = response.bodyEncoding == 'text' and #M.shown_text(response) or 0
  local of = present(response.bodySize) and size(whole) or ('more than ' .. size(#response.body))
  local open = M.open_key and (M.open_key .. ' or :VolleyOpenBody') or ':VolleyOpenBody'
  local rest = file and (open .. ' opens the whole body, :VolleySaveBody saves it')
    or 'the rest was not kept'
  local head
  if response.bodyEncoding == 'text' then
    head = string.format('(showing the first %s of %s: %s)', size(shown), of, rest)
  else
    head = string.format('(binary body of %s: %s)', of, rest)
  end
  local tail
  if response.bodyEncoding == 'text' then
    local more = present(response.bodySize) and size(math.max(whole - shown, 0))
    if file then
      tail = string.format('(%s not shown: %s opens the whole body)', more or 'the rest', open)
    else
      tail = more and string.format('(%s not shown: not kept)', more) or '(the rest was not kept)'
    end
  end
  return { head = head, tail = tail }
end

--- How a JSON body is shown: `true` when it is re-indented; else the note that says why
--- it is shown as received (`nil` for a body that is not JSON).
function M.formats(response)
  if not M.is_json(response) then
    return false, nil
  end
  local shown = #M.shown_text(response)
  if shown > M.format_max_bytes then
    return false, string.format('(JSON body of %s shown as received: bodies over %s are not re-indented)',
      size(shown), size(M.format_max_bytes))
  end
  return true, nil
end

--- The body of a response as shown: `{lines = …, kind = …, note = …, cut = …}` (`cut`:
--- the lines around a cut body, see `cut_notes`). `prepared`: its lines already made
--- (re-indented or split, by the window, which keeps them), else they are made here.
function M.body(response, prepared)
  local kind = M.body_kind(response)
  local cut = M.cut_notes(response)
  if response.bodyEncoding == 'base64' then
    if cut then
      return { lines = {}, cut = { head = cut.head } }
    end
    return { lines = { string.format('(binary body, %d bytes of base64)', #response.body) } }
  elseif response.body == '' then
    return { lines = {}, kind = kind, cut = cut }
  end
  local reindent, note = M.formats(response)
  if reindent then
    return { lines = prepared or text_lines.json_lines(M.shown_text(response)), kind = kind, cut = cut }
  end
  return { lines = prepared or split(M.shown_text(response)), kind = kind, note = note, cut = cut }
end

-- The lines of a filter's output, kept per filter (an output may be megabytes, and the
-- window draws again on every key).
local filter_output = setmetatable({}, { __mode = 'k' })

-- More top-level values than this in a filter's output are not highlighted (a region
-- each keeps one value's syntax from running into the next).
local MOST_HIGHLIGHTED_VALUES = 200

--- The filter a response is shown with by default: the one its request's `# @jq` got
--- from the server (`response.filtered`: `{expression, output}` or `{expression,
--- error}`), else `nil`.
function M.jq_filter(response)
  local filtered = present(response.filtered)
  if type(filtered) == 'table' and present(filtered.expression) then
    return filtered
  end
  return nil
end

-- Appends a jq filter's section to `lines`: `# jq <expression>`, then its output (a
-- JSON region per top-level value, added to `regions`), `(filtering…)` while it runs,
-- or `✗ <why it made nothing>`.
local function filter_lines(lines, regions, filter)
  lines[#lines + 1] = '# jq ' .. tostring(present(filter.expression) or ''):gsub('%s*\n%s*', ' ')
  local error = present(filter.error)
  if filter.pending then
    lines[#lines + 1] = '(filtering…)'
    return
  elseif error then
    add(lines, '✗ ' .. tostring(error))
    return
  end
  local output = filter_output[filter]
  if not output then
    local text = tostring(present(filter.output) or ''):gsub('\n$', '')
    output = text == '' and {} or split(text)
    filter_output[filter] = output
  end
  if #output == 0 then
    lines[#lines + 1] = '(no output)'
    return
  end
  local first = #lines + 1
  append(lines, output)
  -- A value starts at a line that is not indented and does not close one.
  local starts = {}
  for number = first, #lines do
    local byte = lines[number]:byte(1)
    if byte and byte ~= 32 and byte ~= 125 and byte ~= 93 then
      starts[#starts + 1] = number
      if #starts > MOST_HIGHLIGHTED_VALUES then
        return
      end
    end
  end
  for index, start in ipairs(starts) do
    regions[#regions + 1] = { start, (starts[index + 1] or (#lines + 1)) - 1, 'json' }
  end
end

-- One event or message of a stream: `[12 ms] event #id: data`.
local function item_line(item)
  local label = present(item.event) or 'message'
  if present(item.id) then
    label = label .. ' #' .. tostring(item.id)
  end
  return string.format('[%.0f ms] %s: %s', present(item.atMs) or 0, label, tostring(present(item.data) or ''))
end

--- The `# title` line of an outcome: the request's name (or method and URL) and its
--- `# @description`, on one line.
function M.title(outcome)
  local request = present(outcome.request) or {}
  local title = present(request.name)
    or ((present(request.method) or '') .. ' ' .. (present(request.url) or ''))
  local description = present(request.description)
  if description and description ~= '' then
    title = title .. ' — ' .. (description:gsub('%s*\n%s*', ' '))
  end
  return title
end

-- How a gRPC call ended (`response.grpc`: `{code, number, message, kind, messages}`),
-- when the response is one; its `status` is then the HTTP exchange's 200, never shown.
local function grpc_of(response)
  local grpc = present(response.grpc)
  return type(grpc) == 'table' and grpc or nil
end

-- `200 OK`; for a gRPC call `gRPC OK (0)`, or `gRPC NOT_FOUND (5): <message>` (the message
-- on one line, left out when the server sent none or only the code again, as grpc-js
-- does with every OK).
local function status_text(response)
  local grpc = grpc_of(response)
  if grpc then
    local code = tostring(present(grpc.code) or '?')
    local text = string.format('gRPC %s (%s)', code, tostring(present(grpc.number) or '?'))
    local message = vim.trim((tostring(present(grpc.message) or ''):gsub('%s*\n%s*', ' ')))
    if message ~= '' and message ~= code then
      text = text .. ': ' .. message
    end
    return text
  end
  return (tostring(response.status) .. ' ' .. (present(response.statusText) or '')):gsub('%s+$', '')
end

-- The kind of a gRPC call and how many messages the server sent: `server-streaming · 3
-- messages`.
local function grpc_call(grpc)
  local count = tonumber(present(grpc.messages)) or 0
  return string.format('%s · %d %s', tostring(present(grpc.kind) or 'unary'), count,
    count == 1 and 'message' or 'messages')
end

-- The status line: `HTTP/1.1 200 OK  12.3 ms`, for a gRPC call `gRPC OK (0) · unary · 1
-- message  12.3 ms`; then the headers (a gRPC call's trailers after them).
local function status_lines(lines, response)
  local timing = present(response.timing) or {}
  local grpc = grpc_of(response)
  local status = grpc and (status_text(response) .. ' · ' .. grpc_call(grpc))
    or (response.httpVersion .. ' ' .. status_text(response))
  lines[#lines + 1] = string.format('%s  %.1f ms', status, present(timing.totalMs) or 0)
  for _, header in ipairs(response.headers) do
    add(lines, header[1] .. ': ' .. header[2])
  end
end

-- The body, after a blank line; returns its region `{first, last, kind}` when it is of
-- a highlighted kind.
local function body_lines(lines, response, body)
  local region
  local cut = body.cut
  if cut then
    lines[#lines + 1] = cut.head
  end
  if body.note then
    lines[#lines + 1] = body.note
  end
  local first = #lines + 1
  append(lines, body.lines)
  if body.kind and #lines >= first and response.bodyEncoding == 'text' then
    region = { first, #lines, body.kind }
  end
  if cut and cut.tail then
    lines[#lines + 1] = cut.tail
  elseif response.truncated and not cut then
    lines[#lines + 1] = '(truncated)'
  end
  return region
end

local function result_lines(lines, response)
  local assertions = present(response.assertions) or {}
  if #assertions == 0 then
    return
  end
  lines[#lines + 1] = ''
  for _, check in ipairs(assertions) do
    local message = present(check.message)
    if check.passed then
      add(lines, '✓ ' .. check.expression)
    else
      add(lines, '✗ ' .. check.expression .. (message and (' — ' .. message) or ''))
    end
  end
end

-- What the request's scripts logged (`client.log`): a blank line, then `log …` per
-- line logged (a line logged with line breaks goes on, indented, on the next lines).
local function log_lines(lines, outcome)
  local logs = present(outcome.logs) or {}
  if #logs == 0 then
    return
  end
  lines[#lines + 1] = ''
  for _, logged in ipairs(logs) do
    for index, part in ipairs(split(tostring(logged))) do
      lines[#lines + 1] = (index == 1 and 'log ' or '    ') .. part
    end
  end
end

local function stream_lines(lines, response)
  local stream = present(response.stream)
  if not stream then
    return
  end
  lines[#lines + 1] = ''
  lines[#lines + 1] = string.format('%s: %d item(s), stopped: %s', stream.kind, #stream.items, stream.stopped)
  if present(stream.error) then
    add(lines, 'stream error: ' .. tostring(stream.error))
  end
  for _, item in ipairs(stream.items) do
    add(lines, item_line(item))
  end
end

local function error_lines(lines, outcome)
  local error = present(outcome.error)
  add(lines, string.format('error[%s]: %s', present(error.kind) or '?', present(error.message) or ''))
end

-- The request as sent, without a title (`:VolleySent` and the verbose view).
local function sent_request_lines(lines, outcome, sent)
  local first = sent.method .. ' ' .. sent.url
  if present(sent.httpVersion) then
    first = first .. ' ' .. sent.httpVersion
  end
  lines[#lines + 1] = first
  for _, header in ipairs(sent.headers or {}) do
    add(lines, header[1] .. ': ' .. header[2])
  end
  local body = present(sent.body)
  if body and body ~= '' then
    lines[#lines + 1] = ''
    if sent.bodyEncoding == 'base64' then
      lines[#lines + 1] = string.format('(binary body, %d bytes of base64)', #body)
    else
      add(lines, body)
    end
  end
  if sent.truncated then
    lines[#lines + 1] = '(truncated)'
  end
  if present(sent.partial) then
    lines[#lines + 1] = '# sent through ' .. (present(outcome.server) or 'an execution server')
      .. ': its answer gives the method and URL, not the headers and body'
  end
end

local function stats_lines(lines, outcome)
  local response = present(outcome.response)
  local sent = present(outcome.sent)
  if not response then
    error_lines(lines, outcome)
    lines[#lines + 1] = 'sent        ' .. (sent and (sent.method .. ' ' .. sent.url) or 'no')
    return
  end
  local timing = present(response.timing) or {}
  local total, first_byte = present(timing.totalMs) or 0, present(timing.ttfbMs) or 0
  local grpc = grpc_of(response)
  if grpc then
    lines[#lines + 1] = 'status      ' .. status_text(response)
    lines[#lines + 1] = 'call        ' .. grpc_call(grpc)
  else
    lines[#lines + 1] = string.format('status      %s (%s)', status_text(response), response.httpVersion)
  end
  lines[#lines + 1] = 'url         ' .. tostring(present(response.url) or '')
  lines[#lines + 1] = string.format('time        %.1f ms in all: %.1f ms to the first byte, %.1f ms for the rest',
    total, first_byte, math.max(total - first_byte, 0))
  local file = present(response.bodyFile)
  local kept = ''
  if M.is_cut(response) then
    kept = string.format(' (%s kept%s)', size(#response.body), file and ('; the whole body in ' .. file) or '')
  end
  lines[#lines + 1] = string.format('body        %s%s%s', size(M.body_size(response)),
    present(response.contentType) and (', ' .. response.contentType) or '', kept)
  lines[#lines + 1] = string.format('headers     %d', #response.headers)
  local assertions = present(response.assertions) or {}
  local passed = 0
  for _, check in ipairs(assertions) do
    passed = passed + (check.passed and 1 or 0)
  end
  lines[#lines + 1] = string.format('assertions  %d/%d passed', passed, #assertions)
  lines[#lines + 1] = string.format('logs        %d line(s)', #(present(outcome.logs) or {}))
  local stream = present(response.stream)
  if stream then
    lines[#lines + 1] = string.format('stream      %s: %d item(s), stopped: %s', stream.kind, #stream.items,
      stream.stopped)
  end
  if sent and present(sent.body) then
    lines[#lines + 1] = 'sent body   ' .. size(#sent.body)
  end
end

--- The lines of one outcome in `view` (default `all`), and the regions of the lines
--- to highlight as a body: `{first, last, kind}` each (1-based lines of the returned
--- list, kind `json`, `xml` or `html`). `prepared`: its body's lines already made (see
--- `body`). `filter`: the jq filter it is shown with (`{expression, output}`,
--- `{expression, error}` or `{expression, pending = true}`; by default its `# @jq`
--- one, `false` for none), in the `all` view above the body and alone in the `filter`
--- view.
function M.lines(outcome, view, prepared, filter)
  view = view or 'all'
  local lines = { '# ' .. M.title(outcome) }
  local regions = {}
  local response = present(outcome.response)
  local sent = present(outcome.sent)
  if filter == nil and response then
    filter = M.jq_filter(response)
  end
  if view == 'stats' then
    stats_lines(lines, outcome)
    return lines, regions
  end
  if view == 'verbose' and sent then
    lines[#lines + 1] = '# sent'
    sent_request_lines(lines, outcome, sent)
    lines[#lines + 1] = ''
    lines[#lines + 1] = '# received'
  end
  if not response then
    error_lines(lines, outcome)
    log_lines(lines, outcome)
    return lines, regions
  end
  if view == 'script' then
    local before = #lines
    result_lines(lines, response)
    log_lines(lines, outcome)
    if #lines == before then
      lines[#lines + 1] = '(no assertions, tests or log lines)'
    end
    return lines, regions
  end
  if view == 'filter' then
    if filter then
      filter_lines(lines, regions, filter)
    else
      lines[#lines + 1] = '(no jq filter: give one with :VolleyFilter, or with `# @jq <filter>` on the request)'
    end
    return lines, regions
  end
  if view ~= 'body' then
    status_lines(lines, response)
    if view == 'headers' then
      return lines, regions
    end
    lines[#lines + 1] = ''
  end
  if view == 'all' and filter then
    filter_lines(lines, regions, filter)
    lines[#lines + 1] = ''
    lines[#lines + 1] = '# body'
  end
  regions[#regions + 1] = body_lines(lines, response, M.body(response, prepared))
  if view ~= 'body' then
    result_lines(lines, response)
    log_lines(lines, outcome)
  end
  stream_lines(lines, response)
  return lines, regions
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
  sent_request_lines(lines, outcome, sent)
  return lines
end

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
      add(lines, item_line(item))
    end
  end
  return lines
end

--- `true` when an outcome failed: no response, or an assertion or test that failed.
function M.failed(outcome)
  local response = present(outcome.response)
  if not response then
    return true
  end
  for _, check in ipairs(present(response.assertions) or {}) do
    if not check.passed then
      return true
    end
  end
  return false
end

-- `1 request`, `2 requests`.
local function count(number, singular, plural)
  return string.format('%d %s', number, number == 1 and singular or (plural or (singular .. 's')))
end

--- How a request of several fared: `passed` (a response, every assertion passed),
--- `failed` (a response, an assertion or test failed), `skipped` (`# @disabled`) or
--- `error` (no response: not sent, refused, cancelled, a transport error).
function M.verdict(outcome)
  local response = present(outcome.response)
  if response then
    return M.failed(outcome) and 'failed' or 'passed'
  end
  local error = present(outcome.error)
  if error and present(error.kind) == 'disabled' then
    return 'skipped'
  end
  return 'error'
end

--- What a finished send says on the command line: `200 OK · 12 ms · 2/2 assertions`
--- (`gRPC OK (0) · unary · 1 message · 12 ms` for a gRPC call), or `error[kind]:
--- message`; for several outcomes (or `several`: a Send All), how they fared: `7
--- requests: 5 passed, 1 failed, 1 error · 38/40 assertions` (`, 1 skipped` when
--- `# @disabled` ones were not sent, `· cancelled`). The second value is `true` when
--- something failed.
function M.summary(outcomes, cancelled, several)
  local passed, total = 0, 0
  local verdicts = { passed = 0, failed = 0, error = 0, skipped = 0 }
  for _, outcome in ipairs(outcomes) do
    local response = present(outcome.response)
    if response then
      for _, check in ipairs(present(response.assertions) or {}) do
        total = total + 1
        passed = passed + (check.passed and 1 or 0)
      end
    end
    local verdict = M.verdict(outcome)
    verdicts[verdict] = verdicts[verdict] + 1
  end
  local parts = {}
  if #outcomes == 1 and not several then
    local outcome = outcomes[1]
    local error = present(outcome.error)
    if error then
      local message = (present(error.message) or ''):gsub('\n.*', '')
      return string.format('error[%s]: %s', present(error.kind) or '?', message), true
    end
    local response = outcome.response
    local timing = present(response.timing) or {}
    parts[1] = status_text(response)
    local grpc = grpc_of(response)
    if grpc then
      parts[2] = grpc_call(grpc)
    end
    parts[#parts + 1] = string.format('%.0f ms', present(timing.totalMs) or 0)
  else
    local fared = string.format('%s: %d passed, %d failed, %s', count(#outcomes, 'request'), verdicts.passed,
      verdicts.failed, count(verdicts.error, 'error'))
    if verdicts.skipped > 0 then
      fared = fared .. string.format(', %d skipped', verdicts.skipped)
    end
    parts[1] = fared
  end
  if total > 0 then
    parts[#parts + 1] = string.format('%d/%d assertions', passed, total)
  end
  if cancelled then
    parts[#parts + 1] = 'cancelled'
  end
  return table.concat(parts, ' · '), verdicts.failed + verdicts.error > 0 or passed < total
end

--- The order several outcomes are shown in: the failed ones first, each group in the
--- order sent. A list of indexes into `outcomes`.
function M.order(outcomes)
  local order = {}
  for pass = 1, 2 do
    for index, outcome in ipairs(outcomes) do
      if M.failed(outcome) == (pass == 1) then
        order[#order + 1] = index
      end
    end
  end
  return order
end

--- The lines of what the window shows for one send (`outcomes`: one, or those of a
--- Send All or a selection: `several`), in `view`: for several, a summary line, a line
--- per request (failures first, `✗`/`✓`), then a section per request in that order.
--- Returns the lines, the body regions, and `sections`: `{summary, line, outcome}` per
--- request (the 1-based line of its summary line and of its section, its index in
--- `outcomes`). `prepared(response)` gives a body's lines already made, if any;
--- `filter(response)` the jq filter it is shown with (see `lines`), if not its `@jq` one.
function M.compose(outcomes, view, cancelled, several, prepared, filter)
  prepared = prepared or function() end
  filter = filter or function() end
  local function lines_of(outcome)
    local response = present(outcome.response)
    return M.lines(outcome, view, response and prepared(response), response and filter(response))
  end
  if not several then
    local lines, regions = lines_of(outcomes[1])
    return lines, regions, {}
  end
  local lines, regions, sections = {}, {}, {}
  local order = M.order(outcomes)
  lines[1] = '# ' .. M.summary(outcomes, cancelled, true)
  for _, index in ipairs(order) do
    local outcome = outcomes[index]
    local what = M.summary({ outcome })
    lines[#lines + 1] = string.format('%s %s  %s', M.failed(outcome) and '✗' or '✓', M.title(outcome),
      (what:gsub('\n.*', '')))
    sections[#sections + 1] = { summary = #lines, outcome = index }
  end
  if cancelled then
    lines[#lines + 1] = '(cancelled: the other requests were not sent)'
  end
  for position, index in ipairs(order) do
    lines[#lines + 1] = ''
    local offset = #lines
    local more, more_regions = lines_of(outcomes[index])
    append(lines, more)
    sections[position].line = offset + 1
    for _, region in ipairs(more_regions) do
      regions[#regions + 1] = { region[1] + offset, region[2] + offset, region[3] }
    end
  end
  return lines, regions, sections
end

return M
