//! Errors of running a request, one enum per stage, each carrying the source span of
//! the text at fault where there is one.

use std::borrow::Cow;
use std::path::PathBuf;

use volley_syntax::{Diagnostic, Span};

use crate::redact::Redactor;

mod kind;

pub use kind::ErrorKind;

/// What a refused file's error says to do.
#[doc(hidden)]
pub const EXTERNAL_FILE_HINT: &str = "files are read from inside the project (the directory of volley.jsonc, \
     else of the checkout's .git, else of the .http file): move the file there, or allow others with \
     `--allow-external-files` (ClientConfig::allow_external_files; the npm option allowExternalFiles)";

pub use volley_transport::TransportError;

/// Why a run did not produce a response. An HTTP status of 4xx or 5xx is *not* an
/// error: it is a normal [`Response`](crate::Response).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The `.http` file could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// What the filesystem said.
        source: std::io::Error,
    },
    /// The selected request is refused ([`Document::refusal_of`](volley_syntax::Document::refusal_of)):
    /// it has errors of its own (syntax errors, unknown method, directive after the
    /// request line, …) or uses a file variable declared on a line with errors
    /// (`broken-variable`). It is not sent.
    #[error("the request has {} error(s); the first: {}", diagnostics.len(), first_message(diagnostics))]
    Invalid {
        /// The reasons, with spans in the `.http` text: the request's errors, then one
        /// `broken-variable` error per broken file variable it uses.
        diagnostics: Vec<Diagnostic>,
    },
    /// No request matches the selection.
    #[error("{0}")]
    Selection(#[from] SelectionError),
    /// The configuration file is broken.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The request could not be built: an undefined variable, a failing resolver, a
    /// missing file, an invalid URL after substitution.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The request was sent but the exchange failed: refused, DNS, TLS, timeout.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The run was cancelled through [`RunOptions::cancel`](crate::RunOptions::cancel).
    #[error("the request was cancelled")]
    Cancelled,
    /// `auth::TokenRefresh` could not get a new token.
    #[error("token refresh failed: {message}")]
    TokenRefresh {
        /// Why.
        message: String,
    },
    /// The execution server (`volley serve`) answered a `RemoteClient` (volley-remote)
    /// call with an error: its HTTP status and the stable code and message of its
    /// `{"error": …}` body. An upstream 4xx/5xx is a [`Response`](crate::Response), not this.
    #[error(
        "the execution server answered {status} {code}{}: {message}",
        kind.as_ref().map_or_else(String::new, |kind| format!(" ({kind})"))
    )]
    Server {
        /// The HTTP status of the server's answer.
        status: u16,
        /// The stable code (`REQUEST_NOT_FOUND`, `EXECUTE_ERROR`, …; `HTTP_ERROR` when the
        /// body was not the server's error shape).
        code: String,
        /// The server's message.
        message: String,
        /// For `EXECUTE_ERROR` (the upstream exchange failed): `details.kind`, the same
        /// names as [`TransportError::kind`] (`timeout`, `connection_refused`, `dns`, …).
        /// For `VALIDATION_ERROR` of a request the server could not build: `details.code`,
        /// the build error's code ([`BuildError::code`]: `undefined-variable`, …).
        kind: Option<String>,
    },
}

impl Error {
    /// The same error with the secrets `redactor` knows hidden in its texts (the
    /// engine's errors quote values after substitution: URLs, header names, resolver
    /// messages, transport messages).
    #[doc(hidden)]
    #[must_use]
    pub fn redacted(self, redactor: &Redactor) -> Self {
        match self {
            Error::Build(build) => Error::Build(build.redacted(redactor)),
            Error::Transport(transport) => Error::Transport(transport.map_texts(|text| redactor.redact_owned(text))),
            Error::Invalid { diagnostics } => Error::Invalid {
                diagnostics: diagnostics
                    .into_iter()
                    .map(|mut diagnostic| {
                        diagnostic.message = redactor.redact_owned(diagnostic.message);
                        diagnostic.hint = diagnostic.hint.map(|hint| redactor.redact_owned(hint));
                        diagnostic
                    })
                    .collect(),
            },
            Error::TokenRefresh { message } => Error::TokenRefresh { message: redactor.redact_owned(message) },
            other => other,
        }
    }

    /// The stable code of an [`Error::Server`] (`"REQUEST_NOT_FOUND"`), `None` for the
    /// other errors.
    #[must_use]
    pub fn server_code(&self) -> Option<&str> {
        match self {
            Error::Server { code, .. } => Some(code),
            _ => None,
        }
    }
}

