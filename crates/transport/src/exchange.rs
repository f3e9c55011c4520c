//! One exchange, as the engine hands it to a [`Transport`] and gets it back: the
//! contract every transport keeps (`volley-http`'s `HttpTransport`, a program's own), and
//! the transport installed for every client given none ([`install_default`]).

use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures_util::Stream;

use crate::error::TransportError;
pub use crate::future::BoxFuture;
use crate::network::Network;
use crate::websocket::{ConnectFailure, Handshake, WsConnect};

/// The body of a response, as it arrives.
pub type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, TransportError>> + Send>>;

/// One request as it goes on the wire.
#[derive(Debug, Clone)]
pub struct TransportRequest {
    /// The method.
    pub method: http::Method,
    /// The URL.
    pub url: url::Url,
    /// The headers, in order.
    pub headers: http::HeaderMap,
    /// The body (empty for none).
    pub body: Bytes,
    /// `false` to accept any TLS certificate.
    pub validate_ssl: bool,
    /// `Some(HTTP_2)` when the request line asked for `HTTP/2` (prior knowledge on plain
    /// `http://`), `Some(HTTP_11)` to keep HTTP/1.1; `None` to negotiate.
    pub version: Option<http::Version>,
    /// CA bundles, client certificates and proxies; `None` for the platform's roots, no
    /// client certificate and the environment's proxies.
    pub network: Option<Arc<Network>>,
}

/// The head of a response and its body stream.
pub struct TransportResponse {
    /// The status.
    pub status: http::StatusCode,
    /// The HTTP version used.
    pub version: http::Version,
    /// The headers, repeated ones kept.
    pub headers: http::HeaderMap,
    /// The body, as it arrives.
    pub body: BodyStream,
}

impl fmt::Debug for TransportResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransportResponse")
            .field("status", &self.status)
            .field("version", &self.version)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

/// Sends one request and returns the response head, opens WebSocket connections, and
/// configures the TLS of the connections its caller makes itself (gRPC). Implement it
/// to run requests through something else than the network (a recorder, another
/// client); Volley's programs install `volley-http`'s `HttpTransport`.
pub trait Transport: Send + Sync + fmt::Debug {
    /// Sends `request`; resolves once the response head has arrived.
    fn send(&self, request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>>;

    /// Opens a WebSocket connection: resolves once the handshake is done, or with the
    /// server's refusal (its status and body). A transport that opens none refuses
    /// every one before anything is sent, as this default does.
    fn websocket<'a>(&'a self, connect: WsConnect<'a>) -> BoxFuture<'a, Result<Handshake, ConnectFailure>> {
        let _ = connect;
        let message = format!("{self:?} opens no WebSocket connections");
        Box::pin(async { Err(ConnectFailure::Transport(TransportError::Other { message })) })
    }

    /// The TLS configuration of a connection its caller makes itself (a gRPC call's):
    /// what `network` chooses for `url` (CA bundles, client certificate), no certificate
    /// check for `validate_ssl: false`, and the ALPN protocols `alpn`. A transport that
    /// makes no TLS connections refuses, as this default does.
    fn tls(&self, tls: TlsFor<'_>) -> Result<rustls::ClientConfig, TransportError> {
        let _ = tls;
        Err(TransportError::Other { message: format!("{self:?} makes no TLS connections") })
    }
}

/// What [`Transport::tls`] configures: a connection to `url`.
#[derive(Debug, Clone, Copy)]
pub struct TlsFor<'a> {
    /// The URL connected to (its host chooses the client certificate).
    pub url: &'a url::Url,
    /// CA bundles and client certificates; `None` for the platform's roots and none.
    pub network: Option<&'a Network>,
    /// `false` to accept any certificate.
    pub validate_ssl: bool,
    /// The ALPN protocols, in order of preference (`h2` for gRPC).
    pub alpn: &'a [&'a [u8]],
}

impl<T: Transport + ?Sized> Transport for Arc<T> {
    fn send(&self, request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        (**self).send(request)
    }

    fn websocket<'a>(&'a self, connect: WsConnect<'a>) -> BoxFuture<'a, Result<Handshake, ConnectFailure>> {
        (**self).websocket(connect)
    }

    fn tls(&self, tls: TlsFor<'_>) -> Result<rustls::ClientConfig, TransportError> {
        (**self).tls(tls)
    }
}

/// What makes the transport of a client that is given none.
pub type MakeTransport = fn() -> Arc<dyn Transport>;

