//! One exchange, as the engine hands it to a [`Transport`] and gets it back: the
//! contract every transport keeps (`HttpTransport` in `transport.rs`, the plain HTTP/1.1
//! path in `plain.rs`, a test's own).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::Stream;

use crate::error::TransportError;
use crate::network::Network;

/// A boxed future, as the transport trait returns it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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

/// Sends one request and returns the response head. Implement it to run requests
/// through something else than the network (a recorder, another client); Volley's
/// programs install `volley-http`'s `HttpTransport`.
pub trait Transport: Send + Sync + fmt::Debug {
    /// Sends `request`; resolves once the response head has arrived.
    fn send(&self, request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>>;
}

impl<T: Transport + ?Sized> Transport for Arc<T> {
    fn send(&self, request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        (**self).send(request)
    }
}
