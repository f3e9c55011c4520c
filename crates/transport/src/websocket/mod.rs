//! WebSocket connections as the engine and its callers see them: the connection a
//! response (the engine's `Response`) hands out — text and JSON messages out, a stream
//! of messages in, ping, close — and what opening one asks of a transport
//! ([`WsConnect`], [`Handshake`], [`ConnectFailure`]).
//!
//! Binary frames are not part of protocol 1.1: one that arrives is an error item of
//! the stream ([`WsError::Binary`]), and the stream goes on.
//!
//! A connection is whatever sends and receives its messages: an [`Outlet`] and a
//! [`MessageStream`]. The transport that opened it gives both (`volley-http`'s socket),
//! or something else does (a session owned by the execution server, see
//! `remote::ws_adapter`). So this crate holds no WebSocket client, and an edit of the
//! client builds its crate and the programs only.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::TransportError;
use crate::future::BoxFuture;

mod sending;

pub use sending::WsOutgoing;

/// A message from the other end, or one of the request's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsMessage {
    /// A text message.
    Text(String),
    /// The answer to a [`WsSender::ping`].
    Pong(Bytes),
    /// The other end closed the connection (the stream ends after it).
    Close(Option<WsClose>),
    /// A message of the request's definition (its body, `===` between messages), just
    /// sent (told as it goes out): in its place among the other end's messages.
    Sent(String),
}

impl WsMessage {
    /// The text of a text message parsed as JSON into `T`; `None` for other messages.
    pub fn json<T: DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        match self {
            WsMessage::Text(text) => Some(serde_json::from_str(text)),
            _ => None,
        }
    }
}

/// The code and reason of a close frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsClose {
    /// The close code (1000 is a normal closure).
    pub code: u16,
    /// The reason, possibly empty.
    pub reason: String,
}

/// A problem on an open connection.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum WsError {
    /// A binary frame arrived; protocol 1.1 carries text only. The connection stays open.
    #[error("a binary message of {len} bytes arrived; only text messages are supported")]
    Binary {
        /// Its length in bytes.
        len: usize,
    },
    /// The connection is closed: nothing more can be sent.
    #[error("the WebSocket connection is closed")]
    Closed,
    /// The connection failed (reset, protocol violation).
    #[error("WebSocket error: {0}")]
    Connection(String),
}

/// An open WebSocket connection: send with [`WebSocket::sender`] (or the shortcuts
/// here), receive by polling it as a stream of messages. [`WebSocket::split`] gives the
/// two halves to different tasks. The engine's `Response::websocket` hands one out.
///
/// ```no_run
/// # async fn example(mut socket: volley_transport::websocket::WebSocket) -> Result<(), Box<dyn std::error::Error>> {
/// use futures_util::StreamExt as _;
///
/// socket.send_text("hello").await?;
/// if let Some(message) = socket.next().await {
///     println!("{:?}", message?);
/// }
/// socket.close(1000, "done").await?;
/// # Ok(())
/// # }
/// ```
pub struct WebSocket {
    sender: WsSender,
    receiver: WsReceiver,
    protocol: Option<String>,
}

impl std::fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocket").field("protocol", &self.protocol).finish_non_exhaustive()
    }
}

impl WebSocket {
    /// The subprotocol the server chose among those asked for, if any.
    #[must_use]
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// A handle that sends on this connection (clones share it).
    #[must_use]
    pub fn sender(&self) -> WsSender {
        self.sender.clone()
    }

    /// Sends a text message.
    pub async fn send_text(&self, text: impl Into<String>) -> Result<(), WsError> {
        self.sender.send_text(text).await
    }

    /// Sends `value` as a JSON text message.
    pub async fn send_json(&self, value: &impl Serialize) -> Result<(), WsError> {
        self.sender.send_json(value).await
    }

    /// Sends a ping; the pong arrives as [`WsMessage::Pong`] (not on a session owned by
    /// the execution server, see [`WsSender::ping`]).
    pub async fn ping(&self, payload: impl Into<Bytes>) -> Result<(), WsError> {
        self.sender.ping(payload).await
    }

    /// Closes the connection with a code and a reason.
    pub async fn close(&self, code: u16, reason: &str) -> Result<(), WsError> {
        self.sender.close(code, reason).await
    }

    /// The sending and the receiving halves, for different tasks.
    #[must_use]
    pub fn split(self) -> (WsSender, WsReceiver) {
        (self.sender, self.receiver)
    }
}

impl Stream for WebSocket {
    type Item = Result<WsMessage, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.receiver).poll_next(cx)
    }
}

/// The sending half of a connection.
#[derive(Clone)]
pub struct WsSender {
    outlet: Arc<dyn Outlet>,
}

