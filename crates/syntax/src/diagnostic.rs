//! Diagnostics: what is wrong with a file, where, and how bad, under stable codes.

use std::fmt;

use serde::Serialize;

use crate::span::Span;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The request cannot be sent as written.
    Error,
    /// The request can be sent, but probably not as the author meant.
    Warning,
    /// Worth knowing; nothing is wrong.
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// The stable code of a diagnostic. The string form (`Code::as_str`) never changes
/// once released: editors, CI scripts and `volley check --json` match on it.
///
/// `docs/diagnostics.md` lists every code with an example; a test keeps the two in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "&'static str")]
#[non_exhaustive]
pub enum Code {
    /// Text the grammar cannot place (tree-sitter error recovery).
    SyntaxError,
    /// A request line without a URL.
    MissingUrl,
    /// A method that is not one of the nine of the spec (or `WEBSOCKET`).
    UnknownMethod,
    /// A header line without `:` or with an invalid name.
    MalformedHeader,
    /// `{{` without the closing `}}` on the same line.
    UnclosedVariable,
    /// `{{}}` with nothing inside.
    EmptyVariable,
    /// A `# @directive` between the request line and the body.
    DirectiveAfterRequestLine,
    /// A directive name that is neither supported nor accepted from another tool.
    UnknownDirective,
    /// A directive from another tool that Volley reads but does not act on.
    UnsupportedDirective,
    /// A directive that needs a value and has none.
    MissingDirectiveValue,
    /// A directive that takes no value but has one.
    UnexpectedDirectiveValue,
    /// A directive that does not apply to this kind of request.
    IneffectiveDirective,
    /// `@timeout` / `@ws-connect-timeout` that is not a duration.
    InvalidTimeout,
    /// A WebSocket definition with a body of any form.
    WebSocketBody,
    /// Both `@sse` and WebSocket markers on one request.
    ConflictingProtocol,
    /// A script of another tool that Volley does not run (httpyac's JavaScript blocks,
    /// output redirection).
    UnsupportedScript,
    /// A `{%` script without its closing `%}`.
    UnclosedScript,
    /// A pre-request script or response handler that is not valid JavaScript.
    ScriptSyntax,
    /// Two requests with the same name.
    DuplicateRequestName,
    /// A block with a name or directives but no request line.
    BlockWithoutRequest,
    /// Text after a response handler, which is not part of the body.
    TextAfterHandler,
    /// A response reference of the JetBrains client (`<> file`), which is ignored.
    ResponseReference,
    /// `{{name}}` defined nowhere the analysis can see (semantic: the engine's analysis).
    UndefinedVariable,
    /// `{{$name()}}` that is neither a built-in nor a configured resolver (semantic).
    UnknownResolver,
    /// A built-in resolver called with the wrong number of arguments (semantic).
    ResolverArguments,
    /// A body or upload file that does not exist (semantic).
    MissingFile,
    /// A JSON body (by its `Content-Type`) that is not valid JSON (semantic).
    InvalidJsonBody,
    /// An `@assert` expression that does not parse (semantic).
    InvalidAssertion,
    /// A request of a protocol Volley does not send (gRPC, MQTT, AMQP, Kafka).
    UnsupportedRequest,
    /// A command of another tool (Kulala's `import` and `run`) that Volley does not run.
    UnsupportedCommand,
    /// A response saved in the file after a request (`HTTP/1.1 200 OK` …), not sent.
    SavedResponse,
    /// A request line that starts a new request without `###` before it.
    RequestLineInBody,
    /// An expression of another tool inside `{{ }}` (httpyac's JavaScript).
    UnsupportedExpression,
    /// A request uses a file variable declared on a line with errors (a reason of
    /// [`Document::refusal_of`](crate::Document::refusal_of), not a diagnostic of the file).
    BrokenVariable,
    /// Credentials written in clear that cannot be sent: `Digest` without a password, or
    /// on a WebSocket (semantic).
    InvalidCredentials,
    /// Another tool's authentication syntax that Volley does not run (httpyac's
    /// `oauth2`/`openid`, REST Client's `COGNITO`, httpyac's client certificate header):
    /// refused, never sent as written (semantic).
    UnsupportedAuth,
    /// A directive one or two letters away from one Volley runs (`# @asert`): an error,
    /// so that a misspelt check never lets a request run unchecked.
    MisspeltDirective,
    /// A URL written out that no run can send (`htp://…`, port `99999`, a space before
    /// the path): the analysis's form of the error a run gives (semantic).
    InvalidUrl,
    /// A file the request reads (`< ../../secret.txt`) outside the project, which runs
    /// do not read unless allowed (semantic).
    ExternalFile,
    /// A gRPC request that cannot be sent as written: a target that is not
    /// `host:port/package.Service/Method`, a body that is not messages, a `proto` line
    /// without a file.
    InvalidGrpc,
    /// A `run` or `import` line (JetBrains, Kulala) or `# @import` (httpyac) that cannot
    /// be carried out as written: no target, a broken variable list.
    InvalidCommand,
    /// A threshold of a `# @load` directive that cannot be read.
    InvalidThreshold,
}

