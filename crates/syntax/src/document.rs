//! The typed document: blocks, requests, headers, directives and file variables, each
//! with its span (the bodies are `request_body.rs`).

use serde::Serialize;

use crate::command::Command;
use crate::diagnostic::Diagnostic;
use crate::directive::DirectiveKind;
use crate::known::Known;
use crate::method::Method;
use crate::span::{Span, Spanned};
use crate::template::Template;

pub use crate::request_body::{Body, BodyPart, FileBody, FormBody, FormField, FormValue, GraphQlBody, PartsBody};

/// A parsed `.http` file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Document {
    /// The blocks in file order: the text before the first separator (when there is
    /// any) and one block per `###` line.
    pub blocks: Vec<Block>,
    /// File variables (`@name = value`) in file order; a later one overrides an earlier
    /// one of the same name.
    pub variables: Vec<VariableDeclaration>,
    /// Everything wrong with the file, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// httpyac's GraphQL fragments (`fragment Parts on Type { … }`), in file order.
    pub fragments: Vec<GraphQlFragment>,
    /// The earliest error that `diagnostics` does not list: at most
    /// [`crate::MAX_LISTED`] of each code are listed, and the others counted. Every
    /// request that does not end before it is refused ([`Document::refusal_of`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_unlisted_error: Option<Diagnostic>,
    /// What is worked out from the blocks on first use and kept (a runner asks it for
    /// every request of the file); leave it at its default when building a document.
    #[serde(skip)]
    pub known: Known,
}

/// A GraphQL fragment defined in the file, added to the queries that spread it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphQlFragment {
    /// The whole definition.
    pub span: Span,
    /// Its name (`Parts` in `fragment Parts on Type`).
    pub name: String,
    /// The definition as written.
    pub text: String,
}

impl Document {
    /// The `proto <` lines that apply to `request`: those of the blocks without a
    /// request line (httpyac's global region), then those of its own block.
    #[must_use]
    pub fn proto_imports_of(&self, request: &Request) -> Vec<&ProtoImport> {
        let global = self.blocks.iter().filter(|block| block.request.is_none() && block.index != request.block);
        let own = self.blocks.iter().filter(|block| block.index == request.block);
        global.chain(own).flat_map(|block| &block.proto_imports).collect()
    }

    /// httpyac's global scripts: the `{{` … `}}` blocks of blocks without a request line,
    /// which run before every request of the file.
    pub fn global_scripts(&self) -> impl Iterator<Item = &Script> {
        let global = |block: &Block| block.request.is_none() && !block.orphan_scripts.is_empty();
        // Asked for every request of the file: the blocks are walked once to know.
        let any = self.known.global_scripts(|| self.blocks.iter().any(global));
        let blocks = if any { &self.blocks[..] } else { &[] };
        blocks
            .iter()
            .filter(|block| block.request.is_none())
            .flat_map(|block| &block.orphan_scripts)
            .filter(|script| script.kind == ScriptKind::HttpyacScript && script.runs())
    }