fn first_message(diagnostics: &[Diagnostic]) -> String {
    diagnostics.first().map_or_else(String::new, ToString::to_string)
}

/// No request matches the selection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectionError {
    /// The file has no request at all.
    #[error("the file has no requests")]
    NoRequests,
    /// No request has this name.
    #[error("no request named `{name}`{}", suggestion.as_ref().map_or_else(String::new, |s| format!(" (did you mean `{s}`?)")))]
    NameNotFound {
        /// The name asked for.
        name: String,
        /// The closest name in the file.
        suggestion: Option<String>,
    },
    /// The index is past the last request.
    #[error("request index {index} is out of range: the file has {count} request(s)")]
    IndexOutOfRange {
        /// The index asked for (0-based).
        index: usize,
        /// How many requests the file has.
        count: usize,
    },
}

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the filesystem said.
        source: std::io::Error,
    },
    /// The file is not valid JSONC/JSON (or the env file is not valid).
    #[error("`{}`:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A key or value that does not fit the schema.
    #[error("`{}`: {message}{}", path.display(), hint.as_ref().map_or_else(String::new, |hint| format!(" ({hint})")))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Where in the file, as a JSON path (`profiles.dev.variables`).
        at: String,
        /// What is wrong.
        message: String,
        /// A "did you mean".
        hint: Option<String>,
    },
    /// The selected profile does not exist.
    #[error("unknown profile `{name}`{}", suggestion.as_ref().map_or_else(|| format!(" (profiles: {})", if available.is_empty() { "none".to_owned() } else { available.join(", ") }), |s| format!(" (did you mean `{s}`?)")))]
    UnknownProfile {
        /// The profile asked for.
        name: String,
        /// The closest profile.
        suggestion: Option<String>,
        /// Every profile there is.
        available: Vec<String>,
    },
}

