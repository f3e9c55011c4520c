//! What comes back from the execution server: a `POST /execute` answer turned into
//! a [`Response`], an `{"error": …}` body into [`Error::Server`], assertion reports
//! into [`AssertionResult`]s. Pure functions over
//! bytes, so the mapping is tested without a server. The answer's types are the
//! server's own (`volley-protocol`), which read a partial answer with defaults.

use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::Value;
use volley_protocol::{AssertionReport, Check, CheckOutcome, ExecuteResponse, SpanInfo};
use volley_syntax::{LineIndex, Position, Span};

use crate::assert::{AssertionResult, Outcome};
use crate::error::{BuildError, Error};
use crate::response::{Response, SentRequest, Timing};

/// The `{"error": {…}}` body of every non-2xx answer.
#[derive(Debug, Deserialize)]
struct ErrorEnvelope {
    error: ErrorBody,
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    code: String,
    #[serde(default)]
    message: String,
    details: Option<Value>,
}

/// The [`Response`] of a `POST /execute` answer. `content` is the `.http` text that
/// was sent: assertion spans are positioned in it (the wire's line and column are the
/// fallback). A body longer than `max_body_bytes` is cut and marked truncated. `Err`
/// says what is wrong with an answer that does not have the protocol's shape.
pub(crate) fn response_from_answer(
    answer: &[u8],
    content: Option<&str>,
    max_body_bytes: Option<usize>,
) -> Result<Response, String> {
    let answer: ExecuteResponse = serde_json::from_slice(answer).map_err(|error| format!("invalid JSON: {error}"))?;
    let wire = answer.response;
    let status = http::StatusCode::from_u16(wire.status).map_err(|_| format!("invalid status {}", wire.status))?;
    let mut headers = http::HeaderMap::with_capacity(wire.headers.len());
    for header in &wire.headers {
        let name = http::HeaderName::from_bytes(header.name.as_bytes());
        if let (Ok(name), Ok(value)) = (name, http::HeaderValue::from_str(&header.value)) {
            headers.append(name, value);
        } else {
            tracing::debug!(name = %header.name, "skipping a header that is not valid HTTP");
        }
    }
    // The protocol reads `bodyMode` and `encoding` as the words it knows (and refuses others).
    let mut body = match (wire.body_mode, wire.body) {
        ("none", _) | (_, None) => Bytes::new(),
        (_, Some(text)) if wire.encoding == "base64" => base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map(Bytes::from)
            .map_err(|error| format!("the body is not valid base64: {error}"))?,
        (_, Some(text)) => Bytes::from(text),
    };
    let mut truncated = wire.truncated;
    if let Some(limit) = max_body_bytes
        && body.len() > limit
    {
        body.truncate(limit);
        truncated = true;
    }
    let resolved = url::Url::parse(&answer.request.url_resolved).ok();
    let url = url::Url::parse(&wire.url).ok().or_else(|| resolved.clone()).unwrap_or_else(blank_url);
    let method = http::Method::from_bytes(answer.request.method.as_bytes()).unwrap_or(http::Method::GET);
    let request = SentRequest {
        method,
        url: resolved.unwrap_or_else(|| url.clone()),
        headers: http::HeaderMap::new(),
        body: Bytes::new(),
    };
    let timing = Timing { ttfb: millis(answer.timing.ttfb), total: millis(answer.timing.duration_ms) };
    let version = version_of(&wire.http_version);
    let mut response = Response::from_parts(status, version, headers, url, request, timing);
    response.body = crate::response::Body::Read(body);
    response.truncated = truncated;
    response.redirected = wire.redirected;
    if let Some(assertions) = answer.assertions {
        response.assertions = assertions_of(assertions, content);
    }
    // The scripts' `client.log` lines, redacted by the server.
    response.logs = answer.logs;
    if let Some(grpc) = wire.grpc {
        response.grpc = Some(std::sync::Arc::new(grpc_result(grpc, response.body_bytes())));
    }
    Ok(response)
}

/// The gRPC status of an answer, with its messages read back from the body's JSON lines.
fn grpc_result(status: volley_protocol::GrpcStatus, body: &[u8]) -> volley_model::GrpcResult {
    let messages = String::from_utf8_lossy(body).lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    let kind = ["unary", "server-streaming", "client-streaming", "bidirectional"]
        .into_iter()
        .find(|kind| *kind == status.kind)
        .unwrap_or("unary");
    volley_model::GrpcResult {
        code: status.code,
        number: status.number,
        message: status.message,
        details: status.details,
        kind,
        messages,
    }
}

