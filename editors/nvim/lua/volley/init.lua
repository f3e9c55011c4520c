-- Volley for Neovim: starts `volley lsp` for `http` buffers and sends requests through
-- it (`workspace/executeCommand`), showing the response in a split. All intelligence is
-- in the server; this file only wires it to Neovim, from 0.7.2 on.
local M = {}

local defaults = {
  -- The language server's command.
  cmd = { 'volley', 'lsp' },
  -- The configuration profile to start with (`nil`: none).
  profile = nil,
  -- An execution server (`volley serve`) to send through instead of locally:
  -- `{ url = 'http://127.0.0.1:4097', token = '…' }` (`token` optional: else the
  -- server's `VOLLEY_TOKEN`). `nil`: requests are sent by the language server itself.
  server = nil,
  -- How long a streaming response (SSE, WebSocket) is listened to, in milliseconds.
  stream_window_ms = 2000,
  -- Buffer-local normal-mode keys of `.http` buffers; `false` (for one, or for
  -- `keymaps` itself) maps nothing. `hover` is mapped only when the key is not mapped
  -- already (by you, or by Neovim 0.10+ on attach).
  keymaps = {
    send = '<LocalLeader>s',
    send_all = '<LocalLeader>a',
    profile = '<LocalLeader>p',
    last_response = '<LocalLeader>r',
    hover = 'K',
  },
}

local config = vim.deepcopy(defaults)

--- Changes the defaults (see `defaults` above). Call it before opening `.http` files.
function M.setup(options)
  options = vim.deepcopy(options or {})
  -- `keymaps = false` is kept as is (tbl_deep_extend would not merge it into a table).
  local keymaps = options.keymaps
  options.keymaps = nil
  config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), options)
  if keymaps == false then
    config.keymaps = false
  elseif type(keymaps) == 'table' then
    config.keymaps = vim.tbl_extend('force', config.keymaps, keymaps)
  end
end

--- The directory of the nearest `volley.jsonc` above `path`, else `path`'s directory.
function M.root_dir(path)
  local directory = vim.fn.fnamemodify(path, ':p:h')
  local found = vim.fn.findfile('volley.jsonc', directory .. ';')
  if found ~= '' then
    return vim.fn.fnamemodify(found, ':p:h')
  end
  return directory
end

local function clients_of(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf, name = 'volley' })
  end
  local found = {}
  for _, client in pairs(vim.lsp.buf_get_clients(buf)) do
    if client.name == 'volley' then
      found[#found + 1] = client
    end
  end
  return found
end

--- The `volley` client of a buffer (the current one by default), if attached.
function M.client(buf)
  return clients_of(buf or vim.api.nvim_get_current_buf())[1]
end

local function refresh_lenses(buf)
  -- 0.7 refreshes the current buffer only (and ignores the argument).
  if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_get_current_buf() == buf then
    pcall(vim.lsp.codelens.refresh, { bufnr = buf })
  end
end

local function on_attach(_, buf)
  refresh_lenses(buf)
  -- One group per buffer, so attaching again does not add the autocommands twice.
  local group = vim.api.nvim_create_augroup('volley_lenses_' .. buf, { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'TextChanged', 'BufWritePost' }, {
    group = group,
    buffer = buf,
    callback = function()
      refresh_lenses(buf)
    end,
  })
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

local function on_stream(_, update)
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
        require('volley.response').show_live(current)
      end
    end)
  end
end

-- One server per root directory (what `vim.lsp.start` does on 0.8+, by hand on 0.7).
local started = {}

