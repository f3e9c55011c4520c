//! A WebSocket session's control socket (`GET /ws/session/{id}`): the `type`s of the
//! envelopes it sends (and which are kept for replay), and the commands it takes.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::ErrorCode;
use crate::event::PayloadType;

/// The `type` of a control socket envelope (server → client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum SessionEnvelopeKind {
    /// `session.opened`: payload `{upstreamUrl, subprotocol?}`; `seq` 1.
    #[serde(rename = "session.opened")]
    Opened,
    /// `session.inbound`: a message from upstream.
    #[serde(rename = "session.inbound")]
    Inbound,
    /// `session.outbound`: a message sent upstream.
    #[serde(rename = "session.outbound")]
    Outbound,
    /// `session.closed`: payload `{code, reason, wasClean}`.
    #[serde(rename = "session.closed")]
    Closed,
    /// `session.error`: `error: {code, message}`.
    #[serde(rename = "session.error")]
    Error,
    /// `session.replay.end`: payload `{afterSeq, replayed, gap}`.
    #[serde(rename = "session.replay.end")]
    ReplayEnd,
}

impl SessionEnvelopeKind {
    /// The wire name (`session.inbound`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Opened => "session.opened",
            Self::Inbound => "session.inbound",
            Self::Outbound => "session.outbound",
            Self::Closed => "session.closed",
            Self::Error => "session.error",
            Self::ReplayEnd => "session.replay.end",
        }
    }

    /// The kind of a wire name; `None` for a name this protocol does not have.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Opened, Self::Inbound, Self::Outbound, Self::Closed, Self::Error, Self::ReplayEnd]
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    /// Whether envelopes of this type are kept for replay, so that their `seq` is the
    /// session's numbering (a `session.error` may be about one socket only, and
    /// `session.replay.end` always is).
    #[must_use]
    pub const fn is_retained(self) -> bool {
        matches!(self, Self::Opened | Self::Inbound | Self::Outbound | Self::Closed)
    }
}

/// The `payload` of `session.opened`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionOpened {
    pub upstream_url: String,
    /// When the upstream chose one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subprotocol: Option<String>,
}

/// The `payload` of `session.closed`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionClosed {
    pub code: u16,
    pub reason: String,
    pub was_clean: bool,
}

/// The `payload` of `session.replay.end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SessionReplayEnd {
    pub after_seq: u64,
    pub replayed: usize,
    /// Envelopes after `afterSeq` were no longer kept (a `WS_REPLAY_GAP` came first).
    pub gap: bool,
}

/// The `payload` of the `session.error` `WS_REPLAY_GAP`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ReplayGap {
    pub after_seq: u64,
    /// Reconnecting with `afterSeq = oldestAvailableSeq - 1` gets what is still kept.
    pub oldest_available_seq: u64,
}

/// The `error` of a `session.error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionError {
    pub code: ErrorCode,
    pub message: String,
}

/// The `type` of a command a control socket takes (client → server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SessionCommandKind {
    /// `session.send`: a message to send upstream.
    #[serde(rename = "session.send")]
    Send,
    /// `session.close`: close the upstream connection.
    #[serde(rename = "session.close")]
    Close,
    /// `session.ping`: keeps the session from idling; nothing answers it.
    #[serde(rename = "session.ping")]
    Ping,
}

impl SessionCommandKind {
    /// The wire name (`session.send`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Send => "session.send",
            Self::Close => "session.close",
            Self::Ping => "session.ping",
        }
    }

    /// The kind of a wire name; `None` for a name this protocol does not have.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Send, Self::Close, Self::Ping].into_iter().find(|kind| kind.as_str() == name)
    }
}

