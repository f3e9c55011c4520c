//! The answers of `POST /execute` and `POST /execute/ws` (which share the request and
//! resolution parts): what the server writes and the remote client (volley-remote) reads.
//!
//! Writing and the `/doc` schema follow the server: a field it always sends is
//! required, an optional one is left out when unset. Reading is lenient, so that a
//! partial answer (another server, an older version) still reads: a field the client
//! can do without has `#[serde(default)]` for reading and `schema(required = true)`
//! to keep the document honest about what the server sends.

use serde::{Deserialize, Deserializer, Serialize};

use crate::AssertionReport;

/// The answer of `POST /execute`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExecuteResponse {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub run_id: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub req_exec_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionRef>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub request: RequestInfo,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub resolved: Resolved,
    // The one part an answer cannot be read without.
    pub response: ResponseInfo,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub limits: Limits,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub timing: TimingInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertions: Option<AssertionReport>,
    /// The `client.log` lines of the request's scripts (pre-request scripts, then
    /// response handlers), secrets redacted; left out when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
}

// The session an execution ran in, at the version its variables had after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    pub session_id: String,
    pub snapshot_version: u64,
}

/// The request that ran.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RequestInfo {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub index: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub method: String,
    /// The URL as written.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub url: String,
    /// The URL sent (variables substituted).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub url_resolved: String,
}

/// Where the server found things.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Resolved {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub workspace_root: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub base_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_file_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_path: Option<String>,
}

/// One header of a response, names in lower case, one entry per value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Header {
    pub name: String,
    pub value: String,
}

/// The upstream response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResponseInfo {
    pub status: u16,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub status_text: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub headers: Vec<Header>,
    /// `buffered` (the body is in `body`) or `none` (no body).
    // Read as `buffered` when absent, refused when another word.
    #[serde(default = "buffered", deserialize_with = "body_mode")]
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = String))]
    pub body_mode: Word,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// `utf-8` or `base64` (bodies that are not UTF-8).
    // Read as `utf-8` when absent (`utf8` too), refused when another word.
    #[serde(default = "utf_8", deserialize_with = "encoding")]
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = String))]
    pub encoding: Word,
    /// The body was cut at `limits.maxBodyBytes`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub truncated: bool,
    /// Bytes of the body as captured.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub body_bytes: usize,
    /// The final URL (after redirects).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub url: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub redirected: bool,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub http_version: String,
    /// How a gRPC call ended (absent for other requests); `body` is then the response
    /// messages as proto3 JSON, one per line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<GrpcStatus>,
}

/// The status of a gRPC call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GrpcStatus {
    /// `OK`, `NOT_FOUND`, …
    pub code: String,
    /// The status's number (0 for `OK`).
    pub number: u32,
    /// `grpc-message`, decoded; empty when the server sent none.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub message: String,
    /// The status's details (`grpc-status-details-bin`), each as proto3 JSON with its
    /// `@type`; absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<serde_json::Value>,
    /// `unary`, `server-streaming`, `client-streaming` or `bidirectional`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub kind: String,
}

// The limits an execution ran under.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub max_body_bytes: usize,
}

/// Epoch milliseconds and durations in milliseconds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TimingInfo {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub start_time: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb: Option<f64>,
}

/// One of the few words a field may hold (`bodyMode`, `encoding`): the server names it
/// with a literal, the reader maps what it reads onto the same literals. An alias, not
/// `&'static str` written out, so that serde does not borrow it from the input.
pub(crate) type Word = &'static str;

fn buffered() -> &'static str {
    "buffered"
}

pub(crate) fn utf_8() -> &'static str {
    "utf-8"
}

/// `bodyMode` as one of the words the protocol knows (the field is `&'static str`, so
/// the server names it with a literal).
fn body_mode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<&'static str, D::Error> {
    let word = String::deserialize(deserializer)?;
    match word.as_str() {
        "buffered" => Ok("buffered"),
        "none" => Ok("none"),
        other => Err(serde::de::Error::custom(format!("unknown bodyMode `{other}`"))),
    }
}

/// `encoding` as one of the words the protocol knows (`utf8` read as `utf-8`).
pub(crate) fn encoding<'de, D: Deserializer<'de>>(deserializer: D) -> Result<&'static str, D::Error> {
    let word = String::deserialize(deserializer)?;
    match word.as_str() {
        "utf-8" | "utf8" => Ok("utf-8"),
        "base64" => Ok("base64"),
        other => Err(serde::de::Error::custom(format!("unknown body encoding `{other}`"))),
    }
}

/// The answer of `POST /execute/ws`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExecuteWsResponse {
    pub run_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub req_exec_id: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub request: RequestInfo,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub resolved: Resolved,
    // With `runId`, what an answer cannot be read without.
    pub ws: WsSessionInfo,
    /// The `@assert` checks of the handshake (status, headers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertions: Option<AssertionReport>,
    /// The `client.log` lines of the request's pre-request scripts, secrets redacted;
    /// left out when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
}

/// A server-owned WebSocket session.
// Named `SessionInfo` in `/doc`, as it always was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = SessionInfo))]
#[serde(rename_all = "camelCase")]
pub struct WsSessionInfo {
    /// `ws_<uuid>`.
    pub ws_session_id: String,
    /// `/ws/session/<wsSessionId>`: where the control socket connects.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub downstream_path: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub upstream_url: String,
    /// Only when the upstream chose one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subprotocol: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub replay_buffer_size: usize,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub last_seq: u64,
}