/// The outcomes of an answer's `assertions`, their spans positioned in `content` (the
/// `.http` text that was sent) when they fall in it.
pub(crate) fn assertions_of(assertions: AssertionReport, content: Option<&str>) -> Vec<AssertionResult> {
    let index = content.map(|content| (LineIndex::new(content), content.len()));
    assertions.checks.into_iter().map(|check| assertion_of(check, index.as_ref())).collect()
}

/// The error of a non-2xx answer: its `{"error": …}` body, or `HTTP_ERROR` with the
/// start of the body when it has another shape (a proxy's page).
pub(crate) fn server_error(status: u16, body: &[u8]) -> Error {
    if let Ok(ErrorEnvelope { error }) = serde_json::from_slice::<ErrorEnvelope>(body) {
        // `details.kind` of an exchange that failed; `details.code` of a request the
        // server could not build (`undefined-variable`, …).
        let detail = |name: &str| error.details.as_ref().and_then(|details| details.get(name)).and_then(Value::as_str);
        let kind = detail("kind").or_else(|| detail("code").filter(|_| error.code == "VALIDATION_ERROR"));
        return Error::Server { status, code: error.code, message: error.message, kind: kind.map(str::to_owned) };
    }
    let reason = http::StatusCode::from_u16(status).ok().and_then(|status| status.canonical_reason()).unwrap_or("");
    let text = String::from_utf8_lossy(body);
    let text: String = text.trim().chars().take(200).collect();
    let message = match (reason, text.is_empty()) {
        (reason, true) => reason.to_owned(),
        ("", false) => text,
        (reason, false) => format!("{reason}: {text}"),
    };
    Error::Server { status, code: "HTTP_ERROR".to_owned(), message, kind: None }
}

/// The error of a non-2xx answer of an execute route run on `content`: a pre-request
/// script's failure (`VALIDATION_ERROR` with `details.code` `script-error`) is the
/// engine's own [`BuildError::Script`], placed on the script's line in `content` with
/// its JavaScript stack, as a local run reports it; any other answer is
/// [`server_error`]'s.
pub(crate) fn execute_error(status: u16, body: &[u8], content: &str) -> Error {
    script_error(body, content).unwrap_or_else(|| server_error(status, body))
}

fn script_error(body: &[u8], content: &str) -> Option<Error> {
    let ErrorEnvelope { error } = serde_json::from_slice(body).ok()?;
    let details = error.details?;
    if error.code != "VALIDATION_ERROR" || details.get("code")?.as_str()? != "script-error" {
        return None;
    }
    // 1-based, the column in characters (docs/protocol.md).
    let line = u32::try_from(details.get("line")?.as_u64()?.checked_sub(1)?).ok()?;
    let column = usize::try_from(details.get("column")?.as_u64()?.checked_sub(1)?).ok()?;
    let index = LineIndex::new(content);
    let range = index.line_range(content, line)?;
    let text = &content[range.clone()];
    let start = range.start + text.char_indices().nth(column).map_or(text.len(), |(at, _)| at);
    let hint = details.get("hint").and_then(Value::as_str).unwrap_or_default();
    let stack = hint.strip_prefix(STACK_HINT).unwrap_or(hint).to_owned();
    Some(Error::Build(BuildError::Script { message: error.message, stack, span: index.span(start..range.end) }))
}

/// `about:blank`, the URL of an answer that names none.
pub(crate) fn blank_url() -> url::Url {
    url::Url::parse("about:blank").expect("a valid URL")
}

/// Milliseconds (possibly fractional) as a duration; zero when absent or not a time.
fn millis(value: Option<f64>) -> Duration {
    value
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
        .unwrap_or_default()
}

/// `HTTP/1.1`, `HTTP/2`, … as a version (HTTP/1.1 when unknown).
fn version_of(text: &str) -> http::Version {
    match text.trim().to_ascii_uppercase().as_str() {
        "HTTP/0.9" => http::Version::HTTP_09,
        "HTTP/1.0" => http::Version::HTTP_10,
        "HTTP/2" | "HTTP/2.0" | "H2" => http::Version::HTTP_2,
        "HTTP/3" | "HTTP/3.0" | "H3" => http::Version::HTTP_3,
        _ => http::Version::HTTP_11,
    }
}

