-- What editors/nvim/test/measure runs in a headless Neovim: a second Neovim (the one
-- measured) sends requests answered by a small HTTP server here with JSON bodies of
-- 1 MB, 10 MB, and 10 MB with one item per line. While each arrives and is shown, keys
-- are typed into it one after the other (`:let g:typed = N<CR>`, through `nvim_input`);
-- for each, the time until the command it typed has run. Prints, per body, when it was
-- shown (after the send) and the longest a key waited.
local work = os.getenv('VOLLEY_TEST_WORK')
local root = os.getenv('VOLLEY_TEST_ROOT')

local function json_of_size(bytes, one_per_line)
  local items, total = {}, 0
  while total < bytes do
    local item = string.format('{"id": %d, "name": "item %d", "tags": ["a", "b"], "nested": {"x": %d, "empty": {}}}',
      #items + 1, #items + 1, #items + 1)
    items[#items + 1] = item
    total = total + #item + 1
  end
  return '[' .. table.concat(items, one_per_line and ',\n' or ',') .. ']'
end

local body = ''
local server = vim.loop.new_tcp()
server:bind('127.0.0.1', 0)
server:listen(16, function()
  local connection = vim.loop.new_tcp()
  server:accept(connection)
  local received = ''
  connection:read_start(function(_, chunk)
    if not chunk then
      connection:close()
      return
    end
    received = received .. chunk
    if received:find('\r\n\r\n', 1, true) then
      connection:read_stop()
      connection:write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ' .. #body
        .. '\r\nConnection: close\r\n\r\n' .. body, function()
        connection:shutdown(function()
          connection:close()
        end)
      end)
    end
  end)
end)
local file = assert(io.open(work .. '/measure.http', 'w'))
file:write('GET http://127.0.0.1:' .. server:getsockname().port .. '/big.json\n')
file:close()

local ui = os.getenv('VOLLEY_MEASURE_UI') == '1'
local channel = vim.fn.jobstart({ os.getenv('VOLLEY_TEST_NVIM'), '--embed', ui and '--clean' or '--headless',
  '--clean', '-u', root .. '/editors/nvim/test/minimal_init.lua' }, { rpc = true })
if ui then
  vim.rpcrequest(channel, 'nvim_ui_attach', 160, 50, { ext_linegrid = true })
end
local function child(code, ...)
  return vim.rpcrequest(channel, 'nvim_exec_lua', code, { ... })
end
child('vim.cmd("edit " .. ...)', work .. '/measure.http')
vim.wait(15000, function()
  return child('return require("volley").client(0) ~= nil')
end, 50)
-- The measured Neovim notes when a response is shown whole (not while re-indenting).
child([[
  vim.api.nvim_create_autocmd('FileType', { pattern = 'volley_response', callback = function()
    local head = table.concat(vim.api.nvim_buf_get_lines(0, 0, 30, false), '\n')
    if head:find('HTTP/1.1 200', 1, true) and not head:find('re-indenting', 1, true) then
      vim.g.shown = vim.loop.hrtime()
    end
  end })]])

for _, case in ipairs({ { 1000 * 1000, false, '1 MB' }, { 10 * 1000 * 1000, false, '10 MB' },
  { 10 * 1000 * 1000, true, '10 MB, one item per line' } }) do
  body = json_of_size(case[1], case[2])
  child('vim.g.shown = 0; vim.g.typed = 0')
  local sent = vim.loop.hrtime()
  child('vim.api.nvim_win_set_cursor(0, { 1, 0 }); vim.cmd("VolleySend")')
  local longest, typed = 0, 0
  local shown
  repeat
    vim.wait(10)
    local before = vim.loop.hrtime()
    typed = typed + 1
    vim.rpcrequest(channel, 'nvim_input', ':let g:typed = ' .. typed .. '<CR>')
    while vim.rpcrequest(channel, 'nvim_get_var', 'typed') ~= typed do
      vim.wait(1)
    end
    -- Until the command typed has run and the answer to whether the body is shown is
    -- back: the longest of these is the longest the measured Neovim did not answer.
    shown = vim.rpcrequest(channel, 'nvim_get_var', 'shown')
    longest = math.max(longest, (vim.loop.hrtime() - before) / 1e6)
  until shown ~= 0 or (vim.loop.hrtime() - sent) > 120e9
  io.stdout:write(string.format('%s (%d bytes): shown %s after the send; a key waited at most %.0f ms (%d keys typed)\n',
    case[3], #body, shown ~= 0 and string.format('%.0f ms', (shown - sent) / 1e6) or 'not', longest, typed))
end
vim.fn.jobstop(channel)
server:close()
vim.cmd('qa!')