    /// The requests of the file, in order.
    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        self.blocks.iter().filter_map(|block| block.request.as_deref())
    }

    /// The request at `index` (0-based, counting requests only).
    #[must_use]
    pub fn request(&self, index: usize) -> Option<&Request> {
        self.requests().nth(index)
    }

    /// The first request with this name.
    #[must_use]
    pub fn request_named(&self, name: &str) -> Option<&Request> {
        self.requests().find(|request| request.name.as_ref().is_some_and(|n| n.value == name))
    }

    /// The request names `request` reads a response of (`{{login.response.body.$.token}}`,
    /// httpyac's `{{login.token}}`), directly or through the file variables it uses,
    /// each with the reference that reads it (`{{login.response…}}`), in the order they
    /// are written. What a front end runs first when a selection leaves them out.
    #[must_use]
    pub fn responses_read_by(&self, request: &Request) -> Vec<(String, String)> {
        fn variables(template: &Template, found: &mut Vec<String>) {
            template.walk(&mut |interpolation| {
                if let Some(crate::Expression::Variable(name)) = &interpolation.expression {
                    found.push(name.value.clone());
                }
            });
        }
        let mut found: Vec<(String, String)> = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        request.for_each_template(&mut |template| variables(template, &mut pending));
        pending.reverse();
        let mut seen = std::collections::BTreeSet::new();
        while let Some(path) = pending.pop() {
            if !seen.insert(path.clone()) {
                continue;
            }
            let segments = crate::variable_path_segments(&path);
            let Some(root) = segments.first().copied() else { continue };
            // A file variable is read first: `@token = {{login.response…}}`.
            if let Some(declaration) = self.variables.iter().rev().find(|declaration| declaration.name.value == path) {
                let mut inner = Vec::new();
                variables(&declaration.value, &mut inner);
                pending.extend(inner.into_iter().rev());
                continue;
            }
            let reads_response = segments.get(1) == Some(&"response") || self.request_named(root).is_some();
            if reads_response && !found.iter().any(|(name, _)| name == root) {
                found.push((root.to_owned(), format!("{{{{{path}}}}}")));
            }
        }
        found
    }

    /// The block that contains the byte `offset`: the last block starting at or before
    /// it (a cursor on the line break before a separator belongs to the block above).
    #[must_use]
    pub fn block_at(&self, offset: usize) -> Option<&Block> {
        let index = self.blocks.partition_point(|block| block.span.start <= offset);
        index.checked_sub(1).and_then(|index| self.blocks.get(index))
    }

    /// The block that holds the 0-based `line`: the last block whose first line (its
    /// `###` line, or the start of the file) is at or before it. A request owns its
    /// whole block, so this is how every front end picks "the request under the cursor"
    /// (`volley run --line`, the language server's `volley.send`).
    #[must_use]
    pub fn block_at_line(&self, line: u32) -> Option<&Block> {
        self.blocks.iter().take_while(|block| block.span.start_position.line <= line).last()
    }

    /// [`Document::block_at_line`] with lines counted by `line_of` (a byte offset's
    /// 0-based line, as an editor counts them).
    pub fn block_at_line_by(&self, line: u32, line_of: impl Fn(usize) -> u32) -> Option<&Block> {
        self.blocks.iter().take_while(|block| line_of(block.span.start) <= line).last()
    }

    /// The request of the block that contains the byte `offset`.
    #[must_use]
    pub fn request_at(&self, offset: usize) -> Option<&Request> {
        self.block_at(offset).and_then(|block| block.request.as_deref())
    }

    /// `true` when any diagnostic is an error.
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The diagnostics that lie inside `span` (those of one block or request).
    pub fn diagnostics_in(&self, span: Span) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(move |diagnostic| {
            diagnostic.span.start >= span.start && diagnostic.span.start < span.end.max(span.start + 1)
        })
    }
}

/// A block: the lines from one `###` separator to the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    /// 0-based position among the blocks.
    pub index: usize,
    /// From the start of the separator line (or of the file) to the end of the block.
    pub span: Span,
    /// The `###` line that opens the block; `None` for text before the first one.
    pub separator: Option<Separator>,
    /// The request of the block, when it has a request line.
    pub request: Option<Box<Request>>,
    /// Directives of a block without a request line (they apply to nothing).
    pub orphan_directives: Vec<Directive>,
    /// Scripts of a block without a request line (they do not run).
    pub orphan_scripts: Vec<Script>,
    /// httpyac's `proto < ./file.proto` lines: those of a block without a request line
    /// apply to every gRPC request of the file, the others to their block's request.
    pub proto_imports: Vec<ProtoImport>,
    /// JetBrains' and Kulala's `import` and `run` lines, in order.
    pub commands: Vec<Command>,
}

/// httpyac's `proto < ./file.proto` line, with the @grpc/proto-loader option lines under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProtoImport {
    /// The line and its option lines.
    pub span: Span,
    /// The file, as written (`{{variables}}` are substituted when the request runs).
    pub path: Spanned<String>,
    /// `includeDirs: ["./protos"]`: where imports are looked up, as written.
    pub include_dirs: Vec<String>,
    /// `keepCase: true`: responses use the proto's field names, not their JSON names.
    pub keep_case: bool,
}

/// A `###` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Separator {
    /// The whole line.
    pub span: Span,
    /// The trimmed text after the `#`s, when there is any.
    pub name: Option<Spanned<String>>,
}