static DEFAULT: OnceLock<MakeTransport> = OnceLock::new();

/// Makes `make` what every client given no transport of its own gets from now on (each
/// client calls it once, when it is made), and what a remote client opens its control
/// sockets with. The first call wins: `false` when a transport was installed before,
/// which is then kept.
///
/// ```
/// use std::sync::{Arc, OnceLock};
/// use volley_transport::transport::{Transport, install_default};
/// # #[derive(Debug)] struct MyTransport;
/// # impl Transport for MyTransport {
/// #     fn send(&self, _: volley_transport::transport::TransportRequest)
/// #         -> volley_transport::transport::BoxFuture<'_, Result<volley_transport::transport::TransportResponse, volley_transport::TransportError>> {
/// #         unimplemented!()
/// #     }
/// # }
/// // First thing in main; Volley's HTTP client is
/// // `install_default(volley_http::transport::HttpTransport::shared)`.
/// install_default(|| Arc::new(MyTransport));
/// ```
pub fn install_default(make: MakeTransport) -> bool {
    DEFAULT.set(make).is_ok()
}

/// A transport as a client given none gets: the installed one's, or [`NotInstalled`].
#[must_use]
pub fn default_transport() -> Arc<dyn Transport> {
    DEFAULT.get().map_or_else(|| Arc::new(NotInstalled) as Arc<dyn Transport>, |make| make())
}

/// The transport of a client made while none was installed: every request and every
/// WebSocket fails before anything is sent, saying what to do.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotInstalled;

impl NotInstalled {
    fn error() -> TransportError {
        TransportError::Other {
            message: "no transport to send requests with: install one at start-up with \
                      `volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared)`, \
                      or give the client one in `ClientConfig::transport`"
                .to_owned(),
        }
    }
}

impl Transport for NotInstalled {
    fn send(&self, _request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        Box::pin(async { Err(Self::error()) })
    }

    fn websocket<'a>(&'a self, _connect: WsConnect<'a>) -> BoxFuture<'a, Result<Handshake, ConnectFailure>> {
        Box::pin(async { Err(ConnectFailure::Transport(Self::error())) })
    }

    fn tls(&self, _tls: TlsFor<'_>) -> Result<rustls::ClientConfig, TransportError> {
        Err(Self::error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connect<'a>(url: &'a url::Url, headers: &'a http::HeaderMap) -> WsConnect<'a> {
        WsConnect { url, headers, validate_ssl: true, network: None, timeout: std::time::Duration::from_secs(1) }
    }

    #[tokio::test]
    async fn a_client_without_an_installed_transport_is_refused_with_a_hint() {
        let url: url::Url = "http://127.0.0.1:9/".parse().unwrap();
        let request = TransportRequest {
            method: http::Method::GET,
            url: url.clone(),
            headers: http::HeaderMap::new(),
            body: Bytes::new(),
            validate_ssl: true,
            version: None,
            network: None,
        };
        let error = NotInstalled.send(request).await.unwrap_err();
        assert!(error.to_string().contains("install_default"), "{error}");
        let headers = http::HeaderMap::new();
        let Err(ConnectFailure::Transport(error)) = NotInstalled.websocket(connect(&url, &headers)).await else {
            panic!("a WebSocket without a transport must be refused");
        };
        assert!(error.to_string().contains("install_default"), "{error}");
    }

    #[tokio::test]
    async fn a_transport_that_opens_no_websockets_or_tls_connections_refuses_them_by_name() {
        #[derive(Debug)]
        struct Recorder;
        impl Transport for Recorder {
            fn send(&self, _: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
                unimplemented!()
            }
        }
        let url: url::Url = "ws://127.0.0.1:9/".parse().unwrap();
        let headers = http::HeaderMap::new();
        let Err(ConnectFailure::Transport(error)) = Recorder.websocket(connect(&url, &headers)).await else {
            panic!("the default must refuse");
        };
        assert_eq!(
            error.to_string(),
            TransportError::Other { message: "Recorder opens no WebSocket connections".to_owned() }.to_string()
        );
        let tls = TlsFor { url: &url, network: None, validate_ssl: true, alpn: &[b"h2"] };
        let error = Recorder.tls(tls).expect_err("the default must refuse");
        assert_eq!(
            error.to_string(),
            TransportError::Other { message: "Recorder makes no TLS connections".to_owned() }.to_string()
        );
        assert!(NotInstalled.tls(tls).expect_err("refused").to_string().contains("install_default"));
    }
}
