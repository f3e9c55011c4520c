//! Scripts and other tools' lines that are not requests: JetBrains' `{% %}` handlers and
//! script files, httpyac's JavaScript blocks, output redirections, response references,
//! Kulala's and httpyac's commands. Recognised so they never read as something else,
//! and reported.

use tree_sitter::Node;

use super::Lowerer;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::{Script, ScriptKind};

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
        if node.kind_id() == self.kinds.js_block {
            self.report(
                Diagnostic::new(Code::UnsupportedScript, span, "httpyac script blocks (`{{` … `}}`) are not supported")
                    .with_hint(
                        "check responses with `# @assert …` or `?? …` lines and reuse values with request \
                         variables (`{{login.response.body.$.token}}`)",
                    ),
            );
            return Script { span, kind: ScriptKind::HttpyacScript };
        }
        if node.kind_id() == self.kinds.script_file {
            let before = self.node_text(node).starts_with('<');
            let (kind, message) = if before {
                (ScriptKind::PreRequestFile, "pre-request script files (`< ./script.js`) are not supported")
            } else {
                (ScriptKind::ResponseHandlerFile, "response-handler script files (`> ./handler.js`) are not supported")
            };
            self.report(Diagnostic::new(Code::UnsupportedScript, span, message).with_hint(
                "check responses with `# @assert …` and reuse values with request variables \
                 (`{{login.response.body.$.token}}`)",
            ));
            return Script { span, kind };
        }
        let kind =
            if self.node_text(node).starts_with('<') { ScriptKind::PreRequest } else { ScriptKind::ResponseHandler };
        if node.kind_id() == self.kinds.unclosed_script {
            self.report(
                Diagnostic::new(Code::UnclosedScript, span, "script `{%` is not closed")
                    .with_hint("end it with `%}`; a line starting with `###` always starts a new block"),
            );
            return Script { span, kind };
        }
        let what = match kind {
            ScriptKind::PreRequest => "pre-request scripts are not supported",
            _ => "response-handler scripts are not supported",
        };
        self.report(Diagnostic::new(Code::UnsupportedScript, span, what).with_hint(
            "check responses with `# @assert …` and reuse values with request variables \
             (`{{login.response.body.$.token}}`)",
        ));
        Script { span, kind }
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
            Script { span, kind: ScriptKind::OutputRedirect }
        } else {
            let span = self.node_span(node);
            self.report(
                Diagnostic::new(Code::ResponseReference, span, "response references (`<>`) are ignored")
                    .with_hint("Volley keeps no response history in files; the line is not part of the body"),
            );
            Script { span, kind: ScriptKind::ResponseReference }
        }
    }
}