--- Starts (or reuses) the server for a buffer and attaches it.
function M.attach(buf)
  if #clients_of(buf) > 0 then
    return
  end
  local path = vim.api.nvim_buf_get_name(buf)
  local root = M.root_dir(path ~= '' and path or (vim.fn.getcwd() .. '/untitled.http'))
  local client_config = {
    name = 'volley',
    cmd = config.cmd,
    root_dir = root,
    init_options = { profile = config.profile, server = config.server },
    on_attach = on_attach,
    handlers = { ['volley/stream'] = on_stream },
  }
  if vim.lsp.start then
    vim.lsp.start(client_config, { bufnr = buf })
    return
  end
  local id = started[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(client_config)
    started[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(buf, id)
  end
end

-- Client methods are called with `:` from 0.11 on (`.` is deprecated there).
local function request(client, method, params, handler, buf)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request(method, params, handler, buf)
  end
  return client.request(method, params, handler, buf)
end

local function request_sync(client, method, params, timeout, buf)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request_sync(method, params, timeout, buf)
  end
  return client.request_sync(method, params, timeout, buf)
end

-- Messages never block: one that does not fit the command line (it would wait for
-- ENTER) is cut to fit there, and shown whole in a float that closes when the cursor
-- moves.
local function notify(message, level)
  local text = 'volley: ' .. message
  local first = text:gsub('\n.*', '')
  local room = math.max(20, (vim.v.echospace or (vim.o.columns - 12)) - 1)
  if first ~= text or vim.fn.strdisplaywidth(first) > room then
    pcall(vim.lsp.util.open_floating_preview, vim.split(text, '\n'), 'text', {
      border = 'rounded',
      max_width = math.max(40, math.floor(vim.o.columns * 0.8)),
      wrap = true,
      focusable = true,
    })
    while vim.fn.strdisplaywidth(first) > room - 1 do
      first = vim.fn.strcharpart(first, 0, vim.fn.strchars(first) - 1)
    end
    first = first .. '…'
  end
  vim.notify(first, level or vim.log.levels.INFO)
end

-- What this session sent: `last_send` (how to send it again), `last` (the outcomes last
-- shown) and `history` (every outcome, oldest first, with when it arrived).
M.history = {}
local last_send

-- For `volley.actions` (lua/volley/actions.lua): the last send, and the messages.
function M._last_send()
  return last_send
end
M._notify = notify

-- The most outcomes the history keeps (each may hold a body of up to 4 MiB).
local HISTORY_CAP = 50

--- The `.http` buffer a command runs for: the current one, or from a response buffer
--- the one of the last send.
function M.source_buf()
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].filetype ~= 'volley_response' then
    return buf
  end
  if last_send and vim.api.nvim_buf_is_valid(last_send.buf) then
    return last_send.buf
  end
  return buf
end

--- Runs a server command on the buffer's client; `on_result` gets its result.
function M.execute(command, argument, buf, on_result)
  buf = buf or M.source_buf()
  local client = M.client(buf)
  if not client then
    notify('the language server is not attached to this buffer (is `volley` on the PATH?)', vim.log.levels.ERROR)
    return
  end
  local params = { command = command, arguments = { argument } }
  request(client, 'workspace/executeCommand', params, function(err, result)
    if err then
      notify(err.message or tostring(err), vim.log.levels.ERROR)
      return
    end
    on_result(result)
  end, buf)
end

local function uri_of(buf)
  return vim.uri_from_bufnr(buf)
end

-- Keeps what a finished send answered, shows it, and says the outcome on the command
-- line in place of `sending…`.
local function finished(outcomes, cancelled)
  M.last = outcomes
  -- What the response window shows came from this buffer (a history pick changes it).
  M.shown_buf = last_send and last_send.buf
  M.picked = false
  for _, outcome in ipairs(outcomes) do
    M.history[#M.history + 1] = { outcome = outcome, at = os.date('%H:%M:%S'), buf = M.shown_buf }
  end
  while #M.history > HISTORY_CAP do
    table.remove(M.history, 1)
  end
  local response = require('volley.response')
  response.show(outcomes, cancelled)
  local message, bad = response.summary(outcomes, cancelled)
  notify(message, bad and vim.log.levels.WARN or vim.log.levels.INFO)
end

--- Sends the request under the cursor (or the one `argument` names) and shows the
--- response. `buf`: the `.http` buffer (the current one by default).
function M.send(argument, buf)
  buf = buf or vim.api.nvim_get_current_buf()
  argument = vim.deepcopy(argument
    or { uri = uri_of(buf), line = vim.api.nvim_win_get_cursor(0)[1] - 1, streamWindowMs = config.stream_window_ms })
  argument.live = start_live()
  last_send = { command = 'volley.send', argument = argument, buf = buf }
  notify('sending…')
  M.execute('volley.send', argument, buf, function(outcome)
    if live.current and live.current.id == argument.live then
      live.current = nil
    end
    -- Sending again picks the same request by its index, wherever the cursor is then.
    local index = type(outcome.request) == 'table' and tonumber(outcome.request.index)
    if index then
      last_send.argument = { uri = argument.uri, index = index, streamWindowMs = argument.streamWindowMs }
    end
    finished({ outcome })
  end)
end

--- Sends every request of the file, in order, and shows the responses.
function M.send_all(argument, buf)
  buf = buf or vim.api.nvim_get_current_buf()
  argument = vim.deepcopy(argument or { uri = uri_of(buf), streamWindowMs = config.stream_window_ms })
  argument.live = start_live()
  last_send = { command = 'volley.sendAll', argument = argument, buf = buf }
  notify('sending every request…')
  M.execute('volley.sendAll', argument, buf, function(result)
    if live.current and live.current.id == argument.live then
      live.current = nil
    end
    finished(result.results, result.cancelled == true)
  end)
end

local function name_or_none(value)
  return (value ~= nil and value ~= vim.NIL and value ~= '') and value or 'none'
end

--- Without a name: shows the active profile and the profiles there are. With one:
--- selects it (`none` selects none).
function M.profile(name)
  local buf = vim.api.nvim_get_current_buf()
  if name == nil then
    M.execute('volley.profiles', { uri = uri_of(buf) }, buf, function(result)
      local message = string.format('profile %s (profiles: %s)', name_or_none(result.active),
        #result.profiles > 0 and table.concat(result.profiles, ', ') or 'none defined')
      if result.error ~= nil and result.error ~= vim.NIL then
        notify(message .. '; volley.jsonc: ' .. tostring(result.error), vim.log.levels.WARN)
      else
        notify(message)
      end
    end)
    return
  end
  local selected = name ~= 'none' and name or vim.NIL
  M.execute('volley.selectProfile', selected, buf, function(result)
    local active = name_or_none(result.active)
    config.profile = active ~= 'none' and active or nil
    notify('profile ' .. active)
  end)
end

--- The profile names of the current buffer's configuration, and `none` (for
--- completion), those starting with `prefix` when given.
function M.profile_names(prefix)
  local buf = vim.api.nvim_get_current_buf()
  local client = M.client(buf)
  if not client then
    return {}
  end
  local params = { command = 'volley.profiles', arguments = { { uri = uri_of(buf) } } }
  local answer = request_sync(client, 'workspace/executeCommand', params, 2000, buf)
  local names = answer and answer.result and answer.result.profiles or {}
  local list = {}
  for _, profile in ipairs(vim.list_extend({ 'none' }, names)) do
    if prefix == nil or vim.startswith(profile, prefix) then
      list[#list + 1] = profile
    end
  end
  return list
end

--- Lets the user pick a profile (`vim.ui.select`) and selects it.
function M.pick_profile()
  local buf = M.source_buf()
  M.execute('volley.profiles', { uri = uri_of(buf) }, buf, function(result)
    local names = vim.list_extend({ 'none' }, result.profiles or {})
    vim.ui.select(names, { prompt = 'Volley profile (active: ' .. name_or_none(result.active) .. ')' }, function(choice)
      if choice then
        M.profile(choice)
      end
    end)
  end)
end

--- Shows the outcomes of the last send again.
function M.last_response()
  if not M.last then
    notify('nothing has been sent yet', vim.log.levels.WARN)
    return
  end
  require('volley.response').show(M.last)
end

-- The actions on the session's responses (lua/volley/actions.lua), under the same names.
local actions = require('volley.actions')
M.rerun = actions.rerun
M.base64_decode = actions.base64_decode
M.save_body = actions.save_body
M.copy_curl = actions.copy_curl
M.show_sent = actions.show_sent
M.show_history = actions.show_history
M.clear_cookies = actions.clear_cookies

-- The commands of `.http` buffers (`http`: true) and of response buffers.
local commands = {
  { 'VolleySend', function() M.send() end, { desc = 'Send the request under the cursor' }, true },
  { 'VolleySendAll', function() M.send_all() end, { desc = 'Send every request of the file' }, true },
  { 'VolleyProfile', function(command)
    M.profile(command.args ~= '' and command.args or nil)
  end, {
    nargs = '?',
    desc = 'Show or select the active configuration profile (`none` selects none)',
    complete = function(prefix)
      return M.profile_names(prefix)
    end,
  }, true },
  { 'VolleyLast', function() M.last_response() end, { desc = 'Show the last response again' } },
  { 'VolleyRerun', function() M.rerun() end, { desc = 'Send the last request (or Send All) again' } },
  { 'VolleySaveBody', function(command) M.save_body(command.args) end,
    { nargs = 1, complete = 'file', desc = "Save the last response's body to a file" } },
  { 'VolleyCopyCurl', function() M.copy_curl() end, { desc = 'Copy the request as a curl command line' } },
  { 'VolleySent', function() M.show_sent() end, { desc = 'Show the last request as it was sent' } },
  { 'VolleyHistory', function() M.show_history() end, { desc = "Pick one of the session's responses" } },
  { 'VolleyClearCookies', function() M.clear_cookies() end, { desc = 'Empty the cookie jar' } },
}

--- Creates the buffer-local commands (all of them in a `.http` buffer, those that do
--- not need one in a response buffer).
function M.buffer_commands(buf, http)
  for _, command in ipairs(commands) do
    if http or not command[4] then
      vim.api.nvim_buf_create_user_command(buf, command[1], command[2], command[3])
    end
  end
end

local keymap_actions = {
  send = { function() M.send() end, 'Volley: send the request under the cursor' },
  send_all = { function() M.send_all() end, 'Volley: send every request' },
  profile = { function() M.pick_profile() end, 'Volley: pick a profile' },
  last_response = { function() M.last_response() end, 'Volley: show the last response' },
  hover = { function() vim.lsp.buf.hover() end, 'Volley: hover' },
}

local function map_keys(buf)
  if config.keymaps == false then
    return
  end
  for action, lhs in pairs(config.keymaps) do
    local entry = keymap_actions[action]
    if entry and type(lhs) == 'string' and lhs ~= '' then
      -- Hover never replaces a mapping of the key, global or buffer-local.
      if action ~= 'hover' or vim.fn.maparg(lhs, 'n') == '' then
        vim.keymap.set('n', lhs, entry[1], { buffer = buf, desc = entry[2] })
      end
    end
  end
end

--- Everything an `http` buffer gets: highlighting (tree-sitter when the parser loads,
--- else the syntax file), completion with `<C-x><C-o>`, the commands, the keys, and the
--- server (unless `vim.g.volley_autostart` is false).
function M.setup_buffer(buf)
  local highlighted = false
  if vim.g.volley_treesitter ~= false then
    highlighted = require('volley.treesitter').start(buf)
  end
  if not highlighted then
    vim.bo[buf].syntax = 'volley_http'
    -- `:syntax on` sets `syntax=http` in a FileType autocommand of its own, which may
    -- run after this one: set it again once they all ran.
    vim.schedule(function()
      if vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].filetype == 'http' and vim.bo[buf].syntax ~= 'volley_http' then
        vim.bo[buf].syntax = 'volley_http'
      end
    end)
  end
  vim.bo[buf].omnifunc = 'v:lua.vim.lsp.omnifunc'
  M.buffer_commands(buf, true)
  map_keys(buf)
  if vim.g.volley_autostart ~= false then
    M.attach(buf)
  end
end

-- The code lenses carry the server's commands (`vim.lsp.codelens.run()` looks here
-- before asking the server); run them through the sends above to show the result.
local function lens_handler(send)
  return function(command, context)
    local argument = vim.tbl_extend('force', command.arguments[1], { streamWindowMs = config.stream_window_ms })
    local buf = context and context.bufnr
    if buf == nil or buf == 0 then
      buf = vim.uri_to_bufnr(argument.uri)
    end
    send(argument, buf)
  end
end
vim.lsp.commands['volley.send'] = lens_handler(function(argument, buf)
  M.send(argument, buf)
end)
vim.lsp.commands['volley.sendAll'] = lens_handler(function(argument, buf)
  M.send_all(argument, buf)
end)

return M
