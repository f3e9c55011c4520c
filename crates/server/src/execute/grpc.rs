//! The response messages of a gRPC call: told to observers as `grpcMessage` and, on
//! `POST /execute/sse`, handed to the relay that streams them.

use std::sync::atomic::{AtomicUsize, Ordering};

use volley_engine::{CancellationToken, Response};
use volley_protocol::{GrpcMessage, ObserverEvent};

use crate::hub::Emitter;

/// What `POST /execute/sse` needs of an execution it relays: the response messages of a
/// gRPC call as they come, and a way to stop the call when its client has gone.
#[derive(Debug)]
pub(crate) struct Relay {
    /// Each response message: its number from 1, its proto3 JSON (secrets hidden).
    pub(crate) messages: tokio::sync::mpsc::UnboundedSender<(usize, serde_json::Value)>,
    pub(crate) cancel: CancellationToken,
}

/// Where the response messages of a gRPC call go: the observers (`grpcMessage`) and the
/// `/execute/sse` relay when there is one. Those of a streaming response as they arrive,
/// the rest (all of a unary call's) once the call has ended.
pub(super) struct GrpcMessages {
    emitter: Emitter,
    relay: Option<tokio::sync::mpsc::UnboundedSender<(usize, serde_json::Value)>>,
    told: AtomicUsize,
}

impl GrpcMessages {
    pub(super) fn new(emitter: Emitter, relay: Option<&Relay>) -> Self {
        Self { emitter, relay: relay.map(|relay| relay.messages.clone()), told: AtomicUsize::new(0) }
    }

    pub(super) fn tell(&self, number: usize, message: serde_json::Value) {
        self.told.fetch_max(number, Ordering::Relaxed);
        if self.emitter.is_heard() {
            let text = message.to_string();
            let preview = crate::ws::cut(&text, crate::ws::OBSERVER_PREVIEW);
            self.emitter.emit(ObserverEvent::GrpcMessage(GrpcMessage {
                number,
                byte_length: text.len(),
                preview: preview.to_owned(),
                truncated: preview.len() < text.len(),
            }));
        }
        if let Some(relay) = &self.relay {
            // The relay is gone when its client is: the call is being cancelled.
            let _ = relay.send((number, message));
        }
    }

    /// The messages of `response` not told while the call ran.
    pub(super) fn tell_rest(&self, response: &Response) {
        let Some(grpc) = response.grpc() else { return };
        let told = self.told.load(Ordering::Relaxed);
        for (index, message) in grpc.messages.iter().enumerate().skip(told) {
            self.tell(index + 1, response.redactor().redact_json(message));
        }
    }
}
