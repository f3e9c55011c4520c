//! Observer events (`GET /event`, `GET /event/ws`): one enum tagged by `type`, each kind
//! with its typed payload, and the envelope that carries an event with its ids.
//!
//! Payloads are read leniently: a field left out takes its default, so an observer
//! reads the events of a server that sends less than this version does (the assertion
//! report excepted: its fields are required, as `/doc` says of the execute answers).

use serde::de::Error as _;
use serde::ser::SerializeMap as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::ErrorCode;
use crate::execution::Stage;
use crate::report::AssertionReport;

/// An event without a payload of its own: `{}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Empty {}

/// `requestQueued`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RequestQueued {
    /// The label the caller gave the request (`null` without one).
    pub req_label: Option<String>,
}

/// Where the `.http` text of an execution comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParseSource {
    #[default]
    Content,
    Path,
}

/// `parseStarted`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ParseStarted {
    pub source: ParseSource,
}

/// `parseFinished`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ParseFinished {
    pub request_count: usize,
    /// The selected request's index among the text's requests.
    pub index: usize,
    /// Its `# @name`.
    pub name: Option<String>,
    /// Its `# @description`.
    pub description: Option<String>,
}

/// `interpolateFinished`, `compileFinished`, `fetchStarted`: the request's method and
/// URL (variables substituted, secrets redacted).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RequestLine {
    pub method: String,
    pub url: String,
}

/// `fetchFinished`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FetchFinished {
    pub method: String,
    pub url: String,
    pub status: u16,
    /// Time to the first byte, in milliseconds.
    pub ttfb: f64,
}

/// The counts of an assertion report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AssertionSummary {
    pub passed: bool,
    pub total: usize,
    pub failed: usize,
}

/// `executionFinished`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExecutionFinished {
    pub status: u16,
    pub duration_ms: f64,
    /// `null` when the request has no `@assert`.
    pub assertions: Option<AssertionSummary>,
    /// The events a streamed (`/execute/sse`) response relayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// How many `client.log` lines the request's scripts wrote, when they wrote some
    /// (the lines are in the answer and the execution store, not in the event).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs: Option<usize>,
}

/// `executionFailed`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ExecutionFailed {
    pub stage: Stage,
    pub message: String,
    /// The code of the error the execute route answered.
    pub code: ErrorCode,
    /// What ended it, in a word, when the error says: its `details.kind` (`timeout`,
    /// `connection_refused`, `dns`, `tls`, …) or `details.code` (`undefined-variable`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// `sessionUpdated`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionUpdated {
    pub variables_changed: bool,
    pub cookies_changed: bool,
    /// Sent for a variables update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_version: Option<u64>,
}

/// `flowStarted`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FlowStarted {
    pub label: Option<String>,
    pub meta: Option<Map<String, Value>>,
}

/// `workspaceFileChanged`: a file of the workspace was created, updated or deleted
/// through the server (`/workspace/file`, `/import/{source}/apply`). It belongs to no
/// session or flow.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WorkspaceFileChanged {
    /// The path, relative to the workspace, with `/` separators.
    pub path: String,
    /// `created`, `updated` or `deleted`.
    pub change: String,
}

/// `flowFinished`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default, rename_all = "camelCase")]
pub struct FlowFinished {
    pub total: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub duration_ms: u64,
}

/// `wsSessionOpened`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WsSessionOpened {
    pub upstream_url: String,
    /// When the upstream chose one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subprotocol: Option<String>,
    pub ws_session_id: String,
}

/// Which way a WebSocket message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// From the upstream.
    Inbound,
    /// To the upstream.
    #[default]
    Outbound,
}

/// How a WebSocket message's payload is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum PayloadType {
    #[default]
    Text,
    Json,
}

/// `wsSessionMessage`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WsSessionMessage {
    pub ws_session_id: String,
    pub direction: Direction,
    /// The envelope's `seq` on the session's control socket.
    pub ws_seq: u64,
    pub payload_type: PayloadType,
    pub byte_length: usize,
    /// The frame's text, cut to its first 4,096 bytes on a character boundary.
    pub preview: String,
    pub truncated: bool,
}

/// `grpcMessage`: a response message of a gRPC call, as it arrives (server-streaming
/// and bidirectional calls) or once the call ended (unary and client-streaming calls).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GrpcMessage {
    /// The message's number in the call, from 1.
    pub number: usize,
    /// Bytes of the message as compact proto3 JSON, secrets hidden.
    pub byte_length: usize,
    /// That JSON, cut to its first 4,096 bytes on a character boundary.
    pub preview: String,
    pub truncated: bool,
}

/// `wsSessionClosed`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WsSessionClosed {
    pub ws_session_id: String,
    pub code: u16,
    pub reason: String,
    pub was_clean: bool,
}

/// `authDeviceCode`: an execution waits for a person to enter a device code (RFC 8628).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AuthDeviceCode {
    /// The code to enter.
    pub user_code: String,
    /// Where to enter it.
    pub verification_uri: String,
    /// The same page with the code filled in, when the authorization server gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification_uri_complete: Option<String>,
    /// Seconds the code stays valid.
    pub expires_in: u64,
}

