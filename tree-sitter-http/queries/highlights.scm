; Highlights for .http files (volley_http). Capture names follow nvim-treesitter's
; standard set, so themes color them without extra configuration.

(comment) @comment @spell

; ### Name
(separator "###" @punctuation.special)
(separator_name) @markup.heading

; # @name value
(directive "@" @attribute)
(directive name: (directive_name) @attribute)
(directive value: (value) @string)

; @host = example.com
(variable_declaration "@" @character.special)
(variable_declaration name: (variable_declaration_name) @variable)
(variable_declaration "=" @operator)
(variable_declaration value: (value) @string)

; POST https://example.com HTTP/1.1
(method) @function.method
(url) @string.special.url
(http_version) @constant
(query_continuation "?" @punctuation.delimiter)
(query_continuation value: (value) @string.special.url)

; Content-Type: application/json
(header name: (header_name) @constant)
(header ":" @punctuation.delimiter)
(header value: (value) @string)

; Bodies
(file_reference ["<" "<@"] @keyword.import)
(file_reference path: (path) @string.special.path)
(form_field name: (form_field_name) @property)
(form_field value: (value) @string)
(form_file "@" @character.special)
(form_file "|" @punctuation.delimiter)
(form_file path: (path) @string.special.path)
(form_file filename: (filename) @string.special.path)
(output_redirect ">>" @keyword)
(output_redirect path: (path) @string.special.path)
(response_reference "<>" @keyword)
(response_reference path: (path) @string.special.path)
(script) @markup.raw
(script_file) @markup.raw
(js_block) @markup.raw
(command) @comment

; httpyac: ?? status == 200, and a saved response (HTTP/1.1 200 OK …)
(assertion "??" @keyword.operator)
(assertion value: (value) @string)
(response_line) @comment

; {{variables}} and {{$resolvers(args)}}; last, so they win inside the captures above.
(variable ["{{" "}}"] @punctuation.special)
(variable name: (variable_name) @variable)
(resolver name: (resolver_name) @function)
(arguments ["(" ")"] @punctuation.bracket)
(arguments "," @punctuation.delimiter)
(json_array ["[" "]"] @punctuation.bracket)
(string) @string