impl Code {
    /// Every code, in documentation order.
    pub const ALL: &'static [Code] = &[
        Code::SyntaxError,
        Code::MissingUrl,
        Code::UnknownMethod,
        Code::MalformedHeader,
        Code::UnclosedVariable,
        Code::EmptyVariable,
        Code::DirectiveAfterRequestLine,
        Code::UnknownDirective,
        Code::UnsupportedDirective,
        Code::MissingDirectiveValue,
        Code::UnexpectedDirectiveValue,
        Code::IneffectiveDirective,
        Code::InvalidTimeout,
        Code::WebSocketBody,
        Code::ConflictingProtocol,
        Code::UnsupportedScript,
        Code::UnclosedScript,
        Code::ScriptSyntax,
        Code::DuplicateRequestName,
        Code::BlockWithoutRequest,
        Code::TextAfterHandler,
        Code::ResponseReference,
        Code::UndefinedVariable,
        Code::UnknownResolver,
        Code::ResolverArguments,
        Code::MissingFile,
        Code::InvalidJsonBody,
        Code::InvalidAssertion,
        Code::UnsupportedRequest,
        Code::UnsupportedCommand,
        Code::SavedResponse,
        Code::RequestLineInBody,
        Code::UnsupportedExpression,
        Code::BrokenVariable,
        Code::InvalidCredentials,
        Code::UnsupportedAuth,
        Code::MisspeltDirective,
        Code::InvalidUrl,
        Code::ExternalFile,
        Code::InvalidGrpc,
        Code::InvalidCommand,
        Code::InvalidThreshold,
    ];

    /// `true` for the codes the engine's analysis produces (they need configuration,
    /// files or the assertion language); the parser produces the others.
    #[must_use]
    pub const fn is_semantic(self) -> bool {
        matches!(
            self,
            Code::UndefinedVariable
                | Code::UnknownResolver
                | Code::ResolverArguments
                | Code::MissingFile
                | Code::InvalidJsonBody
                | Code::InvalidAssertion
                | Code::InvalidCredentials
                | Code::UnsupportedAuth
                | Code::ScriptSyntax
                | Code::InvalidUrl
                | Code::ExternalFile
        )
    }

    /// The stable kebab-case name of the code.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::SyntaxError => "syntax-error",
            Code::MissingUrl => "missing-url",
            Code::UnknownMethod => "unknown-method",
            Code::MalformedHeader => "malformed-header",
            Code::UnclosedVariable => "unclosed-variable",
            Code::EmptyVariable => "empty-variable",
            Code::DirectiveAfterRequestLine => "directive-after-request-line",
            Code::UnknownDirective => "unknown-directive",
            Code::UnsupportedDirective => "unsupported-directive",
            Code::MissingDirectiveValue => "missing-directive-value",
            Code::UnexpectedDirectiveValue => "unexpected-directive-value",
            Code::IneffectiveDirective => "ineffective-directive",
            Code::InvalidTimeout => "invalid-timeout",
            Code::WebSocketBody => "websocket-body",
            Code::ConflictingProtocol => "conflicting-protocol",
            Code::UnsupportedScript => "unsupported-script",
            Code::UnclosedScript => "unclosed-script",
            Code::ScriptSyntax => "script-syntax",
            Code::DuplicateRequestName => "duplicate-request-name",
            Code::BlockWithoutRequest => "block-without-request",
            Code::TextAfterHandler => "text-after-handler",
            Code::ResponseReference => "response-reference",
            Code::UndefinedVariable => "undefined-variable",
            Code::UnknownResolver => "unknown-resolver",
            Code::ResolverArguments => "resolver-arguments",
            Code::MissingFile => "missing-file",
            Code::InvalidJsonBody => "invalid-json-body",
            Code::InvalidAssertion => "invalid-assertion",
            Code::UnsupportedRequest => "unsupported-request",
            Code::UnsupportedCommand => "unsupported-command",
            Code::SavedResponse => "saved-response",
            Code::RequestLineInBody => "request-line-in-body",
            Code::UnsupportedExpression => "unsupported-expression",
            Code::BrokenVariable => "broken-variable",
            Code::InvalidCredentials => "invalid-credentials",
            Code::UnsupportedAuth => "unsupported-auth",
            Code::MisspeltDirective => "misspelt-directive",
            Code::InvalidUrl => "invalid-url",
            Code::InvalidGrpc => "invalid-grpc",
            Code::InvalidCommand => "invalid-command",
            Code::InvalidThreshold => "invalid-threshold",
            Code::ExternalFile => "external-file",
        }
    }

    /// The severity diagnostics with this code have.
    #[must_use]
    pub const fn severity(self) -> Severity {
        match self {
            Code::SyntaxError
            | Code::MissingUrl
            | Code::UnknownMethod
            | Code::MalformedHeader
            | Code::UnclosedVariable
            | Code::EmptyVariable
            | Code::DirectiveAfterRequestLine
            | Code::MissingDirectiveValue
            | Code::InvalidTimeout
            | Code::WebSocketBody
            | Code::ConflictingProtocol
            | Code::UnclosedScript
            | Code::ScriptSyntax
            | Code::UnknownResolver
            | Code::ResolverArguments
            | Code::MissingFile
            | Code::InvalidAssertion
            | Code::UnsupportedRequest
            | Code::UnsupportedExpression
            | Code::BrokenVariable
            | Code::InvalidCredentials
            | Code::UnsupportedAuth
            | Code::MisspeltDirective
            | Code::UndefinedVariable
            | Code::InvalidUrl
            | Code::ExternalFile
            | Code::InvalidGrpc
            | Code::InvalidCommand
            | Code::InvalidThreshold
            | Code::UnsupportedScript => Severity::Error,
            Code::UnknownDirective
            | Code::UnexpectedDirectiveValue
            | Code::IneffectiveDirective
            | Code::DuplicateRequestName
            | Code::BlockWithoutRequest
            | Code::TextAfterHandler
            | Code::InvalidJsonBody
            | Code::UnsupportedCommand => Severity::Warning,
            Code::UnsupportedDirective | Code::ResponseReference | Code::SavedResponse | Code::RequestLineInBody => {
                Severity::Info
            }
        }
    }

    /// The code with the given name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|code| code.as_str() == name)
    }
}

impl From<Code> for &'static str {
    fn from(code: Code) -> Self {
        code.as_str()
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem found in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Stable code.
    pub code: Code,
    /// Severity (fixed per code).
    pub severity: Severity,
    /// Where the problem is.
    pub span: Span,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
    /// How to fix it, when there is something to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with the severity of its code and no hint.
    #[must_use]
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Self {
        Self { code, severity: code.severity(), span, message: message.into(), hint: None }
    }

    /// Adds a hint.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// `true` for [`Severity::Error`].
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    /// `line:col: severity[code]: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}[{}]: {}", self.span, self.severity, self.code, self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " (hint: {hint})")?;
        }
        Ok(())
    }
}
