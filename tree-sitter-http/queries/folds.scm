; A request folds from its request line to the end of its body; bodies and scripts
; fold on their own.
(request) @fold
(body) @fold
(script) @fold
(js_block) @fold
