//! Scripts and other tools' lines that are not requests: JetBrains' `{% %}` handlers and
//! script files (kept with their code or path, for the engine to run), httpyac's
//! JavaScript blocks, output redirections, response references, Kulala's and httpyac's
//! commands (recognised so they never read as something else, and reported).

use tree_sitter::Node;

use super::Lowerer;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::{ProtoImport, Script, ScriptKind};
use crate::span::Spanned;

impl Lowerer<'_> {
    /// httpyac's `proto < ./file.proto` with its option lines; `None` for other commands.
    pub(super) fn proto_import(&mut self, node: Node<'_>) -> Option<ProtoImport> {
        let text = self.node_text(node);
        let rest = text.strip_prefix("proto")?;
        let span = self.node_span(node);
        let mut lines = rest.lines();
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

    /// Kulala's `import ./file.http` and `run #name`, httpyac's `gql Name < ./file.gql`:
    /// reported, not run.
    pub(super) fn command(&mut self, node: Node<'_>) {
        let span = self.node_span(node);
        let text = self.node_text(node).trim();
        let (message, hint) = if text.starts_with("gql") {
            (
                "httpyac `gql` imports are not supported",
                "write the query in the request's body, and shared parts as `fragment Name on Type { … }` above it",
            )
        } else if text.starts_with("import") {
            (
                "Kulala `import` commands are not supported",
                "Volley runs the requests of each file given to it: `volley run this.http other.http`",
            )
        } else {
            (
                "Kulala `run` commands are not supported",
                "name the requests to run instead: `volley run file.http --name login --name me`",
            )
        };
        self.report(Diagnostic::new(Code::UnsupportedCommand, span, message).with_hint(hint));
    }

    pub(crate) fn script(&mut self, node: Node<'_>) -> Script {
        let span = self.node_span(node);
        let bare = |kind| Script { span, kind, code: None, path: None };
        if node.kind_id() == self.kinds.js_block {
            self.report(
                Diagnostic::new(Code::UnsupportedScript, span, "httpyac script blocks (`{{` … `}}`) are not supported")
                    .with_hint(
                        "write the script as a JetBrains handler, `> {% … %}` after the request (or \
                         `< {% … %}` before it), or check responses with `# @assert …` lines",
                    ),
            );
            return bare(ScriptKind::HttpyacScript);
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
        if kind == self.kinds.script
            || kind == self.kinds.unclosed_script
            || kind == self.kinds.js_block
            || kind == self.kinds.script_file
        {
            self.script(node)
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
