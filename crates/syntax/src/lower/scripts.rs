//! Scripts and other tools' lines that are not requests: JetBrains' `{% %}` handlers and
//! script files (kept with their code or path, for the engine to run), httpyac's
//! JavaScript blocks, output redirections, response references, Kulala's and httpyac's
//! commands (recognised so they never read as something else, and reported).

use tree_sitter::Node;

use super::Lowerer;
use crate::command::{Command, CommandKind, RunTarget, RunVariable};
use crate::diagnostic::{Code, Diagnostic};
use crate::document::{ProtoImport, Script, ScriptKind};
use crate::span::Spanned;

impl Lowerer<'_> {
    /// httpyac's `proto < ./file.proto` with its option lines; `None` for other commands.
    pub(super) fn proto_import(&mut self, node: Node<'_>) -> Option<ProtoImport> {
        let text = self.node_text(node);
        let rest = text.strip_prefix("proto")?;
        let span = self.node_span(node);
        let mut lines = crate::line_break::lines(rest);
        let first = lines.next().unwrap_or_default();
        let path_text = first.trim_start().strip_prefix('<').map(str::trim);
        let Some(path_text) = path_text.filter(|path| !path.is_empty()) else {
            self.report(
                Diagnostic::new(Code::InvalidGrpc, span, "`proto` needs a file: `proto < ./service.proto`")
                    .with_hint("write `<` and the path of the proto file, relative to this file"),
            );
            return Some(ProtoImport {
                span,
                path: Spanned::new(String::new(), span),
                include_dirs: Vec::new(),
                keep_case: false,
            });
        };
        let start = node.start_byte() + "proto".len() + first.find(path_text).unwrap_or(0);
        let path = Spanned::new(path_text.to_owned(), self.span(start, start + path_text.len()));
        let mut import = ProtoImport { span, path, include_dirs: Vec::new(), keep_case: false };
        for line in lines {
            let Some((name, value)) = line.split_once(':') else { continue };
            let value = value.trim();
            match name.trim() {
                "keepCase" => import.keep_case = value == "true",
                "includeDirs" => match include_dirs(value) {
                    Some(directories) => import.include_dirs = directories,
                    None => self.report(
                        Diagnostic::new(
                            Code::InvalidGrpc,
                            span,
                            format!("`includeDirs: {value}` is not a list of directories"),
                        )
                        .with_hint("write `includeDirs: [\"./protos\", \"./vendor\"]`, relative to this file"),
                    ),
                },
                // The other @grpc/proto-loader options shape JavaScript objects; Volley
                // writes the canonical proto3 JSON (enum names, 64-bit numbers as
                // strings, default values included) whatever they say.
                _ => {}
            }
        }
        Some(import)
    }

    /// JetBrains' and Kulala's `import ./file.http` and `run #name (@a=1)` lines; httpyac's
    /// `gql Name < ./file.gql`, reported and not run.
    pub(super) fn command(&mut self, node: Node<'_>) -> Option<Command> {
        let span = self.node_span(node);
        let text = self.node_text(node);
        let trimmed_end = text.trim_end().len();
        if text.starts_with("gql") {
            self.report(
                Diagnostic::new(Code::UnsupportedCommand, span, "httpyac `gql` imports are not supported").with_hint(
                    "write the query in the request's body, and shared parts as `fragment Name on Type { … }` above it",
                ),
            );
            return None;
        }
        let (word, import) = if text.starts_with("import") { ("import", true) } else { ("run", false) };
        // Offsets in the line, from the first byte after the word.
        let rest = &text[word.len()..trimmed_end];
        let lead = rest.len() - rest.trim_start().len();
        let at = node.start_byte() + word.len() + lead;
        let rest = rest.trim_start();
        let spanned = |lowerer: &Self, start: usize, value: &str| {
            Spanned::new(value.to_owned(), lowerer.span(start, start + value.len()))
        };
        if rest.is_empty() {
            let hint = if import {
                "write the file: `import ./other.http`"
            } else {
                "write `run #name` or `run ./other.http`"
            };
            self.report(
                Diagnostic::new(Code::InvalidCommand, span, format!("`{word}` needs a target")).with_hint(hint),
            );
            return None;
        }
        if import {
            return Some(Command { span, kind: CommandKind::Import(spanned(self, at, rest)) });
        }
        // `run TARGET (@a=1, @b={{x}})`: the list is the last `(` … `)` of the line.
        let (target_text, list) = match rest.strip_suffix(')').and_then(|open| open.rfind(" (").map(|at| (open, at))) {
            Some((open, paren)) => (open[..paren].trim_end(), Some((paren + 2, &open[paren + 2..]))),
            None => (rest, None),
        };
        let target = match target_text.strip_prefix('#') {
            Some(name) => {
                let name_lead = name.len() - name.trim_start().len();
                RunTarget::Request(spanned(self, at + 1 + name_lead, name.trim()))
            }
            None => RunTarget::File(spanned(self, at, target_text)),
        };
        if target.text().value.is_empty() {
            self.report(
                Diagnostic::new(Code::InvalidCommand, span, "`run #` needs the name of a request")
                    .with_hint("write `run #login`, the name of a request of this file or of one it imports"),
            );
            return None;
        }
        let mut variables = Vec::new();
        if let Some((offset, list)) = list {
            let mut start = at + offset;
            for item in list.split(',') {
                let item_start = start + (item.len() - item.trim_start().len());
                start += item.len() + 1;
                let item = item.trim();
                if item.is_empty() {
                    continue;
                }
                let parsed = item.strip_prefix('@').and_then(|item| item.split_once('='));
                let Some((name, value)) = parsed.filter(|(name, _)| crate::is_variable_name(name.trim())) else {
                    self.report(
                        Diagnostic::new(
                            Code::InvalidCommand,
                            self.span(item_start, item_start + item.len()),
                            format!("`{item}` is not a variable: write `@name=value`"),
                        )
                        .with_hint("a `run` line sets variables as `run #name (@host=example.com, @id=2)`"),
                    );
                    return None;
                };
                let value_start = item_start + 1 + name.len() + 1 + (value.len() - value.trim_start().len());
                let name_start = item_start + 1 + (name.len() - name.trim_start().len());
                variables.push(RunVariable {
                    name: spanned(self, name_start, name.trim()),
                    value: spanned(self, value_start, value.trim()),
                });
            }
        }
        Some(Command { span, kind: CommandKind::Run { target, variables } })
    }

    /// httpyac's `{{` … `}}` block: before the request line (or with `@request`) it runs
    /// before the request, after the request (or with `@response` / `@after`) once the
    /// response is there. The hooks of other events and `require` are refused by name.
    pub(super) fn httpyac_script(&mut self, node: Node<'_>, after_request: bool) -> Script {
        let span = self.node_span(node);
        let text = self.node_text(node);
        let header_end = text.find(['\n', '\r']).unwrap_or(text.len());
        let header = text[2..header_end].trim();
        let after = match header {
            "" => Some(after_request),
            "@request" => Some(false),
            "@response" | "@after" => Some(true),
            _ => None,
        };
        let kind = if after == Some(true) { ScriptKind::HttpyacResponse } else { ScriptKind::HttpyacScript };
        let bare = Script { span, kind, code: None, path: None };
        let Some(_) = after else {
            self.report(
                Diagnostic::new(
                    Code::UnsupportedScript,
                    span,
                    format!("httpyac `{{{{{header}` scripts are not supported"),
                )
                .with_hint(
                    "Volley runs httpyac's `{{` blocks before the request line (before sending) and after the \
                     request (once the response is there), and `{{@request`, `{{@response`, `{{@after`; \
                     global hooks and streaming events are not run",
                ),
            );
            return bare;
        };
        // The code: the lines between the header line and the closing `}}` line.
        let close = text.trim_end().len().saturating_sub(2);
        let start = (header_end + usize::from(text[header_end..].starts_with("\r\n")) + 1).min(close);
        let code_text = &text[start..close];
        let end = start + code_text.trim_end_matches([' ', '\t']).len();
        let (start, end) = (node.start_byte() + start, node.start_byte() + end);
        let code = Spanned::new(self.slice(start, end).to_owned(), self.span(start, end));
        // Before the request, a script may make what is sent: without the module it cannot
        // run as written, so the request is refused. After it, the script fails when it
        // runs, as a failed check.
        if let Some(at) = find_require(&code.value).filter(|_| kind == ScriptKind::HttpyacScript) {
            let from = start + at;
            self.report(
                Diagnostic::new(
                    Code::UnsupportedScript,
                    self.span(from, from + "require".len()),
                    "`require` of Node modules other than `assert` and `crypto` is not available: Volley runs \
                     httpyac scripts in its sandbox, without Node",
                )
                .with_hint(
                    "use JavaScript's own built-ins (`JSON`, `Date`, `Math`, `encodeURIComponent`), or a \
                     resolver in the request (`{{$uuid}}`, `{{$timestamp}}`, `{{$base64 …}}`)",
                ),
            );
            return bare;
        }
        Script { code: Some(code), ..bare }
    }

    pub(crate) fn script(&mut self, node: Node<'_>) -> Script {
        let span = self.node_span(node);
        let bare = |kind| Script { span, kind, code: None, path: None };
        if node.kind_id() == self.kinds.js_block {
            return self.httpyac_script(node, false);
        }
        let text = self.node_text(node);
        let before = text.starts_with('<');
        if node.kind_id() == self.kinds.script_file {
            let kind = if before { ScriptKind::PreRequestFile } else { ScriptKind::ResponseHandlerFile };
            let (start, end) = self.trimmed(node.start_byte() + 1, node.end_byte());
            let path = Spanned::new(self.slice(start, end).to_owned(), self.span(start, end));
            return Script { path: Some(path), ..bare(kind) };
        }
        let kind = if before { ScriptKind::PreRequest } else { ScriptKind::ResponseHandler };
        if node.kind_id() == self.kinds.unclosed_script {
            self.report(
                Diagnostic::new(Code::UnclosedScript, span, "script `{%` is not closed")
                    .with_hint("end it with `%}`; a line starting with `###` always starts a new block"),
            );
            return bare(kind);
        }
        // The grammar's token is `<` or `>`, `{%`, the code, `%}` (and trailing blanks).
        let open = text.find("{%").map_or(0, |at| at + 2);
        let close = text.rfind("%}").filter(|close| *close >= open).unwrap_or(text.len());
        let (start, end) = (node.start_byte() + open, node.start_byte() + close);
        let code = Spanned::new(self.slice(start, end).to_owned(), self.span(start, end));
        Script { code: Some(code), ..bare(kind) }
    }

    pub(crate) fn handler(&mut self, node: Node<'_>) -> Script {
        let kind = node.kind_id();
        if kind == self.kinds.script || kind == self.kinds.unclosed_script || kind == self.kinds.script_file {
            self.script(node)
        } else if kind == self.kinds.js_block {
            self.httpyac_script(node, true)
        } else if kind == self.kinds.output_redirect {
            // `>> ./file` saves the response body to a new file, `>>! ./file` over it.
            let span = self.node_span(node);
            let overwrite = self.node_text(node).trim_start().starts_with(">>!");
            let path = node
                .child_by_field_name("path")
                .map(|path| Spanned::new(self.node_text(path).trim().to_owned(), self.node_span(path)))
                .filter(|path| !path.value.is_empty());
            if path.is_none() {
                self.report(
                    Diagnostic::new(Code::UnsupportedScript, span, "`>>` names no file to save the response to")
                        .with_hint(
                            "write `>> ./response.json` (a new file each time) or `>>! ./response.json` (over it)",
                        ),
                );
            }
            let kind = if overwrite { ScriptKind::OutputOverwrite } else { ScriptKind::OutputRedirect };
            Script { span, kind, code: None, path }
        } else {
            let span = self.node_span(node);
            self.report(
                Diagnostic::new(Code::ResponseReference, span, "response references (`<>`) are ignored")
                    .with_hint("Volley keeps no response history in files; the line is not part of the body"),
            );
            Script { span, kind: ScriptKind::ResponseReference, code: None, path: None }
        }
    }
}

