//! WebSocket connections: the handshake (headers, cookies, subprotocols, TLS, connect
//! timeout) and the connection a response (the engine's `Response`) hands out — text and
//! JSON messages out, a stream of messages in, ping, close.
//!
//! Binary frames are not part of protocol 1.1: one that arrives is an error item of
//! the stream ([`WsError::Binary`]), and the stream goes on.
//!
//! A connection has one of two backends: its own socket (a local run), or something
//! else that sends and receives messages for it (a session owned by the execution
//! server, see `remote::ws_adapter`): an `Outlet` and a stream of messages.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt as _, Stream, StreamExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use crate::error::TransportError;
use crate::exchange::BoxFuture;
pub use crate::network::AcceptAnyCertificate;

mod sending;

pub use sending::WsOutgoing;

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

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
    backend: SenderBackend,
}

#[derive(Clone)]
enum SenderBackend {
    /// The connection's own socket.
    Socket(Arc<tokio::sync::Mutex<SplitSink<Socket, Message>>>),
    /// Something that sends for the connection (a server-owned session).
    Outlet(Arc<dyn Outlet>),
}

/// What a connection sends, whatever carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outgoing {
    Text(String),
    Ping(Bytes),
    /// A close code and a reason of at most 123 bytes.
    Close(u16, String),
}

/// Sends for a connection that has no socket of its own.
pub trait Outlet: Send + Sync {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), WsError>>;
}

/// The messages of a connection that has no socket of its own.
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
        let sink = match &self.backend {
            SenderBackend::Outlet(outlet) => return outlet.send(message).await,
            SenderBackend::Socket(sink) => sink,
        };
        let message = match message {
            Outgoing::Text(text) => Message::text(text),
            Outgoing::Ping(payload) => Message::Ping(payload),
            Outgoing::Close(code, reason) => {
                Message::Close(Some(CloseFrame { code: CloseCode::from(code), reason: reason.into() }))
            }
        };
        sink.lock().await.send(message).await.map_err(|error| match error {
            tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => WsError::Closed,
            other => WsError::Connection(other.to_string()),
        })
    }
}

/// The receiving half of a connection: a stream of messages that ends after the close.
pub struct WsReceiver {
    backend: ReceiverBackend,
}

enum ReceiverBackend {
    /// The connection's own socket; `closed` once its close frame or error came.
    Socket { stream: SplitStream<Socket>, closed: bool },
    /// Messages that something else receives for the connection.
    Stream(MessageStream),
}

impl std::fmt::Debug for WsReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("WsReceiver");
        if let ReceiverBackend::Socket { closed, .. } = &self.backend {
            debug.field("closed", closed);
        }
        debug.finish_non_exhaustive()
    }
}

impl Stream for WsReceiver {
    type Item = Result<WsMessage, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let (stream, closed) = match &mut self.backend {
            ReceiverBackend::Stream(messages) => return messages.as_mut().poll_next(cx),
            ReceiverBackend::Socket { stream, closed } => (stream, closed),
        };
        loop {
            if *closed {
                return Poll::Ready(None);
            }
            let message = match stream.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(error))) => {
                    *closed = true;
                    return match error {
                        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => Poll::Ready(None),
                        other => Poll::Ready(Some(Err(WsError::Connection(other.to_string())))),
                    };
                }
                Poll::Ready(Some(Ok(message))) => message,
            };
            let item = match message {
                Message::Text(text) => Ok(WsMessage::Text(text.as_str().to_owned())),
                Message::Binary(bytes) => Err(WsError::Binary { len: bytes.len() }),
                Message::Pong(payload) => Ok(WsMessage::Pong(payload)),
                Message::Close(frame) => {
                    *closed = true;
                    Ok(WsMessage::Close(
                        frame
                            .map(|frame| WsClose { code: frame.code.into(), reason: frame.reason.as_str().to_owned() }),
                    ))
                }
                // Pings are answered by the library; raw frames are never read.
                Message::Ping(_) | Message::Frame(_) => continue,
            };
            return Poll::Ready(Some(item));
        }
    }
}