/// The expression of a response handler's failure, as the engine names it.
const HANDLER: &str = "response handler";
/// How the server's hint of a handler's failure starts, before the stack's frames.
const STACK_HINT: &str = "JavaScript stack:\n";

fn assertion_of(check: Check, index: Option<&(LineIndex, usize)>) -> AssertionResult {
    let outcome = match check.outcome {
        CheckOutcome::Passed => Outcome::Passed,
        // A script test's failure has a message and no expected value.
        CheckOutcome::Failed if check.expected.is_none() && check.message.is_some() => {
            Outcome::ScriptFailed { message: check.message.unwrap_or_default() }
        }
        CheckOutcome::Failed => {
            Outcome::Failed { expected: check.expected.unwrap_or_default(), actual: check.actual.unwrap_or_default() }
        }
        // A response handler that failed: the server reports it as an invalid check named
        // `response handler` with its JavaScript stack in the hint (`volley-server`'s
        // `execute/report.rs`), read back as the local result it came from.
        CheckOutcome::Invalid
            if check.expression == HANDLER && check.hint.as_deref().is_none_or(|hint| hint.starts_with(STACK_HINT)) =>
        {
            let stack = check.hint.as_deref().and_then(|hint| hint.strip_prefix(STACK_HINT)).unwrap_or_default();
            Outcome::HandlerFailed { message: check.message.unwrap_or_default(), stack: stack.to_owned() }
        }
        CheckOutcome::Invalid => Outcome::Invalid { message: check.message.unwrap_or_default(), hint: check.hint },
    };
    // A check without a span reads as the zero span: no place rather than the first byte.
    let span = if check.span == SpanInfo::default() { Span::default() } else { span_of(&check.span, index) };
    AssertionResult { expression: check.expression, span, outcome }
}

