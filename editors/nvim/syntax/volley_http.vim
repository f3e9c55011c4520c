" Vim syntax for .http request files (Volley), used when the volley_http tree-sitter
" parser is missing or this Neovim cannot load it: methods, URLs, {{variables}},
" headers, # @directives, comments, ### separators and JSON-ish bodies. Line-based on
" purpose: a header-looking line of a text body is coloured as a header.
if exists('b:current_syntax')
  finish
endif

syntax case match

" {{name}}, {{$resolver(args)}}, {{login.response.body.$.token}}: wherever they occur.
" (Defined at the end, so that it wins over what starts at the same column.)
syntax match volleyHttpResolver /\$\h[[:alnum:]_]*/ contained

" Comments, and the directives written in them (# @name login).
syntax match volleyHttpComment /^\s*\%(#\|\/\/\).*$/ contains=volleyHttpDirective,@Spell
syntax match volleyHttpDirective /^\s*\%(#\|\/\/\)\s*\zs@[[:alnum:]_-]\+/ contained nextgroup=volleyHttpDirectiveValue skipwhite
syntax match volleyHttpDirectiveValue /.*$/ contained contains=volleyHttpVariable

" ### Separator name (after the comments: it wins over them).
syntax match volleyHttpSeparator /^###.*$/ contains=volleyHttpSeparatorName
syntax match volleyHttpSeparatorName /^###\s*\zs.*$/ contained

" @host = example.com
syntax match volleyHttpDeclaration /^@[[:alnum:]_.-]\+\s*=/ contains=volleyHttpDeclarationName,volleyHttpOperator nextgroup=volleyHttpDeclarationValue skipwhite
syntax match volleyHttpDeclarationName /@\zs[[:alnum:]_.-]\+/ contained
syntax match volleyHttpOperator /=/ contained
syntax match volleyHttpDeclarationValue /.*$/ contained contains=volleyHttpVariable

" POST https://example.com/{{path}} HTTP/1.1, or a bare URL.
syntax match volleyHttpMethod /^\s*\zs\%(GET\|POST\|PUT\|DELETE\|PATCH\|HEAD\|OPTIONS\|TRACE\|CONNECT\|GRAPHQL\|WEBSOCKET\|WS\|SSE\|[A-Z]\{3,}\)\ze\s\+\S/ nextgroup=volleyHttpUrl skipwhite
syntax match volleyHttpUrl /\S\+/ contained contains=volleyHttpVariable nextgroup=volleyHttpVersion skipwhite
syntax match volleyHttpUrl /^\s*\zs\%(https\?\|wss\?\):\/\/\S*/ contains=volleyHttpVariable nextgroup=volleyHttpVersion skipwhite
syntax match volleyHttpVersion /HTTP\/[0-9.]\+/ contained
" A query continued on the next lines: `  ?page=2` / `  &size=10`.
syntax match volleyHttpUrl /^\s\+[?&].*$/ contains=volleyHttpVariable

" Content-Type: application/json
syntax match volleyHttpHeaderName /^[A-Za-z0-9!#$%&'*+.^_`|~-]\+\ze:/ nextgroup=volleyHttpHeaderColon
syntax match volleyHttpHeaderColon /:/ contained nextgroup=volleyHttpHeaderValue skipwhite
syntax match volleyHttpHeaderValue /.*$/ contained contains=volleyHttpVariable

" Bodies: file references, response handlers, httpyac assertions, JSON basics.
syntax match volleyHttpFileReference /^<@\?\s\+\S.*$/
syntax match volleyHttpFileReference /^>>!\?\s\+\S.*$/
syntax match volleyHttpFileReference /^<>\s\+\S.*$/
syntax region volleyHttpScript start=/^[<>]\s*{%/ end=/%}/
syntax match volleyHttpAssertion /^??\s.*$/ contains=volleyHttpVariable
syntax match volleyHttpJsonKey /"\%([^"\\]\|\\.\)*"\ze\s*:/ contains=volleyHttpVariable
syntax match volleyHttpString /"\%([^"\\]\|\\.\)*"\%(\s*:\)\@!/ contains=volleyHttpVariable
syntax match volleyHttpNumber /\%(^\|[[:space:],:\[]\)\zs-\?\d\+\%(\.\d\+\)\?\%([eE][-+]\?\d\+\)\?\ze\%([[:space:],\]}]\|$\)/
syntax keyword volleyHttpBoolean true false
syntax keyword volleyHttpNull null
syntax match volleyHttpBrace /[{}\[\]]/
" A variable inside a body line wins over the braces.
syntax match volleyHttpVariable /{{[^}]*}}/ contains=volleyHttpResolver

syntax sync minlines=50

highlight default link volleyHttpComment Comment
highlight default link volleyHttpDirective PreProc
highlight default link volleyHttpDirectiveValue String
highlight default link volleyHttpSeparator Special
highlight default link volleyHttpSeparatorName Title
highlight default link volleyHttpDeclaration Special
highlight default link volleyHttpDeclarationName Identifier
highlight default link volleyHttpOperator Operator
highlight default link volleyHttpDeclarationValue String
highlight default link volleyHttpMethod Function
highlight default link volleyHttpUrl Underlined
highlight default link volleyHttpVersion Constant
highlight default link volleyHttpHeaderName Type
highlight default link volleyHttpHeaderColon Delimiter
highlight default link volleyHttpHeaderValue String
highlight default link volleyHttpVariable Identifier
highlight default link volleyHttpResolver Function
highlight default link volleyHttpFileReference Include
highlight default link volleyHttpScript Special
highlight default link volleyHttpAssertion Keyword
highlight default link volleyHttpJsonKey Label
highlight default link volleyHttpString String
highlight default link volleyHttpNumber Number
highlight default link volleyHttpBoolean Boolean
highlight default link volleyHttpNull Constant
highlight default link volleyHttpBrace Delimiter

let b:current_syntax = 'volley_http'