/// A request that could not be built from its definition.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// `{{name}}` with no value anywhere.
    #[error("{}: undefined variable `{name}`", span)]
    UndefinedVariable {
        /// The variable path as written.
        name: String,
        /// Where it is used.
        span: Span,
    },
    /// A request variable (`{{login.response…}}`) that cannot be read.
    #[error("{}: {message}", span)]
    RequestVariable {
        /// The variable path as written.
        name: String,
        /// Where it is used.
        span: Span,
        /// Why it has no value.
        message: String,
        /// What to do, when it is not to run the named request first (it ran).
        hint: Option<String>,
    },
    /// A file variable whose value refers back to itself.
    #[error("{}: variable `{name}` refers to itself (through {})", span, chain.join(" → "))]
    Cycle {
        /// The variable.
        name: String,
        /// The chain of references.
        chain: Vec<String>,
        /// Where it is used.
        span: Span,
    },
    /// `{{$name()}}` with no such resolver.
    #[error("{}: unknown resolver `${name}`{}", span, suggestion.as_ref().map_or_else(String::new, |s| format!(" (did you mean `${s}`?)")))]
    UnknownResolver {
        /// The resolver name without `$`.
        name: String,
        /// The closest resolver name.
        suggestion: Option<String>,
        /// Where it is called.
        span: Span,
    },
    /// A resolver of another tool that Volley knows and does not support (REST Client's
    /// `$aadToken`, JetBrains' `$exampleServer`): never sent as written.
    #[error("{}: {message}", span)]
    UnsupportedResolver {
        /// The resolver name without `$`.
        name: String,
        /// Whose resolver it is, what it gives, and that Volley does not support it.
        message: String,
        /// What to write instead.
        hint: String,
        /// Where it is called.
        span: Span,
    },
    /// A resolver refused its arguments or failed.
    #[error("{}: resolver `${name}` failed: {message}", span)]
    Resolver {
        /// The resolver name without `$`.
        name: String,
        /// What went wrong.
        message: String,
        /// Where it is called.
        span: Span,
    },
    /// An `import` or `run` line (`# @import`, `@ref`) that cannot be carried out: a
    /// request no file has, a cycle.
    #[error("{}: {message}", span)]
    Command {
        /// What is wrong.
        message: String,
        /// How to fix it.
        hint: Option<String>,
        /// Where.
        span: Span,
    },
    /// A `{{…}}` that cannot be evaluated (unclosed, empty).
    #[error("{}: {message}", span)]
    Interpolation {
        /// What is wrong.
        message: String,
        /// Where.
        span: Span,
    },
    /// A file referenced by the request (`< file`, a script file, a multipart file) is
    /// outside the project, and the client does not read such files.
    #[error("{}: `{}` is outside the project ({})", span, path.display(), root.display())]
    ExternalFile {
        /// The resolved path.
        path: PathBuf,
        /// The project's root.
        root: PathBuf,
        /// Where the reference is written.
        span: Span,
    },
    /// A file referenced by the request (`< file`, `<@ file`, multipart `@file`) could
    /// not be read.
    #[error("{}: cannot read `{}`: {source}", span, path.display())]
    File {
        /// The resolved path.
        path: PathBuf,
        /// Where the reference is written.
        span: Span,
        /// What the filesystem said.
        source: std::io::Error,
    },
    /// The URL after substitution is not a valid URL.
    #[error("{}: invalid URL `{url}`: {reason}", span)]
    InvalidUrl {
        /// The URL after substitution.
        url: String,
        /// Why it is invalid.
        reason: String,
        /// A guess at what was meant (`did you mean `http://…`?`), when there is one.
        hint: Option<String>,
        /// Where the URL is written.
        span: Span,
    },
    /// An error in the text of a `<@ file` body: `span` is the `<@` line, `source`
    /// has the place in the file.
    #[error("{}: in `{}` at {}", span, path.display(), source)]
    Included {
        /// The included file.
        path: PathBuf,
        /// The `<@` line.
        span: Span,
        /// The error, with a span in the included file.
        source: Box<BuildError>,
    },
    /// A `@timeout` or `@ws-connect-timeout` value that is not a duration after
    /// substitution.
    #[error("{}: invalid `@{directive}` value `{value}` after substitution", span)]
    InvalidTimeout {
        /// `timeout` or `ws-connect-timeout`.
        directive: String,
        /// The value after substitution.
        value: String,
        /// Where the value is written.
        span: Span,
    },
    /// An `Authorization` value with credentials that cannot be sent as written nor
    /// turned into what they mean (`Digest` without a password).
    #[error("{}: {}{reason}", span, credentials_prefix(*.code))]
    Credentials {
        /// `invalid-credentials`, or `unsupported-auth` for another tool's syntax that
        /// Volley does not run.
        code: volley_syntax::Code,
        /// What is wrong.
        reason: String,
        /// How to write it.
        hint: String,
        /// Where the header is written.
        span: Span,
    },
    /// An OAuth 2.0 token could not be got: a configuration that lacks what its grant
    /// needs, an error answer of the authorization server (its `error` and
    /// `error_description`), discovery that failed.
    #[error("{}: {message}", span)]
    Auth {
        /// What went wrong, with the endpoint.
        message: String,
        /// How to fix it (empty when there is nothing to say).
        hint: String,
        /// Where the `Authorization` header is written.
        span: Span,
    },
    /// A header name or value that is not valid after substitution.
    #[error("{}: invalid header `{name}`: {reason}", span)]
    InvalidHeader {
        /// The header name after substitution.
        name: String,
        /// Why it is invalid.
        reason: String,
        /// Where the header is written.
        span: Span,
    },
    /// A substituted value, or all the substituted text of a request, over its limit
    /// (`MAX_RENDERED_BYTES`, `MAX_REQUEST_BYTES`): found while substituting, before
    /// the text is built.
    #[error("{}: {what} would exceed {} MiB once substituted", span, limit / (1024 * 1024))]
    TooLarge {
        /// What grew too large.
        what: String,
        /// The limit in bytes.
        limit: usize,
        /// The interpolation (or text) that crossed it.
        span: Span,
    },
    /// A body that cannot be built as its form requires (GraphQL variables that are
    /// not a JSON object).
    #[error("{}: {message}", span)]
    InvalidBody {
        /// What is wrong.
        message: String,
        /// Where the body (or its part) is written.
        span: Span,
    },
    /// A gRPC call that cannot be made as written: a target that is not
    /// `host:port/package.Service/Method`, a proto file that does not compile, a service
    /// or method the schema does not have, a message that is not of the method's type.
    #[error("{}: {message}", span)]
    Grpc {
        /// What is wrong (a proto file's own `file:line:column` first, when it is there).
        message: String,
        /// How to fix it.
        hint: Option<String>,
        /// The part of the request at fault (the request line, a message, a directive).
        span: Span,
    },
    /// A pre-request script threw, ran past its time limit or its memory limit.
    #[error("{}: {message}", span)]
    Script {
        /// What happened (`pre-request script failed: TypeError: …`), with the place
        /// in a script file.
        message: String,
        /// The script's frames of the JavaScript stack, one per line.
        stack: String,
        /// The line of the script at fault, or the `< ./script.js` line.
        span: Span,
    },
}

