; Generated from tree-sitter-http/queries/injections.scm by editors/nvim/scripts/copy-queries; do not edit.
; Bodies are injected with the language their Content-Type names. The body's child
; nodes (variables, scripts) are left out of the injected text.

((request
  (header
    name: (header_name) @_name
    value: (value) @_type)
  (body) @injection.content)
  (#match? @_name "^[Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Tt][Yy][Pp][Ee]$")
  (#match? @_type "[Jj][Ss][Oo][Nn]")
  (#set! injection.language "json"))

((request
  (header
    name: (header_name) @_name
    value: (value) @_type)
  (body) @injection.content)
  (#match? @_name "^[Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Tt][Yy][Pp][Ee]$")
  (#match? @_type "[Xx][Mm][Ll]")
  (#set! injection.language "xml"))

((request
  (header
    name: (header_name) @_name
    value: (value) @_type)
  (body) @injection.content)
  (#match? @_name "^[Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Tt][Yy][Pp][Ee]$")
  (#match? @_type "[Gg][Rr][Aa][Pp][Hh][Qq][Ll]")
  (#set! injection.language "graphql"))

; `X-Request-Type: GraphQL` is how REST Client marks GraphQL bodies sent as JSON.
((request
  (header
    name: (header_name) @_name
    value: (value) @_type)
  (body) @injection.content)
  (#match? @_name "^[Xx]-[Rr][Ee][Qq][Uu][Ee][Ss][Tt]-[Tt][Yy][Pp][Ee]$")
  (#match? @_type "^[Gg][Rr][Aa][Pp][Hh][Qq][Ll]$")
  (#set! injection.language "graphql"))
