//! Turns what the engine returned into wire shapes: responses, assertion checks, and
//! engine errors into API errors with the stage they happened in.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::StatusCode;
use serde_json::{Value, json};
use volley_engine::assert::{AssertionResult, Outcome, Place};
use volley_engine::redact::Redactor;
use volley_engine::report::{
    ErrorKind, PlacedAssertion, PlacedDiagnostic, PlacedError, ResponseSummary, place_assertions,
};
use volley_engine::{BuildError, Error, Response, SelectionError, TransportError};
use volley_protocol::{CheckOutcome, ErrorCode, GrpcStatus};
use volley_syntax::Span;

use crate::error::ApiError;
use crate::flows::StoredResponse;
use crate::wire::{AssertionReport, Check, Header, ResponseInfo, SpanInfo};

/// A body for the wire: the text when it is UTF-8, else base64.
pub(crate) fn encode_body(body: &[u8]) -> (Option<String>, &'static str) {
    if body.is_empty() {
        return (None, "utf-8");
    }
    match std::str::from_utf8(body) {
        Ok(text) => (Some(text.to_owned()), "utf-8"),
        Err(_) => (Some(STANDARD.encode(body)), "base64"),
    }
}

/// The response as `/execute` answers it. Not the engine's [`ResponseSummary`], which
/// is redacted: docs/protocol.md ("Redaction") leaves unredacted what the upstream sent
/// back to the caller (status, headers, body, URL), the caller's own response; what
/// echoes the request (`urlResolved`, the assertions) is redacted elsewhere.
pub(crate) fn response_info(response: &Response) -> ResponseInfo {
    let body = response.body_bytes();
    let (text, encoding) = encode_body(body);
    ResponseInfo {
        status: response.status(),
        status_text: response.status_text().to_owned(),
        headers: response
            .headers()
            .iter()
            .map(|(name, value)| Header {
                name: name.as_str().to_owned(),
                value: String::from_utf8_lossy(value.as_bytes()).into_owned(),
            })
            .collect(),
        body_mode: if text.is_some() { "buffered" } else { "none" },
        body: text,
        encoding,
        truncated: response.truncated(),
        body_bytes: body.len(),
        url: response.url().to_string(),
        redirected: response.redirected(),
        http_version: format!("{:?}", response.version()),
        grpc: response.grpc().map(|grpc| GrpcStatus {
            code: grpc.code.clone(),
            number: grpc.number,
            message: grpc.message.clone(),
            details: grpc.details.clone(),
            kind: grpc.kind.to_owned(),
        }),
    }
}

/// The response as the execution store keeps it: the engine's [`ResponseSummary`]
/// (redacted by its policy), the body cut at `limit` after redaction.
pub(crate) fn stored_response(response: &Response, limit: usize) -> StoredResponse {
    let received = ResponseSummary::new(response);
    let (body, cut) = received.body.cut(limit);
    let (body, encoding) = match body.base64() {
        _ if body.is_empty() => (None, "utf-8"),
        Some(encoded) => (Some(encoded), "base64"),
        None => (Some(body.into_text()), "utf-8"),
    };
    StoredResponse {
        status: received.status,
        status_text: received.status_text.to_owned(),
        headers: received.headers.into_iter().map(|(name, value)| Header { name, value }).collect(),
        body,
        encoding,
        truncated: received.truncated || cut,
        body_bytes: received.body_bytes,
        grpc: received.grpc.map(|grpc| GrpcStatus {
            code: grpc.code,
            number: grpc.number,
            message: grpc.message,
            details: grpc.details,
            kind: grpc.kind.to_owned(),
        }),
    }
}

/// The log lines as the execution store keeps them: the first `limit` bytes of them
/// (the last one kept cut on a character boundary), and whether any were left out.
pub(crate) fn stored_logs(lines: &[String], limit: usize) -> (Vec<String>, bool) {
    let mut kept = Vec::new();
    let mut left = limit;
    for line in lines {
        if line.len() <= left {
            left -= line.len();
            kept.push(line.clone());
            continue;
        }
        let mut end = left;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        if end > 0 {
            kept.push(line[..end].to_owned());
        }
        return (kept, true);
    }
    (kept, false)
}

/// Headers as the wire lists them (lower-case names, one entry per value), as
/// `redactor` lets them be shown.
pub(crate) fn headers(redactor: &Redactor, headers: &http::HeaderMap) -> Vec<Header> {
    redactor.headers(headers).into_iter().map(|(name, value)| Header { name, value }).collect()
}

