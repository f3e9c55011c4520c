-- Sending: the requests of a `.http` buffer through the language server's
-- `volley.send` / `volley.sendAll` (one request, every request, or those a selection
-- touches), each with a progress token so that it can be cancelled
-- (`window/workDoneProgress/cancel`), a sign on the request lines, the streams shown
-- live while the server listens, and the outcomes handed to the response window
-- (lua/volley/window.lua), to the test results (lua/volley/results.lua) and kept in the
-- session's history.
local M = {}

local function notify(message, level)
  require('volley')._notify(message, level)
end

local function options()
  return require('volley').options()
end

local function uri_of(buf)
  return vim.uri_from_bufnr(buf)
end

-- Streams shown live: the `volley/stream` notifications (docs/lsp.md) of the send in
-- flight, gathered per request and drawn at most once per event-loop turn.
local live = { count = 0, current = nil, drawing = false }

-- The most items kept per stream while listening (older ones are dropped and counted).
local LIVE_ITEM_CAP = 1000

local function start_live()
  live.count = live.count + 1
  live.current = { id = 'nvim-' .. vim.fn.getpid() .. '-' .. live.count, streams = {}, order = {} }
  return live.current.id
end

--- The `volley/stream` notifications: a stream's status and items while it is listened to.
function M.on_stream(_, update)
  local current = live.current
  if type(update) ~= 'table' or current == nil or update.live ~= current.id then
    return
  end
  local index = tonumber(update.requestIndex) or 0
  local stream = current.streams[index]
  if stream == nil then
    stream = { index = index, kind = update.kind, items = {}, dropped = 0 }
    current.streams[index] = stream
    current.order[#current.order + 1] = index
  end
  if update.status ~= nil and update.status ~= vim.NIL then
    stream.status = update.status
  end
  if type(update.item) == 'table' then
    stream.items[#stream.items + 1] = update.item
    if #stream.items > LIVE_ITEM_CAP then
      table.remove(stream.items, 1)
      stream.dropped = stream.dropped + 1
    end
  end
  if not live.drawing then
    live.drawing = true
    vim.schedule(function()
      live.drawing = false
      if live.current == current then
        require('volley.window').show_live(current)
      end
    end)
  end
end

local function client_notify(client, method, params)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

-- The send under way: the progress token it was sent with (the server stops the work
-- of a token on `window/workDoneProgress/cancel`), whether the server has begun that
-- progress (before, it does not know the token: a cancel waits for the begin), and
-- whether it was cancelled.
local inflight
local send_count = 0

local function cancel_inflight(current)
  client_notify(current.client, 'window/workDoneProgress/cancel', { token = current.token })
end

--- `volley/prompt` (docs/lsp.md): httpyac's `$input`, `$password` and `$pick` and REST
--- Client's `# @prompt`, asked on the command line (`inputsecret` for a password,
--- `inputlist` for a pick). A cancelled or empty answer is no answer: the request is then
--- refused, naming the prompt. Synchronous: a server request's handler answers at once.
function M.on_prompt(_, params)
  params = params or {}
  local label = type(params.label) == 'string' and params.label or 'a value'
  local choices = type(params.choices) == 'table' and params.choices or {}
  if params.kind == 'pick' and #choices > 0 then
    local lines = { 'Volley: ' .. label }
    for index, choice in ipairs(choices) do
      lines[#lines + 1] = index .. '. ' .. tostring(choice)
    end
    local ok, picked = pcall(vim.fn.inputlist, lines)
    if not ok or type(picked) ~= 'number' or picked < 1 or picked > #choices then
      return vim.NIL
    end
    return { value = tostring(choices[picked]) }
  end
  local prompt = 'Volley: ' .. label .. ': '
  local ok, answer
  if params.kind == 'password' then
    ok, answer = pcall(vim.fn.inputsecret, prompt)
  else
    local default = type(params.default) == 'string' and params.default or ''
    ok, answer = pcall(vim.fn.input, { prompt = prompt, default = default, cancelreturn = '' })
  end
  if not ok or type(answer) ~= 'string' or answer == '' then
    return vim.NIL
  end
  return { value = answer }
end

--- `$/progress` from the server: notes the begin of the send under way's progress, then
--- hands the message to Neovim's own handler.
function M.on_progress(err, result, context, handler_config)
  local current = inflight
  if current and type(result) == 'table' and result.token == current.token
    and type(result.value) == 'table' and result.value.kind == 'begin' then
    current.begun = true
    if current.cancelled then
      cancel_inflight(current)
    end
  end
  return vim.lsp.handlers['$/progress'](err, result, context, handler_config)
end

-- What this session sent: `last_send` (how to send it again: `{command, arguments,
-- buf, label}`) and `history` (every outcome, oldest first, with when it arrived).
M.history = {}
local last_send

--- How the last send can be sent again (`{command, arguments, buf, label}`), if any.
function M.last()
  return last_send
end

-- The most outcomes the history keeps (each may hold a body of up to 4 MiB).
local HISTORY_CAP = 50

-- Keeps what a finished send answered, shows it, and says the outcome on the command
-- line in place of `sending…`.
local function finished(outcomes, cancelled, send)
  for _, outcome in ipairs(outcomes) do
    M.history[#M.history + 1] = { outcome = outcome, at = os.date('%H:%M:%S'), buf = send.buf }
  end
  while #M.history > HISTORY_CAP do
    table.remove(M.history, 1)
  end
  require('volley.results').record(send.buf, outcomes)
  require('volley.window').push({
    outcomes = outcomes,
    cancelled = cancelled,
    send = send,
    profile = options().profile,
    label = send.label,
  })
  local message, bad = require('volley.response').summary(outcomes, cancelled, send.label ~= nil)
  notify(message, bad and vim.log.levels.WARN or vim.log.levels.INFO)
end

-- The request lines a send is about to send (for their signs).
local function lines_to_send(buf, command, arguments)
  local requests = require('volley.requests')
  local lines = {}
  local listed = requests.list(buf)
  for _, argument in ipairs(arguments) do
    for _, candidate in ipairs(listed) do
      local line = argument.line
      if command == 'volley.sendAll' or candidate.index == argument.index
        or (line and candidate.first <= line and candidate.last >= line) then
        lines[#lines + 1] = candidate.line
      end
    end
  end
  return lines
end

-- Sends `send.arguments` one after the other with `send.command` (`volley.send`, or
-- `volley.sendAll` with one argument), each with its own progress token so that it can
-- be cancelled, a `…` sign on the request lines meanwhile; then shows every outcome
-- together and marks each request line `✓` or `✗`.
local function dispatch(send, what)
  local requests = require('volley.requests')
  local buf = send.buf
  local pending = lines_to_send(buf, send.command, send.arguments)
  for _, line in ipairs(pending) do
    requests.sign(buf, line, 'sending')
  end
  last_send = send
  require('volley.window').sending(what)
  notify(send.command == 'volley.sendAll' and 'sending every request…' or 'sending…')
  local outcomes, cancelled = {}, false
  local function clear()
    inflight = nil
    for _, line in ipairs(pending) do
      requests.sign(buf, line, nil)
    end
  end
  local function step(position)
    local argument = send.arguments[position]
    if argument == nil or cancelled then
      clear()
      for _, outcome in ipairs(outcomes) do
        if type(outcome.request) == 'table' then
          requests.sign(buf, outcome.request.line, require('volley.response').failed(outcome) and 'failed' or 'passed')
        end
      end
      finished(outcomes, cancelled, send)
      return
    end
    argument.live = start_live()
    send_count = send_count + 1
    local current = { token = 'volley-nvim-' .. vim.fn.getpid() .. '-' .. send_count, begun = false }
    inflight = current
    current.client = require('volley').execute(send.command, argument, buf, function(result)
      if live.current and live.current.id == argument.live then
        live.current = nil
      end
      argument.live = nil
      if send.command == 'volley.sendAll' then
        vim.list_extend(outcomes, result.results)
        cancelled = result.cancelled == true
      else
        -- The requests whose responses it reads, sent first by the server (`ranFirst`):
        -- shown with it, as a Send All is.
        if type(result.ranFirst) == 'table' and #result.ranFirst > 0 then
          vim.list_extend(outcomes, result.ranFirst)
          send.label = send.label or (require('volley.response').title(result) .. ' and the requests it reads')
        end
        outcomes[#outcomes + 1] = result
        cancelled = current.cancelled == true
        -- Sending again picks the same request by its index, wherever the cursor is then.
        local index = type(result.request) == 'table' and tonumber(result.request.index)
        if index then
          send.arguments[position] = { uri = argument.uri, index = index, streamWindowMs = argument.streamWindowMs }
        end
      end
      step(position + 1)
    end, {
      token = current.token,
      on_error = function(message)
        clear()
        require('volley.window').refused(message)
      end,
    })
  end
  step(1)
end

-- What the window says is being sent: the request line of the request at `line`.
local function request_text(buf, line)
  local request = require('volley.requests').at(buf, line)
  if not request then
    return 'the request on line ' .. (line + 1)
  end
  return vim.trim(vim.api.nvim_buf_get_lines(buf, request.line, request.line + 1, false)[1] or '')
end

--- Sends the request under the cursor (or the one `argument` names) and shows the
--- response. `buf`: the `.http` buffer (the current one by default).
function M.send(argument, buf)
  buf = buf or vim.api.nvim_get_current_buf()
  argument = vim.deepcopy(argument
    or { uri = uri_of(buf), line = vim.api.nvim_win_get_cursor(0)[1] - 1, streamWindowMs = options().stream_window_ms })
  local what = argument.line and request_text(buf, argument.line)
    or (argument.name and ('request ' .. argument.name))
    or ('request #' .. ((argument.index or 0) + 1))
  dispatch({ command = 'volley.send', arguments = { argument }, buf = buf }, what)
end

--- Sends every request of the file, in order, and shows the responses.
function M.send_all(argument, buf)
  buf = buf or vim.api.nvim_get_current_buf()
  argument = vim.deepcopy(argument or { uri = uri_of(buf), streamWindowMs = options().stream_window_ms })
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':t')
  dispatch({ command = 'volley.sendAll', arguments = { argument }, buf = buf, label = 'Send All of ' .. name },
    'every request of ' .. name)
end

--- Sends the requests whose blocks the lines `first`..`last` (1-based) touch, one after
--- the other, and shows their responses together (one request: as `send`).
function M.send_lines(first, last, buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local touched = require('volley.requests').touched(buf, first - 1, last - 1)
  if #touched == 0 then
    notify(string.format('no request in lines %d–%d', first, last), vim.log.levels.WARN)
    return
  end
  if #touched == 1 then
    M.send({ uri = uri_of(buf), index = touched[1].index, streamWindowMs = options().stream_window_ms }, buf)
    return
  end
  local arguments = {}
  for _, request in ipairs(touched) do
    arguments[#arguments + 1] = { uri = uri_of(buf), index = request.index, streamWindowMs = options().stream_window_ms }
  end
  local label = string.format('%d requests of lines %d–%d', #touched, first, last)
  dispatch({ command = 'volley.send', arguments = arguments, buf = buf, label = label }, label)
end

--- Sends again what `send` sent (a `last_send`, or the `send` of a response shown).
function M.resend(send)
  local copy = vim.deepcopy(send)
  dispatch(copy, copy.label or 'the request again')
end

--- Cancels the send under way (a Send All stops after the request it is sending; the
--- request being sent stops and says `error[cancelled]`).
function M.cancel()
  local current = inflight
  if not current then
    notify('nothing is being sent', vim.log.levels.WARN)
    return
  end
  current.cancelled = true
  if current.begun then
    cancel_inflight(current)
  end
  notify('cancelling…')
end

--- `true` while a send is under way, and whether the server has begun it (from then on
--- a cancel reaches it at once).
function M.sending()
  return inflight ~= nil, inflight ~= nil and inflight.begun
end

return M