/// A span in the sent text: positioned by the text itself when its offsets fall in it,
/// else by the wire's 1-based line and column (both ends at the start).
fn span_of(wire: &SpanInfo, index: Option<&(LineIndex, usize)>) -> Span {
    if let Some((index, length)) = index
        && wire.start <= wire.end
        && wire.end <= *length
    {
        return index.span(wire.start..wire.end);
    }
    let position = Position::new(wire.line.saturating_sub(1), wire.column.saturating_sub(1));
    Span { start: wire.start, end: wire.end.max(wire.start), start_position: position, end_position: position }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn answer(response: &Value) -> Value {
        json!({
            "runId": "r_1", "reqExecId": "x_1", "flowId": "f_1",
            "session": {"sessionId": "s_1", "snapshotVersion": 3},
            "request": {"index": 0, "name": "login", "method": "POST", "url": "{{base}}/login",
                        "urlResolved": "http://127.0.0.1:5555/login"},
            "resolved": {"workspaceRoot": "/abs", "basePath": "/abs/dir"},
            "response": response,
            "limits": {"maxBodyBytes": 10_485_760},
            "timing": {"startTime": 1_763_780_000_000_u64, "endTime": 1_763_780_000_012_u64, "durationMs": 12.5, "ttfb": 9},
        })
    }

    fn map(value: &Value, content: Option<&str>) -> Response {
        response_from_answer(value.to_string().as_bytes(), content, None).expect("a valid answer")
    }

    #[tokio::test]
    async fn buffered_utf8() {
        let response = map(
            &answer(&json!({
                "status": 201, "statusText": "Created",
                "headers": [{"name": "content-type", "value": "application/json"},
                            {"name": "set-cookie", "value": "a=1"}, {"name": "set-cookie", "value": "b=2"}],
                "bodyMode": "buffered", "body": "{\"ok\":true}", "encoding": "utf-8", "truncated": false,
                "bodyBytes": 11, "url": "http://127.0.0.1:5555/welcome", "redirected": true, "httpVersion": "HTTP/2",
            })),
            None,
        );
        assert_eq!(response.status(), 201);
        assert!(response.ok());
        assert_eq!(response.headers().get_all("set-cookie").iter().count(), 2);
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.body_bytes(), b"{\"ok\":true}");
        assert_eq!(response.json::<Value>().await.expect("json"), json!({"ok": true}));
        assert_eq!(response.url().as_str(), "http://127.0.0.1:5555/welcome");
        assert!(response.redirected());
        assert!(!response.truncated());
        assert!(!response.is_streaming());
        assert_eq!(response.version(), http::Version::HTTP_2);
        assert_eq!(response.timing().total, Duration::from_micros(12_500));
        assert_eq!(response.timing().ttfb, Duration::from_millis(9));
        assert_eq!(response.request().method, http::Method::POST);
        assert_eq!(response.request().url.as_str(), "http://127.0.0.1:5555/login");
        assert!(response.assertions().is_empty() && response.assertions_passed());
    }

    #[test]
    fn base64_body() {
        let response = map(
            &answer(&json!({"status": 200, "headers": [], "bodyMode": "buffered", "body": "AP8BcQ==",
                            "encoding": "base64", "truncated": false, "bodyBytes": 4})),
            None,
        );
        assert_eq!(response.body_bytes(), [0x00, 0xff, 0x01, b'q']);
        // No `url`: the resolved request URL stands in.
        assert_eq!(response.url().as_str(), "http://127.0.0.1:5555/login");
        assert_eq!(response.version(), http::Version::HTTP_11);
    }

    #[test]
    fn invalid_base64_is_an_unexpected_answer() {
        let value = answer(&json!({"status": 200, "bodyMode": "buffered", "body": "*", "encoding": "base64"}));
        let error = response_from_answer(value.to_string().as_bytes(), None, None).expect_err("not base64");
        assert!(error.contains("base64"), "{error}");
    }

    #[test]
    fn no_body() {
        let response = map(
            &answer(&json!({"status": 204, "statusText": "No Content", "headers": [], "bodyMode": "none",
                            "encoding": "utf-8", "truncated": false, "bodyBytes": 0})),
            None,
        );
        assert_eq!(response.status(), 204);
        assert!(response.body_bytes().is_empty());
    }

    #[test]
    fn truncated_by_the_server_or_the_run() {
        let response = map(
            &answer(&json!({"status": 200, "bodyMode": "buffered", "body": "abc", "encoding": "utf-8",
                            "truncated": true, "bodyBytes": 3})),
            None,
        );
        assert!(response.truncated());
        assert_eq!(response.body_bytes(), b"abc");

        let value = answer(&json!({"status": 200, "bodyMode": "buffered", "body": "abcdef", "truncated": false}));
        let cut = response_from_answer(value.to_string().as_bytes(), None, Some(2)).expect("valid");
        assert!(cut.truncated());
        assert_eq!(cut.body_bytes(), b"ab");
    }

    #[test]
    fn upstream_errors_are_responses() {
        let response = map(&answer(&json!({"status": 503, "bodyMode": "buffered", "body": "down"})), None);
        assert_eq!(response.status(), 503);
        assert!(!response.ok());
    }

    #[test]
    fn assertions_of_every_outcome() {
        let content = "GET http://x/\n# @assert status == 200\n# @assert header content-type contains xml\n";
        let first = content.find("status").expect("in the text");
        let second = content.find("header content").expect("in the text");
        let value = json!({
            "request": {"method": "GET", "urlResolved": "http://x/"},
            "response": {"status": 200, "bodyMode": "none"},
            "assertions": {"passed": false, "total": 3, "failed": 1, "checks": [
                {"expression": "status == 200", "outcome": "passed",
                 "span": {"start": first, "end": first + 13, "line": 2, "column": 11}},
                {"expression": "header content-type contains xml", "outcome": "failed",
                 "expected": "contains \"xml\"", "actual": "application/json",
                 "span": {"start": second, "end": second + 32, "line": 3, "column": 11}},
                {"expression": "jsonpath $.x ==", "outcome": "invalid", "message": "a value is missing",
                 "hint": "write `jsonpath $.x == 1`", "span": {"start": 900, "end": 905, "line": 7, "column": 4}},
            ]},
        });
        let response = map(&value, Some(content));
        let checks = response.assertions();
        assert_eq!(checks.len(), 3);
        assert!(!response.assertions_passed());

        assert_eq!(checks[0].expression, "status == 200");
        assert_eq!(checks[0].outcome, Outcome::Passed);
        assert_eq!(checks[0].span.text(content), "status == 200");
        assert_eq!(checks[0].span.start_position, Position::new(1, 10));
        assert_eq!(checks[0].span.end_position, Position::new(1, 23));

        assert_eq!(
            checks[1].outcome,
            Outcome::Failed { expected: "contains \"xml\"".to_owned(), actual: "application/json".to_owned() }
        );
        assert_eq!(checks[1].span.text(content), "header content-type contains xml");

        assert_eq!(
            checks[2].outcome,
            Outcome::Invalid {
                message: "a value is missing".to_owned(),
                hint: Some("write `jsonpath $.x == 1`".to_owned())
            }
        );
        // Outside the text: the wire's 1-based line and column.
        assert_eq!((checks[2].span.start, checks[2].span.end), (900, 905));
        assert_eq!(checks[2].span.start_position, Position::new(6, 3));
    }

    #[test]
    fn script_results_read_back_as_the_engine_gives_them() {
        let value = json!({
            "response": {"status": 200},
            "assertions": {"checks": [
                {"expression": "ok", "outcome": "failed", "message": "AssertionError: status 200"},
                {"expression": "response handler", "outcome": "invalid", "message": "Error: boom",
                 "hint": "JavaScript stack:\nat <eval> (script:3:3)"},
                {"expression": "response handler", "outcome": "invalid", "message": "not on a stream"},
                {"expression": "response handler", "outcome": "invalid", "message": "unknown subject",
                 "hint": "write `status == 200`"},
            ]},
        });
        let outcomes: Vec<Outcome> = map(&value, None).assertions().iter().map(|check| check.outcome.clone()).collect();
        assert_eq!(
            outcomes,
            [
                Outcome::ScriptFailed { message: "AssertionError: status 200".to_owned() },
                Outcome::HandlerFailed {
                    message: "Error: boom".to_owned(),
                    stack: "at <eval> (script:3:3)".to_owned()
                },
                Outcome::HandlerFailed { message: "not on a stream".to_owned(), stack: String::new() },
                // An `# @assert response handler` that does not parse stays what it is.
                Outcome::Invalid {
                    message: "unknown subject".to_owned(),
                    hint: Some("write `status == 200`".to_owned())
                },
            ]
        );
    }

    #[test]
    fn script_results_are_placed_and_logs_kept() {
        let content = "GET http://x/\n\n> {%\n  client.test(\"ok\", () => {});\n  client.test(\"bad\", () => client.assert(false, \"no\"));\n  boom();\n%}\n";
        let at = |text: &str| content.find(text).expect("in the text");
        let (ok, bad, boom) = (at("client.test(\"ok\""), at("client.test(\"bad\""), at("boom();"));
        let value = json!({
            "request": {"method": "GET", "urlResolved": "http://x/"},
            "response": {"status": 200, "bodyMode": "none"},
            "assertions": {"passed": false, "total": 4, "failed": 3, "checks": [
                {"expression": "ok", "outcome": "passed", "span": {"start": ok, "end": ok + 30, "line": 4, "column": 3}},
                {"expression": "bad", "outcome": "failed", "message": "AssertionError: no",
                 "span": {"start": bad, "end": bad + 50, "line": 5, "column": 3}},
                {"expression": "response handler", "outcome": "invalid", "message": "ReferenceError: 'boom' is not defined",
                 "hint": "JavaScript stack:\nat <eval> (script:4:3)",
                 "span": {"start": boom, "end": boom + 7, "line": 6, "column": 3}},
                {"expression": "response handler", "outcome": "invalid", "message": "the script ran out of time",
                 "span": {"start": boom, "end": boom + 7, "line": 6, "column": 3}},
            ]},
            "logs": ["status 200", "token [REDACTED]"],
        });
        let response = map(&value, Some(content));
        let checks = response.assertions();
        assert_eq!(checks[0].outcome, Outcome::Passed);
        assert_eq!(checks[1].outcome, Outcome::ScriptFailed { message: "AssertionError: no".to_owned() });
        assert_eq!(checks[1].expression, "bad");
        assert_eq!(
            checks[2].outcome,
            Outcome::HandlerFailed {
                message: "ReferenceError: 'boom' is not defined".to_owned(),
                stack: "at <eval> (script:4:3)".to_owned(),
            }
        );
        assert_eq!(checks[2].span.text(content), "boom();");
        assert_eq!(
            checks[3].outcome,
            Outcome::HandlerFailed { message: "the script ran out of time".to_owned(), stack: String::new() }
        );
        assert_eq!(response.logs(), ["status 200", "token [REDACTED]"]);
        // Without `logs`, none.
        let bare = map(&json!({"response": {"status": 200}}), None);
        assert!(bare.logs().is_empty());
    }

    #[test]
    fn assertion_values_that_are_not_strings() {
        let value = json!({
            "response": {"status": 200},
            "assertions": {"checks": [{"expression": "status == 201", "outcome": "failed", "expected": 201, "actual": 200}]},
        });
        let response = map(&value, None);
        assert_eq!(
            response.assertions()[0].outcome,
            Outcome::Failed { expected: "201".to_owned(), actual: "200".to_owned() }
        );
        assert_eq!(response.assertions()[0].span, Span::default());
    }

    #[test]
    fn answers_without_the_shape_are_errors() {
        assert!(response_from_answer(b"not json", None, None).is_err());
        assert!(response_from_answer(br#"{"runId": "r"}"#, None, None).is_err());
        assert!(response_from_answer(br#"{"response": {"status": 1000}}"#, None, None).is_err());
    }

    #[test]
    fn error_bodies() {
        let body = json!({"error": {"code": "REQUEST_NOT_FOUND", "message": "no request named `x`"}});
        let error = server_error(404, body.to_string().as_bytes());
        assert!(matches!(
            &error,
            Error::Server { status: 404, code, message, kind: None }
                if code == "REQUEST_NOT_FOUND" && message == "no request named `x`"
        ));
        assert_eq!(error.server_code(), Some("REQUEST_NOT_FOUND"));
        assert_eq!(error.to_string(), "the execution server answered 404 REQUEST_NOT_FOUND: no request named `x`");

        let body = json!({"error": {"code": "EXECUTE_ERROR", "message": "connection refused by 127.0.0.1:9",
                                    "details": {"kind": "connection_refused"}}});
        let error = server_error(400, body.to_string().as_bytes());
        assert!(matches!(&error, Error::Server { kind: Some(kind), .. } if kind == "connection_refused"));
        assert_eq!(
            error.to_string(),
            "the execution server answered 400 EXECUTE_ERROR (connection_refused): connection refused by 127.0.0.1:9"
        );

        let body = json!({"error": {"code": "VALIDATION_ERROR", "message": "bad", "details": [1, 2]}});
        assert!(matches!(server_error(400, body.to_string().as_bytes()), Error::Server { kind: None, .. }));
    }

    #[test]
    fn a_pre_request_script_error_is_the_engines_own() {
        let content = "### Broken\n< {%\n  const é = 1;\n  throw new Error(\"no user\");\n%}\nGET http://x/\n";
        let body = json!({"error": {"code": "VALIDATION_ERROR", "message": "pre-request script failed: no user",
            "details": {"code": "script-error", "line": 4, "column": 3, "hint": "JavaScript stack:\nat <eval> (script:3:9)"}}});
        let error = execute_error(400, body.to_string().as_bytes(), content);
        let Error::Build(BuildError::Script { message, stack, span }) = &error else { panic!("{error:?}") };
        assert_eq!(message, "pre-request script failed: no user");
        assert_eq!(stack, "at <eval> (script:3:9)");
        assert_eq!(span.text(content), "throw new Error(\"no user\");");
        assert_eq!(span.start_position, Position::new(3, 2));

        // Another code, a place outside the text, or no text: the server's error.
        let other = json!({"error": {"code": "VALIDATION_ERROR", "message": "undefined variable `x`",
            "details": {"code": "undefined-variable", "line": 4, "column": 3}}});
        assert!(matches!(execute_error(400, other.to_string().as_bytes(), content), Error::Server { .. }));
        let outside = json!({"error": {"code": "VALIDATION_ERROR", "message": "m",
            "details": {"code": "script-error", "line": 40, "column": 1}}});
        assert!(matches!(execute_error(400, outside.to_string().as_bytes(), content), Error::Server { .. }));
        assert!(matches!(execute_error(502, b"<html>", content), Error::Server { status: 502, .. }));
    }

    #[test]
    fn error_bodies_of_another_shape() {
        let error = server_error(502, b"<html>bad gateway</html>");
        assert!(matches!(
            &error,
            Error::Server { status: 502, code, message, kind: None }
                if code == "HTTP_ERROR" && message == "Bad Gateway: <html>bad gateway</html>"
        ));
        assert!(matches!(server_error(401, b""), Error::Server { message, .. } if message == "Unauthorized"));
    }
}
