/**
 * @file Grammar of `.http` request files for Volley.
 * @license MIT
 *
 * This file is the only hand-written grammar source; `src/` is generated from it by
 * `scripts/generate` and committed.
 *
 * Lines are the unit of the format, so the grammar is written with *leading* newlines:
 * every line but the first of the file is introduced by the `_newline` token that ends
 * the line before it. That keeps a missing final newline legal without an external
 * scanner, and it makes "start of a line" a parser state, so tokens that only make
 * sense at a line start (separators, comments, directives, form fields, file
 * references) are never tried in the middle of a line.
 *
 * The separator token carries its own leading newline (`\n###`). When the lexer sits on
 * a line break it prefers the longer separator, which is how a body ends exactly at the
 * next `###` line and nowhere else.
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

// Lexical precedences. A token with a higher precedence wins as soon as it matches,
// even when a lower one could match a longer text (tree-sitter's lexical precedence
// comes before match length).
const PREC = {
  comment: 1,
  field: 2,
  directive: 3,
  unclosed_script: 4,
  script: 5,
  separator: 6,
};

const NEWLINE = /\r?\n|\r/;

// `> {% … %}` / `< {% … %}`. Inside, a line may start with anything but `###`; a line
// of only `#` or `##` ends the match (and the script is then read as text).
const NL = String.raw`(\r?\n|\r)`;
const SCRIPT_BODY = String.raw`[^%\r\n]|%+[^%}\r\n]|${NL}+([^#%\r\n]|##?[^#%\r\n]|%+[^%}\r\n])`;
const SCRIPT = new RegExp(String.raw`[<>][ \t]*\{%(${SCRIPT_BODY})*${NL}*%+\}[ \t]*`);

// httpyac's JavaScript blocks: a line of `{{` (optionally `{{+`, `{{@request`, `{{@js
// response` …) up to a line of `}}`. A line inside may be anything but `}}` alone and a
// line starting with `###`, so the block never hides a separator.
const JS_LINE = String.raw`[^#}\r\n][^\r\n]*|\}([^}\r\n][^\r\n]*)?|\}\}[ \t]*[^ \t\r\n][^\r\n]*|##?([^#\r\n][^\r\n]*)?`;
// The opening line is exactly httpyac's: `{{`, a modifier (`+`, `@`) and an event name at
// most, so a line that starts with an unclosed `{{name` is never tried as a block.
const JS_BLOCK = new RegExp(
  String.raw`\{\{(@js[ \t]+)?[+@]?(request|streaming|response|after|responseLogging)?[ \t]*` +
    String.raw`(${NL}(${JS_LINE})?)*${NL}\}\}[ \t]*`,
);

// httpyac's GraphQL fragments: `fragment Parts on Type {` at the end of its line up to a
// line of `}`, or all on one line. A line inside may be anything but `}` at its start and a line starting with
// `###`.
const FRAGMENT_LINE = String.raw`[^#}\r\n][^\r\n]*|##?([^#\r\n][^\r\n]*)?`;
const FRAGMENT = new RegExp(
  String.raw`fragment[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]+on[ \t]+[^\r\n{]*\{` +
    String.raw`([^\r\n]*\}[ \t]*|[ \t]*(${NL}(${FRAGMENT_LINE})?)*${NL}\}[ \t]*)`,
);

module.exports = grammar({
  name: 'volley_http',

  // Whitespace and line breaks are structure in this format, never noise.
  extras: (_) => [],

  // Helper rules spliced into the rules that use them: no reduction and no hidden node
  // of their own, so fewer steps for the parser, for every tree walk and for freeing
  // the tree. The visible tree is the same.
  inline: ($) => [
    $._preamble_next,
    $._preamble_line,
    $._header_line,
    $._body_line,
    $._text_part,
    $._request_line_tail,
    $._blank,
  ],

  rules: {
    document: ($) =>
      seq(
        // A UTF-8 byte order mark, as editors on Windows write it.
        optional(alias(/\uFEFF/, 'bom')),
        optional(alias($._first_block, $.block)),
        repeat($.block),
      ),

    // ---------------------------------------------------------------- blocks

    // The block before the first separator: its first line has no leading newline.
    _first_block: ($) =>
      choice(
        seq(
          choice($._preamble_line, alias($._document_separator, $.separator)),
          repeat($._preamble_next),
          optional(seq($._newline, $.request)),
        ),
        seq(repeat1($._preamble_next), optional(seq($._newline, $.request))),
        seq($._newline, $.request),
        $.request,
      ),

    block: ($) =>
      seq(
        $.separator,
        repeat($._preamble_next),
        optional(seq($._newline, $.request)),
      ),

    separator: ($) =>
      seq(
        alias(token(seq(NEWLINE, /###+/)), '###'),
        optional(field('name', $.separator_name)),
      ),

    // `###` on the very first line of the file (no newline in front of it).
    _document_separator: ($) =>
      seq(
        alias(token(prec(PREC.separator, /###+/)), '###'),
        optional(field('name', $.separator_name)),
      ),

    separator_name: (_) => /[^\r\n]+/,

    _preamble_next: ($) => seq($._newline, optional($._preamble_line)),

    // Lines allowed before the request line.
    _preamble_line: ($) =>
      choice(
        $.comment,
        $.directive,
        $.variable_declaration,
        $.script,
        $.unclosed_script,
        alias($._pre_request_file, $.script_file),
        $.js_block,
        $.graphql_fragment,
        $.command,
        $.junk,
        alias($._junk_at, $.junk),
        $._blank,
      ),

    // A line nothing can start: one that starts (after spaces and tabs) with a space
    // character other than those, a form feed say, or, before a request line, with an
    // `@` that no variable name follows. One token each, so that megabytes of them cost
    // what comments cost, not tree-sitter's error recovery; the typed layer reports them.
    // No byte order mark: that is the document's first token.
    junk: (_) => token(/[ \t]*[\f\v\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\r\n]*/),
    _junk_at: (_) => token(prec(PREC.directive, /@[^A-Za-z_$\r\n][^\r\n]*/)),

    comment: (_) =>
      token(prec(PREC.comment, choice(/#[^\r\n]*/, /\/\/[^\r\n]*/))),

    // `# @name value` and `// @name value`.
    directive: ($) =>
      seq(
        alias(token(prec(PREC.directive, /(#|\/\/)[ \t]*@/)), '@'),
        field('name', $.directive_name),
        // The value's text starts with the space after the name (one token less per
        // directive); the typed layer trims it.
        optional(field('value', $.value)),
      ),

    directive_name: (_) => /[A-Za-z_][A-Za-z0-9_.\-]*/,

    // `@name = value`: a file variable. A lone `@` is one without a name, for the typed
    // layer to report.
    variable_declaration: ($) =>
      seq(
        alias(token(prec(PREC.comment, '@')), '@'),
        optional(
          seq(
            field('name', $.variable_declaration_name),
            optional($._space),
            alias(token(/=[ \t]*/), '='),
            optional(field('value', $.value)),
          ),
        ),
      ),

    variable_declaration_name: (_) => /[A-Za-z_$][A-Za-z0-9_.\-$]*/,

    // Text with interpolations up to the end of the line.
    value: ($) => repeat1($._text_part),

    // Response-handler and pre-request scripts: `> {% … %}` and `< {% … %}`.
    // A script never contains a line starting with `###`: that line is a separator, as
    // everywhere else, so every `\n###` in a file starts a block (see SCRIPT_BODY).
    script: (_) => token(prec(PREC.script, SCRIPT)),

    // `> {%` without a closing `%}`: the opening line only, so the lines after it are
    // read as usual and the typed layer reports the missing `%}`.
    unclosed_script: (_) => token(prec(PREC.unclosed_script, /[<>][ \t]*\{%[^\r\n]*/)),

    // A script in a file: `< ./before.js` before the request line, `> ./after.js` after
    // the headers or the body (JetBrains, Kulala). In a body, `< ./file` stays a file
    // reference: this rule is only tried where a script may stand.
    // Both are `script_file` nodes.
    _pre_request_file: (_) => token(prec(PREC.script, /<[ \t]+[^\s{][^\r\n]*/)),
    _handler_file: (_) => token(prec(PREC.field, />[ \t]+[^\s{>%][^\r\n]*/)),

    // httpyac's JavaScript blocks (see JS_BLOCK).
    js_block: (_) => token(prec(PREC.script, JS_BLOCK)),

    // httpyac's GraphQL fragments (see FRAGMENT): added to the GraphQL queries that
    // spread them (`...Parts`).
    graphql_fragment: (_) => token(prec(PREC.script, FRAGMENT)),

    // Kulala's `import ./other.http` and `run #name` lines (lower case, as Kulala
    // writes them); recognised so that they never read as request lines.
    // httpyac's `proto < ./file.proto` (gRPC) and `gql Name < ./file.gql` lines too; a
    // `proto` line keeps the @grpc/proto-loader option lines under it (`keepCase: true`).
    command: (_) =>
      token(
        prec(
          PREC.comment,
          choice(
            /(import|run|gql)[ \t]+[^\r\n]*/,
            /proto[ \t]+[^\r\n]*(\r?\n[ \t]*(keepCase|longs|enums|bytes|defaults|arrays|objects|oneofs|json|includeDirs)[ \t]*:[^\r\n]*)*/,
          ),
        ),
      ),

    // ---------------------------------------------------------------- request

    request: ($) =>
      seq(
        $.request_line,
        repeat(seq($._newline, $.query_continuation)),
        repeat(seq($._newline, $._header_line)),
        optional(
          seq(
            $._newline,
            optional($._blank),
            optional($.body),
          ),
        ),
      ),

    request_line: ($) =>
      choice(
        seq(
          field('method', $.method),
          optional(
            seq(
              $._space,
              optional(seq(field('url', $.url), optional($._request_line_tail))),
            ),
          ),
        ),
        seq(field('url', $.url), optional($._request_line_tail)),
      ),

    _request_line_tail: ($) => seq(field('version', $.http_version), optional($._space)),

    // Any RFC 9110 token that starts with a letter: the typed layer checks it against
    // the registered methods, so a typo gets a "did you mean" instead of a parse error.
    method: (_) => /[A-Za-z][A-Za-z0-9_\-]*/,

    // The request target runs to the end of the line or to ` HTTP/x`: spaces inside it
    // are kept (and percent-encoded when sent), as the JetBrains client reads them.
    url: ($) =>
      seq(
        choice($._url_text, $._lone_brace, $.variable),
        repeat(choice($._url_text, $._lone_brace, $.variable, $._space)),
      ),

    _url_text: (_) => /([^\s{]|\{[^\s{])+/,

    // With the spaces before it: lexical precedence makes ` HTTP/1.1` a version, not
    // more of the target.
    http_version: (_) => token(prec(PREC.comment, /[ \t]+HTTP\/[0-9.]+/)),

    // Lines right after the request line that continue the target: `?a=1` / `&b=2`
    // (may be indented) continue the query, an indented `/path` continues the path
    // (JetBrains). `??` is not one: it is an assertion (lexical precedence).
    query_continuation: ($) =>
      seq(
        alias(token(prec(PREC.comment, /[ \t]*[?&]|[ \t]+\//)), '?'),
        optional(field('value', $.value)),
      ),

    // httpyac's `?? status == 200`: an assertion on the response, after the request
    // line (between the headers or after the body).
    assertion: ($) =>
      seq(
        alias(token(prec(PREC.field, /[ \t]*\?\?/)), '??'),
        optional(field('value', $.value)),
      ),

    // `HTTP/1.1 200 OK` at the start of a body line: a response saved in the file
    // (httpyac, JetBrains' history). It and everything after it up to the next
    // separator is not part of the body.
    response_line: (_) => token(prec(PREC.field, /HTTP\/[0-9.]+[ \t]+[1-5][0-9][0-9]([ \t][^\r\n]*)?/)),

    _header_line: ($) =>
      choice(
        $.header,
        $.comment,
        $.directive,
        $.script,
        $.unclosed_script,
        alias($._handler_file, $.script_file),
        $.js_block,
        $.output_redirect,
        $.assertion,
        $.junk,
      ),

    // A line without `:` is still a header node (with no value), so the typed layer can
    // report it precisely instead of losing it.
    header: ($) =>
      seq(
        field('name', $.header_name),
        optional(
          seq(
            alias(token(/:[ \t]*/), ':'),
            optional(field('value', $.value)),
          ),
        ),
      ),

    header_name: ($) =>
      repeat1(choice($._header_name_text, $._lone_brace, $.variable)),

    // Must hold something besides spaces: a line of spaces is the blank line that starts
    // the body, and may be indented. An indented `{` is a JSON body's line written right
    // after the headers (httpyac), which the typed layer reads as the body.
    _header_name_text: (_) => /[ \t]*[^\s:{][^:{\r\n]*|[ \t]+\{[^:{\r\n]*/,

    // ---------------------------------------------------------------- body

    // Everything after the blank line up to the next separator. It starts with the
    // line break that ends the blank line.
    body: ($) =>
      prec.right(repeat1(seq($._newline, optional($._body_line)))),

    _body_line: ($) =>
      choice(
        $.file_reference,
        $.form_field,
        $.script,
        $.unclosed_script,
        alias($._handler_file, $.script_file),
        $.js_block,
        $.output_redirect,
        $.response_reference,
        $.assertion,
        $.response_line,
        repeat1(choice($._body_text, $._lone_brace, $._angle, $.variable)),
      ),

    // `< ./path` (raw file) and `<@ ./path` (file with variables substituted).
    file_reference: ($) =>
      seq(
        choice(
          alias(token(prec(PREC.field, /<[ \t]+/)), '<'),
          alias(token(prec(PREC.field, /<@[A-Za-z0-9_\-]*[ \t]+/)), '<@'),
        ),
        optional(field('path', $.path)),
      ),

    path: ($) => repeat1($._text_part),

    // `name = value`, `name = @./file`, `name = @./file | upload.png`.
    // The name and the `=` are one token so that a field wins over plain text at the
    // start of a body line; the typed layer splits the two.
    form_field: ($) =>
      seq(
        field('name', $.form_field_name),
        optional(
          choice(
            field('value', $.value),
            field('file', $.form_file),
          ),
        ),
      ),

    form_field_name: (_) =>
      token(prec(PREC.field, /[A-Za-z0-9_.$\-][^\s={}]*[ \t]*=[ \t]*/)),

    form_file: ($) =>
      seq(
        alias(token(prec(PREC.field, '@')), '@'),
        optional(field('path', alias($._form_path, $.path))),
        optional(
          seq(
            alias(token(prec(PREC.field, /\|[ \t]*/)), '|'),
            optional(field('filename', alias($._form_path, $.filename))),
          ),
        ),
      ),

    _form_path: ($) => repeat1(choice($._form_path_text, $._lone_brace, $.variable)),

    _form_path_text: (_) => /[^|{\r\n]+/,

    // `>> ./file` and `>>! ./file` (JetBrains response output redirection).
    output_redirect: ($) =>
      seq(
        alias(token(prec(PREC.field, />>!?[ \t]*/)), '>>'),
        optional(field('path', $.path)),
      ),

    // `<> ./previous-response.json` (JetBrains response reference).
    response_reference: ($) =>
      seq(
        alias(token(prec(PREC.field, /<>[ \t]*/)), '<>'),
        optional(field('path', $.path)),
      ),

    // ---------------------------------------------------------------- interpolation

    _text_part: ($) => choice($._text, $._lone_brace, $.variable),

    _text: (_) => /([^{\r\n]|\{[^{\r\n])+/,

    // Body text may run over line breaks when the next line cannot start anything but
    // text: it begins with a space, a tab or JSON/XML punctuation. Whole JSON bodies
    // thus lex as a few tokens instead of one per line, which is most of the parser's
    // speed on large files. Lines that might be separators, form fields, file
    // references or scripts end the token, and are lexed on their own.
    //
    // It never starts with `<` or `>` (those are `_angle`): a script that is not closed
    // must lose to `unclosed_script`, not to text that runs on over the next lines.
    _body_text: (_) =>
      token(
        seq(
          choice(
            /[^{<>\r\n]/,
            /\{[^{\r\n]/,
            seq(/\r?\n|\r/, choice(/[ \t}\])"',:]/, /\{[^{\r\n]/)),
          ),
          repeat(
            choice(
              /[^{\r\n]/,
              /\{[^{\r\n]/,
              seq(/\r?\n|\r/, choice(/[ \t}\])"',:]/, /\{[^{\r\n]/)),
            ),
          ),
        ),
      ),

    // A `<` or `>` in a body: XML, or a line that only looks like a script.
    _angle: (_) => /[<>]/,

    // A `{` that cannot start `{{`: before a line break, another `{`, or the end.
    _lone_brace: (_) => '{',

    // `{{name}}`, `{{ a.b.c }}`, `{{$resolver(args)}}`, `{{$alias arg arg}}`. The closing
    // `}}` is optional so that an unclosed variable is one node the typed layer can
    // report instead of an error that swallows the line.
    variable: ($) =>
      prec.right(seq(
        alias(token(/\{\{[ \t]*/), '{{'),
        optional(choice($.resolver, field('name', $.variable_name))),
        optional(alias(token(prec(PREC.comment, /[ \t]*\}\}/)), '}}')),
      )),

    // Lexical precedence: right after `{{` a name beats the longer text that could follow
    // an unclosed variable.
    variable_name: (_) => token(prec(PREC.comment, /[^\s{}$]([^\s{}])*/)),

    resolver: ($) =>
      prec.right(seq(
        field('name', $.resolver_name),
        optional(
          choice(
            $.arguments,
            repeat1(seq($._argument_space, alias($._word_argument, $.argument))),
          ),
        ),
      )),

    resolver_name: (_) => token(prec(PREC.comment, /\$[A-Za-z_][A-Za-z0-9_.\-]*/)),

    arguments: ($) =>
      seq(
        alias(token(prec(PREC.comment, '(')), '('),
        optional(
          choice(
            $.json_array,
            seq($.argument, repeat(seq(',', $.argument))),
          ),
        ),
        ')',
      ),

    argument: ($) =>
      repeat1(choice($._argument_text, $._lone_brace, $.string, $.variable)),

    // No `}`: a missing `)` must not let the argument swallow the closing `}}`.
    _argument_text: (_) => /([^,()"{}\[\]\r\n]|\{[^,()"{}\[\]\r\n])([^,()"{}\r\n]|\{[^,()"{}\r\n])*/,

    _word_argument: ($) =>
      prec.right(repeat1(choice($._word_text, $.string, $.variable))),

    // Lexical precedence: right after an inner `{{b}}`, text (`'{{b}}'`) continues the
    // word, not the URL after an unclosed outer `{{`.
    _word_text: (_) => token(prec(PREC.comment, /[^\s{}()"]+/)),

    string: ($) =>
      seq(
        '"',
        repeat(choice($._string_text, $._lone_brace, $.variable)),
        '"',
      ),

    _string_text: (_) => /([^"\\{\r\n]|\\[^\r\n]|\{[^"\\{\r\n])+/,

    // `["a", "{{b}}"]`: kept whole; the typed layer reads it as JSON after substitution.
    json_array: ($) =>
      seq(
        '[',
        repeat(choice($._json_text, $._lone_brace, $.string, $.json_array, $.variable)),
        ']',
      ),

    _json_text: (_) => /([^"{\[\]\r\n]|\{[^"{\[\]\r\n])+/,

    // ---------------------------------------------------------------- lines

    _newline: (_) => NEWLINE,

    _space: (_) => /[ \t]+/,

    // Spaces between the words of `{{$randomInt 1 10}}`. Lexical precedence: inside an
    // interpolation they beat text that could follow an unclosed `{{`.
    _argument_space: (_) => token(prec(PREC.comment, /[ \t]+/)),

    // A line of nothing but spaces and tabs.
    _blank: ($) => $._space,
  },
});
