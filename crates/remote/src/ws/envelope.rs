//! The envelopes a control socket receives, read leniently: a type this client does
//! not know is [`WsEnvelopeKind::Other`].

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use volley_protocol::SessionEnvelopeKind;

use crate::websocket::WsClose;

/// One message of a control socket (server → client).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WsEnvelope {
    /// The `type`.
    #[serde(rename = "type")]
    pub kind: WsEnvelopeKind,
    /// When, in epoch milliseconds.
    #[serde(default)]
    pub ts: u64,
    /// Numbered per session from 1 (`session.opened`).
    pub seq: u64,
    /// The session.
    #[serde(default)]
    pub ws_session_id: String,
    /// The flow of the run that opened the session.
    #[serde(default)]
    pub flow_id: Option<String>,
    /// The execution that opened the session.
    #[serde(default)]
    pub req_exec_id: Option<String>,
    /// `text` or `json` for messages.
    #[serde(default)]
    pub payload_type: Option<String>,
    /// `utf-8` for messages.
    #[serde(default)]
    pub encoding: Option<String>,
    /// The size of the upstream frame in bytes.
    #[serde(default)]
    pub byte_length: Option<u64>,
    /// The content: a string for a text message, the parsed value for a JSON one, an
    /// object for the other types.
    #[serde(default)]
    pub payload: Option<Value>,
    /// The problem of a `session.error`.
    #[serde(default)]
    pub error: Option<WsEnvelopeError>,
    /// The JSON text of a `json` payload as the server relayed it: the message's own
    /// text (set by [`WsEnvelope::parse`]).
    #[serde(skip)]
    payload_json: Option<String>,
}

impl WsEnvelope {
    /// An envelope from the JSON text of a control socket frame.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        let mut envelope: WsEnvelope = serde_json::from_str(text)?;
        if envelope.payload_type.as_deref() == Some("json") {
            /// The payload alone, as its text.
            #[derive(Deserialize)]
            struct PayloadText<'a> {
                #[serde(borrow)]
                payload: Option<&'a RawValue>,
            }
            let payload = serde_json::from_str::<PayloadText<'_>>(text)?.payload;
            envelope.payload_json = payload.map(|raw| raw.get().to_owned());
        }
        Ok(envelope)
    }

    /// The payload as message text: a string as it is; a `json` payload as its text,
    /// keys in their order and numbers as written (for an envelope read with
    /// [`WsEnvelope::parse`]; serialized compactly otherwise). `None` without a payload.
    #[must_use]
    pub fn text(&self) -> Option<String> {
        match self.payload.as_ref()? {
            Value::String(text) => Some(text.clone()),
            other => Some(self.payload_json.clone().unwrap_or_else(|| other.to_string())),
        }
    }

    /// The code and reason of a `session.closed` (1005, no code, when it has none);
    /// `None` for the other types.
    #[must_use]
    pub fn closed(&self) -> Option<WsClose> {
        if self.kind != WsEnvelopeKind::Closed {
            return None;
        }
        let payload = self.payload.as_ref();
        let code = payload.and_then(|payload| payload.get("code")).and_then(Value::as_u64);
        let reason = payload.and_then(|payload| payload.get("reason")).and_then(Value::as_str);
        Some(WsClose {
            code: code.and_then(|code| u16::try_from(code).ok()).unwrap_or(1005),
            reason: reason.unwrap_or_default().to_owned(),
        })
    }
}

/// The `error` of a `session.error` envelope.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct WsEnvelopeError {
    /// `WS_UPSTREAM_ERROR`, `WS_UPSTREAM_NOT_OPEN`, `WS_SEND_FAILED`, `WS_INVALID_JSON`,
    /// `WS_PROTOCOL_ERROR`, `WS_BINARY_UNSUPPORTED`, `WS_FRAME_TOO_LARGE` or
    /// `WS_REPLAY_GAP`.
    pub code: String,
    /// For people.
    #[serde(default)]
    pub message: String,
}

/// The `type` of an envelope.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
#[non_exhaustive]
pub enum WsEnvelopeKind {
    /// `session.opened`: payload `{upstreamUrl, subprotocol?}`.
    Opened,
    /// `session.inbound`: a message from upstream.
    Inbound,
    /// `session.outbound`: a message sent upstream (the echo of a `session.send`).
    Outbound,
    /// `session.closed`: payload `{code, reason, wasClean}`; the session is over.
    Closed,
    /// `session.error`: see [`WsEnvelope::error`].
    Error,
    /// `session.replay.end`: payload `{afterSeq, replayed, gap}`; live envelopes follow.
    ReplayEnd,
    /// A type this client does not know.
    Other(String),
}

impl WsEnvelopeKind {
    /// The wire name (`session.inbound`).
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            WsEnvelopeKind::Other(other) => other,
            known => known.known().map_or("", SessionEnvelopeKind::as_str),
        }
    }

    /// Envelopes of this type are kept for replay, so their `seq` is the session's
    /// numbering (`session.error` may be for one socket only).
    pub(super) fn is_retained(&self) -> bool {
        self.known().is_some_and(SessionEnvelopeKind::is_retained)
    }

    /// The protocol's kind; `None` for [`Other`](WsEnvelopeKind::Other).
    fn known(&self) -> Option<SessionEnvelopeKind> {
        match self {
            WsEnvelopeKind::Opened => Some(SessionEnvelopeKind::Opened),
            WsEnvelopeKind::Inbound => Some(SessionEnvelopeKind::Inbound),
            WsEnvelopeKind::Outbound => Some(SessionEnvelopeKind::Outbound),
            WsEnvelopeKind::Closed => Some(SessionEnvelopeKind::Closed),
            WsEnvelopeKind::Error => Some(SessionEnvelopeKind::Error),
            WsEnvelopeKind::ReplayEnd => Some(SessionEnvelopeKind::ReplayEnd),
            WsEnvelopeKind::Other(_) => None,
        }
    }
}

impl From<SessionEnvelopeKind> for WsEnvelopeKind {
    fn from(kind: SessionEnvelopeKind) -> Self {
        match kind {
            SessionEnvelopeKind::Opened => WsEnvelopeKind::Opened,
            SessionEnvelopeKind::Inbound => WsEnvelopeKind::Inbound,
            SessionEnvelopeKind::Outbound => WsEnvelopeKind::Outbound,
            SessionEnvelopeKind::Closed => WsEnvelopeKind::Closed,
            SessionEnvelopeKind::Error => WsEnvelopeKind::Error,
            SessionEnvelopeKind::ReplayEnd => WsEnvelopeKind::ReplayEnd,
        }
    }
}

impl From<String> for WsEnvelopeKind {
    fn from(kind: String) -> Self {
        SessionEnvelopeKind::from_name(&kind).map_or(WsEnvelopeKind::Other(kind), WsEnvelopeKind::from)
    }
}

impl std::fmt::Display for WsEnvelopeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
