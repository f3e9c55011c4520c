-- Test results of the sends: the failed `# @assert` and `client.test` results (and the
-- errors of requests that got no response) of the last send of each request, as
-- diagnostics of the `volley` namespace at their lines in the `.http` buffer, and in
-- the quickfix list on :VolleyTests. A request's results are replaced by its next send
-- (a passing one clears them); a cancelled send leaves them as they were, a
-- `# @disabled` request has none.
local M = {}

--- The namespace of the test results' diagnostics.
M.namespace = vim.api.nvim_create_namespace('volley')

-- By buffer: `{name, requests = {[index] = {line, failures = {{line, message}…}}}}`
-- (0-based lines, as the outcomes give them).
local recorded = {}

local present = require('volley.text').present

local function one_line(text)
  return (tostring(text or ''):gsub('%s*\n%s*', ' '))
end

-- The failures of one outcome: each failed assertion or test at its line (the request
-- line when it has none), or the error of a request that got no response at its
-- request line.
local function failures_of(outcome, request_line)
  local error = present(outcome.error)
  if error then
    return { {
      line = request_line,
      message = string.format('error[%s]: %s', present(error.kind) or '?', one_line(present(error.message))),
    } }
  end
  local failures = {}
  local response = present(outcome.response) or {}
  for _, check in ipairs(present(response.assertions) or {}) do
    if not check.passed then
      local expression, message = one_line(check.expression), present(check.message)
      -- `expected status == 201, got 200` names its expression already.
      local text = expression
      if message then
        message = one_line(message)
        text = message:find(expression, 1, true) and message or (expression .. ' — ' .. message)
      end
      failures[#failures + 1] = { line = tonumber(present(check.line)) or request_line, message = text }
    end
  end
  return failures
end

local function show(buf)
  local diagnostics = {}
  local entry = recorded[buf]
  if not entry or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local last_line = math.max(vim.api.nvim_buf_line_count(buf) - 1, 0)
  for _, result in pairs(entry.requests) do
    for _, failure in ipairs(result.failures) do
      diagnostics[#diagnostics + 1] = {
        lnum = math.min(math.max(failure.line, 0), last_line),
        col = 0,
        severity = vim.diagnostic.severity.ERROR,
        source = 'volley',
        message = failure.message,
      }
    end
  end
  table.sort(diagnostics, function(a, b)
    return a.lnum < b.lnum
  end)
  vim.diagnostic.set(M.namespace, buf, diagnostics)
end

--- Keeps the results of `outcomes`, sent from `buf`, in place of those of the same
--- requests, and shows the buffer's failures as diagnostics.
function M.record(buf, outcomes)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local entry = recorded[buf] or { requests = {} }
  recorded[buf] = entry
  entry.name = vim.api.nvim_buf_get_name(buf)
  for _, outcome in ipairs(outcomes) do
    local request = present(outcome.request)
    local index = type(request) == 'table' and tonumber(present(request.index))
    if index then
      local error = present(outcome.error)
      local kind = error and present(error.kind)
      if kind == 'disabled' then
        entry.requests[index] = nil
      elseif kind ~= 'cancelled' then
        local line = tonumber(present(request.line)) or 0
        entry.requests[index] = { line = line, failures = failures_of(outcome, line) }
      end
    end
  end
  show(buf)
end

--- The failures of the last results, by file and line: `{filename, lnum, col, text,
--- type}` per failure (1-based lines, quickfix items), and how many requests have
--- results.
function M.failures()
  local items, requests = {}, 0
  local buffers = vim.tbl_keys(recorded)
  table.sort(buffers)
  for _, buf in ipairs(buffers) do
    local entry = recorded[buf]
    if vim.api.nvim_buf_is_valid(buf) then
      entry.name = vim.api.nvim_buf_get_name(buf)
    end
    local found = {}
    for _, result in pairs(entry.requests) do
      requests = requests + 1
      for _, failure in ipairs(result.failures) do
        found[#found + 1] = {
          filename = entry.name,
          lnum = failure.line + 1,
          col = 1,
          text = failure.message,
          type = 'E',
        }
      end
    end
    table.sort(found, function(a, b)
      return a.lnum < b.lnum
    end)
    vim.list_extend(items, found)
  end
  return items, requests
end

--- :VolleyTests: the failures of the last results in the quickfix list (opened when
--- there is one); says how many there are.
function M.quickfix()
  local notify = require('volley')._notify
  local items, requests = M.failures()
  if requests == 0 then
    notify('no test results yet (send a request first)', vim.log.levels.WARN)
    return items
  end
  vim.fn.setqflist({}, ' ', { title = 'Volley: failures of the last results', items = items })
  if #items == 0 then
    notify(string.format('no failures in the last results of %d request(s)', requests))
    return items
  end
  vim.cmd('copen')
  notify(string.format('%d failure(s) in the last results of %d request(s)', #items, requests),
    vim.log.levels.WARN)
  return items
end

--- Forgets the results of `buf` (all buffers without one) and their diagnostics.
function M.clear(buf)
  for _, recorded_buf in ipairs(buf and { buf } or vim.tbl_keys(recorded)) do
    recorded[recorded_buf] = nil
    if vim.api.nvim_buf_is_valid(recorded_buf) then
      vim.diagnostic.reset(M.namespace, recorded_buf)
    end
  end
end

return M
