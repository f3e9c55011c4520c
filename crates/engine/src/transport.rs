//! The transport: one HTTP exchange, request out, response head and body stream back.
//! Redirects, cookies, timeouts and cancellation are the engine's, above the transport,
//! so every transport gets them the same way.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};

use crate::error::TransportError;

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
/// through something else than the network (a recorder, another client); the default
/// is [`HttpTransport`].
pub trait Transport: Send + Sync + fmt::Debug {
    /// Sends `request`; resolves once the response head has arrived.
    fn send(&self, request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>>;
}

impl<T: Transport + ?Sized> Transport for Arc<T> {
    fn send(&self, request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        (**self).send(request)
    }
}

/// The default transport: reqwest with rustls (ring), HTTP/1.1 and HTTP/2 (ALPN, or
/// prior knowledge for `HTTP/2` on `http://`), gzip/brotli/deflate decoding, connection
/// reuse. It follows no redirects and keeps no cookies: the engine does both.
#[derive(Debug, Default)]
pub struct HttpTransport {
    clients: [OnceLock<Result<reqwest::Client, String>>; 4],
}

impl HttpTransport {
    /// A transport; its clients are built on first use.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The client for a request: for `http://`, with or without HTTP/2 prior knowledge;
    /// for `https://`, checking certificates or not. Plain-HTTP clients load no root
    /// certificates, so a run that only speaks HTTP never reads the system's store.
    fn client(&self, tls: bool, validate_ssl: bool, prior_knowledge: bool) -> Result<&reqwest::Client, TransportError> {
        let index = if tls { 2 + usize::from(!validate_ssl) } else { usize::from(prior_knowledge) };
        let built = self.clients[index].get_or_init(|| build_client(tls, validate_ssl, prior_knowledge));
        built.as_ref().map_err(|message| TransportError::Other { message: message.clone() })
    }
}

/// Installs rustls's ring provider once per process: reqwest is built without a default
/// provider and every client build needs one.
pub(crate) fn install_crypto_provider() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        // Another part of the process may have installed one already; that is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn build_client(tls: bool, validate_ssl: bool, prior_knowledge: bool) -> Result<reqwest::Client, String> {
    install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .http1_title_case_headers();
    builder = if tls {
        builder.tls_danger_accept_invalid_certs(!validate_ssl).tls_danger_accept_invalid_hostnames(!validate_ssl)
    } else {
        // Never used for TLS (`https://` goes to another client): no roots to load.
        builder.tls_certs_only(std::iter::empty())
    };
    if prior_knowledge {
        builder = builder.http2_prior_knowledge();
    }
    builder.build().map_err(|error| format!("cannot set up the HTTP client: {}", describe(&error)))
}

impl Transport for HttpTransport {
    fn send(&self, request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        Box::pin(async move {
            let prior_knowledge = request.version == Some(http::Version::HTTP_2) && request.url.scheme() == "http";
            let tls = request.url.scheme() != "http";
            let client = self.client(tls, request.validate_ssl, prior_knowledge)?;
            let host = host_of(&request.url);
            // Built in place (reqwest's `Url` is `url::Url`): no URL parse and no header
            // copy on the way out.
            let mut outgoing = reqwest::Request::new(request.method, request.url);
            *outgoing.headers_mut() = request.headers;
            if request.version == Some(http::Version::HTTP_11) {
                *outgoing.version_mut() = http::Version::HTTP_11;
            }
            if !request.body.is_empty() {
                *outgoing.body_mut() = Some(reqwest::Body::from(request.body));
            }
            let mut response = client.execute(outgoing).await.map_err(|error| classify(&error, &host))?;
            let status = response.status();
            let version = response.version();
            let headers = std::mem::take(response.headers_mut());
            let body_host = host.clone();
            let body = response.bytes_stream().map(move |chunk| chunk.map_err(|error| classify(&error, &body_host)));
            Ok(TransportResponse { status, version, headers, body: Box::pin(body) })
        })
    }
}

/// `host:port` of a URL, for messages.
pub(crate) fn host_of(url: &url::Url) -> String {
    match (url.host_str(), url.port_or_known_default()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        _ => url.as_str().to_owned(),
    }
}

/// Sorts a reqwest error into refused / DNS / TLS / timeout / other by walking its
/// chain of causes.
fn classify(error: &reqwest::Error, host: &str) -> TransportError {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut messages = Vec::new();
    while let Some(current) = cause {
        if let Some(io) = current.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return TransportError::ConnectionRefused { host: host.to_owned() };
        }
        if current.downcast_ref::<rustls::Error>().is_some() {
            return TransportError::Tls { host: host.to_owned(), message: current.to_string() };
        }
        messages.push(current.to_string());
        cause = current.source();
    }
    let text = messages.join(": ");
    let lower = text.to_ascii_lowercase();
    if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
    {
        let hostname = host.rsplit_once(':').map_or(host, |(name, _)| name).to_owned();
        let message = messages.last().cloned().unwrap_or_default();
        return TransportError::Dns { host: hostname, message };
    }
    if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
        return TransportError::Tls { host: host.to_owned(), message: messages.last().cloned().unwrap_or_default() };
    }
    if error.is_timeout() {
        return TransportError::Other { message: format!("{host}: {text}") };
    }
    TransportError::Other { message: format!("{host}: {}", describe(error)) }
}

/// The error with its causes, `a: b: c`, without repeats.
pub(crate) fn describe(error: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cause: Option<&dyn std::error::Error> = Some(error);
    while let Some(current) = cause {
        let text = current.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        cause = current.source();
    }
    parts.join(": ")
}
