-- What editors/nvim/test/measure runs in a headless Neovim: a second Neovim (the one
-- measured) sends requests answered by the echo server's `/json/N` (one-line JSON
-- documents of 1 MB, 10 MB and 50 MB) and `/stream/json/N` (1 GB, streamed). While
-- each arrives and is shown, keys are typed into it one after the other (`:let g:typed
-- = N<CR>`, through `nvim_input`); for each, the time until the command it typed has
-- run. Prints, per body, when it was shown (after
-- the send), the longest a key waited, and the memory of the measured Neovim and of
-- its language server.
local work = os.getenv('VOLLEY_TEST_WORK')
local root = os.getenv('VOLLEY_TEST_ROOT')
local url = assert(os.getenv('VOLLEY_ECHO_URL'), 'run under `volley echo-server --port 0 --`')

local file = assert(io.open(work .. '/measure.http', 'w'))
-- /stream/json/N streams its body (never held whole by the echo server): the 1 GB one.
file:write('GET ' .. url .. '/json/1000000\n\n###\nGET ' .. url .. '/json/10000000\n\n###\nGET ' .. url
  .. '/json/50000000\n\n###\n# @timeout 600s\nGET ' .. url .. '/stream/json/1000000000\n')
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

-- Per body: the line of its request in measure.http, and its name.
-- The resident memory of a process and its peak, in MB (Linux).
local function memory(pid)
  local file = pid and io.open('/proc/' .. pid .. '/status')
  if not file then
    return '?'
  end
  local status = file:read('*a')
  file:close()
  local rss, peak = status:match('VmRSS:%s*(%d+)'), status:match('VmHWM:%s*(%d+)')
  return string.format('%.0f MB (peak %.0f MB)', (tonumber(rss) or 0) / 1024, (tonumber(peak) or 0) / 1024)
end
local nvim_pid = child('return vim.fn.getpid()')
-- The measured Neovim's `volley lsp`: its child process whose command line has `lsp`.
local function server_pid()
  local file = io.open('/proc/' .. nvim_pid .. '/task/' .. nvim_pid .. '/children')
  local children = file and file:read('*a') or ''
  if file then
    file:close()
  end
  for pid in children:gmatch('%d+') do
    local cmdline = io.open('/proc/' .. pid .. '/cmdline')
    if cmdline then
      local text = cmdline:read('*a')
      cmdline:close()
      if text:find('lsp', 1, true) then
        return pid
      end
    end
  end
  return nil
end

for _, case in ipairs({ { 1, '1 MB' }, { 4, '10 MB' }, { 7, '50 MB' }, { 11, '1 GB (streamed)' } }) do
  child('vim.g.shown = 0; vim.g.typed = 0')
  local sent = vim.loop.hrtime()
  child('vim.api.nvim_win_set_cursor(0, { ' .. case[1] .. ', 0 }); vim.cmd("VolleySend")')
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
  until shown ~= 0 or (vim.loop.hrtime() - sent) > 600e9
  local received = child('local last = require("volley").last; return last and #last[1].response.body or 0')
  local whole = child('local last = require("volley").last; return last and last[1].response.bodySize or 0')
  io.stdout:write(string.format(
    '%s (%d bytes, %d kept): shown %s after the send; a key waited at most %.0f ms (%d keys typed); '
    .. 'nvim %s, volley lsp %s\n', case[2], whole, received,
    shown ~= 0 and string.format('%.0f ms', (shown - sent) / 1e6) or 'not', longest, typed, memory(nvim_pid),
    memory(server_pid())))
end
vim.fn.jobstop(channel)
vim.cmd('qa!')
