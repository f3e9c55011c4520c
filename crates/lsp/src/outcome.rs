//! The outcome of a send: the JSON `volley.send` and `volley.sendAll` answer with (the
//! request, the request as sent, the response with its timing, assertions and stream,
//! what its scripts logged, or why there is no response), documented in docs/lsp.md.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use volley_engine::report::SentSummary;

/// The most of a response body the result carries.
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// What came of sending one request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Outcome {
    pub(crate) request: RequestInfo,
    /// The execution server the request went through (the `server` setting), absent
    /// when it was sent from the language server's process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) server: Option<String>,
    /// The request as it went out (whenever it was built and sent, also when the
    /// transport then failed), through the request's redactor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sent: Option<SentInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) response: Option<ResponseInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<ErrorInfo>,
    /// What the request's scripts logged (`client.log`, `console.log`), one line each,
    /// through the request's redactor; absent when they logged nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) logs: Vec<String>,
    /// The id of the history entry the outcome was stored as.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) history_id: Option<String>,
}

/// Which request was sent.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestInfo {
    pub(crate) index: usize,
    pub(crate) name: Option<String>,
    pub(crate) method: String,
    /// The URL as written (variables unresolved).
    pub(crate) url: String,
    /// The request line, 0-based.
    pub(crate) line: u32,
    /// The text of its `# @description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
}

/// The request as it went out: the method, URL, headers (the jar's cookies included) and
/// body the engine sent (of the last hop when redirects were followed), or, when the
/// transport failed, as built to be sent.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SentInfo {
    pub(crate) method: String,
    pub(crate) url: String,
    /// The version the request line asks for (`HTTP/2.0`), when it asks for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) http_version: Option<String>,
    /// In order, repeated names kept.
    pub(crate) headers: Vec<(String, String)>,
    /// The body: text, or base64 for a body that is not UTF-8; absent when empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) body: Option<String>,
    /// `text` or `base64`.
    pub(crate) body_encoding: &'static str,
    /// The body was longer than what is kept.
    pub(crate) truncated: bool,
    /// Sent through an execution server, whose answer gives the method and the URL of
    /// the request as sent but not its headers and body.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) partial: bool,
}

impl SentInfo {
    /// The engine's summary of the request (redacted by its policy) for the version
    /// the request line asks for, the body cut after redaction.
    pub(crate) fn new(sent: SentSummary, version: Option<http::Version>) -> Self {
        let empty = sent.body.is_empty();
        let (kept, truncated) = sent.body.cut(MAX_BODY_BYTES);
        let (text, body_encoding) = match kept.base64() {
            Some(encoded) => (encoded, "base64"),
            None => (kept.into_text(), "text"),
        };
        Self {
            method: sent.method,
            url: sent.url,
            http_version: version.map(|version| format!("{version:?}")),
            headers: sent.headers,
            body: (!empty).then_some(text),
            body_encoding,
            truncated,
            partial: false,
        }
    }
}

/// The response, as the editor shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResponseInfo {
    pub(crate) status: u16,
    pub(crate) status_text: String,
    pub(crate) http_version: String,
    /// The URL the response came from (after redirects).
    pub(crate) url: String,
    /// In order, repeated names kept.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) content_type: Option<String>,
    /// The body: text, or base64 for a body that is not UTF-8.
    pub(crate) body: String,
    /// `text` or `base64`.
    pub(crate) body_encoding: &'static str,
    /// The body was longer than what is kept.
    pub(crate) truncated: bool,
    /// The whole body's size in bytes.
    pub(crate) body_size: u64,
    /// The whole body, as received, when it is longer than what `body` keeps: written
    /// to this file as it arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) body_file: Option<std::path::PathBuf>,
    pub(crate) timing: TimingInfo,
    pub(crate) assertions: Vec<AssertionInfo>,
    /// For an event stream or a WebSocket: what was received in the listening window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stream: Option<StreamInfo>,
    /// For a gRPC call: how it ended. Its `body` is then the response message as JSON
    /// (the array of the messages when the server streams), `contentType`
    /// `application/json`; `status` stays the HTTP exchange's 200.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) grpc: Option<GrpcInfo>,
}

/// How a gRPC call ended.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GrpcInfo {
    /// `OK`, `NOT_FOUND`, …
    pub(crate) code: String,
    /// 0 for `OK`.
    pub(crate) number: u32,
    /// `grpc-message`, redacted; empty when the server sent none.
    pub(crate) message: String,
    /// The status's details as JSON, redacted; absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) details: Vec<serde_json::Value>,
    /// `unary`, `server-streaming`, `client-streaming` or `bidirectional`.
    pub(crate) kind: &'static str,
    /// How many messages the server sent.
    pub(crate) messages: usize,
}

/// Milliseconds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TimingInfo {
    pub(crate) ttfb_ms: f64,
    pub(crate) total_ms: f64,
}

/// One check: a `# @assert` (or httpyac `??`) line, a script's `client.test`, or a
/// response handler that failed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AssertionInfo {
    /// The assertion's expression, the test's name, or `response handler`.
    pub(crate) expression: String,
    pub(crate) passed: bool,
    /// Why it failed (expected and actual; what the test threw; what stopped the
    /// handler), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
    /// For an assertion that does not hold: what it wanted (`status == 201`) and what
    /// the response had (`200`), as its `message` says them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) actual: Option<String>,
    /// The line of the `@assert`, of the `client.test` call, or where the handler
    /// failed; 0-based.
    pub(crate) line: u32,
}

/// The first events or messages of a streaming response.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StreamInfo {
    /// `sse` or `websocket`.
    pub(crate) kind: &'static str,
    pub(crate) items: Vec<StreamItem>,
    /// Why listening stopped: `ended` (the server ended the stream), `window` (the
    /// listening time ran out), `limit` (enough items), `error`.
    pub(crate) stopped: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// One event (SSE) or message (WebSocket).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StreamItem {
    /// The SSE event type; `text`, `pong` or `close` for a WebSocket message.
    pub(crate) event: String,
    pub(crate) data: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) id: Option<String>,
    /// Milliseconds since the response head.
    pub(crate) at_ms: f64,
}

/// Why a request got no response.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ErrorInfo {
    /// A stable kind: `cancelled`, `invalid`, `disabled`, `not-confirmed`, `config`,
    /// `selection`, a build error's code (`undefined-variable`, `missing-file`, …) or a
    /// transport error's kind (`connection_refused`, `timeout`, …).
    pub(crate) kind: String,
    pub(crate) message: String,
    /// For `invalid`: the errors that kept the request from being sent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) diagnostics: Vec<DiagnosticInfo>,
}

impl ErrorInfo {
    pub(crate) fn new(kind: &str, message: impl Into<String>) -> Self {
        Self { kind: kind.to_owned(), message: message.into(), diagnostics: Vec::new() }
    }
}

/// An error of the document that refuses a request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiagnosticInfo {
    /// The stable code (docs/diagnostics.md).
    pub(crate) code: &'static str,
    pub(crate) message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hint: Option<String>,
    /// 0-based.
    pub(crate) line: u32,
}

pub(crate) fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