/// `["./a", './b', `${__dirname}/c`]`: the directories of an `includeDirs` option (a
/// template literal's `${__dirname}` is the file's directory, as in httpyac's examples);
/// `None` when it is not such a list.
fn include_dirs(value: &str) -> Option<Vec<String>> {
    let inner = value.strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner
        .split(',')
        .map(|item| {
            let item = item.trim();
            let quote = item.chars().next()?;
            let text = item.strip_prefix(quote)?.strip_suffix(quote)?;
            match quote {
                '"' | '\'' => Some(text.to_owned()),
                '`' => {
                    let text = text.replace("${__dirname}", ".");
                    (!text.contains("${")).then_some(text)
                }
                _ => None,
            }
        })
        .collect()
}

/// Where `require(` is called in `code`, outside comments and strings (roughly: a word
/// `require` followed by `(`, not after a `.` or inside a `//` comment).
fn find_require(code: &str) -> Option<usize> {
    let mut offset = 0;
    for line in crate::line_break::lines_inclusive(code) {
        let visible = line.split("//").next().unwrap_or(line);
        let mut from = 0;
        while let Some(found) = visible[from..].find("require") {
            let at = from + found;
            let before = visible[..at].chars().next_back();
            let after = visible[at + "require".len()..].trim_start();
            let word_start = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'));
            // The modules Volley's sandbox has: `assert` and `crypto` (Node's names for them).
            let available = after.strip_prefix('(').map(str::trim_start).is_some_and(|argument| {
                ["assert", "node:assert", "assert/strict", "node:assert/strict", "crypto", "node:crypto"].iter().any(
                    |name| argument.starts_with(&format!("'{name}'")) || argument.starts_with(&format!("\"{name}\"")),
                )
            });
            if word_start && after.starts_with('(') && !available {
                return Some(offset + at);
            }
            from = at + "require".len();
        }
        offset += line.len();
    }
    None
}