impl BuildError {
    /// The same error with the secrets `redactor` knows hidden in every text it quotes.
    #[doc(hidden)]
    #[must_use]
    pub fn redacted(self, redactor: &Redactor) -> Self {
        let clean = |text: String| redactor.redact_owned(text);
        match self {
            BuildError::UndefinedVariable { name, span } => BuildError::UndefinedVariable { name: clean(name), span },
            BuildError::RequestVariable { name, span, message, hint } => {
                BuildError::RequestVariable { name: clean(name), span, message: clean(message), hint: hint.map(clean) }
            }
            other @ (BuildError::Cycle { .. } | BuildError::TooLarge { .. }) => other,
            BuildError::UnknownResolver { name, suggestion, span } => {
                BuildError::UnknownResolver { name: clean(name), suggestion: suggestion.map(clean), span }
            }
            BuildError::UnsupportedResolver { name, message, hint, span } => {
                BuildError::UnsupportedResolver { name, message: clean(message), hint: clean(hint), span }
            }
            BuildError::Resolver { name, message, span } => {
                BuildError::Resolver { name, message: clean(message), span }
            }
            BuildError::Interpolation { message, span } => BuildError::Interpolation { message: clean(message), span },
            BuildError::Command { message, hint, span } => {
                BuildError::Command { message: clean(message), hint: hint.map(clean), span }
            }
            other @ BuildError::ExternalFile { .. } => other,
            BuildError::File { path, span, source } => {
                let path = match redactor.redact(&path.to_string_lossy()) {
                    Cow::Borrowed(_) => path,
                    Cow::Owned(shown) => PathBuf::from(shown),
                };
                // Rebuilt only when it quotes a secret: front ends read its inner error.
                let source = match redactor.redact(&source.to_string()) {
                    Cow::Borrowed(_) => source,
                    Cow::Owned(shown) => std::io::Error::new(source.kind(), shown),
                };
                BuildError::File { path, span, source }
            }
            BuildError::InvalidUrl { url, reason, hint, span } => {
                BuildError::InvalidUrl { url: clean(url), reason: clean(reason), hint: hint.map(clean), span }
            }
            BuildError::Included { path, span, source } => {
                BuildError::Included { path, span, source: Box::new(source.redacted(redactor)) }
            }
            BuildError::InvalidTimeout { directive, value, span } => {
                BuildError::InvalidTimeout { directive, value: clean(value), span }
            }
            BuildError::Credentials { code, reason, hint, span } => {
                BuildError::Credentials { code, reason: clean(reason), hint: clean(hint), span }
            }
            BuildError::InvalidHeader { name, reason, span } => {
                BuildError::InvalidHeader { name: clean(name), reason: clean(reason), span }
            }
            BuildError::Auth { message, hint, span } => {
                BuildError::Auth { message: clean(message), hint: clean(hint), span }
            }
            BuildError::InvalidBody { message, span } => BuildError::InvalidBody { message: clean(message), span },
            BuildError::Grpc { message, hint, span } => {
                BuildError::Grpc { message: clean(message), hint: hint.map(clean), span }
            }
            BuildError::Script { message, stack, span } => {
                BuildError::Script { message: clean(message), stack: clean(stack), span }
            }
        }
    }

    /// Where in the `.http` text the problem is, when it is there (a `<@` file's
    /// template errors point into that file).
    #[must_use]
    pub fn span(&self) -> Span {
        match self {
            BuildError::UndefinedVariable { span, .. }
            | BuildError::RequestVariable { span, .. }
            | BuildError::Cycle { span, .. }
            | BuildError::UnknownResolver { span, .. }
            | BuildError::UnsupportedResolver { span, .. }
            | BuildError::Resolver { span, .. }
            | BuildError::Interpolation { span, .. }
            | BuildError::Command { span, .. }
            | BuildError::File { span, .. }
            | BuildError::ExternalFile { span, .. }
            | BuildError::InvalidUrl { span, .. }
            | BuildError::InvalidHeader { span, .. }
            | BuildError::Credentials { span, .. }
            | BuildError::Auth { span, .. }
            | BuildError::InvalidTimeout { span, .. }
            | BuildError::InvalidBody { span, .. }
            | BuildError::Grpc { span, .. }
            | BuildError::TooLarge { span, .. }
            | BuildError::Script { span, .. }
            | BuildError::Included { span, .. } => *span,
        }
    }