/// A command as a client writes it. A `json` payload is written as the given text, so
/// its keys keep their order and its numbers their spelling.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type")]
pub enum SessionCommand<'a> {
    /// `{"type": "session.send", "payloadType", "payload"}`.
    #[serde(rename = "session.send")]
    Send {
        #[serde(rename = "payloadType")]
        payload_type: PayloadType,
        /// A JSON string for `text`; any JSON text for `json`.
        payload: &'a RawValue,
    },
    /// `{"type": "session.close", "code", "reason"}`.
    #[serde(rename = "session.close")]
    Close { code: u16, reason: &'a str },
    /// `{"type": "session.ping"}`.
    #[serde(rename = "session.ping")]
    Ping,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_their_dotted_names() {
        for kind in [
            SessionEnvelopeKind::Opened,
            SessionEnvelopeKind::Inbound,
            SessionEnvelopeKind::Outbound,
            SessionEnvelopeKind::Closed,
            SessionEnvelopeKind::Error,
            SessionEnvelopeKind::ReplayEnd,
        ] {
            let json = serde_json::to_string(&kind).expect("serialise");
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(serde_json::from_str::<SessionEnvelopeKind>(&json).expect("deserialise"), kind);
            assert_eq!(SessionEnvelopeKind::from_name(kind.as_str()), Some(kind));
        }
        assert_eq!(SessionEnvelopeKind::from_name("session.send"), None);
        for kind in [SessionCommandKind::Send, SessionCommandKind::Close, SessionCommandKind::Ping] {
            assert_eq!(SessionCommandKind::from_name(kind.as_str()), Some(kind));
            assert_eq!(serde_json::to_string(&kind).expect("serialise"), format!("\"{}\"", kind.as_str()));
        }
        assert_eq!(SessionCommandKind::from_name("session.opened"), None);
        assert!(SessionEnvelopeKind::Closed.is_retained());
        assert!(!SessionEnvelopeKind::ReplayEnd.is_retained());
    }
}

#[cfg(test)]
mod payload_tests {
    use super::*;

    #[test]
    fn payloads_read_and_write_the_documented_json() {
        let texts = [
            r#"{"upstreamUrl":"ws://127.0.0.1:9000/chat","subprotocol":"chat.v1"}"#,
            r#"{"upstreamUrl":"ws://127.0.0.1:9000/chat"}"#,
        ];
        for text in texts {
            let opened: SessionOpened = serde_json::from_str(text).expect("reads");
            assert_eq!(serde_json::to_string(&opened).expect("writes"), text);
        }
        let closed: SessionClosed =
            serde_json::from_str(r#"{"code":1006,"reason":"","wasClean":false}"#).expect("reads");
        assert_eq!(closed.code, 1006);
        assert_eq!(serde_json::to_string(&closed).expect("writes"), r#"{"code":1006,"reason":"","wasClean":false}"#);
        let end = SessionReplayEnd { after_seq: 3, replayed: 0, gap: true };
        assert_eq!(serde_json::to_string(&end).expect("writes"), r#"{"afterSeq":3,"replayed":0,"gap":true}"#);
        let gap = ReplayGap { after_seq: 3, oldest_available_seq: 40 };
        assert_eq!(serde_json::to_string(&gap).expect("writes"), r#"{"afterSeq":3,"oldestAvailableSeq":40}"#);
        let error: SessionError =
            serde_json::from_str(r#"{"code":"WS_REPLAY_GAP","message":"envelopes after 3 are no longer kept"}"#)
                .expect("reads");
        assert_eq!(error.code, ErrorCode::WsReplayGap);
    }
}

#[cfg(test)]
mod command_tests {
    use serde_json::value::to_raw_value;

    use super::*;

    #[test]
    fn commands_are_written_as_documented() {
        let text = to_raw_value("hello").expect("raw");
        let send = SessionCommand::Send { payload_type: PayloadType::Text, payload: &text };
        assert_eq!(
            serde_json::to_string(&send).expect("writes"),
            r#"{"type":"session.send","payloadType":"text","payload":"hello"}"#
        );
        let json = RawValue::from_string(r#"{"b": 1.50, "a": [2]}"#.to_owned()).expect("raw");
        let send = SessionCommand::Send { payload_type: PayloadType::Json, payload: &json };
        assert_eq!(
            serde_json::to_string(&send).expect("writes"),
            r#"{"type":"session.send","payloadType":"json","payload":{"b": 1.50, "a": [2]}}"#,
            "the payload's own text"
        );
        let close = SessionCommand::Close { code: 4000, reason: "done" };
        assert_eq!(
            serde_json::to_string(&close).expect("writes"),
            r#"{"type":"session.close","code":4000,"reason":"done"}"#
        );
        assert_eq!(serde_json::to_string(&SessionCommand::Ping).expect("writes"), r#"{"type":"session.ping"}"#);
    }
}
