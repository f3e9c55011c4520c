-- Volley for Neovim: starts `volley lsp` for `http` buffers, runs its commands
-- (`workspace/executeCommand`), and gives `http` buffers their commands and keys. All
-- intelligence is in the server; this file wires it to Neovim, from 0.7.2 on. Sending
-- is lua/volley/send.lua, the response window lua/volley/window.lua.
local M = {}

local sending = require('volley.send')

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
  -- The language server's response history (:VolleyHistory, :VolleyCompare): `nil` for
  -- its default (on: the last 10 responses per request, 100 MiB in all, under
  -- $XDG_CACHE_HOME/volley/history), `false` for none, or `{ dir = '…', perRequest = N,
  -- maxBytes = N }`.
  history = nil,
  -- Buffer-local normal-mode keys of `.http` buffers; `false` (for one, or for
  -- `keymaps` itself) maps nothing. `hover` is mapped only when the key is not mapped
  -- already (by you, or by Neovim 0.10+ on attach).
  keymaps = {
    send = '<LocalLeader>s',
    send_all = '<LocalLeader>a',
    profile = '<LocalLeader>p',
    last_response = '<LocalLeader>r',
    rerun = '<LocalLeader>R',
    paste_curl = '<LocalLeader>c',
    next_request = ']r',
    previous_request = '[r',
    hover = 'K',
  },
  -- The response window: where it opens (`right`, `left`, `above`, `below` or `float`),
  -- the view a new response opens in (`all`, `body`, `filter`, `headers`, `verbose`,
  -- `stats`, `script`), the largest JSON body that is re-indented (larger ones are
  -- shown as received, with a line that says so), and how much of a body over 4 MiB
  -- (which the server keeps whole in a file) the window shows.
  response = {
    position = 'right',
    view = 'all',
    format_max_bytes = 2 * 1024 * 1024,
    preview_bytes = 1024 * 1024,
  },
  -- Buffer-local normal-mode keys of the response window (`false`: none).
  response_keymaps = vim.deepcopy(require('volley.window').default_keys),
}

-- `config.profile` follows the profile the server sends with, as this client last
-- heard it (a selection, or the server naming it).
local config = vim.deepcopy(defaults)

--- Changes the defaults (see `defaults` above). Call it before opening `.http` files.
function M.setup(options)
  options = vim.deepcopy(options or {})
  -- `keymaps = false` is kept as is (tbl_deep_extend would not merge it into a table).
  local keymaps = options.keymaps
  options.keymaps = nil
  local response_keymaps = options.response_keymaps
  options.response_keymaps = nil
  config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), options)
  if keymaps == false then
    config.keymaps = false
  elseif type(keymaps) == 'table' then
    config.keymaps = vim.tbl_extend('force', config.keymaps, keymaps)
  end
  if response_keymaps == false then
    config.response_keymaps = false
  elseif type(response_keymaps) == 'table' then
    config.response_keymaps = vim.tbl_extend('force', config.response_keymaps, response_keymaps)
  end
  local response = require('volley.response')
  response.format_max_bytes = config.response.format_max_bytes
  response.preview_bytes = config.response.preview_bytes
  response.open_key = config.response_keymaps and config.response_keymaps.open_body or nil
  if response.open_key == false or response.open_key == '' then
    response.open_key = nil
  end
end

