//! The observer's wire envelope: one frame of `/event/ws` read, its payload typed as the
//! protocol's event when this observer knows its type, skipped (not refused) otherwise.

use serde::Deserialize;
use serde_json::Value;
use volley_protocol::ObserverEvent;

/// One observer event as the server sends it (docs/protocol.md, "Observer events"), its
/// payload read as the protocol's event when this observer knows its type.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(from = "RawEnvelope")]
pub struct Envelope {
    /// The `type` as sent (for an event this observer does not know too).
    pub kind: String,
    pub ts: u64,
    pub run_id: Option<String>,
    pub session_id: Option<String>,
    pub flow_id: Option<String>,
    pub req_exec_id: Option<String>,
    pub seq: Option<u64>,
    /// The typed event: `None` for a type this observer does not know, or a payload of
    /// another shape (skipped, not an error: its `seq` still counts).
    pub event: Option<ObserverEvent>,
}

impl Envelope {
    /// Parses one text frame of `/event/ws`.
    ///
    /// # Errors
    /// When the frame is not an envelope.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The stream its `seq` counts in: its flow, else its run.
    #[must_use]
    pub fn stream(&self) -> Option<&str> {
        self.flow_id.as_deref().or(self.run_id.as_deref())
    }
}

/// An envelope as read, before its payload is typed. The protocol's `ObserverEnvelope`
/// refuses an unknown `type`, which an observer skips instead, and needs a `seq`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEnvelope {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    ts: u64,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    flow_id: Option<String>,
    #[serde(default)]
    req_exec_id: Option<String>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    payload: Value,
}

impl From<RawEnvelope> for Envelope {
    fn from(raw: RawEnvelope) -> Self {
        let event = ObserverEvent::from_owned_parts(&raw.kind, raw.payload).ok();
        Self {
            kind: raw.kind,
            ts: raw.ts,
            run_id: raw.run_id,
            session_id: raw.session_id,
            flow_id: raw.flow_id,
            req_exec_id: raw.req_exec_id,
            seq: raw.seq,
            event,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_parse_with_missing_fields() {
        let parsed =
            Envelope::parse(r#"{"type":"flowStarted","seq":1,"flowId":"f","payload":{"label":"x"}}"#).expect("parse");
        assert_eq!(parsed.kind, "flowStarted");
        assert_eq!(parsed.stream(), Some("f"));
        assert!(Envelope::parse("[]").is_err());
    }
}
