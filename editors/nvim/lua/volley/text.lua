-- Text of response bodies as buffer lines: split at line breaks, and JSON re-indented
-- in linear time (a slice at a time, in a coroutine, for large bodies). Pure.
local M = {}

--- JSON `null` arrives as `vim.NIL`: `nil` for it, else `value`.
function M.present(value)
  if value == vim.NIL then
    return nil
  end
  return value
end

--- The lines of `text` (split at `\n`, a `\r` before it dropped). Linear, by plain
--- search, so a body of megabytes splits in milliseconds.
function M.split(text)
  local lines, from = {}, 1
  while true do
    local at = text:find('\n', from, true)
    local line = text:sub(from, (at or #text + 1) - 1)
    if line:byte(-1) == 13 then
      line = line:sub(1, -2)
    end
    lines[#lines + 1] = line
    if not at then
      return lines
    end
    from = at + 1
  end
end

local close_patterns = { ['{'] = '^%s*}', ['['] = '^%s*%]' }

--- The lines of JSON text re-indented (two spaces), its key order and string contents
--- kept; text that is not JSON comes out re-indented as far as its brackets go. Linear
--- in the text. With `yield_every` (bytes), it yields (`coroutine.yield`) after about
--- that many bytes, so a caller running it in a coroutine can let the editor breathe.
function M.json_lines(text, yield_every)
  local lines, line, depth = {}, {}, 0
  local indents = { [0] = '' }
  local function newline()
    lines[#lines + 1] = table.concat(line)
    indents[depth] = indents[depth] or string.rep('  ', depth)
    line = { indents[depth] }
  end
  local i, n = 1, #text
  local next_yield = yield_every and (1 + yield_every) or math.huge
  while i <= n do
    if i >= next_yield then
      next_yield = i + yield_every
      coroutine.yield()
    end
    local at = text:find('[{}%[%],:"]', i)
    local literal = text:sub(i, (at or n + 1) - 1):gsub('%s+', '')
    if literal ~= '' then
      line[#line + 1] = literal
    end
    if not at then
      break
    end
    local c = text:sub(at, at)
    i = at + 1
    if c == '"' then
      -- To the closing quote, over escaped characters.
      local last = n
      local from = at + 1
      while true do
        local quote = text:find('["\\]', from)
        if not quote then
          break
        elseif text:byte(quote) == 92 then
          from = quote + 2
        else
          last = quote
          break
        end
      end
      line[#line + 1] = text:sub(at, last)
      i = last + 1
    elseif c == '{' or c == '[' then
      -- An empty object or array stays on one line.
      local _, close = text:find(close_patterns[c], at + 1)
      if close then
        line[#line + 1] = c .. text:sub(close, close)
        i = close + 1
      else
        line[#line + 1] = c
        depth = depth + 1
        newline()
      end
    elseif c == '}' or c == ']' then
      depth = math.max(depth - 1, 0)
      newline()
      line[#line + 1] = c
    elseif c == ',' then
      line[#line + 1] = ','
      newline()
    else
      line[#line + 1] = ': '
    end
  end
  local last = table.concat(line)
  if last:find('%S') or #lines == 0 then
    lines[#lines + 1] = last
  end
  return lines
end

return M
