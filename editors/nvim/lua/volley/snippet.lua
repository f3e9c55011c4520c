-- Code snippets (REST Client's "Generate Code Snippet"): the request under the cursor
-- (from a response buffer, the request of the response shown) as code in another
-- language, built by the language server's `volley.snippet` as `volley.copyAsCurl`
-- builds a request, shown in a scratch buffer of the language's filetype,
-- `volley://snippet.<language>` (one per language, reused). What could not be carried
-- over is said as warnings.
local M = {}

local function notify(message, level)
  require('volley')._notify(message, level)
end

-- The filetype of each language the server offers (another language: its id).
local filetypes = { curl = 'sh', fetch = 'javascript', python = 'python', go = 'go' }

--- The languages when the server cannot be asked (completion without a server).
M.known = { 'curl', 'fetch', 'python', 'go' }

--- Shows `code` in the scratch buffer of `language`, in a split (or the window that
--- shows it already), the cursor there. Returns the buffer.
function M.show(language, code)
  local name = 'volley://snippet.' .. language
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split((code:gsub('\n$', '')), '\n', { plain = true }))
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = filetypes[language] or language
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    if vim.api.nvim_win_get_config(0).relative ~= '' then
      vim.cmd('wincmd p')
    end
    vim.cmd('split')
    vim.api.nvim_win_set_buf(0, buf)
  end
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  return buf
end

-- Asks the server for the code of `argument`'s request in `language` and shows it.
local function generate(argument, buf, language, on_done)
  require('volley').execute('volley.snippet', vim.tbl_extend('force', argument, { language = language }), buf,
    function(result)
      local shown = M.show(result.language or language, result.code or '')
      local warnings = result.warnings or {}
      if #warnings > 0 then
        notify(language .. ' snippet; ' .. table.concat(warnings, '; '), vim.log.levels.WARN)
      end
      if on_done then
        on_done(shown, result)
      end
    end)
end

--- :VolleySnippet [language]: the request as code in `language` (`curl`, `fetch`,
--- `python`, `go`); without one, the user picks among the server's languages
--- (`vim.ui.select`). `on_done(buf, result)` when shown.
function M.snippet(language, on_done)
  local argument, buf = require('volley.actions').request_argument()
  if not argument then
    notify('nothing has been sent yet', vim.log.levels.WARN)
    return
  end
  if language and language ~= '' then
    generate(argument, buf, language, on_done)
    return
  end
  require('volley').execute('volley.snippet', vim.empty_dict(), buf, function(result)
    local languages = result.languages or {}
    vim.ui.select(languages, {
      prompt = 'Volley: code snippet in',
      format_item = function(item)
        return item.label or item.id
      end,
    }, function(choice)
      if choice then
        generate(argument, buf, choice.id, on_done)
      end
    end)
  end)
end

--- The language ids (for completion), those starting with `prefix`: the server's, else
--- the known ones.
function M.languages(prefix)
  local volley = require('volley')
  local buf = volley.source_buf()
  local client = volley.client(buf)
  local ids = {}
  if client then
    local params = { command = 'volley.snippet', arguments = { vim.empty_dict() } }
    local answer = volley._request_sync(client, 'workspace/executeCommand', params, 2000, buf)
    for _, item in ipairs(answer and answer.result and answer.result.languages or {}) do
      ids[#ids + 1] = item.id
    end
  end
  if #ids == 0 then
    ids = vim.deepcopy(M.known)
  end
  return vim.tbl_filter(function(id)
    return prefix == nil or vim.startswith(id, prefix)
  end, ids)
end

return M