impl WebSocket {
    /// A connection without a socket of its own: `outlet` sends, `messages` are what
    /// arrives, `protocol` the subprotocol chosen.
    pub fn from_backend(outlet: Arc<dyn Outlet>, messages: MessageStream, protocol: Option<String>) -> Self {
        Self {
            sender: WsSender { backend: SenderBackend::Outlet(outlet) },
            receiver: WsReceiver { backend: ReceiverBackend::Stream(messages) },
            protocol,
        }
    }
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

/// Opens a connection: the handshake with `headers` (cookies and `Sec-WebSocket-Protocol`
/// included by the caller), within `timeout`.
pub async fn connect(
    url: &url::Url,
    headers: &http::HeaderMap,
    validate_ssl: bool,
    network: Option<&crate::network::Network>,
    timeout: Duration,
) -> Result<Handshake, TransportError> {
    handshake(url, headers, validate_ssl, network, timeout).await.map_err(TransportError::from)
}

/// [`connect`], a refused handshake kept with its status and body (the execution
/// server's control sockets answer refusals with its `{"error": …}` body).
pub async fn handshake(
    url: &url::Url,
    headers: &http::HeaderMap,
    validate_ssl: bool,
    network: Option<&crate::network::Network>,
    timeout: Duration,
) -> Result<Handshake, ConnectFailure> {
    let host = crate::error::host_of(url);
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|error| TransportError::Other { message: format!("invalid WebSocket URL `{url}`: {error}") })?;
    for (name, value) in headers {
        // The handshake headers are the library's; everything else is the request's.
        if !name.as_str().starts_with("sec-websocket-") || name == "sec-websocket-protocol" {
            request.headers_mut().append(name.clone(), value.clone());
        }
    }
    let connector = match (url.scheme(), network) {
        ("wss", None) => Some(Connector::Rustls(tls_config(validate_ssl)?)),
        // CA bundles and the client certificate chosen for this host; a new
        // configuration per connection, as sockets are few and long-lived.
        ("wss", Some(network)) => {
            let choice = crate::network::TlsChoice::for_url(network, url)?;
            let config = crate::network::rustls_config(&choice, validate_ssl, &[b"http/1.1"])?;
            Some(Connector::Rustls(Arc::new(config)))
        }
        _ => None,
    };
    // 16 KiB read buffers instead of tungstenite's 128 KiB: a server holding a thousand
    // sessions keeps a thousand of them; larger messages still grow the buffer.
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default().read_buffer_size(16 * 1024);
    let proxy = network.and_then(|network| network.proxies.as_ref()).and_then(|proxies| proxies.for_url(url));
    let connecting = async {
        match &proxy {
            None => tokio_tungstenite::connect_async_tls_with_config(request, Some(config), true, connector)
                .await
                .map_err(|error| classify(error, &host)),
            Some(proxy) => {
                let tunnel = tunnel(proxy, url).await?;
                tokio_tungstenite::client_async_tls_with_config(request, tunnel, Some(config), connector)
                    .await
                    .map_err(|error| classify(error, &host))
            }
        }
    };
    // Boxed: both ways of connecting in one future would make every caller's future large.
    let (socket, response) = tokio::time::timeout(timeout, Box::pin(connecting))
        .await
        .map_err(|_| TransportError::HandshakeTimeout { after: timeout })??;
    let protocol =
        response.headers().get("sec-websocket-protocol").and_then(|value| value.to_str().ok()).map(str::to_owned);
    let (sink, stream) = socket.split();
    let socket = WebSocket {
        sender: WsSender { backend: SenderBackend::Socket(Arc::new(tokio::sync::Mutex::new(sink))) },
        receiver: WsReceiver { backend: ReceiverBackend::Socket { stream, closed: false } },
        protocol,
    };
    Ok(Handshake { socket, status: response.status(), headers: response.headers().clone() })
}