--- The options in force (`setup`'s, over the defaults).
function M.options()
  return config
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
    -- `prompts`: this plugin answers `volley/prompt` (send.lua's on_prompt).
    init_options = { profile = config.profile, server = config.server, prompts = true, history = config.history },
    on_attach = on_attach,
    handlers = {
      ['volley/stream'] = sending.on_stream,
      ['$/progress'] = sending.on_progress,
      ['volley/prompt'] = sending.on_prompt,
    },
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

-- For the other modules (lua/volley/*.lua): the messages, a request that waits for its
-- answer.
M._notify = notify
M._request_sync = request_sync

--- The `.http` buffer a command runs for: the current one, or from a response buffer
--- the one of the send shown.
function M.source_buf()
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].filetype ~= 'volley_response' then
    return buf
  end
  local send = M.shown and M.shown.send or sending.last()
  if send and vim.api.nvim_buf_is_valid(send.buf) then
    return send.buf
  end
  return buf
end

--- Runs a server command on the buffer's client; `on_result` gets its result.
--- `options.token`: the progress token to send it with; `options.on_error`: called
--- with the message (after it is said) when the command cannot run.
function M.execute(command, argument, buf, on_result, options)
  options = options or {}
  buf = buf or M.source_buf()
  local client = M.client(buf)
  if not client then
    local message = 'the language server is not attached to this buffer (is `volley` on the PATH?)'
    notify(message, vim.log.levels.ERROR)
    if options.on_error then
      options.on_error(message)
    end
    return
  end
  local params = { command = command, arguments = { argument }, workDoneToken = options.token }
  request(client, 'workspace/executeCommand', params, function(err, result)
    if err then
      local message = err.message or tostring(err)
      notify(message, vim.log.levels.ERROR)
      if options.on_error then
        options.on_error(message)
      end
      return
    end
    on_result(result)
  end, buf)
  return client
end

local function uri_of(buf)
  return vim.uri_from_bufnr(buf)
end

-- The sends (lua/volley/send.lua), under the same names. `history`: every outcome of
-- the session; `shown` and `last` (set by lua/volley/window.lua): the send the response
-- window shows and its outcomes.
M.send = sending.send
M.send_all = sending.send_all
M.send_lines = sending.send_lines
M.resend = sending.resend
M.cancel = sending.cancel
M.history = sending.history
M._last_send = sending.last

--- For a statusline: `volley: <active profile>` (and `, sending` while a send is under
--- way) in `.http` and response buffers, else an empty string.
function M.statusline()
  local filetype = vim.bo.filetype
  if filetype ~= 'http' and filetype ~= 'volley_response' then
    return ''
  end
  return 'volley: ' .. (config.profile or 'none') .. (sending.sending() and ', sending' or '')
end

local function name_or_none(value)
  return (value ~= nil and value ~= vim.NIL and value ~= '') and value or 'none'
end

-- Keeps the active profile the server names.
local function heard_profile(value)
  local name = name_or_none(value)
  config.profile = name ~= 'none' and name or nil
  return name
end

--- Without a name: shows the active profile and the profiles there are. With one:
--- selects it (`none` selects none).
function M.profile(name)
  local buf = vim.api.nvim_get_current_buf()
  if name == nil then
    M.execute('volley.profiles', { uri = uri_of(buf) }, buf, function(result)
      local message = string.format('profile %s (profiles: %s)', heard_profile(result.active),
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
    notify('profile ' .. heard_profile(result.active))
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
    vim.ui.select(names, { prompt = 'Volley profile (active: ' .. heard_profile(result.active) .. ')' }, function(choice)
      if choice then
        M.profile(choice)
      end
    end)
  end)
end

--- Shows the send shown last again.
function M.last_response()
  if not require('volley.window').show_current() then
    notify('nothing has been sent yet', vim.log.levels.WARN)
  end
end

-- The actions on the session's responses and on the clipboard (lua/volley/actions.lua),
-- under the same names.
local actions = require('volley.actions')
M.rerun = actions.rerun
M.base64_decode = actions.base64_decode
M.save_body = actions.save_body
M.open_body = actions.open_body
M.copy_curl = actions.copy_curl
M.show_sent = actions.show_sent
M.pick_response = actions.pick_response
M.clear_cookies = actions.clear_cookies
M.paste_curl = actions.paste_curl
M.scratch = actions.scratch

--- Filters the body of the response shown with the jq `expression` (lua/volley/filter.lua);
--- without one, asks for it; `clear`: shows it without a filter.
function M.filter(expression, clear)
  require('volley.filter').ask(expression ~= '' and expression or nil, clear)
end

-- The commands of `.http` buffers (`http`: true) and of response buffers.
local commands = {
  { 'VolleySend', function(command)
    if command.range > 0 then
      M.send_lines(command.line1, command.line2)
    else
      M.send()
    end
  end, { range = true, desc = 'Send the request under the cursor (with a range: the requests it touches)' }, true },
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
  { 'VolleyPasteCurl', function() M.paste_curl() end,
    { desc = 'Add the curl command of the clipboard as a request below the cursor' }, true },
  { 'VolleyLast', function() M.last_response() end, { desc = 'Show the last response again' } },
  { 'VolleyRerun', function() M.rerun() end, { desc = 'Send the last request (or Send All) again' } },
  { 'VolleyCancel', function() M.cancel() end, { desc = 'Cancel the send under way' } },
  { 'VolleySaveBody', function(command) M.save_body(command.args) end,
    { nargs = 1, complete = 'file', desc = "Save the whole body of the response shown to a file" } },
  { 'VolleyOpenBody', function() M.open_body() end,
    { desc = 'Open the whole body of the response shown (a body over 4 MiB, kept in a file)' } },
  { 'VolleyCopyCurl', function() M.copy_curl() end, { desc = 'Copy the request as a curl command line' } },
  { 'VolleySent', function() M.show_sent() end, { desc = 'Show the last request as it was sent' } },
  { 'VolleyResponses', function() M.pick_response() end, { desc = "Pick one of the session's responses" } },
  { 'VolleyHistory', function(command) require('volley.history').pick(command.bang) end,
    { bang = true, desc = "Open a stored response of the file (!: of the project)" } },
  { 'VolleyHistoryDiff', function(command) require('volley.history').pick_diff(command.bang) end,
    { bang = true, desc = 'Diff two stored responses of the file (!: of the project)' } },
  { 'VolleyCompare', function() require('volley.history').compare() end,
    { desc = 'Diff the last response of the request with the one stored before it' } },
  { 'VolleyHistoryClear', function(command) require('volley.history').clear(command.bang) end,
    { bang = true, desc = 'Forget the stored responses of the file (!: of the project)' } },
  { 'VolleyTests', function() require('volley.results').quickfix() end,
    { desc = 'The failures of the last test results in the quickfix list' } },
  { 'VolleySnippet', function(command) require('volley.snippet').snippet(command.args) end, {
    nargs = '?',
    desc = 'The request as code: curl, fetch, python, go (no language: asks)',
    complete = function(prefix)
      return require('volley.snippet').languages(prefix)
    end,
  } },
  { 'VolleyClearCookies', function() M.clear_cookies() end, { desc = 'Empty the cookie jar' } },
  { 'VolleyFilter', function(command) M.filter(command.args, command.bang) end, {
    nargs = '?',
    bang = true,
    desc = 'Filter the body of the response shown with jq (no expression: asks; !: no filter)',
  } },
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

-- The requests a visual selection touches, sent; back to normal mode.
local function send_selection()
  local first, last = vim.fn.line('v'), vim.fn.line('.')
  vim.cmd('normal! ' .. vim.api.nvim_replace_termcodes('<Esc>', true, false, true))
  M.send_lines(math.min(first, last), math.max(first, last))
end

local function jump(direction)
  return function()
    require('volley.requests').jump(direction * vim.v.count1)
  end
end

-- Per action: the function in normal mode, the one in visual mode (when it has one),
-- and the description.
local keymap_actions = {
  send = { function() M.send() end, send_selection, 'Volley: send the request under the cursor (or the selected ones)' },
  send_all = { function() M.send_all() end, nil, 'Volley: send every request' },
  profile = { function() M.pick_profile() end, nil, 'Volley: pick a profile' },
  last_response = { function() M.last_response() end, nil, 'Volley: show the last response' },
  rerun = { function() M.rerun() end, nil, 'Volley: send the request shown again' },
  paste_curl = { function() M.paste_curl() end, nil, 'Volley: add the curl command of the clipboard as a request' },
  next_request = { jump(1), jump(1), 'Volley: the next request' },
  previous_request = { jump(-1), jump(-1), 'Volley: the previous request' },
  hover = { function() vim.lsp.buf.hover() end, nil, 'Volley: hover' },
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
        vim.keymap.set('n', lhs, entry[1], { buffer = buf, desc = entry[3] })
      end
      if entry[2] then
        vim.keymap.set('x', lhs, entry[2], { buffer = buf, desc = entry[3] })
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
