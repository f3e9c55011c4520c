" Vim syntax for Volley's response buffer (filetype volley_response): the `# request`
" title line, the status line, the headers, the assertion, log and error lines, the
" labels of the stats view, and each body highlighted by its content type. The bodies
" are regions over the lines listed in `b:volley_bodies` ([[first, last, kind]…],
" 1-based, kind json, xml or html), set by lua/volley/window.lua before the filetype, so
" the header lines never get the body's syntax (and never its error groups).
if exists('b:current_syntax')
  finish
endif

syntax case match

syntax match volleyResponseTitle /^# .*$/
" HTTP/1.1 200 OK  12.3 ms
syntax match volleyResponseStatusLine /^HTTP\/\S\+ \d\d\d\>.*$/ contains=volleyResponseVersion,volleyResponseSuccess,volleyResponseRedirect,volleyResponseFailure,volleyResponseInfo,volleyResponseTime
syntax match volleyResponseVersion /^HTTP\/\S\+/ contained
syntax match volleyResponseInfo /\%(^HTTP\/\S\+ \)\@<=1\d\d\>.\{-}\ze\%(\s\s\|$\)/ contained
syntax match volleyResponseSuccess /\%(^HTTP\/\S\+ \)\@<=2\d\d\>.\{-}\ze\%(\s\s\|$\)/ contained
syntax match volleyResponseRedirect /\%(^HTTP\/\S\+ \)\@<=3\d\d\>.\{-}\ze\%(\s\s\|$\)/ contained
syntax match volleyResponseFailure /\%(^HTTP\/\S\+ \)\@<=[45]\d\d\>.\{-}\ze\%(\s\s\|$\)/ contained
syntax match volleyResponseTime /\s\s\zs[0-9.]\+ ms$/ contained
" gRPC NOT_FOUND (5): no user 7 · unary · 0 messages  12.3 ms: a gRPC call's status, in
" place of the HTTP exchange's 200; a success only when OK (in a Send All's summary
" lines too).
syntax match volleyResponseStatusLine /^gRPC [A-Z_]\+ (\d\+).*$/ contains=volleyResponseSuccess,volleyResponseFailure,volleyResponseTime
syntax match volleyResponseSuccess /\<gRPC OK (0)/ contained
syntax match volleyResponseFailure /\<gRPC \%(OK (0)\)\@![A-Z_]\+ (\d\+)\%(: .\{-}\)\=\ze\%( · \|\s\s\|$\)/ contained
" The request as sent (:VolleySent): GET https://… HTTP/1.1
syntax match volleyResponseMethod /^[A-Z]\{3,}\ze \S/ nextgroup=volleyResponseUrl skipwhite
syntax match volleyResponseUrl /\S\+/ contained
" Headers (a body region, defined below, wins on its own lines).
syntax match volleyResponseHeaderName /^[A-Za-z0-9!#$%&'*+.^_`|~-]\+\ze: / nextgroup=volleyResponseHeaderValue
syntax match volleyResponseHeaderValue /: \zs.*$/ contained
syntax match volleyResponsePassed /^✓ .*$/ contains=volleyResponseSuccess,volleyResponseFailure
syntax match volleyResponseFailed /^✗ .*$/ contains=volleyResponseSuccess,volleyResponseFailure
" A script's `client.log` line: `log got 200` (its continuation lines are indented).
syntax match volleyResponseLog /^log\ze /
syntax match volleyResponseError /^error\[[^\]]*\]: .*$/
" A send the server refused, and one under way.
syntax match volleyResponseError /^not sent: .*$/
syntax match volleyResponseNote /^sending….*$/
" The stats view (S): `status      200 OK (HTTP/1.1)`; for a gRPC call a `call` line too.
syntax match volleyResponseStatLabel /^\%(status\|call\|url\|time\|body\|headers\|assertions\|logs\|stream\|sent body\|sent\) \{2,}\ze\S/
syntax match volleyResponseNote /^(.*)$/
syntax match volleyResponseNote /^listening….*$/
syntax match volleyResponseStream /^\%(sse\|websocket\): \d\+ item(s).*$/
syntax match volleyResponseStream /^request #\d\+: .*$/
syntax match volleyResponseItem /^\[\d\+ ms\] [^:]*:/

let s:clusters = { 'json': 'syntax/json.vim', 'xml': 'syntax/xml.vim', 'html': 'syntax/html.vim' }
let s:included = {}
for [s:first, s:last, s:kind] in get(b:, 'volley_bodies', [])
  if !has_key(s:clusters, s:kind) || s:first > s:last
    continue
  endif
  if !has_key(s:included, s:kind)
    unlet! b:current_syntax
    execute 'syntax include @volleyBody_' . s:kind . ' ' . s:clusters[s:kind]
    let s:included[s:kind] = 1
  endif
  execute printf('syntax region volleyResponseBody_%s start=/\%%%dl/ end=/\%%%dl$/ keepend contains=@volleyBody_%s',
        \ s:kind, s:first, s:last, s:kind)
endfor
unlet! s:first s:last s:kind

syntax sync fromstart

highlight default link volleyResponseTitle Title
highlight default link volleyResponseVersion Constant
highlight default link volleyResponseInfo Constant
highlight default link volleyResponseSuccess String
highlight default link volleyResponseRedirect Constant
highlight default link volleyResponseFailure WarningMsg
highlight default link volleyResponseTime Number
highlight default link volleyResponseMethod Function
highlight default link volleyResponseUrl Underlined
highlight default link volleyResponseHeaderName Type
highlight default link volleyResponseHeaderValue String
highlight default link volleyResponsePassed String
highlight default link volleyResponseFailed WarningMsg
highlight default link volleyResponseLog Special
highlight default link volleyResponseError ErrorMsg
highlight default link volleyResponseNote Comment
highlight default link volleyResponseStream Comment
highlight default link volleyResponseItem Comment
highlight default link volleyResponseStatLabel Identifier

let b:current_syntax = 'volley_response'