/// A TCP connection to `url`'s host through the HTTP proxy `proxy` (`CONNECT`, with
/// the proxy URL's credentials as `Proxy-Authorization: Basic`), as browsers open
/// WebSockets through proxies.
pub async fn tunnel(proxy: &str, url: &url::Url) -> Result<tokio::net::TcpStream, ConnectFailure> {
    use base64::Engine as _;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let shown = crate::network::without_password(proxy);
    let failed = |message: String| ConnectFailure::Transport(TransportError::Proxy { proxy: shown.clone(), message });
    let parsed = url::Url::parse(proxy).map_err(|error| failed(format!("not a proxy URL: {error}")))?;
    if parsed.scheme() != "http" {
        return Err(failed(format!(
            "WebSocket and gRPC connections go through `http://` proxies only, not `{}://`",
            parsed.scheme()
        )));
    }
    let (Some(proxy_host), Some(proxy_port)) = (parsed.host_str(), parsed.port_or_known_default()) else {
        return Err(failed("the proxy URL has no host".to_owned()));
    };
    let mut stream = tokio::net::TcpStream::connect((proxy_host, proxy_port)).await.map_err(|error| {
        if error.kind() == std::io::ErrorKind::ConnectionRefused {
            failed("the proxy refused the connection (is it running, and is the port right?)".to_owned())
        } else {
            failed(error.to_string())
        }
    })?;
    let target = crate::error::host_of(url);
    let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if !parsed.username().is_empty() {
        let decode = |text: &str| percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned();
        let credentials = format!("{}:{}", decode(parsed.username()), decode(parsed.password().unwrap_or("")));
        let token = base64::engine::general_purpose::STANDARD.encode(credentials);
        head.push_str("Proxy-Authorization: Basic ");
        head.push_str(&token);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.map_err(|error| failed(error.to_string()))?;
    // The answer's head, byte by byte: nothing of the tunnelled stream may be read here.
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        if answer.len() > 16 * 1024 {
            return Err(failed("the proxy's answer to CONNECT has no end".to_owned()));
        }
        let byte = stream.read_u8().await.map_err(|error| failed(format!("the proxy closed the tunnel: {error}")))?;
        answer.push(byte);
    }
    let status_line = String::from_utf8_lossy(&answer).lines().next().unwrap_or_default().to_owned();
    let status = status_line.split(' ').nth(1).unwrap_or_default();
    if !status.starts_with('2') {
        return Err(failed(format!("the proxy answered CONNECT with `{}`", status_line.trim())));
    }
    Ok(stream)
}

fn classify(error: tungstenite::Error, host: &str) -> ConnectFailure {
    let error = match error {
        tungstenite::Error::Http(response) => {
            let status = response.status().as_u16();
            return ConnectFailure::Refused { status, body: response.into_body().unwrap_or_default() };
        }
        other => other,
    };
    ConnectFailure::Transport(classify_transport(error, host))
}

fn classify_transport(error: tungstenite::Error, host: &str) -> TransportError {
    match error {
        tungstenite::Error::Io(io) => {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return TransportError::ConnectionRefused { host: host.to_owned() };
            }
            if let Some(tls) = io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
                return TransportError::Tls { host: host.to_owned(), message: crate::error::tls_message(tls) };
            }
            let message = io.to_string();
            if message.contains("failed to lookup address") || message.contains("Name or service not known") {
                return TransportError::Dns { host: host.to_owned(), message };
            }
            TransportError::Other { message: format!("{host}: {message}") }
        }
        tungstenite::Error::Tls(tls) => {
            let message = match &tls {
                tungstenite::error::TlsError::Rustls(inner) => crate::error::tls_message(inner),
                other => other.to_string(),
            };
            TransportError::Tls { host: host.to_owned(), message }
        }
        other => TransportError::Other { message: format!("{host}: WebSocket handshake failed: {other}") },
    }
}

/// The rustls configuration of `wss://` connections, built once per process: the
/// platform's verifier (as for HTTPS), or none at all for `validate_ssl: false`.
fn tls_config(validate_ssl: bool) -> Result<Arc<rustls::ClientConfig>, TransportError> {
    static CHECKED: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    static UNCHECKED: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    crate::network::install_crypto_provider();
    if !validate_ssl {
        return Ok(Arc::clone(UNCHECKED.get_or_init(|| {
            let mut config = rustls::ClientConfig::builder()
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate::new()))
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Arc::new(config)
        })));
    }
    let built = CHECKED.get_or_init(|| {
        crate::network::rustls_config(&crate::network::TlsChoice::default(), true, &[b"http/1.1"])
            .map(Arc::new)
            .map_err(|error| error.to_string())
    });
    built.clone().map_err(|message| TransportError::Other { message: format!("cannot set up TLS: {message}") })
}