/// What a connection sends, whatever carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outgoing {
    Text(String),
    Ping(Bytes),
    /// A close code and a reason of at most 123 bytes.
    Close(u16, String),
}

/// Sends for a connection: its socket, or what carries its messages (a session owned by
/// the execution server).
pub trait Outlet: Send + Sync {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), WsError>>;
}

/// The messages that arrive on a connection, ending after the close.
pub type MessageStream = Pin<Box<dyn Stream<Item = Result<WsMessage, WsError>> + Send + Sync>>;

impl std::fmt::Debug for WsSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsSender").finish_non_exhaustive()
    }
}

impl WsSender {
    /// Sends a text message.
    pub async fn send_text(&self, text: impl Into<String>) -> Result<(), WsError> {
        self.send(Outgoing::Text(text.into())).await
    }

    /// Sends `value` as a JSON text message.
    pub async fn send_json(&self, value: &impl Serialize) -> Result<(), WsError> {
        let text = serde_json::to_string(value).map_err(|error| WsError::Connection(error.to_string()))?;
        self.send_text(text).await
    }

    /// Sends a ping. On a session owned by the execution server the ping only keeps
    /// the session from idling: no pong comes back.
    pub async fn ping(&self, payload: impl Into<Bytes>) -> Result<(), WsError> {
        self.send(Outgoing::Ping(payload.into())).await
    }

    /// Closes the connection with a code and a reason (the reason is cut to the 123
    /// bytes a close frame holds).
    pub async fn close(&self, code: u16, reason: &str) -> Result<(), WsError> {
        let mut end = reason.len().min(123);
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        self.send(Outgoing::Close(code, reason[..end].to_owned())).await
    }

    async fn send(&self, message: Outgoing) -> Result<(), WsError> {
        self.outlet.send(message).await
    }
}

/// The receiving half of a connection: a stream of messages that ends after the close.
pub struct WsReceiver {
    messages: MessageStream,
}

impl std::fmt::Debug for WsReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsReceiver").finish_non_exhaustive()
    }
}

impl Stream for WsReceiver {
    type Item = Result<WsMessage, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.messages.as_mut().poll_next(cx)
    }
}

impl WebSocket {
    /// A connection: `outlet` sends, `messages` are what arrives, `protocol` the
    /// subprotocol chosen.
    pub fn from_backend(outlet: Arc<dyn Outlet>, messages: MessageStream, protocol: Option<String>) -> Self {
        Self { sender: WsSender { outlet }, receiver: WsReceiver { messages }, protocol }
    }
}

/// What opening a connection asks of a transport ([`Transport::websocket`](crate::transport::Transport::websocket)):
/// the handshake with `headers` (cookies and `Sec-WebSocket-Protocol` included by the
/// caller), within `timeout`.
#[derive(Debug, Clone, Copy)]
pub struct WsConnect<'a> {
    /// The `ws://` or `wss://` URL.
    pub url: &'a url::Url,
    /// The request's headers.
    pub headers: &'a http::HeaderMap,
    /// `false` to accept any TLS certificate.
    pub validate_ssl: bool,
    /// CA bundles, client certificates and proxies; `None` for the platform's roots, no
    /// client certificate and no proxy.
    pub network: Option<&'a crate::network::Network>,
    /// How long the connection and the handshake may take.
    pub timeout: Duration,
}

/// The handshake's response, for the response (the engine's `Response`) of the request.
#[derive(Debug)]
pub struct Handshake {
    /// The open connection.
    pub socket: WebSocket,
    /// The status of the upgrade (101).
    pub status: http::StatusCode,
    /// The headers of the upgrade response.
    pub headers: http::HeaderMap,
}

/// Why a handshake opened no connection.
#[derive(Debug)]
pub enum ConnectFailure {
    /// The server answered without upgrading: its status and body.
    Refused { status: u16, body: Vec<u8> },
    /// The connection failed (refused, DNS, TLS, timeout, a broken handshake).
    Transport(TransportError),
}

impl From<TransportError> for ConnectFailure {
    fn from(error: TransportError) -> Self {
        ConnectFailure::Transport(error)
    }
}

impl From<ConnectFailure> for TransportError {
    fn from(failure: ConnectFailure) -> Self {
        match failure {
            ConnectFailure::Transport(error) => error,
            ConnectFailure::Refused { status, body } => {
                let body = String::from_utf8_lossy(&body);
                let excerpt: String = body.trim().chars().take(200).collect();
                TransportError::Handshake {
                    status,
                    message: if excerpt.is_empty() { String::new() } else { format!(": {excerpt}") },
                }
            }
        }
    }
}
