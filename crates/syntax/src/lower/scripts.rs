//! Scripts and other tools' lines that are not requests: JetBrains' `{% %}` handlers and
//! script files (kept with their code or path, for the engine to run), httpyac's
//! JavaScript blocks, output redirections, response references, Kulala's and httpyac's
//! commands (recognised so they never read as something else, and reported).

use tree_sitter::Node;

use super::Lowerer;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::{Script, ScriptKind};
use crate::span::Spanned;

impl Lowerer<'_> {
    /// Kulala's `import ./file.http` and `run #name`, httpyac's `proto < ./file.proto`
    /// and `gql Name < ./file.gql`: reported, not run.
    pub(super) fn command(&mut self, node: Node<'_>) {
        let span = self.node_span(node);
        let text = self.node_text(node).trim();
        let (message, hint) = if text.starts_with("proto") {
            (
                "httpyac `proto` imports (gRPC) are not supported",
                "Volley sends HTTP, Server-Sent Events and WebSocket requests",
            )
        } else if text.starts_with("gql") {
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
            let span = self.node_span(node);
            self.report(
                Diagnostic::new(Code::UnsupportedScript, span, "response output redirection (`>>`) is not supported")
                    .with_hint("`volley run --json` writes responses to stdout, redirect that instead"),
            );
            Script { span, kind: ScriptKind::OutputRedirect, code: None, path: None }
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
