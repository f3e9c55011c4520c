-- What editors/nvim/test/measure runs in a headless Neovim: a second Neovim (the one
-- measured) sends requests answered by the echo server's `/json/N` (one-line JSON
-- documents of 1 MB and 10 MB). While each arrives and is shown, keys are typed into it
-- one after the other (`:let g:typed = N<CR>`, through `nvim_input`); for each, the
-- time until the command it typed has run. Prints, per body, when it was shown (after
-- the send) and the longest a key waited.
local work = os.getenv('VOLLEY_TEST_WORK')
local root = os.getenv('VOLLEY_TEST_ROOT')
local url = assert(os.getenv('VOLLEY_ECHO_URL'), 'run under `volley echo-server --port 0 --`')

local file = assert(io.open(work .. '/measure.http', 'w'))
file:write('GET ' .. url .. '/json/1000000\n\n###\nGET ' .. url .. '/json/10000000\n')
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
for _, case in ipairs({ { 1, '1 MB' }, { 4, '10 MB' } }) do
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
  until shown ~= 0 or (vim.loop.hrtime() - sent) > 120e9
  local received = child('local last = require("volley").last; return last and #last[1].response.body or 0')
  io.stdout:write(string.format(
    '%s (%d bytes kept): shown %s after the send; a key waited at most %.0f ms (%d keys typed)\n', case[2], received,
    shown ~= 0 and string.format('%.0f ms', (shown - sent) / 1e6) or 'not', longest, typed))
end
vim.fn.jobstop(channel)
vim.cmd('qa!')