/// The checks of a response, `None` when it had none (the engine has hidden their
/// secrets already).
pub(crate) fn assertions(results: &[AssertionResult], text: &str) -> Option<AssertionReport> {
    if results.is_empty() {
        return None;
    }
    let checks: Vec<Check> = place_assertions(results, text).iter().map(check).collect();
    let failed = results.iter().filter(|result| !result.passed()).count();
    Some(AssertionReport { passed: failed == 0, total: checks.len(), failed, checks })
}

fn check(placed: &PlacedAssertion) -> Check {
    let PlacedAssertion { result, place: Place { line, column } } = placed;
    let (span, line, column) = (result.span, *line, *column);
    let mut check = Check {
        expression: result.expression.clone(),
        outcome: CheckOutcome::Passed,
        expected: None,
        actual: None,
        message: None,
        hint: None,
        span: SpanInfo { start: span.start, end: span.end, line, column },
    };
    match &result.outcome {
        Outcome::Passed => {}
        Outcome::Failed { expected, actual } => {
            check.outcome = CheckOutcome::Failed;
            check.expected = Some(expected.clone());
            check.actual = Some(actual.clone());
        }
        Outcome::ScriptFailed { message } => {
            check.outcome = CheckOutcome::Failed;
            check.message = Some(message.clone());
        }
        Outcome::HandlerFailed { message, stack } => {
            check.outcome = CheckOutcome::Invalid;
            check.message = Some(message.clone());
            check.hint = (!stack.is_empty()).then(|| format!("JavaScript stack:\n{stack}"));
        }
        Outcome::Invalid { message, hint } => {
            check.outcome = CheckOutcome::Invalid;
            check.message = Some(message.clone());
            check.hint.clone_from(hint);
        }
    }
    check
}

/// The most diagnostics a `PARSE_ERROR` answer lists; `omitted` counts the others.
pub(crate) const MAX_ANSWERED_DIAGNOSTICS: usize = 100;

/// An engine error as the API answers it: the engine's [`PlacedError`] (lines and
/// columns from 1, columns in characters as docs/protocol.md counts them), mapped.
pub(crate) fn engine_error(error: &Error, text: &str) -> ApiError {
    // Every error the server answers with a place has a span of its own: no request
    // line is needed for the others.
    let placed = PlacedError::new(error, Span::default(), text);
    match error {
        // A body on a WebSocket request, or a WebSocket URL with another method, breaks a
        // rule of the WebSocket route rather than the syntax.
        Error::Invalid { diagnostics } if diagnostics.iter().any(is_websocket_rule) => {
            let first = diagnostics.iter().find(|d| is_websocket_rule(d)).cloned();
            let (message, code, hint) =
                first.map_or_else(|| (String::new(), "", None), |d| (d.message, d.code.as_str(), d.hint));
            ApiError::validation(message).with_details(json!({ "code": code, "hint": hint }))
        }
        Error::Invalid { .. } => {
            // The answer stays small whatever the text: the first diagnostics, and a count.
            let omitted = placed.diagnostics.len().saturating_sub(MAX_ANSWERED_DIAGNOSTICS);
            let details: Vec<Value> = placed
                .diagnostics
                .iter()
                .take(MAX_ANSWERED_DIAGNOSTICS)
                .map(|diagnostic| {
                    json!({
                        "code": diagnostic.code,
                        "message": diagnostic.message,
                        "hint": diagnostic.hint,
                        "line": diagnostic.place.line,
                        "column": diagnostic.place.column,
                    })
                })
                .collect();
            let details = if omitted > 0 {
                json!({ "diagnostics": details, "omitted": omitted })
            } else {
                json!({ "diagnostics": details })
            };
            ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::ParseError, placed.full_message).with_details(details)
        }
        Error::Selection(selection) => selection_error(selection),
        Error::Config(config) => ApiError::validation(format!("configuration: {config}")),
        Error::Build(build) => build_error(build, &placed),
        Error::Transport(TransportError::Certificate { path, message, hint }) => {
            // Files are read through the workspace: one outside it is refused like a body
            // file; otherwise the file is named without the workspace's own path.
            if message.contains("outside the workspace") {
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    ErrorCode::PathOutsideWorkspace,
                    "the configuration refers to a certificate file outside the workspace",
                );
            }
            let name = path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
            ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::ExecuteError, format!("{name}: {message}"))
                .with_details(json!({ "kind": "certificate", "hint": hint }))
        }
        Error::Cancelled => {
            ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::ExecuteError, "the execution was cancelled")
                .with_details(json!({ "kind": execute_kind(&placed.kind) }))
        }
        _ => ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::ExecuteError, placed.full_message.clone())
            .with_details(json!({ "kind": execute_kind(&placed.kind) })),
    }
}

