-- jq filters on the responses shown: the one a request's `# @jq` got from the server
-- (`response.filtered`), and the interactive one (`:VolleyFilter`, `f` in the response
-- window) that the language server's `volley.filter` runs on the body of the response
-- shown, asynchronously. A filter is kept with its response, so it stays through the
-- window's history; an empty expression clears it (the `@jq` one too, for that
-- response). The window (lua/volley/window.lua) draws them.
local M = {}

local function notify(message, level)
  require('volley')._notify(message, level)
end

-- The interactive filter of each response: `{expression, output}`, `{expression,
-- error}`, `{expression, pending = true}` while it runs, or `false` (cleared). Forgotten
-- with the response.
local chosen = setmetatable({}, { __mode = 'k' })

-- The last expression asked for (what the next question starts with).
local last_expression

--- The filter `response` is shown with when not its `# @jq` one: its interactive
--- filter, `false` when cleared, `nil` when there is none (then its `@jq` one applies).
function M.of(response)
  return chosen[response]
end

--- The filter `response` is shown with, whichever it is (`nil`: none).
function M.shown(response)
  local own = chosen[response]
  if own ~= nil then
    return own or nil
  end
  return require('volley.response').jq_filter(response)
end

--- Filters the body of `response` with the jq `expression` (the language server's
--- `volley.filter`, through the client of `buf`) and shows the output, or what is
--- wrong, in the response window; an empty expression clears its filter.
function M.apply(response, expression, buf)
  local window = require('volley.window')
  expression = vim.trim(expression)
  if expression == '' then
    chosen[response] = false
    window.filter_changed(response, false)
    return
  end
  last_expression = expression
  local run = { expression = expression }
  chosen[response] = run
  if response.bodyEncoding ~= 'text' then
    run.error = 'the body is not text'
  elseif response.truncated then
    run.error = 'the body was cut at 4 MiB: a filter needs all of it'
  else
    run.pending = true
    local function done(field, value)
      run.pending = nil
      run[field] = value
      -- Unless another filter replaced this one meanwhile.
      if chosen[response] == run then
        window.filter_changed(response, true)
      end
    end
    require('volley').execute('volley.filter', { body = response.body, expression = expression }, buf,
      function(result)
        if type(result) == 'table' and type(result.output) == 'string' then
          done('output', result.output)
        else
          local why = type(result) == 'table' and result.error
          done('error', (why ~= nil and why ~= vim.NIL) and tostring(why) or 'the language server answered nothing')
        end
      end, {
        on_error = function(message)
          done('error', message)
        end,
      })
    if not run.pending then
      return
    end
  end
  window.filter_changed(response, true)
end

--- `:VolleyFilter [expression]` and `f` in the response window: filters the response
--- shown (in a Send All, the one whose section holds the window's cursor) with
--- `expression`, or, without one, with the expression the user gives (`vim.ui.input`,
--- starting with the response's filter, else the last one asked for). `clear`: clears
--- its filter.
function M.ask(expression, clear)
  local response, buf = require('volley.window').filter_target()
  if not response then
    notify('no response to filter (send a request first)', vim.log.levels.WARN)
    return
  end
  if clear then
    M.apply(response, '', buf)
  elseif expression and expression ~= '' then
    M.apply(response, expression, buf)
  else
    local current = M.shown(response)
    local default = current and current.expression or last_expression or ''
    vim.ui.input({ prompt = 'jq filter (empty: none): ', default = default }, function(answer)
      if answer ~= nil then
        M.apply(response, answer, buf)
      end
    end)
  end
end

return M
