-- What editors/nvim/test/run checks, in a headless Neovim. Each check prints `ok - …` or
-- `not ok - …`; a failed wait ends its section (the others still run). The last line is
-- `N passed, N failed`; any failure exits with 1.
local work = os.getenv('VOLLEY_TEST_WORK')
local url = os.getenv('VOLLEY_ECHO_URL')
local root = os.getenv('VOLLEY_TEST_ROOT')
local passed, failed = 0, 0

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
  if condition then
    passed = passed + 1
    io.stdout:write('ok - ' .. what .. '\n')
  else
    failed = failed + 1
    io.stdout:write('not ok - ' .. what .. '\n')
  end
  return condition
end

-- A wait that fails ends the section: what follows depends on it.
local function wait(what, predicate)
  if not check(vim.wait(15000, predicate, 50), what) then
    error('(section stopped)', 0)
  end
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

-- Runs `keys` in the response window (typed, as a user would), then comes back.
local function in_response(keys)
  local back = vim.api.nvim_get_current_win()
  vim.api.nvim_set_current_win(vim.fn.bufwinid('volley://response'))
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'x', false)
  if vim.api.nvim_win_is_valid(back) then
    vim.api.nvim_set_current_win(back)
  end
end

local function has_line(lines, pattern)
  for _, line in ipairs(lines) do
    if line:find(pattern) then
      return true
    end
  end
  return false
end


-- The names of the tree-sitter captures at a 0-based position (0.7: by the query).
local function captures_at(buf, row, col)
  local names = {}
  if vim.treesitter.get_captures_at_pos then
    for _, capture in ipairs(vim.treesitter.get_captures_at_pos(buf, row, col)) do
      names[#names + 1] = capture.capture
    end
    return names
  end
  local parser = vim.treesitter.get_parser(buf, 'volley_http')
  local query = vim.treesitter.get_query('volley_http', 'highlights')
  local tree = parser:parse()[1]
  for id, node in query:iter_captures(tree:root(), buf, row, row + 1) do
    local start_row, start_col, end_row, end_col = node:range()
    local after_start = row > start_row or (row == start_row and col >= start_col)
    local before_end = row < end_row or (row == end_row and col < end_col)
    if after_start and before_end then
      names[#names + 1] = query.captures[id]
    end
  end
  return names
end

-- The syntax group (and the group it ends at) at a 1-based line and column.
local function syntax_at(line, col)
  local id = vim.fn.synID(line, col, 1)
  return vim.fn.synIDattr(id, 'name'), vim.fn.synIDattr(vim.fn.synIDtrans(id), 'name')
end

-- syntax/volley_http.vim in the current buffer, api.http's line 3: `GET {{base}}/echo…`.
local function check_syntax_groups(buf)
  vim.wait(1000, function()
    return vim.bo[buf].syntax == 'volley_http'
  end, 10)
  check(vim.bo[buf].syntax == 'volley_http', 'the syntax file highlights it (syntax=volley_http)')
  -- What a standard group ends at in this colour scheme (Function is Identifier on 0.7).
  local function final(group)
    return vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID(group)), 'name')
  end
  local name, group = syntax_at(3, 1)
  check(name == 'volleyHttpMethod' and group == final('Function'), 'syntax: the method is ' .. name .. ' → ' .. group)
  name, group = syntax_at(3, 7)
  check(name == 'volleyHttpVariable' and group == final('Identifier'), 'syntax: {{base}} is ' .. name .. ' → ' .. group)
  name = syntax_at(1, 3)
  check(name == 'volleyHttpDirective', 'syntax: @name is ' .. name)
  name = syntax_at(4, 1)
  check(name == 'volleyHttpHeaderName', 'syntax: the header name is ' .. name)
  name = syntax_at(6, 1)
  check(name == 'volleyHttpSeparator', 'syntax: ### is ' .. name)
end

