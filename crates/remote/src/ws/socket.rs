//! The control socket of a session: its sending half (commands), its receiving half
//! (envelopes), and the socket that is both.

use std::ops::Deref;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use futures_util::{Stream, StreamExt as _};
use serde::Serialize;
use serde_json::value::to_raw_value;
use volley_protocol::{PayloadType, SessionCommand};

use super::envelope::WsEnvelope;
use crate::websocket::{WsClose, WsError, WsMessage, WsReceiver, WsSender};

/// The control socket of a session: commands out, envelopes in (a stream that ends
/// when the server closes the socket; [`close_frame`](WsSessionSocket::close_frame)
/// then says why). The commands are its sender's, through `Deref`
/// ([`send_text`](WsSessionSender::send_text), [`close`](WsSessionSender::close), …);
/// [`split`](WsSessionSocket::split) gives the halves to different tasks.
#[derive(Debug)]
pub struct WsSessionSocket {
    sender: WsSessionSender,
    receiver: WsSessionReceiver,
}

impl Deref for WsSessionSocket {
    type Target = WsSessionSender;

    fn deref(&self) -> &WsSessionSender {
        &self.sender
    }
}

impl WsSessionSocket {
    /// The socket of a control connection; `seen` is its handle's record of the last
    /// `seq` received.
    pub(super) fn new(sender: WsSender, receiver: WsReceiver, seen: Arc<AtomicU64>) -> Self {
        Self {
            sender: WsSessionSender { socket: sender },
            receiver: WsSessionReceiver { socket: receiver, seen, close: None, ended: false },
        }
    }

    /// A handle that sends on this socket (clones share it).
    #[must_use]
    pub fn sender(&self) -> WsSessionSender {
        self.sender.clone()
    }

    /// The largest `seq` received so far by the sockets of this session's handle (see
    /// [`WsSessionHandle::last_seq`](super::WsSessionHandle::last_seq)).
    #[must_use]
    pub fn last_seq(&self) -> u64 {
        self.receiver.last_seq()
    }

    /// The server's close frame of this socket, once the stream has ended with one:
    /// 1000 session closed or socket replaced, 1001 idle timeout or shutdown, 1008
    /// session gone, 1011 internal error, 1013 too slow or at capacity (reconnect
    /// with [`last_seq`](WsSessionSocket::last_seq)).
    #[must_use]
    pub fn close_frame(&self) -> Option<&WsClose> {
        self.receiver.close_frame()
    }

    /// The sending and the receiving halves, for different tasks.
    #[must_use]
    pub fn split(self) -> (WsSessionSender, WsSessionReceiver) {
        (self.sender, self.receiver)
    }
}

impl Stream for WsSessionSocket {
    type Item = Result<WsEnvelope, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.receiver).poll_next(cx)
    }
}

/// The sending half of a control socket.
#[derive(Debug, Clone)]
pub struct WsSessionSender {
    socket: WsSender,
}

impl WsSessionSender {
    /// Sends a text message upstream (`session.send`, `payloadType: "text"`).
    pub async fn send_text(&self, text: impl Into<String>) -> Result<(), WsError> {
        let text: String = text.into();
        let payload = to_raw_value(&text).map_err(|error| WsError::Connection(error.to_string()))?;
        self.command(&SessionCommand::Send { payload_type: PayloadType::Text, payload: &payload }).await
    }

    /// Sends `value` upstream as JSON text (`session.send`, `payloadType: "json"`): the
    /// text `serde_json` writes for it, fields in their order.
    pub async fn send_json(&self, value: &impl Serialize) -> Result<(), WsError> {
        let payload = to_raw_value(value).map_err(|error| WsError::Connection(error.to_string()))?;
        self.command(&SessionCommand::Send { payload_type: PayloadType::Json, payload: &payload }).await
    }

    /// Keeps the session from idling (`session.ping`); nothing answers it.
    pub async fn ping(&self) -> Result<(), WsError> {
        self.command(&SessionCommand::Ping).await
    }

    /// Closes the upstream connection (`session.close`; the server takes 1000 and
    /// 3000–4999): the server answers with `session.closed`, then closes the control
    /// socket with 1000 and ends the session.
    pub async fn close(&self, code: u16, reason: &str) -> Result<(), WsError> {
        self.command(&SessionCommand::Close { code, reason }).await
    }

    /// Closes this control socket only: the session stays open upstream and keeps
    /// what arrives for the next [`WsSessionHandle::connect`](super::WsSessionHandle::connect).
    pub async fn disconnect(&self) -> Result<(), WsError> {
        self.socket.close(1000, "").await
    }

    async fn command(&self, command: &SessionCommand<'_>) -> Result<(), WsError> {
        let text = serde_json::to_string(command).map_err(|error| WsError::Connection(error.to_string()))?;
        self.socket.send_text(text).await
    }
}

/// The receiving half of a control socket: the session's envelopes as they arrive.
#[derive(Debug)]
pub struct WsSessionReceiver {
    socket: WsReceiver,
    seen: Arc<AtomicU64>,
    close: Option<WsClose>,
    ended: bool,
}

impl WsSessionReceiver {
    /// See [`WsSessionSocket::last_seq`].
    #[must_use]
    pub fn last_seq(&self) -> u64 {
        self.seen.load(Ordering::Acquire)
    }

    /// See [`WsSessionSocket::close_frame`].
    #[must_use]
    pub fn close_frame(&self) -> Option<&WsClose> {
        self.close.as_ref()
    }
}

impl Stream for WsSessionReceiver {
    type Item = Result<WsEnvelope, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if self.ended {
                return Poll::Ready(None);
            }
            let message = match self.socket.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(message) => message,
            };
            let item = match message {
                None => {
                    self.ended = true;
                    return Poll::Ready(None);
                }
                Some(Ok(WsMessage::Text(text))) => match WsEnvelope::parse(&text) {
                    Ok(envelope) => {
                        if envelope.kind.is_retained() {
                            self.seen.fetch_max(envelope.seq, Ordering::AcqRel);
                        }
                        Ok(envelope)
                    }
                    Err(error) => Err(WsError::Connection(format!(
                        "the execution server sent a message that is not a session envelope: {error}"
                    ))),
                },
                // A control socket sends no definition's messages of its own.
                Some(Ok(WsMessage::Pong(_) | WsMessage::Sent(_))) => continue,
                Some(Ok(WsMessage::Close(frame))) => {
                    self.close = frame;
                    self.ended = true;
                    return Poll::Ready(None);
                }
                Some(Err(WsError::Binary { len })) => Err(WsError::Connection(format!(
                    "the execution server sent a binary message of {len} bytes; control sockets carry JSON text"
                ))),
                Some(Err(error)) => Err(error),
            };
            return Poll::Ready(Some(item));
        }
    }
}