/// One request definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Request {
    /// 0-based position among the requests of the file.
    pub index: usize,
    /// 0-based position of its block.
    pub block: usize,
    /// From the request line to the end of the body.
    pub span: Span,
    /// The request line.
    pub line_span: Span,
    /// `# @name` when present, else the text of the `###` line.
    pub name: Option<Spanned<String>>,
    /// `# @description`.
    pub description: Option<Spanned<String>>,
    /// The directives before the request line, in order, repeated ones kept.
    pub directives: Vec<Directive>,
    /// The method (`GET` for a bare URL and for `WEBSOCKET`).
    pub method: Spanned<Method>,
    /// The URL with its `?`/`&` continuation lines appended.
    pub url: Template,
    /// `HTTP/1.1`, `HTTP/2` … as written.
    pub http_version: Option<Spanned<String>>,
    /// Headers in order; a repeated header is kept once per line.
    pub headers: Vec<Header>,
    /// The body.
    pub body: Body,
    /// HTTP, SSE or WebSocket, with the options of each.
    pub protocol: Protocol,
    /// `# @timeout`: the request timeout (for SSE, to the response head).
    pub timeout: Option<Timeout>,
    /// `# @no-redirect`.
    pub no_redirect: bool,
    /// `# @no-cookie-jar`.
    pub no_cookie_jar: bool,
    /// `# @disabled`: the request is skipped, never sent.
    pub disabled: bool,
    /// `# @note [text]`: confirm before sending; the text, when written (else empty).
    pub note: Option<Spanned<String>>,
    /// Scripts and redirections that belong to the request (recognised, not run).
    pub scripts: Vec<Script>,
}

impl Request {
    /// The variables its `# @prompt name [description]` lines ask for (REST Client):
    /// each name and what to show when asking.
    #[must_use]
    pub fn prompts(&self) -> Vec<(String, Option<String>)> {
        self.directives
            .iter()
            .filter(|directive| directive.kind == crate::directive::DirectiveKind::Prompt)
            .filter_map(|directive| directive.value.as_ref())
            .filter_map(|value| {
                let text = value.to_source();
                let text = text.trim();
                let (name, description) = match text.split_once(char::is_whitespace) {
                    Some((name, description)) => (name, Some(description.trim().to_owned())),
                    None => (text, None),
                };
                (!name.is_empty()).then(|| (name.to_owned(), description.filter(|text| !text.is_empty())))
            })
            .collect()
    }

    /// The files a send of the request reads whose paths are written out (relative to
    /// the `.http` file, as written): its body file, the files of its form and
    /// multipart parts, its script files. What a watcher of the request looks at.
    #[must_use]
    pub fn file_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = Vec::new();
        match &self.body {
            Body::File(file) => paths.extend(file.path.as_literal()),
            Body::Form(form) => {
                for field in &form.fields {
                    if let FormValue::File { path, .. } = &field.value {
                        paths.extend(path.as_literal());
                    }
                }
            }
            Body::Parts(parts) => {
                for part in &parts.parts {
                    if let BodyPart::File(file) = part {
                        paths.extend(file.path.as_literal());
                    }
                }
            }
            Body::None | Body::Inline(_) | Body::GraphQl(_) => {}
        }
        paths.extend(
            self.scripts
                .iter()
                .filter(|script| script.runs())
                .filter_map(|script| script.path.as_ref())
                .map(|path| path.value.clone()),
        );
        paths
    }

    /// The directives of one kind, in order.
    pub fn directives_of(&self, kind: DirectiveKind) -> impl Iterator<Item = &Directive> {
        self.directives.iter().filter(move |directive| directive.kind == kind)
    }

    /// The `@assert` expressions, in order.
    pub fn assertions(&self) -> impl Iterator<Item = &Directive> {
        self.directives_of(DirectiveKind::Assert)
    }

    /// Visits every template of the request in which `{{ }}` are substituted: the URL,
    /// the headers, the directives' values (the options read from them, timeouts and
    /// stream options, are the same templates) and the body.
    pub fn for_each_template<'a>(&'a self, visit: &mut impl FnMut(&'a Template)) {
        visit(&self.url);
        for header in &self.headers {
            visit(&header.name);
            visit(&header.value);
        }
        for directive in &self.directives {
            if let Some(value) = &directive.value {
                visit(value);
            }
        }
        self.body.for_each_template(visit);
    }

    /// The headers with this name (case-insensitive, literal names only).
    pub fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Header> {
        self.headers.iter().filter(move |header| header.is_named(name))
    }
}

/// A `Name: value` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    /// The whole line.
    pub span: Span,
    /// The name, trimmed.
    pub name: Template,
    /// The value, trimmed.
    pub value: Template,
}

impl Header {
    /// `true` when the (literal) name equals `name` ignoring ASCII case.
    #[must_use]
    pub fn is_named(&self, name: &str) -> bool {
        matches!(self.name.parts.as_slice(), [crate::template::Part::Text(text)] if text.value.eq_ignore_ascii_case(name))
    }
}

