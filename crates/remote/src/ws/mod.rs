//! Server-owned WebSocket sessions (`POST /execute/ws`): the execution server holds
//! the upstream connection open; a [`WsSessionHandle`] names the session and opens its
//! control socket (`GET /ws/session/{id}?afterSeq=N`), a [`WsSessionSocket`] that sends
//! commands and receives the session's numbered [`WsEnvelope`]s.
//!
//! [`RemoteClient::run`] on a WebSocket definition opens a session the same way and
//! hands it out as a [`WebSocket`](crate::websocket::WebSocket) (see `ws_adapter`).

mod envelope;
mod handle;
mod options;
mod socket;

pub use envelope::{WsEnvelope, WsEnvelopeError, WsEnvelopeKind};
pub(crate) use handle::Opening;
pub use handle::{WsSessionHandle, WsSessionInfo};
pub use options::WsSessionOptions;
pub use socket::{WsSessionReceiver, WsSessionSender, WsSessionSocket};

#[cfg(test)]
use handle::{control_url, session_from_answer};

#[cfg(test)]
mod tests;
