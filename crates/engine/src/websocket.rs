//! WebSocket connections: the handshake (headers, cookies, subprotocols, TLS, connect
//! timeout) and the connection a [`Response`](crate::Response) hands out — text and
//! JSON messages out, a stream of messages in, ping, close.
//!
//! Binary frames are not part of protocol 1.1: one that arrives is an error item of
//! the stream ([`WsError::Binary`]), and the stream goes on.

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

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// A message from the other end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WsMessage {
    /// A text message.
    Text(String),
    /// The answer to a [`WsSender::ping`].
    Pong(Bytes),
    /// The other end closed the connection (the stream ends after it).
    Close(Option<WsClose>),
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
/// two halves to different tasks.
///
/// ```no_run
/// # async fn example(response: volley_engine::Response) -> Result<(), Box<dyn std::error::Error>> {
/// use futures_util::StreamExt as _;
///
/// let mut socket = response.websocket().ok_or("not a WebSocket response")?;
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

    /// Sends a ping; the pong arrives as [`WsMessage::Pong`].
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
    sink: Arc<tokio::sync::Mutex<SplitSink<Socket, Message>>>,
}

impl std::fmt::Debug for WsSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsSender").finish_non_exhaustive()
    }
}

impl WsSender {
    /// Sends a text message.
    pub async fn send_text(&self, text: impl Into<String>) -> Result<(), WsError> {
        self.send(Message::text(text.into())).await
    }

    /// Sends `value` as a JSON text message.
    pub async fn send_json(&self, value: &impl Serialize) -> Result<(), WsError> {
        let text = serde_json::to_string(value).map_err(|error| WsError::Connection(error.to_string()))?;
        self.send_text(text).await
    }

    /// Sends a ping.
    pub async fn ping(&self, payload: impl Into<Bytes>) -> Result<(), WsError> {
        self.send(Message::Ping(payload.into())).await
    }

    /// Closes the connection with a code and a reason (the reason is cut to the 123
    /// bytes a close frame holds).
    pub async fn close(&self, code: u16, reason: &str) -> Result<(), WsError> {
        let mut end = reason.len().min(123);
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        let frame = CloseFrame { code: CloseCode::from(code), reason: reason[..end].to_owned().into() };
        self.send(Message::Close(Some(frame))).await
    }

    async fn send(&self, message: Message) -> Result<(), WsError> {
        self.sink.lock().await.send(message).await.map_err(|error| match error {
            tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => WsError::Closed,
            other => WsError::Connection(other.to_string()),
        })
    }
}

/// The receiving half of a connection: a stream of messages that ends after the close.
pub struct WsReceiver {
    stream: SplitStream<Socket>,
    closed: bool,
}

impl std::fmt::Debug for WsReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsReceiver").field("closed", &self.closed).finish_non_exhaustive()
    }
}

impl Stream for WsReceiver {
    type Item = Result<WsMessage, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if self.closed {
                return Poll::Ready(None);
            }
            let message = match self.stream.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(error))) => {
                    self.closed = true;
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
                    self.closed = true;
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

/// The handshake's response, for the [`Response`](crate::Response) of the request.
pub(crate) struct Handshake {
    pub(crate) socket: WebSocket,
    pub(crate) status: http::StatusCode,
    pub(crate) headers: http::HeaderMap,
}

/// Opens a connection: the handshake with `headers` (cookies and `Sec-WebSocket-Protocol`
/// included by the caller), within `timeout`.
pub(crate) async fn connect(
    url: &url::Url,
    headers: &http::HeaderMap,
    validate_ssl: bool,
    timeout: Duration,
) -> Result<Handshake, TransportError> {
    let host = crate::transport::host_of(url);
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
    let connector = if url.scheme() == "wss" { Some(Connector::Rustls(tls_config(validate_ssl)?)) } else { None };
    let connecting = tokio_tungstenite::connect_async_tls_with_config(request, None, true, connector);
    let (socket, response) = tokio::time::timeout(timeout, connecting)
        .await
        .map_err(|_| TransportError::Timeout { after: timeout })?
        .map_err(|error| classify(error, &host))?;
    let protocol =
        response.headers().get("sec-websocket-protocol").and_then(|value| value.to_str().ok()).map(str::to_owned);
    let (sink, stream) = socket.split();
    let socket = WebSocket {
        sender: WsSender { sink: Arc::new(tokio::sync::Mutex::new(sink)) },
        receiver: WsReceiver { stream, closed: false },
        protocol,
    };
    Ok(Handshake { socket, status: response.status(), headers: response.headers().clone() })
}

fn classify(error: tungstenite::Error, host: &str) -> TransportError {
    match error {
        tungstenite::Error::Http(response) => {
            let body = response.body().as_deref().map(String::from_utf8_lossy).unwrap_or_default();
            let body = body.trim();
            let excerpt: String = body.chars().take(200).collect();
            TransportError::Handshake {
                status: response.status().as_u16(),
                message: if excerpt.is_empty() { String::new() } else { format!(": {excerpt}") },
            }
        }
        tungstenite::Error::Io(io) => {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return TransportError::ConnectionRefused { host: host.to_owned() };
            }
            if let Some(tls) = io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
                return TransportError::Tls { host: host.to_owned(), message: tls.to_string() };
            }
            let message = io.to_string();
            if message.contains("failed to lookup address") || message.contains("Name or service not known") {
                return TransportError::Dns { host: host.to_owned(), message };
            }
            TransportError::Other { message: format!("{host}: {message}") }
        }
        tungstenite::Error::Tls(tls) => TransportError::Tls { host: host.to_owned(), message: tls.to_string() },
        other => TransportError::Other { message: format!("{host}: WebSocket handshake failed: {other}") },
    }
}

/// The rustls configuration of `wss://` connections, built once per process: the
/// platform's verifier (as for HTTPS), or none at all for `validate_ssl: false`.
fn tls_config(validate_ssl: bool) -> Result<Arc<rustls::ClientConfig>, TransportError> {
    static CHECKED: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    static UNCHECKED: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    crate::transport::install_crypto_provider();
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
        use rustls_platform_verifier::BuilderVerifierExt as _;
        let mut config = rustls::ClientConfig::builder()
            .with_platform_verifier()
            .map_err(|error| error.to_string())?
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    });
    built.clone().map_err(|message| TransportError::Other { message: format!("cannot set up TLS: {message}") })
}

/// `validate_ssl: false`: any certificate is accepted (signatures are still checked).
#[derive(Debug)]
struct AcceptAnyCertificate {
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl AcceptAnyCertificate {
    fn new() -> Self {
        Self { algorithms: rustls::crypto::ring::default_provider().signature_verification_algorithms }
    }
}

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
