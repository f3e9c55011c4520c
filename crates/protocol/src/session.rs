//! The `type`s of the envelopes a WebSocket session's control socket sends
//! (`GET /ws/session/{id}`), and which of them are kept for replay.

use serde::{Deserialize, Serialize};

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
        assert!(SessionEnvelopeKind::Closed.is_retained());
        assert!(!SessionEnvelopeKind::ReplayEnd.is_retained());
    }
}