-- Opening a file said nothing: no notification, no error, nothing in :messages.
local function check_quiet_open(before, what)
  check(#notified == before, 'opening ' .. what .. ' notifies nothing'
    .. (#notified > before and (': ' .. notified[#notified]) or ''))
  check(vim.v.errmsg == '', 'opening ' .. what .. ' sets no v:errmsg ' .. vim.v.errmsg)
  local messages = vim.fn.execute('messages')
  check(not messages:find('volley') and not messages:find('E%d+:') and not messages:find('rror'),
    'opening ' .. what .. ' leaves nothing in :messages' .. messages:gsub('\n', ' '))
end

-- The response buffer: its own filetype, the view at the top, no `Error` group on its
-- header lines (title, status, headers), and its JSON body highlighted as JSON.
local function check_response_buffer()
  local response = vim.fn.bufnr('volley://response')
  check(vim.bo[response].filetype == 'volley_response', 'the response buffer has filetype volley_response')
  local win = vim.fn.bufwinid(response)
  check(vim.api.nvim_win_get_cursor(win)[1] == 1, 'its view starts at line 1')
  vim.api.nvim_win_call(win, function()
    local lines = vim.api.nvim_buf_get_lines(response, 0, -1, false)
    local errors, json_line = {}, nil
    local blank = nil
    for number, line in ipairs(lines) do
      if line == '' then
        blank = blank or number
      elseif blank and json_line == nil and line:find('"query"', 1, true) then
        json_line = number
      end
      if not blank then
        for col = 1, #line do
          local _, group = syntax_at(number, col)
          if group == 'Error' then
            errors[#errors + 1] = number .. ':' .. col
            break
          end
        end
      end
    end
    check(#errors == 0, 'no Error group on the header lines ' .. table.concat(errors, ' '))
    local name = syntax_at(1, 1)
    check(name == 'volleyResponseTitle', 'the title line is ' .. name)
    name = syntax_at(2, 10)
    check(name == 'volleyResponseSuccess', 'the status 200 is ' .. name)
    name = syntax_at(3, 1)
    check(name == 'volleyResponseHeaderName', 'a header name is ' .. name)
    if json_line then
      local col = lines[json_line]:find('"query"', 1, true) + 1
      name = syntax_at(json_line, col)
      check(name:find('^json') ~= nil, 'the JSON body is highlighted as JSON (' .. name .. ')')
    else
      check(false, 'the JSON body is shown')
    end
  end)
end

local function run()
  check(url ~= nil and url ~= '', 'the echo server is up')
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

  local before = #notified
  vim.v.errmsg = ''
  vim.cmd('edit ' .. work .. '/api.http')
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == 'http', 'a .http file has filetype http')
  wait('volley lsp attaches', function()
    return require('volley').client(buf) ~= nil
  end)
  check_quiet_open(before, 'api.http')
  check(vim.bo[buf].omnifunc == 'v:lua.vim.lsp.omnifunc', 'omnifunc is the LSP one (<C-x><C-o> completes)')
  local k = vim.fn.maparg('K', 'n', false, true)
  check(k.buffer == 1, 'K is mapped in the buffer (hover)')
  check(vim.fn.maparg('<LocalLeader>s', 'n') ~= '' and vim.fn.maparg('<LocalLeader>a', 'n') ~= ''
    and vim.fn.maparg('<LocalLeader>p', 'n') ~= '' and vim.fn.maparg('<LocalLeader>r', 'n') ~= '',
    'the default keys: <LocalLeader>s, a, p, r')
  local parser_loads, why = require('volley.treesitter').load()
  check(parser_loads, 'the parser built from the committed grammar loads: ' .. tostring(why))
  if parser_loads then
    check(vim.treesitter.highlighter.active[buf] ~= nil, 'tree-sitter highlights the buffer (volley_http)')
    local at_method = captures_at(buf, 2, 0)
    local at_variable = captures_at(buf, 2, 6)
    check(vim.tbl_contains(at_method, 'function.method'), 'tree-sitter: the method is @function.method ('
      .. table.concat(at_method, ' ') .. ')')
    check(vim.tbl_contains(at_variable, 'variable'), 'tree-sitter: {{base}} is @variable ('
      .. table.concat(at_variable, ' ') .. ')')
  else
    check(vim.treesitter.highlighter.active[buf] == nil, 'tree-sitter stays off: ' .. tostring(why))
    check_syntax_groups(buf)
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
  check_response_buffer()
  wait('the command line says the outcome', function()
    return (notified[#notified] or ''):find('^volley: 200 OK · %d+ ms · 1/1 assertions$') ~= nil
  end)
  check(true, 'as: ' .. notified[#notified])
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


-- The request under the cursor: a request owns its whole block, so a cursor on its
-- `###` line, `# @name`, a directive, a comment, a header or the body sends it, never the
-- request above (which here is a DELETE).
local function cursor_lines()
  local lines = {
    '### first',             -- 1
    'DELETE ' .. url .. '/echo/one',
    '',
    '### second',            -- 4
    '# @name second',
    '# @timeout 10s',
    '# a comment',
    'POST ' .. url .. '/echo/two',
    'Content-Type: text/plain',
    '',
    'body',                  -- 11
  }
  write('cursor.http', table.concat(lines, '\n') .. '\n')
  vim.cmd('edit ' .. work .. '/cursor.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to cursor.http', function()
    return require('volley').client(buf) ~= nil
  end)
  local response = vim.fn.bufnr('volley://response')
  for line = 1, #lines do
    local expected = line <= 3 and '/echo/one' or '/echo/two'
    if response ~= -1 then
      vim.bo[response].modifiable = true
      vim.api.nvim_buf_set_lines(response, 0, -1, false, {})
    end
    vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    vim.api.nvim_win_set_cursor(0, { line, 0 })
    vim.cmd('VolleySend')
    wait('line ' .. line .. ' (' .. lines[line] .. ') sends ' .. expected, function()
      return has_line(response_lines(), '"path": "' .. expected .. '"')
    end)
    response = vim.fn.bufnr('volley://response')
  end
  check(true, 'every line of a block sends its own request')
end

-- A message longer than the command line never waits for ENTER: it is cut to fit there,
-- and shown whole in a float.
local function long_messages()
  vim.o.columns = 80
  write('preamble.http', '@a = 1\n\n### x\nGET ' .. url .. '/echo\n')
  vim.cmd('edit ' .. work .. '/preamble.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to preamble.http', function()
    return require('volley').client(buf) ~= nil
  end)
  local before = #notified
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd('VolleySend')
  wait('the refusal is said', function()
    return #notified > before and notified[#notified]:find('block without a request', 1, true) ~= nil
  end)
  local said = notified[#notified]
  check(vim.startswith(response_lines()[2] or '', 'not sent: line 1 is in a block without a request'),
    'the response window says it was not sent: ' .. tostring(response_lines()[2]))
  vim.api.nvim_win_call(vim.fn.bufwinid('volley://response'), function()
    check(syntax_at(2, 1) == 'volleyResponseError', 'highlighted as an error: ' .. syntax_at(2, 1))
  end)
  check(vim.fn.strdisplaywidth(said) <= vim.v.echospace, 'cut to the command line (' .. vim.fn.strdisplaywidth(said)
    .. ' of ' .. vim.v.echospace .. ' columns): ' .. said)
  local whole
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      whole = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), ' ')
    end
  end
  check(whole ~= nil and whole:find('anywhere from its `###` line to the next', 1, true) ~= nil,
    'and shown whole in a float: ' .. tostring(whole))
end

-- Before any parser is loaded: a parser that cannot load first on the runtimepath.
-- Opening a file then says so once (and how to rebuild it), without waiting for ENTER,
-- and falls back to the syntax file; a second file says nothing more.
local function unloadable_parser()
  local unloadable = os.getenv('VOLLEY_TEST_UNLOADABLE')
  vim.opt.runtimepath:prepend(unloadable)
  write('plain.http', '# @name echo\n# @assert status == 200\nGET {{base}}/echo?from=nvim\nX-Test: yes\n\n###\n')
  local before = #notified
  vim.v.errmsg = ''
  vim.cmd('edit ' .. work .. '/plain.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('a parser that does not load is said once', function()
    return #notified == before + 1
  end)
  check(notified[#notified]:find('^volley: .*/unloadable/parser/volley_http.so does') ~= nil,
    'naming the parser: ' .. notified[#notified])
  local why = require('volley.treesitter').why
  check(why:find('/unloadable/parser/volley_http.so does not load on this Neovim (', 1, true) ~= nil
    and why:find('): highlighting with the syntax file; rebuild it with editors/nvim/scripts/build-parser', 1, true),
    'the whole message (in a float, and in require("volley.treesitter").why): ' .. why)
  check(vim.treesitter.highlighter.active[buf] == nil, 'the parser is not used')
  check_syntax_groups(buf)
  check(vim.v.errmsg == '', 'no error message ' .. vim.v.errmsg)
  before = #notified
  write('plain2.http', 'GET {{base}}/echo\n')
  vim.cmd('edit ' .. work .. '/plain2.http')
  vim.wait(200)
  check(#notified == before, 'a second file says nothing more')
  vim.cmd('bwipeout! ' .. buf)
  vim.cmd('bwipeout!')
  vim.opt.runtimepath:remove(unloadable)
  -- Forget the failed load, so the next file tries the parser test/run built.
  package.loaded['volley.treesitter'] = nil
end

-- The nodes a query captures as `name` in `buf`, and the metadata of their matches.
local function query_captures(buf, query_name, name)
  local get = vim.treesitter.query and vim.treesitter.query.get or vim.treesitter.get_query
  local query = get('volley_http', query_name)
  local tree = vim.treesitter.get_parser(buf, 'volley_http'):parse()[1]
  local found = {}
  for _, match, metadata in query:iter_matches(tree:root(), buf, 0, -1) do
    for id, nodes in pairs(match) do
      if query.captures[id] == name then
        -- 0.11 gives every node of a capture, earlier versions one.
        local node = type(nodes) == 'table' and nodes[1] or nodes
        found[#found + 1] = { text = vim.treesitter.get_node_text(node, buf), metadata = metadata }
      end
    end
  end
  return found
end

-- With the parser: injections (a JSON body is injected as json) and folds (a request
-- folds from its request line, where Neovim computes tree-sitter folds: 0.9+).
local function injections_and_folds()
  write('inject.http', 'POST {{base}}/echo\nContent-Type: application/json\n\n{"a": 1}\n')
  vim.cmd('edit ' .. work .. '/inject.http')
  local buf = vim.api.nvim_get_current_buf()
  check(vim.treesitter.highlighter.active[buf] ~= nil, 'tree-sitter highlights inject.http')
  local injected = query_captures(buf, 'injections', 'injection.content')
  local language = injected[1] and (injected[1].metadata['injection.language']
    or (injected[1].metadata[1] or {})['injection.language'])
  check(#injected == 1 and vim.trim(injected[1].text) == '{"a": 1}' and language == 'json',
    'the injections query marks the JSON body as json: ' .. vim.inspect(injected):gsub('%s+', ' '))
  local folds = query_captures(buf, 'folds', 'fold')
  check(#folds >= 1 and vim.startswith(folds[1].text, 'POST {{base}}/echo'), 'the folds query folds the request')
  if vim.treesitter.foldexpr then
    vim.wo.foldmethod = 'expr'
    vim.wo.foldexpr = 'v:lua.vim.treesitter.foldexpr()'
    vim.wait(1000, function()
      return vim.fn.foldlevel(4) > 0
    end, 20)
    check(vim.fn.foldlevel(1) == 1 and vim.fn.foldlevel(4) >= 1, 'with foldexpr=v:lua.vim.treesitter.foldexpr() the '
      .. 'request folds (levels ' .. vim.fn.foldlevel(1) .. ', ' .. vim.fn.foldlevel(4) .. ')')
  end
end

-- The syntax file, whatever tree-sitter can do: `vim.g.volley_treesitter = false`.
local function syntax_file()
  vim.g.volley_treesitter = false
  vim.cmd('edit ' .. work .. '/plain.http')
  check_syntax_groups(vim.api.nvim_get_current_buf())
  vim.g.volley_treesitter = nil
end

-- What a snippet inserts, by this Neovim's own snippet parser.
local function expand_snippet(text)
  local ok, grammar = pcall(require, 'vim.lsp._snippet_grammar')
  if ok then
    return tostring(grammar.parse(text))
  end
  return vim.lsp.util.parse_snippet(text)
end

local function completion_and_hover()
  write('complete.http', '# @name echo\n# @description Echoes the request\nGET {{base}}/echo\n\n###\nGET {{base}}/echo?id={{$\n')
  vim.cmd('edit ' .. work .. '/complete.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to complete.http', function()
    return require('volley').client(buf) ~= nil
  end)
  local client = require('volley').client(buf)
  local line = vim.api.nvim_buf_get_lines(buf, 5, 6, false)[1]
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 5, character = #line } }
  local answer = request_sync(client, 'textDocument/completion', params, 5000, buf)
  local items = answer and answer.result or {}
  items = items.items or items
  local function inserted(label)
    for _, item in ipairs(items) do
      if item.label == label or item.label == '$' .. label or item.label:find('^%$?' .. label .. '%(') then
        local text = item.textEdit and item.textEdit.newText or item.insertText or item.label
        if item.insertTextFormat == 2 then
          return expand_snippet(text), text
        end
        return text, text
      end
    end
    return nil, nil
  end
  local uuid, uuid_raw = inserted('uuid')
  -- The `{{` of the line is not closed: the inserted text closes it.
  check(uuid == '$uuid}}', 'completing $uuid inserts $uuid}} (snippet ' .. tostring(uuid_raw) .. ' → ' .. tostring(uuid) .. ')')
  local random, random_raw = inserted('random')
  check(random == '$random(min, max)}}', 'completing $random inserts $random(min, max)}} (snippet '
    .. tostring(random_raw) .. ' → ' .. tostring(random) .. ')')

  -- K (the plugin's mapping, or Neovim's own on 0.10) opens the hover of the request line.
  vim.api.nvim_win_set_cursor(0, { 3, 1 })
  vim.api.nvim_feedkeys('K', 'x', false)
  local hover_text
  wait('K shows the hover of the request', function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        hover_text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
        if hover_text ~= '' then
          return true
        end
      end
    end
    return false
  end)
  check(hover_text:find("/echo", 1, true) ~= nil, "the hover previews the request: " .. hover_text:sub(1, 200):gsub("\n", " "))
  check(hover_text:find('Echoes the request', 1, true) ~= nil, 'with its @description')
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      vim.api.nvim_win_close(win, true)
    end
  end

  -- The response's header line carries the request's @description.
  vim.cmd('VolleySend')
  wait('the response of a described request names it with its description', function()
    return response_lines()[1] == '# echo — Echoes the request'
  end)
end

-- examples/quickstart.http, sent whole: log in, the token, the session cookie.
local function quickstart()
  local text = table.concat(vim.fn.readfile(root .. '/examples/quickstart.http'), '\n')
  vim.fn.mkdir(work .. '/quickstart', 'p')
  write('quickstart/quickstart.http', text)
  vim.cmd('edit ' .. work .. '/quickstart/quickstart.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to quickstart.http', function()
    return require('volley').client(buf) ~= nil
  end)
  vim.cmd('VolleySendAll')
  wait('Send All of quickstart.http answers', function()
    return (notified[#notified] or ''):find('%d+ requests?: ') ~= nil
  end)
  check(true, 'as: ' .. notified[#notified])
  local outcomes = require('volley').last
  local function all_passed(outcome)
    local response = type(outcome.response) == 'table' and outcome.response
    if not response then
      return false
    end
    for _, assertion in ipairs(response.assertions or {}) do
      if not assertion.passed then
        return false
      end
    end
    return true
  end
  check(#outcomes >= 3 and all_passed(outcomes[1]) and all_passed(outcomes[2]), 'login and whoami pass')
  check(#outcomes >= 3 and all_passed(outcomes[3]), 'the session request passes: the login cookie was sent')
  check(not (notified[#notified]):find('failed', 1, true) or (notified[#notified]):find(' 0 failed', 1, true),
    'no request of quickstart.http failed')

  -- :VolleyClearCookies empties the jar: the session request is then refused.
  local cleared
  require('volley').clear_cookies(function(result)
    cleared = result
  end)
  wait(':VolleyClearCookies answers', function()
    return cleared ~= nil
  end)
  check((tonumber(cleared.cleared) or 0) >= 1, 'it cleared the session cookie (' .. tostring(cleared.cleared) .. ')')
  require('volley').send({ uri = vim.uri_from_bufnr(buf), name = 'session' }, buf)
  wait('the session request is sent again', function()
    local last = require('volley').last
    return last and #last == 1 and last[1].request and last[1].request.name == 'session'
  end)
  local session = require('volley').last[1]
  check(session.response and session.response.status == 401, 'without the cookie it gets 401')
end

-- The commands of the response and the .http buffers.
local function commands()
  vim.cmd('edit ' .. work .. '/api.http')
  local buf = vim.api.nvim_get_current_buf()
  local volley = require('volley')
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.cmd('VolleySend')
  wait(':VolleySend answers', function()
    return volley.last and volley.last[1].request.name == 'echo'
  end)
  local body = volley.last[1].response.body

  -- :VolleySaveBody
  vim.cmd('VolleySaveBody ' .. work .. '/body.json')
  local saved = table.concat(vim.fn.readfile(work .. '/body.json', 'b'), '\n')
  check(saved == body, ':VolleySaveBody writes the body as received')

  -- :VolleySent
  vim.cmd('VolleySent')
  local sent = vim.fn.bufnr('volley://sent')
  local sent_lines = sent ~= -1 and vim.api.nvim_buf_get_lines(sent, 0, -1, false) or {}
  check(has_line(sent_lines, '^GET ' .. vim.pesc(url) .. '/echo%?from=nvim'), ':VolleySent shows the request line as sent')
  check(has_line(sent_lines, '^[Xx]%-[Tt]est: yes$'), 'and its headers: ' .. table.concat(sent_lines, ' | '))

  -- :VolleyRerun, from the response buffer.
  local count = #volley.history
  vim.cmd('wincmd l')
  vim.cmd('buffer volley://response')
  check(vim.fn.exists(':VolleyRerun') == 2 and vim.fn.exists(':VolleySaveBody') == 2, 'the response buffer has the commands')
  -- Scrolled to its end, the view goes back to the top for the next response.
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(0), 0 })
  vim.cmd('VolleyRerun')
  wait(':VolleyRerun sends the last request again', function()
    return #volley.history == count + 1
  end)
  check(volley.history[#volley.history].outcome.request.name == 'echo', 'the same request')
  check(vim.api.nvim_win_get_cursor(0)[1] == 1 and vim.fn.line('w0') == 1, 'the new response is shown from its top')
  vim.cmd('wincmd p')

  -- :VolleyResponses: pick the oldest response of the session (the last entry: newest first).
  local original_select = vim.ui.select
  local offered
  vim.ui.select = function(items, options, on_choice)
    offered = {}
    for _, item in ipairs(items) do
      offered[#offered + 1] = options.format_item and options.format_item(item) or item
    end
    on_choice(items[#items])
  end
  vim.cmd('VolleyResponses')
  vim.ui.select = original_select
  check(offered and #offered == #volley.history, ':VolleyResponses offers every response (' .. #(offered or {}) .. ')')
  check(offered and offered[1]:find('^%d%d:%d%d:%d%d  echo  200 OK') ~= nil, 'newest first: ' .. tostring(offered and offered[1]))
  check(response_lines()[1] == '# echo', 'picking one shows it')

  -- The response picked from :VolleyResponses is the one :VolleySaveBody saves, not the newest.
  write('two.http', 'GET ' .. url .. '/echo?pick=first\n\n###\nGET ' .. url .. '/echo?pick=second\n')
  vim.cmd('edit ' .. work .. '/two.http')
  local two = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to two.http', function()
    return volley.client(two) ~= nil
  end)
  for index, pick in ipairs({ 'first', 'second' }) do
    volley.send({ uri = vim.uri_from_bufnr(two), index = index - 1 }, two)
    wait('the ' .. pick .. ' response arrives', function()
      local response = volley.last and volley.last[1].response
      return type(response) == 'table' and response.body:find('pick=' .. pick, 1, true) ~= nil
    end)
  end
  vim.ui.select = function(items, _, on_choice)
    vim.ui.select = original_select
    for _, item in ipairs(items) do
      local response = item.outcome.response
      if type(response) == 'table' and response.body:find('pick=first', 1, true) then
        on_choice(item)
        return
      end
    end
  end
  vim.cmd('VolleyResponses')
  vim.cmd('VolleySaveBody ' .. work .. '/picked.json')
  local picked = table.concat(vim.fn.readfile(work .. '/picked.json', 'b'), '\n')
  check(picked:find('pick=first', 1, true) ~= nil, ':VolleySaveBody saves the response picked from :VolleyResponses')
  local before = #volley.history
  vim.cmd('VolleyRerun')
  wait(':VolleyRerun sends the picked response\'s request again', function()
    local newest = #volley.history > before and volley.history[#volley.history].outcome.response
    return type(newest) == 'table' and newest.body:find('pick=first', 1, true) ~= nil
  end)
  vim.cmd('edit ' .. work .. '/api.http')

  -- The profile picker key.
  vim.ui.select = function(items, _, on_choice)
    vim.ui.select = original_select
    on_choice(items[2])
  end
  vim.cmd('normal \\p')
  wait('the profile key picks a profile (dev)', function()
    return notified[#notified] == 'volley: profile dev'
  end)

  -- The echo server's bodies: 1024 bytes that are not UTF-8, and 5,000,000 bytes of text
  -- (over the 4 MiB an outcome carries).
  write('files.http', 'GET ' .. url .. '/bytes/1024\n\n###\nGET ' .. url .. '/text/5000000\n')
  vim.cmd('edit ' .. work .. '/files.http')
  local files = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to files.http', function()
    return volley.client(files) ~= nil
  end)
  volley.send({ uri = vim.uri_from_bufnr(files), index = 0 }, files)
  wait('a binary body arrives', function()
    return volley.last and volley.last[1].response and volley.last[1].response.bodyEncoding == 'base64'
  end)
  vim.cmd('VolleySaveBody ' .. work .. '/binary.bin')
  local counting = {}
  for index = 0, 1023 do
    counting[#counting + 1] = string.char(index % 256)
  end
  local expected = table.concat(counting)
  local got = assert(io.open(work .. '/binary.bin', 'rb')):read('*a')
  check(got == expected, ':VolleySaveBody decodes a base64 body (' .. #got .. ' bytes)')
  -- A body over the 4 MiB an outcome keeps: a preview in the window, the whole body in
  -- the server's file, which :VolleySaveBody copies and gf opens.
  volley.send({ uri = vim.uri_from_bufnr(files), index = 1 }, files)
  wait('a truncated body arrives', function()
    return volley.last and volley.last[1].response and volley.last[1].response.truncated == true
  end)
  local cut = volley.last[1].response
  check(cut.bodySize == 5000000 and type(cut.bodyFile) == 'string' and vim.fn.getfsize(cut.bodyFile) == 5000000,
    'with its size and the whole body in a file: ' .. tostring(cut.bodySize) .. ' ' .. tostring(cut.bodyFile))
  local lines = response_lines()
  local head, shown, tail
  for number, line in ipairs(lines) do
    if line:find('^%(showing the first') then
      head, shown, tail = line, lines[number + 1], lines[number + 2]
    end
  end
  check(head == '(showing the first 1.0 MB of 4.8 MB: gf or :VolleyOpenBody opens the whole body, '
    .. ':VolleySaveBody saves it)', 'the window says how much it shows: ' .. tostring(head))
  check(shown ~= nil and #shown == 1024 * 1024 and shown:find('^a+$') ~= nil,
    'and shows the first MiB only (' .. #(shown or '') .. ' bytes)')
  check(tail == '(3.8 MB not shown: gf or :VolleyOpenBody opens the whole body)', 'then what is not: ' .. tostring(tail))
  local saved_whole
  volley.save_body(work .. '/big.txt', function(ok)
    saved_whole = ok
  end)
  wait(':VolleySaveBody copies the whole body', function()
    return saved_whole ~= nil
  end)
  local whole = assert(io.open(work .. '/big.txt', 'rb')):read('*a')
  check(saved_whole and #whole == 5000000 and whole:find('^a+$') ~= nil, 'all 5,000,000 bytes of it (' .. #whole .. ')')
  -- (The path is cut to fit the command line.)
  check(vim.startswith(notified[#notified], 'volley: saved the whole body (5000000 bytes) to /'),
    'saying so: ' .. notified[#notified])
  local windows = #vim.api.nvim_list_wins()
  in_response('gf')
  local opened
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)) == cut.bodyFile then
      opened = win
    end
  end
  check(opened ~= nil and #vim.api.nvim_list_wins() == windows + 1, 'gf in the response window opens the body file in a split')
  if opened then
    local body_buf = vim.api.nvim_win_get_buf(opened)
    check(vim.api.nvim_buf_line_count(body_buf) == 1 and #vim.api.nvim_buf_get_lines(body_buf, 0, 1, false)[1] == 5000000
      and vim.bo[body_buf].readonly, 'the whole body, read-only')
    vim.api.nvim_win_close(opened, true)
  end

  -- HTML and XML bodies, each highlighted by its content type in one response buffer.
  write('markup.http', 'GET ' .. url .. '/html\n\n###\nGET ' .. url .. '/xml\n')
  vim.cmd('edit ' .. work .. '/markup.http')
  local markup = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to markup.http', function()
    return volley.client(markup) ~= nil
  end)
  vim.cmd('VolleySendAll')
  wait('Send All shows the HTML and the XML body', function()
    return has_line(response_lines(), '^<order id="1">')
  end)
  local response = vim.fn.bufnr('volley://response')
  vim.api.nvim_win_call(vim.fn.bufwinid(response), function()
    local lines = vim.api.nvim_buf_get_lines(response, 0, -1, false)
    local html_group, xml_group, header_group = '', '', ''
    for number, line in ipairs(lines) do
      if line:find('^<body>') then
        html_group = syntax_at(number, 2)
      elseif line:find('^<order') then
        xml_group = syntax_at(number, 2)
      elseif line:lower():find('^content%-type: text/html') then
        header_group = syntax_at(number, 1)
      end
    end
    check(html_group:find('^html') ~= nil, 'the HTML body is highlighted as HTML (' .. html_group .. ')')
    check(xml_group:find('^xml') ~= nil, 'the XML body is highlighted as XML (' .. xml_group .. ')')
    check(header_group == 'volleyResponseHeaderName', 'the headers between them stay headers (' .. header_group .. ')')
  end)
end

-- :VolleyCopyCurl, from the .http buffer: the request under the cursor.
local function copy_curl()
  vim.cmd('edit ' .. work .. '/api.http')
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  -- :VolleyCopyCurl (from the .http buffer, the request under the cursor)
  vim.fn.setreg('"', '')
  vim.cmd('VolleyCopyCurl')
  wait(':VolleyCopyCurl fills the " register', function()
    return vim.fn.getreg('"'):find('^curl ') ~= nil
  end)
  local curl = vim.fn.getreg('"')
  check(curl:find(url .. '/echo?from=nvim', 1, true) ~= nil and curl:lower():find('x-test: yes', 1, true) ~= nil,
    'with the resolved URL and the header: ' .. curl:gsub('\n', ' '))

end

-- The cURL paste code action, through vim.lsp.buf.code_action().
local function code_action()
  write('curl.http', 'curl -X POST ' .. url .. "/echo \\\n  -H 'X-From: curl' \\\n  -d 'hello'\n")
  vim.cmd('edit ' .. work .. '/curl.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to curl.http', function()
    return require('volley').client(buf) ~= nil
  end)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local original_select = vim.ui.select
  local titles = {}
  vim.ui.select = function(items, options, on_choice)
    for _, item in ipairs(items) do
      local action = item.action or item[2]
      titles[#titles + 1] = action and action.title or tostring(item)
      if action and action.title == 'Convert cURL command to request' then
        on_choice(item)
        return
      end
    end
    on_choice(nil)
  end
  vim.lsp.buf.code_action()
  -- (curl follows no redirect unless told: the request may start with `# @no-redirect`.)
  local ok = vim.wait(15000, function()
    return has_line(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '^POST ' .. vim.pesc(url) .. '/echo$')
  end, 50)
  vim.ui.select = original_select
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  check(ok, 'the code action "Convert cURL command to request" rewrites the lines (offered: '
    .. table.concat(titles, ', ') .. '): ' .. table.concat(lines, ' | '))
  check(has_line(lines, '^X%-From: curl$') and has_line(lines, '^hello$'), 'into the request, its header and body')
end

-- A response handler: its tests and its failure among the results, its log lines after
-- them, in the response buffer.
local function scripts()
  write('scripts.http', table.concat({
    '### login',
    'POST {{base}}/login',
    'Content-Type: application/json',
    '',
    '{"user": "ada", "password": "lovelace"}',
    '',
    '> {%',
    '  client.global.set("token", response.body.token);',
    '  client.log("got", response.status);',
    '  client.test("ok", () => client.assert(response.status === 200));',
    '  client.test("created", () => client.assert(response.status === 201, "status " + response.status));',
    '  response.body.missing.field;',
    '%}',
    '',
  }, '\n'))
  vim.cmd('edit ' .. work .. '/scripts.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to scripts.http', function()
    return require('volley').client(buf) ~= nil
  end)
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.cmd('VolleySend')
  wait(':VolleySend shows the log line of the handler', function()
    return has_line(response_lines(), '^log got 200$')
  end)
  local lines = response_lines()
  check(lines[1] == '# login', 'the response of the request with the handler')
  check(has_line(lines, '^✓ ok$'), 'its passed test')
  check(has_line(lines, '^✗ created — AssertionError: status 200$'), 'its failed test, with what it threw')
  check(has_line(lines, "^✗ response handler — TypeError: cannot read property 'field' of undefined$"),
    'the handler that threw, with its message')
  local result, log
  for number, line in ipairs(lines) do
    if line == '✓ ok' then
      result = number
    elseif line == 'log got 200' then
      log = number
    end
  end
  check(result ~= nil and log ~= nil and result < log, 'the log line after the results')
  local response = vim.fn.bufnr('volley://response')
  vim.api.nvim_win_call(vim.fn.bufwinid(response), function()
    local name = syntax_at(log, 1)
    check(name == 'volleyResponseLog', 'the log line is ' .. name)
  end)
  wait('the command line counts the tests among the assertions', function()
    return (notified[#notified] or ''):find('^volley: 200 OK · %d+ ms · 1/3 assertions$') ~= nil
  end)
  check(true, 'as: ' .. notified[#notified])
end

-- httpyac's prompts: asked on the command line (`input` with the default, `inputlist`
-- for a pick); the answers are sent, a cancelled one refuses the request.
local function prompts()
  write('prompts.http', table.concat({
    'GET {{base}}/echo?who={{$input Your name $value: ada}}&env={{$pick environment $value: dev, prod}}',
    '',
    '###',
    'GET {{base}}/echo?token={{$password API token}}',
    '',
  }, '\n'))
  vim.cmd('edit ' .. work .. '/prompts.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to prompts.http', function()
    return require('volley').client(buf) ~= nil
  end)
  local original = { input = vim.fn.input, inputlist = vim.fn.inputlist, inputsecret = vim.fn.inputsecret }
  local asked = {}
  vim.fn.input = function(options)
    asked[#asked + 1] = options
    return 'grace'
  end
  vim.fn.inputlist = function(lines)
    asked[#asked + 1] = lines
    return 2
  end
  local secret
  vim.fn.inputsecret = function(prompt)
    secret = prompt
    return ''
  end
  local ok, err = pcall(function()
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.cmd('VolleySend')
    wait(':VolleySend sends what the prompts answered', function()
      return has_line(response_lines(), 'who=grace&env=prod')
    end)
    check(asked[1].prompt == 'Volley: Your name: ' and asked[1].default == 'ada', 'the input shows its label and default')
    check(asked[2][1] == 'Volley: environment' and asked[2][3] == '2. prod', 'the pick lists its choices')
    vim.api.nvim_win_set_cursor(0, { 4, 0 })
    vim.cmd('VolleySend')
    wait('a cancelled prompt refuses the request, naming it', function()
      return table.concat(response_lines(), '\n'):find('`API token` was not answered', 1, true) ~= nil
    end)
    check(secret == 'Volley: API token: ', 'a password is asked hidden: ' .. tostring(secret))
  end)
  for name, fn in pairs(original) do
    vim.fn[name] = fn
  end
  if not ok then
    error(err, 0)
  end
end

-- setup({ keymaps = … }): a key changed, all of them off.
local function keymaps()
  local volley = require('volley')
  volley.setup({ cmd = { os.getenv('VOLLEY_TEST_BIN'), 'lsp' }, keymaps = { send = '<F5>', profile = false } })
  write('keys.http', 'GET {{base}}/echo\n')
  vim.cmd('edit ' .. work .. '/keys.http')
  check(vim.fn.maparg('<F5>', 'n') ~= '' and vim.fn.maparg('<LocalLeader>s', 'n') == '', 'keymaps: send moved to <F5>')
  check(vim.fn.maparg('<LocalLeader>p', 'n') == '' and vim.fn.maparg('<LocalLeader>a', 'n') ~= '',
    'keymaps: profile off, the others kept')
  volley.setup({ cmd = { os.getenv('VOLLEY_TEST_BIN'), 'lsp' }, keymaps = false })
  write('nokeys.http', 'GET {{base}}/echo\n')
  vim.cmd('edit ' .. work .. '/nokeys.http')
  -- (Neovim 0.10+ maps K to hover itself when the server attaches: not the plugin's.)
  check(vim.fn.maparg('<LocalLeader>a', 'n') == '' and vim.fn.maparg('K', 'n', false, true).desc ~= 'Volley: hover',
    'keymaps = false: nothing mapped by the plugin')
  vim.keymap.set('n', 'K', '<Nop>')
  volley.setup({ cmd = { os.getenv('VOLLEY_TEST_BIN'), 'lsp' } })
  write('userk.http', 'GET {{base}}/echo\n')
  vim.cmd('edit ' .. work .. '/userk.http')
  check(vim.fn.maparg('K', 'n', false, true).desc ~= 'Volley: hover', 'a K the user mapped is kept')
  vim.keymap.del('n', 'K')
end


-- The winbar of the response window ('' where there is none: Neovim 0.7).
local function winbar()
  local win = vim.fn.bufwinid('volley://response')
  return (win ~= -1 and vim.fn.exists('+winbar') == 1) and vim.wo[win].winbar or ''
end

-- The response window: its views by key, its history by `[` and `]`, its winbar, a Send
-- All's summary with the failures first, `q`, and the float.
local function response_window()
  local volley = require('volley')
  write('views.http', table.concat({
    '# @name echo',
    '# @assert status == 200',
    'GET {{base}}/echo?from=views',
    'X-Test: yes',
    '',
    '### second',
    'GET {{base}}/status/201',
    '',
    '### broken',
    '# @assert status == 500',
    'GET {{base}}/echo/{{nope}}',
    '',
  }, '\n'))
  vim.cmd('edit ' .. work .. '/views.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to views.http', function()
    return volley.client(buf) ~= nil
  end)
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.cmd('VolleySend')
  wait('the response of echo', function()
    return has_line(response_lines(), '"query": "from=views"')
  end)
  local function view_is(key, what, predicate)
    in_response(key)
    local lines = response_lines()
    check(predicate(lines), key .. ' shows ' .. what .. ': ' .. table.concat(lines, ' | '):sub(1, 300))
  end
  view_is('H', 'the status and headers only', function(lines)
    return lines[1] == '# echo' and lines[2]:find('^HTTP/1.1 200 OK') ~= nil
      and has_line(lines, '^content%-type: application/json') and not has_line(lines, '"query"')
  end)
  view_is('B', 'the body only', function(lines)
    return has_line(lines, '"query": "from=views"') and not has_line(lines, '^HTTP/') and not has_line(lines, '^✓')
  end)
  view_is('V', 'the request as sent, then the response', function(lines)
    return lines[2] == '# sent' and has_line(lines, '^GET ' .. vim.pesc(url) .. '/echo%?from=views')
      and has_line(lines, '^[Xx]%-[Tt]est: yes$') and has_line(lines, '^# received$') and has_line(lines, '^HTTP/1.1 200 OK')
  end)
  view_is('S', 'the timings and sizes', function(lines)
    vim.api.nvim_win_call(vim.fn.bufwinid('volley://response'), function()
      check(syntax_at(2, 1) == 'volleyResponseStatLabel', 'its labels highlighted: ' .. syntax_at(2, 1))
    end)
    return has_line(lines, '^status      200 OK %(HTTP/1.1%)$') and has_line(lines, '^time        [%d.]+ ms in all: ')
      and has_line(lines, '^body        %d+') and has_line(lines, '^assertions  1/1 passed$')
  end)
  view_is('O', 'the assertion results', function(lines)
    return lines[2] == '' and lines[3] == '✓ status == 200' and #lines == 3
  end)
  view_is('A', 'everything again', function(lines)
    return lines[2]:find('^HTTP/1.1 200 OK') ~= nil and has_line(lines, '"query"') and has_line(lines, '^✓ status == 200')
  end)
  if vim.fn.exists('+winbar') == 1 then
    local bar = winbar()
    check(bar:find('echo', 1, true) and bar:find('200 OK', 1, true) and bar:find('%d+ ms') and bar:find('profile ', 1, true)
      and bar:find('view all', 1, true), 'the winbar names the request, status, time, profile and view: ' .. bar)
  else
    check(response_lines()[1] == '# echo', 'no winbar on this Neovim: the first line names the request')
  end

  -- A second send, then back and forth through the window's history.
  vim.api.nvim_win_set_cursor(0, { 7, 0 })
  vim.cmd('VolleySend')
  wait('the response of second', function()
    return response_lines()[1] == '# second' and has_line(response_lines(), '^HTTP/1.1 201')
  end)
  in_response('[')
  check(response_lines()[1] == '# echo', '[ shows the previous response: ' .. tostring(response_lines()[1]))
  check(volley.last[1].request.name == 'echo', 'which the commands then act on')
  in_response(']')
  check(response_lines()[1] == '# second', '] the next one: ' .. tostring(response_lines()[1]))
  local count = #volley.history
  in_response('R')
  wait('R in the response window sends the request shown again', function()
    return #volley.history == count + 1
  end)
  check(volley.history[#volley.history].outcome.request.name == 'second', 'the one shown (second)')

  -- The done signs: ✓ on a request that passed.
  local signs = require('volley.requests').signs(buf)
  check(vim.tbl_contains(vim.tbl_map(function(sign) return sign[1] .. sign[2] end, signs), '6✓'),
    'a ✓ sign on the request line of the request that passed: '
    .. table.concat(vim.tbl_map(function(sign) return sign[1] .. ':' .. sign[2] end, signs), ' '))

  -- Send All: a summary, the failure first, <CR> on it goes to its section.
  vim.cmd('VolleySendAll')
  wait('Send All shows its summary', function()
    return (response_lines()[1] or ''):find('^# 3 requests: ') ~= nil
  end)
  local lines = response_lines()
  check(lines[1] == '# 3 requests: 2 passed, 0 failed, 1 error · 1/1 assertions', 'the summary on top: ' .. lines[1])
  check(lines[2]:find('^✗ broken  error%[undefined%-variable%]') ~= nil, 'the failure first: ' .. lines[2])
  check(lines[3]:find('^✓ echo  200 OK') ~= nil and lines[4]:find('^✓ second  201 Created') ~= nil,
    'then the others in order: ' .. lines[3] .. ' | ' .. lines[4])
  local response = vim.fn.bufnr('volley://response')
  local win = vim.fn.bufwinid(response)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { 2, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  local at = vim.api.nvim_win_get_cursor(win)[1]
  check(lines[at] == '# broken' and lines[at + 1]:find('^error%[undefined%-variable%]') ~= nil,
    '<CR> on its summary line goes to its section (line ' .. at .. ': ' .. tostring(lines[at]) .. ')')
  local marks = {}
  for _, sign in ipairs(require('volley.requests').signs(buf)) do
    marks[#marks + 1] = sign[1] .. sign[2]
  end
  check(table.concat(marks, ' ') == '2✓ 6✓ 10✗', 'Send All marks each request line ✓ or ✗: ' .. table.concat(marks, ' '))

  -- q closes the window.
  vim.api.nvim_feedkeys('q', 'x', false)
  check(vim.fn.bufwinid('volley://response') == -1, 'q closes the response window')

  -- A float, by option.
  volley.setup({ cmd = { os.getenv('VOLLEY_TEST_BIN'), 'lsp' }, stream_window_ms = 200, response = { position = 'float' } })
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.cmd('VolleySend')
  wait('with response.position = "float" the response opens in a float', function()
    local float = vim.fn.bufwinid('volley://response')
    return float ~= -1 and vim.api.nvim_win_get_config(float).relative ~= '' and has_line(response_lines(), '^HTTP/1.1 200')
  end)
  check(vim.api.nvim_get_current_win() == vim.fn.bufwinid('volley://response'), 'which takes the cursor')
  vim.api.nvim_feedkeys('q', 'x', false)
  check(vim.fn.bufwinid('volley://response') == -1 and vim.api.nvim_get_current_buf() == buf, 'and q closes it')
  volley.setup({ cmd = { os.getenv('VOLLEY_TEST_BIN'), 'lsp' }, stream_window_ms = 200 })
end

-- Cancelling: <C-c> in the response window stops a slow request, :VolleyCancel a Send
-- All (even asked before the server began it); a … sign while sending.
local function cancel()
  local volley = require('volley')
  write('slow.http', 'GET {{base}}/slow?ms=8000\n\n###\nGET {{base}}/echo?after=slow\n')
  vim.cmd('edit ' .. work .. '/slow.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to slow.http', function()
    return volley.client(buf) ~= nil
  end)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local started = vim.loop.hrtime()
  vim.cmd('VolleySend')
  local signs = require('volley.requests').signs(buf)
  check(#signs == 1 and signs[1][1] == 0 and signs[1][2] == '…', 'a … sign on the request line while sending')
  check(response_lines()[1] == '# GET {{base}}/slow?ms=8000' and response_lines()[2] == 'sending… (<C-c> cancels)',
    'the response window says what it is sending: ' .. table.concat(response_lines(), ' | '))
  check(volley.statusline():find(', sending$') ~= nil, 'so does the statusline component: ' .. volley.statusline())
  -- Once the server has begun (its progress), <C-c> in the response window.
  wait('the server begins the send (its progress)', function()
    return select(2, require('volley.send').sending())
  end)
  in_response('<C-c>')
  wait('<C-c> in the response window cancels the request', function()
    return has_line(response_lines(), '^error%[cancelled%]')
  end)
  local seconds = (vim.loop.hrtime() - started) / 1e9
  check(seconds < 6, string.format('long before the server answers (%.1f s of 8)', seconds))
  signs = require('volley.requests').signs(buf)
  check(#signs == 1 and signs[1][2] == '✗', 'the sign turns to ✗')

  started = vim.loop.hrtime()
  vim.cmd('VolleySendAll')
  vim.cmd('VolleyCancel')
  wait(':VolleyCancel right after Send All stops it', function()
    return has_line(response_lines(), '^%(cancelled: the other requests were not sent%)$')
  end)
  check(not has_line(response_lines(), 'after=slow'), 'the request after the slow one was not sent')
  seconds = (vim.loop.hrtime() - started) / 1e9
  check(seconds < 6, string.format('long before the slow request would answer (%.1f s of 8)', seconds))
  vim.cmd('VolleyCancel')
  check(notified[#notified] == 'volley: nothing is being sent', ':VolleyCancel with nothing under way says so')
end

-- ]r and [r between request lines; a visual selection (and a range) sends the requests
-- it touches.
local function motions_and_selection()
  local volley = require('volley')
  vim.cmd('edit ' .. work .. '/cursor.http')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local function keys(typed)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(typed, true, false, true), 'x', false)
    return vim.api.nvim_win_get_cursor(0)[1]
  end
  check(keys(']r') == 2, ']r goes to the first request line (2)')
  check(keys(']r') == 8, ']r again to the next (8)')
  check(keys(']r') == 8, ']r on the last stays')
  check(keys('[r') == 2, '[r goes back (2)')
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  check(keys('2]r') == 8, 'with a count: 2]r from the top (8)')

  -- Lines 3–5: the end of the first block and the `###` of the second.
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  keys('Vjj\\s')
  wait('a visual selection over two blocks sends both requests', function()
    return (response_lines()[1] or ''):find('^# 2 requests: ') ~= nil
  end)
  check(vim.fn.mode() == 'n', 'and leaves visual mode')
  check(has_line(response_lines(), '"path": "/echo/one"') and has_line(response_lines(), '"path": "/echo/two"'),
    'the DELETE and the POST')
  check(winbar() == '' or winbar():find('2 requests of lines 3–5', 1, true) ~= nil, 'named in the winbar: ' .. winbar())
  vim.api.nvim_set_current_buf(buf)
  vim.cmd('9,11VolleySend')
  wait(':9,11VolleySend sends the one request of those lines', function()
    return response_lines()[1] == '# second' and has_line(response_lines(), '"path": "/echo/two"')
  end)

  -- A request that reads another's response: the server sends that one first, and both
  -- show as one entry.
  write('reads.http', '### source\nGET {{base}}/echo?from=source\n\n### reader\nGET {{base}}/echo?read={{source.response.body.$.query}}\n')
  vim.cmd('edit ' .. work .. '/reads.http')
  local reads = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to reads.http', function()
    return volley.client(reads) ~= nil
  end)
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  vim.cmd('VolleySend')
  wait('sending a request that reads another shows both', function()
    return (response_lines()[1] or ''):find('^# 2 requests: ') ~= nil
  end)
  local lines = response_lines()
  check(lines[1] == '# 2 requests: 2 passed, 0 failed, 0 errors' and has_line(lines, '"query": "read=from=source"'),
    'the one sent first, then it: ' .. table.concat(lines, ' | '):sub(1, 600))
  check(winbar() == '' or winbar():find('reader and the requests it reads', 1, true) ~= nil, 'named so: ' .. winbar())
end

-- :VolleyScratch, a curl command from the clipboard as a request, the statusline.
local function scratch_and_paste()
  local volley = require('volley')
  vim.cmd('cd ' .. work)
  vim.cmd('VolleyScratch')
  local buf = vim.api.nvim_get_current_buf()
  check(vim.api.nvim_buf_get_name(buf) == work .. '/volley-scratch.http' and vim.bo[buf].buftype == 'nofile'
    and vim.bo[buf].filetype == 'http', ':VolleyScratch opens an http buffer that is never written')
  wait('the server attaches to it', function()
    return volley.client(buf) ~= nil
  end)
  vim.fn.setreg('"', 'curl -X POST ' .. url .. "/echo -H 'X-From: clipboard' -d 'pasted'")
  vim.cmd('VolleyPasteCurl')
  wait(':VolleyPasteCurl adds the request of the curl command', function()
    return has_line(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '^POST ' .. vim.pesc(url) .. '/echo$')
  end)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  check(has_line(lines, '^X%-From: clipboard$') and has_line(lines, '^pasted$') and has_line(lines, '^###$'),
    'after a ### line, with its header and body: ' .. table.concat(lines, ' | '))
  local cursor = vim.api.nvim_win_get_cursor(0)[1]
  check(lines[cursor]:find('^POST ') ~= nil, 'the cursor on its request line')
  vim.cmd('VolleySend')
  wait('the pasted request is sent from the scratch buffer', function()
    return has_line(response_lines(), '"body": "pasted"')
  end)
  check(vim.tbl_count(vim.tbl_filter(function(b) return vim.api.nvim_buf_get_name(b):find('volley%-scratch') end,
    vim.api.nvim_list_bufs())) == 1 and (vim.cmd('VolleyScratch') or vim.api.nvim_get_current_buf() == buf),
    ':VolleyScratch again goes back to the same buffer')
  vim.cmd('VolleyProfile dev')
  wait('the statusline component names the active profile', function()
    return volley.statusline() == 'volley: dev'
  end)
  vim.cmd('cd ' .. root)
end

-- The line after the first line `line` of the response buffer ('' when none).
local function line_after(lines, line)
  for number, text in ipairs(lines) do
    if text == line then
      return lines[number + 1] or ''
    end
  end
  return nil
end

-- jq filters: a request's `# @jq` shown above the body (and alone with F), one that
-- does not parse said, both kept through `[`/`]`; `:VolleyFilter` and `f` on the
-- response shown, asynchronously; an empty expression (or `:VolleyFilter!`) clears.
local function filters()
  local volley = require('volley')
  write('filter.http', table.concat({
    '### items',
    '# @jq .items[0].id',
    'GET {{base}}/json/300',
    '',
    '### broken',
    '# @jq .items[',
    'GET {{base}}/json/300',
    '',
  }, '\n'))
  vim.cmd('edit ' .. work .. '/filter.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to filter.http', function()
    return volley.client(buf) ~= nil
  end)
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.cmd('VolleySend')
  wait('the response of the @jq request', function()
    return has_line(response_lines(), '^HTTP/1.1 200') and not has_line(response_lines(), '^sending')
  end)
  in_response('A')
  local lines = response_lines()
  local output_line, body_line
  for number, line in ipairs(lines) do
    if line == '# jq .items[0].id' then
      output_line = number + 1
    elseif line:find('"name": "item 0"', 1, true) then
      body_line = number
    end
  end
  check(output_line and lines[output_line] == '0' and lines[output_line + 1] == '' and lines[output_line + 2] == '# body'
    and lines[output_line - 2] == '',
    'A shows the @jq output under its expression, between the headers and the body: '
    .. table.concat(lines, ' | '):sub(1, 300))
  check(body_line ~= nil and output_line ~= nil and body_line > output_line, 'then the body re-indented')
  vim.api.nvim_win_call(vim.fn.bufwinid('volley://response'), function()
    local name = syntax_at(output_line, 1)
    check(name:find('^json') ~= nil or name == 'volleyResponseBody_json', 'the output a JSON region: ' .. name)
  end)
  if vim.fn.exists('+winbar') == 1 then
    check(winbar():find('jq .items[0].id', 1, true) ~= nil, 'the winbar names the filter: ' .. winbar())
  end
  in_response('B')
  lines = response_lines()
  check(not has_line(lines, '^# jq') and has_line(lines, '"name": "item 0"'), 'B shows the body alone, unfiltered')
  in_response('F')
  lines = response_lines()
  check(#lines == 3 and lines[1] == '# items' and lines[2] == '# jq .items[0].id' and lines[3] == '0',
    'F shows the output alone: ' .. table.concat(lines, ' | '))

  -- A @jq that does not parse: the error, marked.
  vim.api.nvim_win_set_cursor(0, { 7, 0 })
  vim.cmd('VolleySend')
  wait('the response of the broken @jq request', function()
    return response_lines()[1] == '# broken' and not has_line(response_lines(), '^sending')
  end)
  lines = response_lines()
  local why = line_after(lines, '# jq .items[') or ''
  check(why:find('^✗ the filter does not parse: ') ~= nil, 'a @jq that does not parse says why: ' .. why)
  vim.api.nvim_win_call(vim.fn.bufwinid('volley://response'), function()
    check(syntax_at(3, 1) == 'volleyResponseFailed', 'marked as a failure: ' .. syntax_at(3, 1))
  end)
  in_response('A')
  lines = response_lines()
  check(line_after(lines, '# jq .items[') == why and has_line(lines, '^# body$') and has_line(lines, '"name": "item 0"'),
    'A: the error above the body')

  -- Through the window's history.
  in_response('[')
  check(line_after(response_lines(), '# jq .items[0].id') == '0', '[: the previous response with its @jq output')
  in_response(']')
  check(line_after(response_lines(), '# jq .items[') == why, ']: the next one with its error')

  -- :VolleyFilter on the response shown: under way at once (the editor is not blocked),
  -- then its output.
  vim.cmd('VolleyFilter .items[0].id')
  check(line_after(response_lines(), '# jq .items[0].id') == '(filtering…)',
    ':VolleyFilter returns at once, the window says it is filtering: ' .. table.concat(response_lines(), ' | '):sub(1, 200))
  wait(':VolleyFilter .items[0].id shows its output', function()
    return line_after(response_lines(), '# jq .items[0].id') == '0'
  end)
  check(not has_line(response_lines(), '^# jq %.items%[$'), 'in place of the @jq one')
  in_response('[')
  in_response(']')
  check(line_after(response_lines(), '# jq .items[0].id') == '0', 'and kept through [ and ]')
  vim.cmd('VolleyFilter [.items[] | select(.name == "item 1") | .id]')
  wait(':VolleyFilter takes the rest of the line, | and " included', function()
    local lines = response_lines()
    return line_after(lines, '# jq [.items[] | select(.name == "item 1") | .id]') == '['
      and has_line(lines, '^  1$')
  end)
  vim.cmd('VolleyFilter .items[')
  wait(':VolleyFilter with an expression that does not parse says why', function()
    return (line_after(response_lines(), '# jq .items[') or ''):find('^✗ the filter does not parse') ~= nil
  end)

  -- The key: asks (starting with the response's filter), from the body view to the
  -- filter view.
  local original_input = vim.ui.input
  local asked
  local answer = '.count'
  vim.ui.input = function(options, on_confirm)
    asked = options
    on_confirm(answer)
  end
  local ok, err = pcall(function()
    in_response('B')
    in_response('f')
    check(asked ~= nil and asked.default == '.items[', 'f asks, starting with the filter shown: ' .. tostring(asked and asked.default))
    wait('then shows the output of the expression given', function()
      return (line_after(response_lines(), '# jq .count') or ''):find('^%d+$') ~= nil
    end)
    check(response_lines()[2] == '# jq .count' and not has_line(response_lines(), '"name"'),
      'in the filter view, from the body view: ' .. table.concat(response_lines(), ' | '):sub(1, 200))
    -- An empty expression clears: from the filter view to the body alone.
    answer = ''
    in_response('f')
    check(asked.default == '.count', 'f asks again, starting with .count: ' .. tostring(asked.default))
    lines = response_lines()
    check(not has_line(lines, '^# jq') and has_line(lines, '"name": "item 0"'),
      'an empty expression clears the filter: the body alone')
    in_response('A')
    check(not has_line(response_lines(), '^# jq') and not has_line(response_lines(), '^# body$'), 'A without a filter too')
  end)
  vim.ui.input = original_input
  if not ok then
    error(err, 0)
  end

  -- :VolleyFilter! clears a @jq filter, for the response it is on.
  in_response('[')
  check(line_after(response_lines(), '# jq .items[0].id') == '0', 'the @jq response still has its output')
  vim.cmd('VolleyFilter!')
  check(not has_line(response_lines(), '^# jq'), ':VolleyFilter! shows it without a filter')

  -- A Send All: each response with its @jq section.
  vim.cmd('VolleySendAll')
  wait('Send All of filter.http', function()
    return (response_lines()[1] or ''):find('^# 2 requests: ') ~= nil
  end)
  lines = response_lines()
  check(line_after(lines, '# jq .items[0].id') == '0' and (line_after(lines, '# jq .items[') or ''):find('^✗') ~= nil,
    'Send All: each response with its @jq output or error')
end

-- A 1 MB JSON body (the echo server's /json/N) in a second Neovim driven over RPC (as a
-- user types into it): a key typed while its body is re-indented is answered before
-- that ends, and the body then shows re-indented; a body over
-- `response.format_max_bytes` shows as received, with a line saying so.
local function large_body()
  write('big.http', 'GET ' .. url .. '/json/1000000\n')
  local nvim = os.getenv('VOLLEY_TEST_NVIM')
  local channel = vim.fn.jobstart({ nvim, '--embed', '--headless', '--clean', '-u',
    root .. '/editors/nvim/test/minimal_init.lua' }, { rpc = true })
  local ok, err = pcall(function()
    local function child(code, ...)
      return vim.rpcrequest(channel, 'nvim_exec_lua', code, { ... })
    end
    child('vim.cmd("edit " .. ...)', work .. '/big.http')
    wait('volley lsp attaches in the second Neovim', function()
      return child('return require("volley").client(0) ~= nil')
    end)
    local response_text = [[
      local buf = vim.fn.bufnr('volley://response')
      return buf == -1 and '' or table.concat(vim.api.nvim_buf_get_lines(buf, 0, 20, false), '\n')
        .. '\n' .. vim.api.nvim_buf_line_count(buf)]]
    local sent = vim.loop.hrtime()
    child('vim.api.nvim_win_set_cursor(0, { 1, 0 }); vim.cmd("VolleySend")')
    wait('the 1 MB body arrives and is being re-indented', function()
      return child(response_text):find('re-indenting the JSON body', 1, true) ~= nil
    end)
    -- Keys typed one after the other while it is: one of them answered (its `x` in the
    -- .http buffer) while the window still says it is re-indenting.
    local typed, answered_meanwhile, slowest = 0, false, 0
    local state = [[
      local buf = vim.fn.bufnr('volley://response')
      local head = table.concat(vim.api.nvim_buf_get_lines(buf, 0, 20, false), '\n')
      local _, keys = vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]:gsub('x', '')
      return { keys, head:find('re-indenting the JSON body', 1, true) ~= nil }]]
    wait('keys typed meanwhile are answered', function()
      local before = vim.loop.hrtime()
      vim.rpcrequest(channel, 'nvim_input', '0ix<Esc>')
      typed = typed + 1
      local answer = child(state)
      slowest = math.max(slowest, (vim.loop.hrtime() - before) / 1e6)
      answered_meanwhile = answered_meanwhile or (answer[1] > 0 and answer[2])
      return answered_meanwhile or not answer[2]
    end)
    check(answered_meanwhile, string.format('before the body is re-indented (%d key(s) typed, the slowest '
      .. 'answered in %.0f ms)', typed, slowest))
    wait('then the body shows re-indented', function()
      local shown = child(response_text)
      return shown:find('^# GET') ~= nil and tonumber(shown:match('(%d+)$')) > 100000
    end)
    check(true, string.format('%s lines, %.0f ms after the send', child(response_text):match('(%d+)$'),
      (vim.loop.hrtime() - sent) / 1e6))

    -- Over the threshold: shown as received.
    child('require("volley").setup({ cmd = { os.getenv("VOLLEY_TEST_BIN"), "lsp" }, response = { format_max_bytes = 100000 } })')
    child('vim.cmd("edit!"); vim.api.nvim_win_set_cursor(0, { 1, 0 }); vim.cmd("VolleySend")')
    local note, last, size
    wait('a body over response.format_max_bytes shows as received', function()
      local buf = child('return vim.fn.bufnr("volley://response")')
      local lines = vim.rpcrequest(channel, 'nvim_buf_get_lines', buf, 0, -1, false)
      for _, line in ipairs(lines) do
        if line:find('^%(JSON body of') then
          note = line
        end
      end
      last = lines[#lines]
      return note ~= nil and #lines < 20
    end)
    size = child('return #require("volley").last[1].response.body')
    check(size >= 1000000 and last == child('return require("volley").last[1].response.body'),
      string.format('its one line as received (%d bytes)', size))
    check(note == string.format('(JSON body of %.1f KB shown as received: bodies over 97.7 KB are not re-indented)',
      size / 1024), 'with a line saying so: ' .. tostring(note))
  end)
  vim.fn.jobstop(channel)
  if not ok then
    error(err, 0)
  end
end

-- A gRPC result (fed to the window as the server answers one: `response.grpc`, the
-- exchange's 200 in `status`): its status, kind and message count wherever the status
-- shows (the status line, stats, the winbar and command line, a Send All's summary), a
-- success only when OK.
local function grpc_results()
  local response = require('volley.response')
  local function grpc_outcome(name, grpc, body)
    return {
      request = { index = 0, name = name, method = 'GRPC', url = '{{grpc}}/demo.Users/' .. name, line = 0 },
      response = {
        status = 200,
        statusText = 'OK',
        httpVersion = 'HTTP/2.0',
        url = 'http://127.0.0.1:50051/demo.Users/' .. name,
        headers = { { 'content-type', 'application/grpc' }, { 'grpc-status', tostring(grpc.number) } },
        contentType = 'application/json',
        body = body,
        bodyEncoding = 'text',
        truncated = false,
        timing = { ttfbMs = 2.5, totalMs = 3.4 },
        assertions = {},
        grpc = grpc,
      },
    }
  end
  local listed = grpc_outcome('ListUsers',
    { code = 'OK', number = 0, message = '', kind = 'server-streaming', messages = 3 },
    '[{"id":1},{"id":2},{"id":3}]')
  local missing = grpc_outcome('GetUser',
    { code = 'NOT_FOUND', number = 5, message = 'no user\n7', kind = 'unary', messages = 0 }, '{}')
  local said = grpc_outcome('Ping', { code = 'OK', number = 0, message = 'OK', kind = 'unary', messages = 1 }, '{}')

  local lines = response.lines(listed)
  check(lines[2] == 'gRPC OK (0) · server-streaming · 3 messages  3.4 ms',
    'a gRPC status line: ' .. tostring(lines[2]))
  check(lines[3] == 'content-type: application/grpc' and has_line(lines, '"id": 3'),
    'then its headers and its messages as JSON: ' .. table.concat(lines, ' | '))
  check(not has_line(lines, '200'), "never the exchange's 200: " .. table.concat(lines, ' | '))
  lines = response.lines(missing)
  check(lines[2] == 'gRPC NOT_FOUND (5): no user 7 · unary · 0 messages  3.4 ms',
    'with its message, on one line: ' .. tostring(lines[2]))
  check(response.lines(said)[2] == 'gRPC OK (0) · unary · 1 message  3.4 ms',
    'a message that only says the code again is not repeated: ' .. tostring(response.lines(said)[2]))
  lines = response.lines(listed, 'stats')
  check(lines[2] == 'status      gRPC OK (0)' and lines[3] == 'call        server-streaming · 3 messages',
    'the stats view: ' .. table.concat(lines, ' | '):sub(1, 200))
  local summary, bad = response.summary({ missing })
  check(summary == 'gRPC NOT_FOUND (5): no user 7 · unary · 0 messages · 3 ms' and not bad,
    'the command line: ' .. summary)

  -- In the window: coloured by the status, a success only for OK.
  local window = require('volley.window')
  window.set_view('all')
  window.push({ outcomes = { missing }, send = { command = 'volley.send', arguments = {} } })
  local win = vim.fn.bufwinid('volley://response')
  vim.api.nvim_win_call(win, function()
    local name = syntax_at(2, 1)
    check(name == 'volleyResponseFailure', 'NOT_FOUND is ' .. name)
    name = syntax_at(2, #'gRPC NOT_FOUND (5): no user 7 · u')
    check(name == 'volleyResponseStatusLine', 'the kind after it is not: ' .. name)
    name = syntax_at(2, #response_lines()[2] - 3)
    check(name == 'volleyResponseTime', 'the time is ' .. name)
  end)
  if vim.fn.exists('+winbar') == 1 then
    check(winbar():find('gRPC NOT_FOUND (5): no user 7 · unary · 0 messages', 1, true) ~= nil,
      'the winbar has the gRPC status: ' .. winbar())
  end
  window.push({ outcomes = { listed } })
  vim.api.nvim_win_call(win, function()
    local name = syntax_at(2, 1)
    check(name == 'volleyResponseSuccess', 'OK is ' .. name)
    window.set_view('stats')
    name = syntax_at(3, 1)
    check(response_lines()[3] == 'call        server-streaming · 3 messages' and name == 'volleyResponseStatLabel',
      'the call line of the stats view has its label highlighted: ' .. name)
    window.set_view('all')
  end)
  window.push({ outcomes = { listed, missing }, cancelled = false, label = 'Send All of grpc.http' })
  lines = response_lines()
  check(lines[2] == '✓ ListUsers  gRPC OK (0) · server-streaming · 3 messages · 3 ms'
    and lines[3] == '✓ GetUser  gRPC NOT_FOUND (5): no user 7 · unary · 0 messages · 3 ms',
    "a Send All's summary lines: " .. tostring(lines[2]) .. ' | ' .. tostring(lines[3]))
  vim.api.nvim_win_call(win, function()
    local ok, failure = syntax_at(2, #'✓ ListUsers  g'), syntax_at(3, #'✓ GetUser  g')
    check(ok == 'volleyResponseSuccess' and failure == 'volleyResponseFailure',
      'their statuses coloured: ' .. ok .. ', ' .. failure)
  end)
  vim.api.nvim_win_close(win, true)
end

-- The diagnostics of the test results (the `volley` namespace) in `buf`: `{line, message}`
-- each (0-based lines), in line order.
local function result_diagnostics(buf)
  local namespace = vim.api.nvim_get_namespaces().volley
  local found = {}
  for _, diagnostic in ipairs(namespace and vim.diagnostic.get(buf, { namespace = namespace }) or {}) do
    found[#found + 1] = { diagnostic.lnum, diagnostic.message }
  end
  table.sort(found, function(a, b)
    return a[1] < b[1]
  end)
  return found
end

local function describe(list)
  return table.concat(vim.tbl_map(function(item)
    return item[1] .. ': ' .. item[2]
  end, list), ' | ')
end

-- Test results: a failing send's assertion and test failures as diagnostics of the
-- `volley` namespace at their lines and in the quickfix list (:VolleyTests), an error
-- at its request line, Send All's summary, a passing rerun clearing its request's.
local function test_results()
  local volley = require('volley')
  -- The results of the sections before are forgotten: this one counts its own.
  require('volley.results').clear()
  write('tests.http', table.concat({
    '### ok',                                  -- 0
    '# @assert status == 200',
    'GET {{base}}/echo?t=ok',                  -- 2
    '',
    '### failing',                             -- 4
    '# @assert status == 201',                 -- 5
    '# @assert header Content-Type contains json',
    'GET {{base}}/echo?t=failing',             -- 7
    '',
    '> {%',
    '  client.test("created", () => client.assert(response.status === 201, "status " + response.status));', -- 10
    '%}',
    '',
    '### broken',                              -- 13
    'GET {{base}}/echo/{{nope}}',              -- 14
    '',
  }, '\n'))
  vim.cmd('edit ' .. work .. '/tests.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to tests.http', function()
    return volley.client(buf) ~= nil
  end)
  vim.api.nvim_win_set_cursor(0, { 8, 0 })
  vim.cmd('VolleySend')
  wait('the failing request is answered', function()
    return volley.last and volley.last[1].request.name == 'failing'
  end)
  local found = result_diagnostics(buf)
  check(#found == 2 and found[1][1] == 5 and found[1][2] == 'expected status == 201, got 200'
    and found[2][1] == 10 and found[2][2] == 'created — AssertionError: status 200',
    'its failed assertion and test are diagnostics at their lines: ' .. describe(found))
  local diagnostic = vim.diagnostic.get(buf, { namespace = vim.api.nvim_get_namespaces().volley })[1]
  check(diagnostic.severity == vim.diagnostic.severity.ERROR and diagnostic.source == 'volley',
    'errors, from volley')

  vim.cmd('VolleyTests')
  local items = vim.fn.getqflist()
  check(#items == 2 and vim.api.nvim_buf_get_name(items[1].bufnr) == work .. '/tests.http'
    and items[1].lnum == 6 and items[2].lnum == 11 and items[2].text == 'created — AssertionError: status 200',
    ':VolleyTests puts them in the quickfix list: ' .. table.concat(vim.tbl_map(function(item)
      return item.lnum .. ' ' .. item.text
    end, items), ' | '))
  check(vim.fn.getqflist({ winid = 0 }).winid ~= 0 and vim.fn.getqflist({ title = 0 }).title
    == 'Volley: failures of the last results', 'and opens it')
  check(notified[#notified] == 'volley: 2 failure(s) in the last results of 1 request(s)', 'saying so: ' .. notified[#notified])
  vim.cmd('cclose')
  vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))

  -- Send All: its summary on the command line and on top of the window; an error at
  -- its request line.
  vim.cmd('VolleySendAll')
  wait('Send All of tests.http answers', function()
    return (notified[#notified] or ''):find('^volley: 3 requests: ') ~= nil
  end)
  local summary = '3 requests: 1 passed, 1 failed, 1 error · 2/4 assertions'
  check(notified[#notified] == 'volley: ' .. summary, 'its summary on the command line: ' .. notified[#notified])
  check(response_lines()[1] == '# ' .. summary, 'and on top of the window: ' .. tostring(response_lines()[1]))
  found = result_diagnostics(buf)
  check(#found == 3 and found[3][1] == 14 and found[3][2]:find('^error%[undefined%-variable%]: ') ~= nil,
    'the request that got no response is a diagnostic at its request line: ' .. describe(found))
  vim.cmd('VolleyTests')
  check(#vim.fn.getqflist() == 3, ':VolleyTests: three failures now (' .. #vim.fn.getqflist() .. ')')
  vim.cmd('cclose')
  vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))

  -- Fixed (unsaved: the server reads the buffer), sent again: its failures are gone,
  -- the other request's stay.
  vim.api.nvim_buf_set_lines(buf, 5, 6, false, { '# @assert status == 200' })
  vim.api.nvim_buf_set_lines(buf, 10, 11, false,
    { '  client.test("created", () => client.assert(response.status === 200, "status " + response.status));' })
  vim.api.nvim_win_set_cursor(0, { 8, 0 })
  vim.cmd('VolleySend')
  wait('a passing rerun clears its diagnostics', function()
    local now = result_diagnostics(buf)
    return #now == 1 and now[1][1] == 14
  end)
  vim.cmd('VolleyTests')
  check(#vim.fn.getqflist() == 1 and vim.fn.getqflist()[1].lnum == 15, ':VolleyTests: the error only')
  vim.cmd('cclose')
end

-- The text of a window's buffer, one string.
local function window_text(win)
  return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
end

-- The windows of the current tab that are in diff mode.
local function diff_windows()
  return vim.tbl_filter(function(win)
    return vim.wo[win].diff
  end, vim.api.nvim_tabpage_list_wins(0))
end

-- The stored history of the language server: :VolleyHistory opens an entry, :VolleyHistoryDiff
-- diffs two in a tab, :VolleyCompare (and C in the response window) the last response
-- of a request with the one before, :VolleyHistoryClear.
local function stored_history()
  local volley = require('volley')
  write('history.http', '### stored\nGET {{base}}/echo?version=1\n')
  vim.cmd('edit ' .. work .. '/history.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to history.http', function()
    return volley.client(buf) ~= nil
  end)
  for version = 1, 2 do
    vim.api.nvim_buf_set_lines(buf, 1, 2, false, { 'GET {{base}}/echo?version=' .. version })
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    vim.cmd('VolleySend')
    wait('version ' .. version .. ' is answered and stored', function()
      local outcome = volley.last and volley.last[1]
      return outcome and type(outcome.response) == 'table' and outcome.response.body:find('version=' .. version, 1, true)
        and type(outcome.historyId) == 'string'
    end)
  end
  local newest_id = volley.last[1].historyId

  local original_select = vim.ui.select
  local offered, prompts = {}, {}
  local picks = {}
  vim.ui.select = function(items, options, on_choice)
    local labels = {}
    for _, item in ipairs(items) do
      labels[#labels + 1] = options.format_item and options.format_item(item) or item
    end
    offered[#offered + 1] = labels
    prompts[#prompts + 1] = options.prompt
    local pick = table.remove(picks, 1)
    on_choice(pick and items[pick] or nil)
  end
  local ok, err = pcall(function()
    -- :VolleyHistory: this file's stored responses, newest first; the older one opened.
    picks = { 2 }
    local windows = #vim.api.nvim_list_wins()
    vim.cmd('VolleyHistory')
    wait(':VolleyHistory opens the entry picked', function()
      return #vim.api.nvim_list_wins() == windows + 1
    end)
    local labels = offered[1]
    check(#labels == 2 and labels[1]:find('^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d  200 OK  GET stored  %d+ ms$') ~= nil,
      'it offers the two stored responses, newest first: ' .. table.concat(labels, ' | '))
    local entry_win = vim.api.nvim_get_current_win()
    local entry_buf = vim.api.nvim_get_current_buf()
    local text = window_text(entry_win)
    check(text:find('^HTTP/1.1 200 OK\n') ~= nil and text:find('version=1', 1, true) ~= nil
      and text:find('version=2', 1, true) == nil, 'the older one, from its status line: ' .. text:sub(1, 120):gsub('\n', ' | '))
    check(vim.bo[entry_buf].filetype == 'volley_response' and vim.bo[entry_buf].readonly,
      'highlighted as a response, read-only')
    vim.api.nvim_win_close(entry_win, true)

    -- :VolleyHistoryDiff: two picked (the second among the others), diffed in a new tab.
    vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    local tab = vim.api.nvim_get_current_tabpage()
    picks = { 1, 1 }
    offered = {}
    vim.cmd('VolleyHistoryDiff')
    wait(':VolleyHistoryDiff opens a tab with two windows in diff mode', function()
      return vim.api.nvim_get_current_tabpage() ~= tab and #diff_windows() == 2
    end)
    check(#offered == 2 and #offered[1] == 2 and #offered[2] == 1, 'asking for one, then for the other: '
      .. table.concat(prompts, ' | '))
    local diffed = diff_windows()
    local left, right = window_text(diffed[1]), window_text(diffed[2])
    check(left:find('version=1', 1, true) ~= nil and right:find('version=2', 1, true) ~= nil,
      'the older on the left, the newer on the right')
    vim.cmd('tabclose')

    -- :VolleyCompare on the request line: the last response against the one before.
    vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    vim.cmd('VolleyCompare')
    wait(':VolleyCompare diffs the last response with the one before', function()
      return vim.api.nvim_get_current_tabpage() ~= tab and #diff_windows() == 2
    end)
    diffed = diff_windows()
    check(window_text(diffed[1]):find('version=1', 1, true) ~= nil and window_text(diffed[2]):find('version=2', 1, true) ~= nil,
      'older on the left, newer on the right')
    vim.cmd('tabclose')

    -- C in the response window: the same, for the response shown.
    in_response('C')
    wait('C in the response window compares the response shown', function()
      return vim.api.nvim_get_current_tabpage() ~= tab and #diff_windows() == 2
    end)
    check(volley.last[1].historyId == newest_id, 'the response shown is the newest')
    vim.cmd('tabclose')

    -- :VolleyHistory!: the project's, the file named.
    picks = {}
    offered = {}
    vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    vim.cmd('VolleyHistory!')
    wait(':VolleyHistory! offers the stored responses of the project', function()
      return #offered == 1
    end)
    check(#offered[1] > 2 and offered[1][1]:find('  history%.http$') ~= nil,
      'more than this file\'s, each naming its file: ' .. tostring(offered[1][1]))
  end)
  vim.ui.select = original_select
  if not ok then
    error(err, 0)
  end

  -- :VolleyHistoryClear: this file's entries.
  local before = #notified
  vim.cmd('VolleyHistoryClear')
  wait(':VolleyHistoryClear clears this file\'s stored responses', function()
    return #notified > before and notified[#notified] == 'volley: cleared 2 stored response(s) of this file'
  end)
  before = #notified
  vim.cmd('VolleyHistory')
  wait('then :VolleyHistory finds none', function()
    return #notified > before
  end)
  check(notified[#notified] == 'volley: no stored responses of this file',
    'saying so: ' .. notified[#notified])
end

-- :VolleySnippet: the request as code in a scratch buffer of the language's filetype.
local function snippets()
  vim.cmd('edit ' .. work .. '/api.http')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.cmd('VolleySnippet python')
  wait(':VolleySnippet python opens the code', function()
    return vim.fn.bufnr('volley://snippet.python') ~= -1 and vim.fn.bufwinid('volley://snippet.python') ~= -1
  end)
  local snippet = vim.fn.bufnr('volley://snippet.python')
  local text = table.concat(vim.api.nvim_buf_get_lines(snippet, 0, -1, false), '\n')
  check(vim.bo[snippet].filetype == 'python' and text:find('requests', 1, true) ~= nil
    and text:find(url, 1, true) ~= nil and text:find('nvim', 1, true) ~= nil and text:lower():find('x-test', 1, true) ~= nil,
    'in a python buffer, with the resolved URL and the header: ' .. text:gsub('\n', ' | '):sub(1, 300))
  check(vim.api.nvim_get_current_buf() == snippet and vim.bo[snippet].buftype == 'nofile', 'a scratch buffer, the cursor in it')
  vim.cmd('close')

  -- Without a language: picked among the server's.
  local original_select = vim.ui.select
  local offered
  vim.ui.select = function(items, options, on_choice)
    vim.ui.select = original_select
    offered = vim.tbl_map(function(item)
      return options.format_item(item)
    end, items)
    for _, item in ipairs(items) do
      if item.id == 'go' then
        on_choice(item)
        return
      end
    end
    on_choice(nil)
  end
  vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
  vim.cmd('VolleySnippet')
  wait(':VolleySnippet without a language asks, then opens the code picked (go)', function()
    return vim.fn.bufwinid('volley://snippet.go') ~= -1
  end)
  vim.ui.select = original_select
  check(offered and #offered >= 4, 'among the languages offered: ' .. table.concat(offered or {}, ', '))
  local go = vim.fn.bufnr('volley://snippet.go')
  text = table.concat(vim.api.nvim_buf_get_lines(go, 0, -1, false), '\n')
  check(vim.bo[go].filetype == 'go' and text:find('net/http', 1, true) ~= nil, 'a go buffer using net/http')
  vim.cmd('close')
  local names = require('volley.snippet').languages()
  check(vim.tbl_contains(names, 'curl') and vim.tbl_contains(names, 'fetch'), ':VolleySnippet completes the languages: '
    .. table.concat(names, ' '))

  -- What the code cannot carry is said.
  write('h2.http', 'GET {{base}}/echo HTTP/2\n')
  vim.cmd('edit ' .. work .. '/h2.http')
  local h2 = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to h2.http', function()
    return require('volley').client(h2) ~= nil
  end)
  local before = #notified
  vim.cmd('VolleySnippet python')
  wait('a warning of the snippet is said', function()
    return #notified > before and notified[#notified]:find('python snippet; requests speaks HTTP/1.1 only', 1, true) ~= nil
  end)
  check(vim.fn.bufwinid('volley://snippet.python') ~= -1, 'and the code shown: ' .. notified[#notified])
  vim.cmd('close')
end

-- A JSON body over 4 MiB: the first MiB re-indented in the window, under its line.
local function large_json_preview()
  local volley = require('volley')
  write('bigjson.http', 'GET {{base}}/json/6000000\n')
  vim.cmd('edit ' .. work .. '/bigjson.http')
  local buf = vim.api.nvim_get_current_buf()
  wait('volley lsp attaches to bigjson.http', function()
    return volley.client(buf) ~= nil
  end)
  vim.cmd('VolleySend')
  wait('the first MiB of a 6 MB JSON body shows re-indented', function()
    return has_line(response_lines(), '^ +"name": "item 0",$') and not has_line(response_lines(), 're%-indenting')
  end)
  local lines = response_lines()
  check(has_line(lines, '^%(showing the first 1%.0 MB of 5%.7 MB: gf or :VolleyOpenBody opens the whole body, '
    .. ':VolleySaveBody saves it%)$'), 'under its line')
  check(#lines < 300000 and not has_line(lines, '"count"'), 'not the rest (' .. #lines .. ' lines)')
  check(lines[#lines]:find('^%(4%.7 MB not shown: gf or :VolleyOpenBody opens the whole body%)$') ~= nil,
    'the last line says what is not shown: ' .. lines[#lines])
end

-- The configuration first: every server of the run starts with it.
write('volley.jsonc', string.format([[{
"variables": { "base": "%s" },
"profiles": { "dev": { "variables": { "who": "dev" } }, "prod": { "variables": { "who": "prod" } } }
}]], url or "http://127.0.0.1:9"))

-- Programs nvim starts (volley lsp among them) run on the system's loader and libraries,
-- even when this nvim runs on others' (trixie's, through test/setup's wrapper).
local function child_processes()
  local maps = vim.fn.system({ 'sh', '-c', 'grep -m1 "/libc[.-]" /proc/self/maps' })
  check(maps:find('volley-test', 1, true) == nil and maps:find('libc', 1, true) ~= nil,
    'a program nvim starts loads the system libc: ' .. (vim.trim(maps):match('%S+$') or maps))
end

local sections = {
  { 'child processes', child_processes },
  { 'a parser that cannot load', unloadable_parser },
  { 'send, lenses, profiles, streams', run },
  { 'tree-sitter injections and folds', injections_and_folds },
  { 'the request under the cursor', cursor_lines },
  { 'long messages', long_messages },
  { 'syntax file', syntax_file },
  { 'completion and hover', completion_and_hover },
  { 'quickstart.http and cookies', quickstart },
  { 'commands', commands },
  { 'copy as curl', copy_curl },
  { 'code action', code_action },
  { 'scripts: tests and log lines', scripts },
  { 'prompts', prompts },
  { 'response window: views, history, winbar, Send All, float', response_window },
  { 'cancel and signs', cancel },
  { 'motions and selection', motions_and_selection },
  { 'scratch, paste curl, statusline', scratch_and_paste },
  { 'jq filters', filters },
  { 'a large JSON body', large_body },
  { 'gRPC results', grpc_results },
  { 'test results: diagnostics, quickfix, Send All summary', test_results },
  { 'stored history: open, diff, compare, clear', stored_history },
  { 'code snippets', snippets },
  { 'a JSON body over 4 MiB', large_json_preview },
  { 'keymaps', keymaps },
}
for _, section in ipairs(sections) do
  io.stdout:write('# ' .. section[1] .. '\n')
  local ok, err = pcall(section[2])
  if not ok then
    if err ~= '(section stopped)' then
      check(false, section[1] .. ': ' .. tostring(err))
    end
    for _, message in ipairs(notified) do
      io.stdout:write('  (notified: ' .. message .. ')\n')
    end
  end
end
io.stdout:write(string.format('%d passed, %d failed\n', passed, failed))
if failed == 0 then
  vim.cmd('qa!')
else
  vim.cmd('cquit 1')
end
