-- What editors/nvim/test/run checks, in a headless Neovim. Each check prints `ok - …`;
-- the first failure exits with 1.
local work = os.getenv('VOLLEY_TEST_WORK')
local url = os.getenv('VOLLEY_ECHO_URL')

-- What the plugin says with vim.notify, for the checks on messages.
local notified = {}
vim.notify = function(message, level, options)
  notified[#notified + 1] = message
end

local function request_sync(client, method, params, timeout, buf)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request_sync(method, params, timeout, buf)
  end
  return client.request_sync(method, params, timeout, buf)
end

local function check(condition, what)
  if not condition then
    error(what, 0)
  end
  io.stdout:write('ok - ' .. what .. '\n')
end

local function wait(what, predicate)
  check(vim.wait(15000, predicate, 50), what)
end

local function write(name, text)
  local file = assert(io.open(work .. '/' .. name, 'w'))
  file:write(text)
  file:close()
end

local function response_lines()
  local buf = vim.fn.bufnr('volley://response')
  if buf == -1 then
    return {}
  end
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function has_line(lines, pattern)
  for _, line in ipairs(lines) do
    if line:find(pattern) then
      return true
    end
  end
  return false
end

local function run()
  check(url ~= nil and url ~= '', 'the echo server is up')
  write('volley.jsonc', string.format([[{
  "variables": { "base": "%s" },
  "profiles": { "dev": { "variables": { "who": "dev" } }, "prod": { "variables": { "who": "prod" } } }
}]], url))
  write('api.http', table.concat({
    '# @name echo',
    '# @assert status == 200',
    'GET {{base}}/echo?from=nvim',
    'X-Test: yes',
    '',
    '###',
    'GET {{base}}/echo/{{nope}}',
    '',
  }, '\n'))

  vim.cmd('edit ' .. work .. '/api.http')
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == 'http', 'a .http file has filetype http')
  wait('volley lsp attaches', function()
    return require('volley').client(buf) ~= nil
  end)
  local parser_loads, why = require('volley.treesitter').load()
  if parser_loads then
    check(vim.treesitter.highlighter.active[buf] ~= nil, 'tree-sitter highlights the buffer (volley_http)')
  else
    check(vim.treesitter.highlighter.active[buf] == nil, 'tree-sitter stays off: ' .. tostring(why))
  end

  wait('diagnostics arrive', function()
    return #vim.diagnostic.get(buf) > 0
  end)
  local undefined
  for _, diagnostic in ipairs(vim.diagnostic.get(buf)) do
    -- 0.7 keeps the LSP code under user_data; later versions also in `code`.
    local lsp = diagnostic.user_data and diagnostic.user_data.lsp or {}
    if (diagnostic.code or lsp.code) == 'undefined-variable' then
      undefined = diagnostic
    end
  end
  check(undefined ~= nil, 'an undefined-variable diagnostic')
  check(undefined.lnum == 6 and undefined.message:find('undefined variable `nope`', 1, true) ~= nil,
    'on line 7: ' .. undefined.message:gsub('\n.*', ''))

  wait('code lenses: Send All and one Send Request per request', function()
    return #vim.lsp.codelens.get(buf) == 3
  end)

  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.cmd('VolleySend')
  wait(':VolleySend shows the response split', function()
    return has_line(response_lines(), '^HTTP/1.1 200 OK')
  end)
  local lines = response_lines()
  check(lines[1] == '# echo', 'the response names the request')
  check(has_line(lines, '^content%-type: application/json'), 'with its headers')
  check(has_line(lines, '"query": "from=nvim"'), 'and its JSON body, re-indented')
  check(has_line(lines, '^✓ status == 200'), 'and the assertion result')
  check(vim.bo[vim.fn.bufnr('volley://response')].filetype == 'json', 'the response buffer has filetype json')
  check(vim.fn.bufwinid('volley://response') ~= -1, 'in a split')
  check(vim.api.nvim_get_current_buf() == buf, 'the cursor stays in the .http file')

  -- The code lens of the request under the cursor runs through the plugin.
  local response = vim.fn.bufnr('volley://response')
  vim.bo[response].modifiable = true
  vim.api.nvim_buf_set_lines(response, 0, -1, false, {})
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.lsp.codelens.run()
  wait('running the Send Request lens shows the response', function()
    return has_line(response_lines(), '^HTTP/1.1 200 OK')
  end)

  vim.cmd('VolleySendAll')
  wait(':VolleySendAll shows both outcomes', function()
    return has_line(response_lines(), '^error%[')
  end)
  check(has_line(response_lines(), 'undefined%-variable'), 'the second request fails with its error kind')

  local names = require('volley').profile_names()
  check(vim.deep_equal(names, { 'none', 'dev', 'prod' }), ':VolleyProfile completes the profiles: ' .. table.concat(names, ' '))
  check(vim.deep_equal(require('volley').profile_names('pr'), { 'prod' }), 'completion keeps the names with the typed prefix')
  vim.cmd('VolleyProfile prod')
  wait(':VolleyProfile prod selects it', function()
    local client = require('volley').client(buf)
    local params = { command = 'volley.profiles', arguments = { { uri = vim.uri_from_bufnr(buf) } } }
    local answer = request_sync(client, 'workspace/executeCommand', params, 2000, buf)
    return answer and answer.result and answer.result.active == 'prod'
  end)
  vim.cmd('VolleyProfile')
  wait(':VolleyProfile without a name shows the active profile', function()
    return notified[#notified] == 'volley: profile prod (profiles: dev, prod)'
  end)
  check(true, 'as: ' .. notified[#notified])

  -- An edit in normal mode (TextChanged) refreshes the lenses.
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '###', 'GET {{base}}/echo/third' })
  vim.cmd('doautocmd <nomodeline> TextChanged')
  wait('after an edit the lenses follow: Send All and three Send Request', function()
    return #vim.lsp.codelens.get(buf) == 4
  end)

  -- A slow event stream: its events show while the server still listens.
  write('stream.http', '# @sse\nGET ' .. url .. '/sse/slow?count=3&interval_ms=400\n')
  vim.cmd('edit ' .. work .. '/stream.http')
  local stream_buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to a second file', function()
    return require('volley').client(stream_buf) ~= nil
  end)
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  require('volley').send({ uri = vim.uri_from_bufnr(stream_buf), index = 0, streamWindowMs = 10000 }, stream_buf)
  wait('a stream shows live: its first event while listening', function()
    local lines = response_lines()
    return lines[1] == 'listening…' and has_line(lines, '^%[%d+ ms%] message #1: {"i": 1}')
  end)
  check(has_line(response_lines(), '^request #1: sse, status 200, 1 item%(s%) so far'), 'with its status and count')
  wait('then the answer replaces the live view', function()
    return has_line(response_lines(), '^sse: 3 item%(s%), stopped: ended')
  end)
end

local ok, err = pcall(run)
if ok then
  io.stdout:write('all checks passed\n')
  vim.cmd('qa!')
else
  io.stderr:write('not ok - ' .. tostring(err) .. '\n')
  for _, message in ipairs(notified) do
    io.stderr:write('  (notified: ' .. message .. ')\n')
  end
  vim.cmd('cquit 1')
end