    /// A stable kebab-case name of the kind of error (`undefined-variable`,
    /// `unknown-resolver`, `missing-file`, …), as front ends show it.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            BuildError::UndefinedVariable { .. } => "undefined-variable",
            BuildError::RequestVariable { .. } => "request-variable",
            BuildError::Cycle { .. } => "variable-cycle",
            BuildError::UnknownResolver { .. } | BuildError::UnsupportedResolver { .. } => "unknown-resolver",
            BuildError::Resolver { .. } => "resolver-failed",
            BuildError::Interpolation { .. } => "invalid-interpolation",
            BuildError::Command { .. } => "invalid-command",
            BuildError::File { source, .. } if source.kind() == std::io::ErrorKind::NotFound => "missing-file",
            BuildError::File { .. } => "unreadable-file",
            BuildError::ExternalFile { .. } => "external-file",
            BuildError::InvalidUrl { .. } => "invalid-url",
            BuildError::InvalidHeader { .. } => "invalid-header",
            BuildError::Credentials { code, .. } => code.as_str(),
            BuildError::Auth { .. } => "auth-failed",
            BuildError::InvalidTimeout { .. } => "invalid-timeout",
            BuildError::InvalidBody { .. } => "invalid-body",
            BuildError::Grpc { .. } => "invalid-grpc",
            BuildError::TooLarge { .. } => "too-large",
            BuildError::Script { .. } => "script-error",
            BuildError::Included { source, .. } => source.code(),
        }
    }

    /// The message without the `line:column: ` the `Display` form starts with, for
    /// front ends that show the location their own way.
    #[must_use]
    pub fn message(&self) -> String {
        let full = self.to_string();
        let prefix = format!("{}: ", self.span());
        full.strip_prefix(&prefix).map_or_else(|| full.clone(), str::to_owned)
    }

    /// How to fix it, when there is something general to say.
    #[must_use]
    pub fn hint(&self) -> Option<String> {
        match self {
            BuildError::TooLarge { .. } => Some(
                "a value that large is almost always a mistake (a variable that refers to itself twice, a \
                 response body substituted whole); send large content from a file with `< ./file`"
                    .to_owned(),
            ),
            BuildError::UndefinedVariable { name, .. } => Some(format!(
                "define it in the file (`@{root} = value`), in volley.jsonc `variables` or a profile, \
                 or pass `--var {root}=value`",
                root = name.split(['.', '[']).next().unwrap_or(name)
            )),
            BuildError::RequestVariable { hint: Some(hint), .. } => Some(hint.clone()),
            BuildError::RequestVariable { hint: None, .. } => {
                Some("run the named request first, in the same run or session (requests run in file order)".to_owned())
            }
            BuildError::UnknownResolver { suggestion: None, .. } => Some(
                "built-ins: $uuid, $timestamp, $timestampMs, $isoTimestamp, $datetime, $random, $env, $dotenv, \
                 $secret, $basicAuth, $base64 and those of REST Client and JetBrains (docs/configuration.md); \
                 custom ones come from volley.jsonc `resolvers`"
                    .to_owned(),
            ),
            BuildError::UnsupportedResolver { hint, .. } => Some(hint.clone()),
            BuildError::File { .. } => Some("paths are relative to the .http file".to_owned()),
            BuildError::ExternalFile { .. } => Some(EXTERNAL_FILE_HINT.to_owned()),
            BuildError::InvalidUrl { hint: Some(hint), .. } => Some(hint.clone()),
            BuildError::InvalidUrl { hint: None, .. } => {
                Some("a URL needs a scheme and a host after substitution, e.g. `http://localhost:8080/path`".to_owned())
            }
            BuildError::Cycle { .. } => {
                Some("give one of the variables a value that does not use the other".to_owned())
            }
            BuildError::InvalidTimeout { .. } => Some(volley_syntax::directive::DURATION_HINT.to_owned()),
            BuildError::Credentials { hint, .. } => Some(hint.clone()),
            BuildError::Grpc { hint, .. } | BuildError::Command { hint, .. } => hint.clone(),
            BuildError::Included { source, .. } => source.hint(),
            BuildError::Auth { hint, .. } if !hint.is_empty() => Some(hint.clone()),
            BuildError::Script { stack, .. } if !stack.is_empty() => Some(format!("JavaScript stack:\n{stack}")),
            _ => None,
        }
    }
}

/// What a `Credentials` error's message starts with: `invalid credentials: ` for
/// credentials written wrong, nothing for another tool's syntax (its reason names it).
fn credentials_prefix(code: volley_syntax::Code) -> &'static str {
    if code == volley_syntax::Code::InvalidCredentials { "invalid credentials: " } else { "" }
}
