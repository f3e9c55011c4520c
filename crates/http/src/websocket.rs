//! WebSocket connections on sockets of their own (tokio-tungstenite): the handshake
//! (headers, cookies, subprotocols, TLS, proxies, connect timeout) and the connection's
//! two halves, an [`Outlet`] on the socket's sink and a [`MessageStream`] of what it
//! reads. The contract's [`WebSocket`] holds them; `HttpTransport::websocket` opens them.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt as _, Stream, StreamExt as _};
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};
use volley_transport::TransportError;
use volley_transport::network;
use volley_transport::transport::{BoxFuture, TlsFor, host_of, install_crypto_provider, tls_message};
use volley_transport::websocket::{
    ConnectFailure, Handshake, Outgoing, Outlet, WebSocket, WsClose, WsConnect, WsError, WsMessage,
};

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens a connection for `connect`: a refused handshake is kept with its status and
/// body (the execution server's control sockets answer refusals with its `{"error": …}`
/// body).
pub(crate) async fn handshake(connect: WsConnect<'_>) -> Result<Handshake, ConnectFailure> {
    let WsConnect { url, headers, validate_ssl, network, timeout } = connect;
    let host = host_of(url);
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
            let tls = TlsFor { url, network: Some(network), validate_ssl, alpn: &[b"http/1.1"] };
            Some(Connector::Rustls(Arc::new(crate::tls::for_connection(tls)?)))
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
                let tunnel = volley_transport::tunnel::open(proxy, url).await?;
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
    let socket = WebSocket::from_backend(
        Arc::new(SocketOutlet(tokio::sync::Mutex::new(sink))),
        Box::pin(Received { stream, closed: false }),
        protocol,
    );
    Ok(Handshake { socket, status: response.status(), headers: response.headers().clone() })
}

/// The sending half of a connection's socket.
struct SocketOutlet(tokio::sync::Mutex<SplitSink<Socket, Message>>);

impl Outlet for SocketOutlet {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), WsError>> {
        let message = match message {
            Outgoing::Text(text) => Message::text(text),
            Outgoing::Ping(payload) => Message::Ping(payload),
            Outgoing::Close(code, reason) => {
                Message::Close(Some(CloseFrame { code: CloseCode::from(code), reason: reason.into() }))
            }
        };
        Box::pin(async move {
            self.0.lock().await.send(message).await.map_err(|error| match error {
                tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => WsError::Closed,
                other => WsError::Connection(other.to_string()),
            })
        })
    }
}

/// The receiving half of a connection's socket: its messages, ending after the close
/// frame or the first error (`closed`).
struct Received {
    stream: SplitStream<Socket>,
    closed: bool,
}

impl Stream for Received {
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
                return TransportError::Tls { host: host.to_owned(), message: tls_message(tls) };
            }
            let message = io.to_string();
            if message.contains("failed to lookup address") || message.contains("Name or service not known") {
                return TransportError::Dns { host: host.to_owned(), message };
            }
            TransportError::Other { message: format!("{host}: {message}") }
        }
        tungstenite::Error::Tls(tls) => {
            let message = match &tls {
                tungstenite::error::TlsError::Rustls(inner) => tls_message(inner),
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
    install_crypto_provider();
    if !validate_ssl {
        return Ok(Arc::clone(UNCHECKED.get_or_init(|| {
            let mut config = rustls::ClientConfig::builder()
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(crate::tls::AcceptAnyCertificate::new()))
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Arc::new(config)
        })));
    }
    let built = CHECKED.get_or_init(|| {
        crate::tls::rustls_config(&network::TlsChoice::default(), true, &[b"http/1.1"])
            .map(Arc::new)
            .map_err(|error| error.to_string())
    });
    built.clone().map_err(|message| TransportError::Other { message: format!("cannot set up TLS: {message}") })
}