/// The `details.kind` of an `EXECUTE_ERROR`: the engine's kind as the protocol spells
/// it (a transport kind with its underscores, `cancelled`, else `other`).
fn execute_kind(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Transport { kind } => kind,
        ErrorKind::Cancelled => "cancelled",
        _ => "other",
    }
}

/// A `# @disabled` request: never sent, even when selected by name or index.
pub(crate) fn disabled(request: &volley_syntax::Request, text: &str) -> ApiError {
    let directive =
        request.directives.iter().find(|directive| directive.kind == volley_syntax::DirectiveKind::Disabled);
    let span = directive.map_or(request.line_span, |directive| directive.span);
    let placed = PlacedDiagnostic::new(
        "request-disabled",
        "the request is disabled (`# @disabled`): it is never sent",
        Some("remove `# @disabled` to send it".to_owned()),
        span,
        text,
    );
    ApiError::validation(placed.message).with_details(json!({
        "code": placed.code,
        "hint": placed.hint,
        "line": placed.place.line,
        "column": placed.place.column,
    }))
}

fn is_websocket_rule(diagnostic: &volley_syntax::Diagnostic) -> bool {
    matches!(diagnostic.code, volley_syntax::Code::WebSocketBody | volley_syntax::Code::ConflictingProtocol)
}

fn selection_error(error: &SelectionError) -> ApiError {
    let message = error.to_string();
    match error {
        SelectionError::NoRequests => ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::NoRequestsFound, message),
        SelectionError::IndexOutOfRange { index, count } => {
            ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::RequestIndexOutOfRange, message)
                .with_details(json!({ "index": index, "count": count }))
        }
        SelectionError::NameNotFound { name, suggestion } => {
            ApiError::new(StatusCode::NOT_FOUND, ErrorCode::RequestNotFound, message)
                .with_details(json!({ "name": name, "suggestion": suggestion }))
        }
        _ => ApiError::validation(message),
    }
}

fn build_error(error: &BuildError, placed: &PlacedError) -> ApiError {
    let mut root = error;
    while let BuildError::Included { source, .. } = root {
        root = source;
    }
    if let BuildError::File { source, .. } = root {
        if crate::workspace::is_outside(source) {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::PathOutsideWorkspace,
                "the request refers to a file outside the workspace",
            );
        }
        if source.kind() == std::io::ErrorKind::NotFound {
            return ApiError::new(StatusCode::NOT_FOUND, ErrorCode::FileNotFound, placed.message.clone())
                .with_details(location(placed));
        }
    }
    let mut details = location(placed);
    details["code"] = json!(error.code());
    if let Some(hint) = &placed.hint {
        details["hint"] = json!(hint);
    }
    ApiError::validation(placed.message.clone()).with_details(details)
}

fn location(placed: &PlacedError) -> Value {
    // Spans of a `<@` file's own text are not in the execution's text.
    if !placed.in_text {
        return json!({});
    }
    json!({ "line": placed.place.line, "column": placed.place.column })
}

#[cfg(test)]
mod tests {
    use super::stored_logs;

    #[test]
    fn stored_logs_keep_their_first_bytes_whole_characters_only() {
        let lines = ["abc".to_owned(), "déf".to_owned(), "ghi".to_owned()];
        assert_eq!(stored_logs(&lines, 100), (lines.to_vec(), false));
        assert_eq!(stored_logs(&lines, 6), (vec!["abc".to_owned(), "dé".to_owned()], true));
        assert_eq!(stored_logs(&lines, 7), (vec!["abc".to_owned(), "déf".to_owned()], true));
        // `é` is two bytes: a cut inside it keeps what is before it.
        assert_eq!(stored_logs(&lines, 5), (vec!["abc".to_owned(), "d".to_owned()], true));
        assert_eq!(stored_logs(&lines, 3), (vec!["abc".to_owned()], true));
        assert_eq!(stored_logs(&[], 0), (Vec::new(), false));
    }
}