/// A `# @directive value` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Directive {
    /// The whole line.
    pub span: Span,
    /// The name without `@`.
    pub name: Spanned<String>,
    /// What the name means to Volley.
    pub kind: DirectiveKind,
    /// The value after the name, trimmed; `None` when there is none.
    pub value: Option<Template>,
}

/// What kind of exchange a request is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Protocol {
    /// A plain HTTP request.
    Http,
    /// Server-Sent Events: `@sse` or `Accept: text/event-stream`.
    Sse(SseOptions),
    /// WebSocket: `@ws`, a `ws://`/`wss://` URL or `WEBSOCKET url`.
    WebSocket(WebSocketOptions),
    /// gRPC: `GRPC host:port/package.Service/Method` (or a `grpc://`/`grpcs://` URL).
    Grpc(GrpcOptions),
}

/// Where a gRPC request finds its schema, and how it connects.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct GrpcOptions {
    /// `@grpc-proto ./file.proto` (Kulala), in order; httpyac's `proto <` lines are the
    /// document's ([`Document::proto_imports_of`]).
    pub protos: Vec<Template>,
    /// `@grpc-import-path ./dir`: where imports are looked up.
    pub import_paths: Vec<Template>,
    /// `@grpc-protoset ./file.pb`: a compiled descriptor set.
    pub protoset: Option<Template>,
    /// `@grpc-plaintext` (Kulala): no TLS for a target written grpcurl's way.
    pub plaintext: bool,
    /// `@grpc-reflection [server]` (httpyac): ask the server (or the one named) for the
    /// schema even when proto files are given.
    pub reflection: bool,
    /// The server named by `@grpc-reflection`.
    pub reflection_server: Option<Template>,
}

/// Options of an SSE request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SseOptions {
    /// `@lastEventId`: sent as `Last-Event-ID`.
    pub last_event_id: Option<Template>,
}

/// Options of a WebSocket request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct WebSocketOptions {
    /// `@ws-subprotocols a, b`: the comma-separated list, substituted at run time.
    pub subprotocols: Option<Template>,
    /// `@ws-connect-timeout`: the handshake timeout.
    pub connect_timeout: Option<Timeout>,
}

/// The value of `@timeout` or `@ws-connect-timeout`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Timeout {
    /// Written out (`5000`, `250ms`, `5 s`, `2 m`): milliseconds, checked by the parser.
    Millis(Spanned<u64>),
    /// Holds `{{…}}` (`{{timeout}}`, `{{seconds}} s`): substituted when the request is
    /// sent, then read like a written value (an invalid result fails the request).
    Template(Template),
}

impl Timeout {
    /// The milliseconds of a written-out value; `None` for a template.
    #[must_use]
    pub fn millis(&self) -> Option<u64> {
        match self {
            Timeout::Millis(millis) => Some(millis.value),
            Timeout::Template(_) => None,
        }
    }

    /// Where the value is written.
    #[must_use]
    pub fn span(&self) -> Span {
        match self {
            Timeout::Millis(millis) => millis.span,
            Timeout::Template(template) => template.span,
        }
    }
}

/// A file variable: `@name = value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VariableDeclaration {
    /// The whole line.
    pub span: Span,
    /// The name (may be dotted: `api.host`).
    pub name: Spanned<String>,
    /// The value, trimmed; `{{ }}` in it are resolved when the variable is used.
    pub value: Template,
    /// The block the line is in.
    pub block: usize,
}

/// A script or redirection line the grammar recognises so that it never becomes part
/// of a body. Pre-request scripts and response handlers, written in place or in a
/// file, are run by the engine; the other kinds are reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Script {
    /// The whole script.
    pub span: Span,
    /// Which kind.
    pub kind: ScriptKind,
    /// The JavaScript between `{%` and `%}` of a closed `< {% %}` or `> {% %}` script.
    pub code: Option<Spanned<String>>,
    /// The path of `< ./script.js`, `> ./handler.js` or `>> ./response.json`, as written.
    pub path: Option<Spanned<String>>,
}

impl Script {
    /// `true` for the kinds the engine runs: a closed script in place or a script file,
    /// before the request line or after the request.
    #[must_use]
    pub fn runs(&self) -> bool {
        (self.code.is_some() || self.path.is_some()) && !self.saves_response()
    }

    /// `true` for `>> ./file` and `>>! ./file`: the response body saved to `path`.
    #[must_use]
    pub fn saves_response(&self) -> bool {
        matches!(self.kind, ScriptKind::OutputRedirect | ScriptKind::OutputOverwrite)
    }

