//! What came of each request of a run, and what it means for the exit code.

use volley_engine::{Error, Response};
use volley_syntax::{Request, Span};

use super::select::File;
use super::stream::StreamSummary;
use crate::exit::Exit;

/// One request of the run and what came of it.
#[derive(Debug)]
pub(crate) struct RequestResult {
    /// The file, as shown.
    pub(crate) file: String,
    /// 0-based position in the file.
    pub(crate) index: usize,
    pub(crate) name: Option<String>,
    /// The name, else `METHOD url` as written.
    pub(crate) title: String,
    /// The request line.
    pub(crate) line_span: Span,
    pub(crate) outcome: Outcome,
    /// For an event stream or a WebSocket: what came through it.
    pub(crate) stream: Option<StreamSummary>,
}

/// What came of a request.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A response (of any status), with its body decoded for display.
    Response { response: Box<Response>, text: String },
    /// No response: the request could not be built or the exchange failed.
    Error(Error),
    /// Not sent: `--fail-fast` stopped the run before it.
    Skipped,
    /// Not sent: a request of the run has syntax errors, so nothing was sent.
    NotSent,
}

/// `login`, or `GET {{host}}/users` for a request without a name (a password written
/// in the URL shows as `[REDACTED]`: titles go to reports).
pub(crate) fn title(file: &File, request: &Request) -> String {
    if let Some(name) = &request.name {
        return name.value.clone();
    }
    let line = request.line_span.text(&file.text);
    let title = line.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
    volley_engine::redact_url_password(&title).into_owned()
}

impl RequestResult {
    pub(crate) async fn new(file: &File, request: &Request, result: Result<Response, Error>) -> Self {
        let outcome = match result {
            Ok(response) => {
                // A streamed body is read by the stream printer, not here.
                let streams = response.is_streaming() || response.is_websocket();
                let text = if streams { String::new() } else { response.text().await.unwrap_or_default() };
                Outcome::Response { response: Box::new(response), text }
            }
            Err(error) => Outcome::Error(error),
        };
        Self::with(file, request, outcome)
    }

    pub(crate) fn skipped(file: &File, request: &Request) -> Self {
        Self::with(file, request, Outcome::Skipped)
    }

    /// The request `index` of `file` in a run that sends nothing: its own errors (and
    /// those outside any request) when it has some, else [`Outcome::NotSent`].
    pub(crate) fn not_sent(file: &File, index: usize) -> Option<Self> {
        let request = file.document.request(index)?;
        let diagnostics: Vec<_> = file
            .document
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .filter(|diagnostic| {
                file.document
                    .block_at(diagnostic.span.start)
                    .is_none_or(|block| block.request.is_none() || block.index == request.block)
            })
            .cloned()
            .collect();
        let outcome =
            if diagnostics.is_empty() { Outcome::NotSent } else { Outcome::Error(Error::Invalid { diagnostics }) };
        Some(Self::with(file, request, outcome))
    }

    fn with(file: &File, request: &Request, outcome: Outcome) -> Self {
        Self {
            file: file.shown.clone(),
            index: request.index,
            name: request.name.as_ref().map(|name| name.value.clone()),
            title: title(file, request),
            line_span: request.line_span,
            outcome,
            stream: None,
        }
    }

    /// The stream broke (not: ended by either side, or a binary frame).
    pub(crate) fn stream_failed(&self) -> bool {
        self.stream.as_ref().is_some_and(|stream| stream.ended == "error")
    }

    /// A response came and every assertion passed.
    pub(crate) fn passed(&self) -> bool {
        match &self.outcome {
            Outcome::Response { response, .. } => response.assertions_passed() && !self.stream_failed(),
            Outcome::Error(_) => false,
            Outcome::Skipped | Outcome::NotSent => true,
        }
    }

    /// What this request means for the exit code.
    pub(crate) fn exit(&self) -> Exit {
        match &self.outcome {
            Outcome::Response { .. } if self.stream_failed() => Exit::Transport,
            Outcome::Response { response, .. } if !response.assertions_passed() => Exit::Failed,
            Outcome::Response { .. } | Outcome::Skipped => Exit::Success,
            Outcome::NotSent => Exit::Invalid,
            Outcome::Error(error) => error_exit(error),
        }
    }
}

/// 4 for what happened on the network, 3 for a request that could not be made.
pub(crate) fn error_exit(error: &Error) -> Exit {
    match error {
        Error::Transport(_) | Error::Cancelled | Error::TokenRefresh { .. } => Exit::Transport,
        Error::Server { code, .. } => match code.as_str() {
            "EXECUTE_ERROR" => Exit::Transport,
            "PARSE_ERROR" | "VALIDATION_ERROR" | "FILE_NOT_FOUND" | "PATH_OUTSIDE_WORKSPACE" => Exit::Invalid,
            // The server refused the run itself: its URL, token or limits.
            _ => Exit::Usage,
        },
        _ => Exit::Invalid,
    }
}

/// A stable name for an error (`undefined-variable`, `connection-refused`, …).
pub(crate) fn error_code(error: &Error) -> String {
    match error {
        Error::Build(build) => build.code().to_owned(),
        Error::Transport(transport) => transport.kind().replace('_', "-"),
        Error::Invalid { diagnostics } => diagnostics.first().map_or("invalid", |d| d.code.as_str()).to_owned(),
        Error::ReadFile { .. } => "unreadable-file".to_owned(),
        Error::Selection(_) => "no-such-request".to_owned(),
        Error::Config(_) => "config".to_owned(),
        Error::Cancelled => "cancelled".to_owned(),
        Error::TokenRefresh { .. } => "token-refresh".to_owned(),
        Error::Server { code, kind: Some(kind), .. } if code == "EXECUTE_ERROR" => kind.replace('_', "-"),
        Error::Server { code, .. } => code.to_ascii_lowercase().replace('_', "-"),
        _ => "error".to_owned(),
    }
}

/// The error's message without the location its `Display` form may start with, and
/// the place in the `.http` text it belongs to (the request line when it has none of
/// its own).
pub(crate) fn error_parts(error: &Error, line_span: Span) -> (String, Span, Option<String>) {
    match error {
        Error::Build(build) => (build.message(), build.span(), build.hint()),
        Error::Transport(transport) => {
            let hint = match transport.kind() {
                "connection_refused" => Some("is the server running? check the host and port of the URL"),
                "timeout" => Some(
                    "allow more time with `# @timeout 60000` on the request (`# @ws-connect-timeout` for a \
                     WebSocket) or `--timeout 60000`",
                ),
                "dns" => Some("check the host name, or the variable that gives it"),
                "tls" => Some("for a development server with a self-signed certificate, use --insecure"),
                "too_many_redirects" => Some("add `# @no-redirect` to see the first response"),
                "websocket_handshake" => {
                    Some("the server did not accept the WebSocket upgrade: check the URL and the headers it needs")
                }
                _ => None,
            };
            (transport.to_string(), line_span, hint.map(str::to_owned))
        }
        Error::Invalid { diagnostics } => match diagnostics.first() {
            Some(first) => (first.message.clone(), first.span, first.hint.clone()),
            None => (error.to_string(), line_span, None),
        },
        _ => (error.to_string(), line_span, None),
    }
}
