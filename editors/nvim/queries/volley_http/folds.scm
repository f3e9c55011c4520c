; Generated from tree-sitter-http/queries/folds.scm by editors/nvim/scripts/copy-queries; do not edit.
; A request folds from its request line to the end of its body; bodies and scripts
; fold on their own.
(request) @fold
(body) @fold
(script) @fold
(js_block) @fold