macro_rules! events {
    ($($(#[$doc:meta])* $variant:ident($payload:ty) = $name:literal,)*) => {
        /// An observer event: its `type` and its payload.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ObserverEvent {
            $($(#[$doc])* $variant($payload),)*
        }

        impl ObserverEvent {
            /// Every event name, in the order of the declaration.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The `type`.
            #[must_use]
            pub const fn name(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $name,)*
                }
            }

            /// The event of a `type` and its payload (`null` reads as `{}`).
            ///
            /// # Errors
            /// An unknown `type`, or a payload of the wrong shape.
            pub fn from_parts(name: &str, payload: &Value) -> Result<Self, serde_json::Error> {
                let empty = Value::Object(Map::new());
                let payload = if payload.is_null() { &empty } else { payload };
                match name {
                    $($name => <$payload>::deserialize(payload).map(Self::$variant),)*
                    other => Err(serde_json::Error::custom(format!("unknown observer event `{other}`"))),
                }
            }

            /// [`from_parts`](Self::from_parts) of a payload the caller gives away: its
            /// strings are moved into the event, not copied.
            ///
            /// # Errors
            /// An unknown `type`, or a payload of the wrong shape.
            pub fn from_owned_parts(name: &str, payload: Value) -> Result<Self, serde_json::Error> {
                let payload = if payload.is_null() { Value::Object(Map::new()) } else { payload };
                match name {
                    $($name => <$payload>::deserialize(payload).map(Self::$variant),)*
                    other => Err(serde_json::Error::custom(format!("unknown observer event `{other}`"))),
                }
            }

            fn serialize_payload<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Self::$variant(payload) => payload.serialize(serializer),)*
                }
            }
        }
    };
}

events! {
    RequestQueued(RequestQueued) = "requestQueued",
    ParseStarted(ParseStarted) = "parseStarted",
    ParseFinished(ParseFinished) = "parseFinished",
    InterpolateStarted(Empty) = "interpolateStarted",
    InterpolateFinished(RequestLine) = "interpolateFinished",
    CompileStarted(Empty) = "compileStarted",
    CompileFinished(RequestLine) = "compileFinished",
    /// Between `fetchStarted` and `fetchFinished`, when a token comes from a device flow.
    AuthDeviceCode(AuthDeviceCode) = "authDeviceCode",
    FetchStarted(RequestLine) = "fetchStarted",
    FetchFinished(FetchFinished) = "fetchFinished",
    /// When the request has `@assert`s.
    AssertionReport(AssertionReport) = "assertionReport",
    ExecutionFinished(ExecutionFinished) = "executionFinished",
    /// The execution stopped at a stage.
    ExecutionFailed(ExecutionFailed) = "executionFailed",
    SessionUpdated(SessionUpdated) = "sessionUpdated",
    FlowStarted(FlowStarted) = "flowStarted",
    FlowFinished(FlowFinished) = "flowFinished",
    WsSessionOpened(WsSessionOpened) = "wsSessionOpened",
    WsSessionMessage(WsSessionMessage) = "wsSessionMessage",
    WsSessionClosed(WsSessionClosed) = "wsSessionClosed",
    /// Between `fetchStarted` and `fetchFinished`, one per response message of a gRPC call.
    GrpcMessage(GrpcMessage) = "grpcMessage",
    /// A workspace file was written or deleted through the server.
    WorkspaceFileChanged(WorkspaceFileChanged) = "workspaceFileChanged",
}

impl Serialize for ObserverEvent {
    /// `{"type", "payload"}`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", self.name())?;
        map.serialize_entry("payload", &Payload(self))?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for ObserverEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let envelope = ObserverEnvelope::deserialize(deserializer)?;
        Ok(envelope.event)
    }
}

/// An event's payload alone.
struct Payload<'a>(&'a ObserverEvent);

impl Serialize for Payload<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_payload(serializer)
    }
}

/// An event as it goes to observers:
/// `{type, ts, seq, payload, runId?, sessionId?, flowId?, reqExecId?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObserverEnvelope {
    pub event: ObserverEvent,
    /// Epoch milliseconds.
    pub ts: u64,
    /// Counted per flow (from 1, `flowStarted` first), else per run.
    pub seq: u64,
    /// Absent on `flowStarted`/`flowFinished` and on a `sessionUpdated` of a variables update.
    pub run_id: Option<String>,
    pub session_id: Option<String>,
    pub flow_id: Option<String>,
    pub req_exec_id: Option<String>,
}

impl ObserverEnvelope {
    /// The stream its `seq` counts in: its flow, else its run.
    #[must_use]
    pub fn stream(&self) -> Option<&str> {
        self.flow_id.as_deref().or(self.run_id.as_deref())
    }
}

impl Serialize for ObserverEnvelope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.event.name())?;
        map.serialize_entry("ts", &self.ts)?;
        map.serialize_entry("seq", &self.seq)?;
        map.serialize_entry("payload", &Payload(&self.event))?;
        let ids = [
            ("runId", &self.run_id),
            ("sessionId", &self.session_id),
            ("flowId", &self.flow_id),
            ("reqExecId", &self.req_exec_id),
        ];
        for (name, value) in ids {
            if let Some(value) = value {
                map.serialize_entry(name, value)?;
            }
        }
        map.end()
    }
}

/// The envelope as read, before its payload is typed.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEnvelope {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    ts: u64,
    #[serde(default)]
    seq: u64,
    #[serde(default)]
    payload: Value,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    flow_id: Option<String>,
    #[serde(default)]
    req_exec_id: Option<String>,
}

impl<'de> Deserialize<'de> for ObserverEnvelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawEnvelope::deserialize(deserializer)?;
        let event = ObserverEvent::from_parts(&raw.kind, &raw.payload).map_err(D::Error::custom)?;
        Ok(Self {
            event,
            ts: raw.ts,
            seq: raw.seq,
            run_id: raw.run_id,
            session_id: raw.session_id,
            flow_id: raw.flow_id,
            req_exec_id: raw.req_exec_id,
        })
    }
}
