//! WebSocket session envelopes never panic either side: `cargo +nightly fuzz run
//! ws_envelopes`. The input is read as a control socket's client message by the server,
//! and as a server's envelope (session and observer) by the remote client.
#![no_main]

use libfuzzer_sys::fuzz_target;
use volley_engine::remote::WsEnvelope;
use volley_protocol::{ObserverEnvelope, SessionEnvelopeKind};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = volley_server::fuzzing::control_message(&text);

    if let Ok(envelope) = WsEnvelope::parse(&text) {
        let _ = envelope.text();
        let _ = envelope.closed();
        let _ = SessionEnvelopeKind::from_name(envelope.kind.as_str());
    }
    // An observer envelope written again reads as the same envelope.
    if let Ok(envelope) = serde_json::from_str::<ObserverEnvelope>(&text) {
        let written = serde_json::to_string(&envelope).expect("an envelope is JSON");
        let again: ObserverEnvelope = serde_json::from_str(&written).expect("a written envelope reads");
        assert_eq!(again, envelope, "{written}");
    }
});