    /// `true` for a script that runs before the request is built.
    #[must_use]
    pub fn is_pre_request(&self) -> bool {
        matches!(self.kind, ScriptKind::PreRequest | ScriptKind::PreRequestFile | ScriptKind::HttpyacScript)
    }

    /// `true` for httpyac's `{{` … `}}` blocks (httpyac's script API: `exports`,
    /// `response.parsedBody`, `test`, the variables as JavaScript variables).
    #[must_use]
    pub fn is_httpyac(&self) -> bool {
        matches!(self.kind, ScriptKind::HttpyacScript | ScriptKind::HttpyacResponse)
    }
}

/// The kinds of [`Script`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptKind {
    /// `< {% … %}` before the request line.
    PreRequest,
    /// `> {% … %}` after the request.
    ResponseHandler,
    /// `>> ./file`: the response body saved to a new file (`path`).
    OutputRedirect,
    /// `>>! ./file`: the response body saved over the file (`path`).
    OutputOverwrite,
    /// `<> ./file`.
    ResponseReference,
    /// `< ./script.js` before the request line (JetBrains, Kulala).
    PreRequestFile,
    /// `> ./handler.js` after the request (JetBrains, Kulala).
    ResponseHandlerFile,
    /// An httpyac JavaScript block (`{{` … `}}` lines) that runs before the request: before
    /// the request line, or `{{@request`. In a block without a request line (httpyac's
    /// global region), before every request of the file.
    HttpyacScript,
    /// An httpyac JavaScript block that runs once the response is there: after the
    /// request, or `{{@response` / `{{@after`.
    HttpyacResponse,
}

#[cfg(test)]
mod tests {
    const TEXT: &str = "@host = h\n\n### First\nGET https://a\n\n### Second\n# @name second\nPOST https://b\n\nbody\n###\n# just a comment\n";

    #[test]
    fn a_script_without_a_request_is_kept_and_reported() {
        let document = crate::parse("GET https://a\n\n###\n> {% client.log(1) %}\n");
        let orphans = &document.blocks[1].orphan_scripts;
        assert_eq!(orphans.len(), 1);
        assert_eq!(orphans[0].code.as_ref().map(|code| code.value.trim()), Some("client.log(1)"));
        let codes: Vec<_> = document.diagnostics.iter().map(|diagnostic| diagnostic.code).collect();
        assert_eq!(codes, [crate::Code::BlockWithoutRequest]);
    }

    #[test]
    fn finds_requests_by_index_name_and_offset() {
        let document = crate::parse(TEXT);
        assert_eq!(document.requests().count(), 2);
        assert_eq!(
            document.request(1).and_then(|request| request.name.as_ref()).map(|name| name.value.as_str()),
            Some("second")
        );
        assert_eq!(document.request_named("First").map(|request| request.index), Some(0));
        assert_eq!(document.request_named("Second"), None, "@name wins over the separator text");
        let body = TEXT.find("body").unwrap();
        assert_eq!(document.request_at(body).map(|request| request.index), Some(1));
        assert_eq!(document.request_at(0), None, "the first block has no request");
        let comment = TEXT.find("# just").unwrap();
        assert!(document.request_at(comment).is_none());
        assert_eq!(document.block_at(TEXT.len()).map(|block| block.index), Some(3));
    }

    /// What a document keeps about itself does not make it differ from a fresh parse of
    /// the same text (the language server compares its edited documents with fresh ones).
    #[test]
    fn what_a_document_knows_of_itself_is_kept_and_never_makes_it_differ() {
        let text = "# @import ./shared.http\nGET https://a\n\n###\nGET https://b\n";
        let asked = crate::parse(text);
        assert!(asked.has_imports());
        assert!(asked.has_imports(), "asked again");
        assert_eq!(asked, crate::parse(text));
        assert_eq!(asked.clone(), asked);
        assert!(asked.clone().has_imports());
        let plain = crate::parse("GET https://a\n\n###\nimport ./other.http\nGET https://b\n");
        assert!(plain.has_imports(), "an `import` line counts too");
        assert!(!crate::parse(TEXT).has_imports());
        let scripted = crate::parse("{{\n  exports.base = 1;\n}}\n###\nGET https://a\n");
        assert_eq!(scripted.global_scripts().count(), 1);
        assert_eq!(scripted.global_scripts().count(), 1, "asked again");
        assert_eq!(crate::parse(TEXT).global_scripts().count(), 0);
    }
}
