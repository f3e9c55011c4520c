//! Volley's transport (HTTP exchanges, WebSocket connections, TLS configurations), and
//! the transport's contract re-exported beside it (see `volley_transport::transport`).

use std::sync::OnceLock;

use futures_util::StreamExt as _;

use volley_transport::network::{Proxies, TlsChoice};
pub use volley_transport::transport::*;
use volley_transport::{TransportError, classify_chain};

/// Volley's transport: reqwest with rustls (ring), HTTP/1.1 and HTTP/2 (ALPN, or prior
/// knowledge for `HTTP/2` on `http://`), gzip/brotli/deflate decoding, connection reuse;
/// WebSockets on sockets of their own (tokio-tungstenite); the TLS configurations of
/// gRPC calls. It follows no redirects and keeps no cookies: the engine does both.
#[derive(Debug, Default)]
pub struct HttpTransport {
    /// Plain `http://` over HTTP/1.1 without a proxy: connections of its own, the same
    /// bytes on the wire (see [`crate::plain`]).
    pub(crate) plain: OnceLock<crate::plain::Plain>,
    clients: [OnceLock<Result<reqwest::Client, String>>; 6],
    /// Clients of requests with certificates or proxies of their own, by what they were
    /// built with (a client certificate is chosen by host, so a run may need several),
    /// at most [`MAX_CONFIGURED_CLIENTS`]: the oldest goes first.
    configured: parking_lot::Mutex<Configured>,
}

/// How many clients with certificates or proxies of their own a transport keeps: each
/// holds its connection pool and TLS configuration, and an execution server's callers
/// may send any number of different ones.
const MAX_CONFIGURED_CLIENTS: usize = 32;

/// The configured clients and the order they were built in.
#[derive(Debug, Default)]
struct Configured {
    clients: std::collections::HashMap<ClientKey, reqwest::Client>,
    order: std::collections::VecDeque<ClientKey>,
}

/// What a client with certificates or proxies is built from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ClientKey {
    tls: bool,
    validate_ssl: bool,
    version: Option<http::Version>,
    choice: TlsChoice,
    proxies: Option<Proxies>,
}

impl HttpTransport {
    /// A transport; its clients are built on first use.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A new transport, shared: what `volley_engine::transport::install_default` takes
    /// to make it the transport of every client given none.
    #[must_use]
    pub fn shared() -> std::sync::Arc<dyn Transport> {
        std::sync::Arc::new(Self::new())
    }

    /// The client for a request: for `http://`, with or without HTTP/2 prior knowledge;
    /// for `https://`, checking certificates or not, offering HTTP/2 by ALPN or keeping
    /// to HTTP/1.1 (`HTTP/1.1` on the request line: with HTTP/2 offered, a server that
    /// speaks it would be answered in it). Plain-HTTP clients load no root
    /// certificates, so a run that only speaks HTTP never reads the system's store.
    fn client(
        &self,
        tls: bool,
        validate_ssl: bool,
        version: Option<http::Version>,
    ) -> Result<&reqwest::Client, TransportError> {
        let index = if tls {
            2 + 2 * usize::from(!validate_ssl) + usize::from(version == Some(http::Version::HTTP_11))
        } else {
            usize::from(version == Some(http::Version::HTTP_2))
        };
        let built = self.clients[index].get_or_init(|| build_client(tls, validate_ssl, version));
        built.as_ref().map_err(|message| TransportError::Other { message: message.clone() })
    }

    /// The client of a request with certificates or proxies: built on first use, kept
    /// while the transport lives. Failures are not kept, so a fixed file is read again.
    fn configured_client(&self, key: ClientKey) -> Result<reqwest::Client, TransportError> {
        if let Some(client) = self.configured.lock().clients.get(&key) {
            return Ok(client.clone());
        }
        let client = build_configured_client(&key)?;
        let mut configured = self.configured.lock();
        if configured.clients.insert(key.clone(), client.clone()).is_none() {
            configured.order.push_back(key);
            // A request under way keeps its own handle on a client dropped here.
            while configured.order.len() > MAX_CONFIGURED_CLIENTS {
                if let Some(oldest) = configured.order.pop_front() {
                    configured.clients.remove(&oldest);
                }
            }
        }
        Ok(client)
    }
}

fn build_configured_client(key: &ClientKey) -> Result<reqwest::Client, TransportError> {
    install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .http1_title_case_headers();
    let prior_knowledge = !key.tls && key.version == Some(http::Version::HTTP_2);
    if key.tls {
        let alpn: &[&[u8]] =
            if key.version == Some(http::Version::HTTP_11) { &[b"http/1.1"] } else { &[b"h2", b"http/1.1"] };
        let config = crate::tls::rustls_config(&key.choice, key.validate_ssl, alpn)?;
        builder = builder.tls_backend_preconfigured(config);
    } else if key.proxies.is_none() {
        builder = builder.tls_certs_only(std::iter::empty());
    }
    if key.version == Some(http::Version::HTTP_11) {
        builder = builder.http1_only();
    }
    if prior_knowledge {
        builder = builder.http2_prior_knowledge();
    }
    if let Some(proxies) = &key.proxies {
        // Set proxies replace the environment's altogether: the engine already fell back
        // to `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` for what the settings leave unset.
        builder = builder.no_proxy();
        let no_proxy = || proxies.no_proxy.as_deref().and_then(reqwest::NoProxy::from_string);
        for (url, secure) in [(&proxies.http, false), (&proxies.https, true)] {
            let Some(url) = url.as_deref().filter(|url| !url.is_empty()) else { continue };
            let made = if secure { reqwest::Proxy::https(url) } else { reqwest::Proxy::http(url) };
            let proxy = made.map_err(|error| TransportError::Proxy {
                proxy: volley_transport::network::without_password(url),
                message: format!("not a usable proxy URL: {}", describe(&error)),
            })?;
            builder = builder.proxy(proxy.no_proxy(no_proxy()));
        }
    }
    builder.build().map_err(|error| TransportError::Other {
        message: format!("cannot set up the HTTP client: {}", describe(&error)),
    })
}

/// A shared client: `version` is `HTTP_2` for prior knowledge on `http://`, `HTTP_11` to
/// offer only HTTP/1.1 on `https://`.
fn build_client(tls: bool, validate_ssl: bool, version: Option<http::Version>) -> Result<reqwest::Client, String> {
    let prior_knowledge = !tls && version == Some(http::Version::HTTP_2);
    let http1_only = tls && version == Some(http::Version::HTTP_11);
    install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .http1_title_case_headers();
    builder = if tls && validate_ssl {
        // The same configuration as requests with CA bundles of their own, so that an
        // unknown issuer is named the same way.
        let alpn: &[&[u8]] = if http1_only { &[b"http/1.1"] } else { &[b"h2", b"http/1.1"] };
        let config = crate::tls::rustls_config(&TlsChoice::default(), true, alpn).map_err(|error| error.to_string())?;
        builder.tls_backend_preconfigured(config)
    } else if tls {
        builder.tls_danger_accept_invalid_certs(true).tls_danger_accept_invalid_hostnames(true)
    } else {
        // Never used for TLS (`https://` goes to another client): no roots to load.
        builder.tls_certs_only(std::iter::empty())
    };
    if http1_only {
        builder = builder.http1_only();
    }
    if prior_knowledge {
        builder = builder.http2_prior_knowledge();
    }
    builder.build().map_err(|error| format!("cannot set up the HTTP client: {}", describe(&error)))
}

impl Transport for HttpTransport {
    fn send(&self, request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        let plain = self.plain.get_or_init(crate::plain::Plain::new);
        match plain.takes(&request) {
            Some(uri) => plain.send(request, uri),
            None => self.send_through_reqwest(request),
        }
    }

    fn websocket<'a>(
        &'a self,
        connect: volley_transport::websocket::WsConnect<'a>,
    ) -> BoxFuture<'a, Result<volley_transport::websocket::Handshake, volley_transport::websocket::ConnectFailure>>
    {
        Box::pin(crate::websocket::handshake(connect))
    }

    fn tls(&self, tls: TlsFor<'_>) -> Result<rustls::ClientConfig, TransportError> {
        crate::tls::for_connection(tls)
    }
}

impl HttpTransport {
    /// Sends `request` through reqwest: TLS, HTTP/2, proxies.
    pub(crate) fn send_through_reqwest(
        &self,
        request: TransportRequest,
    ) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        Box::pin(async move {
            let tls = request.url.scheme() != "http";
            let mut proxy = None;
            let mut sends_certificate = false;
            let configured;
            let client = match &request.network {
                None => self.client(tls, request.validate_ssl, request.version)?,
                Some(network) => {
                    let choice = if tls { TlsChoice::for_url(network, &request.url)? } else { TlsChoice::default() };
                    proxy = network.proxies.as_ref().and_then(|proxies| proxies.for_url(&request.url));
                    sends_certificate = choice.has_certificate();
                    let key = ClientKey {
                        tls,
                        validate_ssl: request.validate_ssl,
                        version: request.version,
                        choice,
                        proxies: network.proxies.clone(),
                    };
                    configured = self.configured_client(key)?;
                    &configured
                }
            };
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
            let mut response = client.execute(outgoing).await.map_err(|error| {
                let mut classified = classify(&error, &host);
                if tls && !sends_certificate {
                    classified = closed_after_handshake(classified, &host);
                }
                match proxy {
                    Some(proxy) => through_proxy(classified, &proxy),
                    None => classified,
                }
            })?;
            let status = response.status();
            let version = response.version();
            let headers = std::mem::take(response.headers_mut());
            let body_host = host.clone();
            let body = response.bytes_stream().map(move |chunk| chunk.map_err(|error| classify(&error, &body_host)));
            Ok(TransportResponse { status, version, headers, body: Box::pin(body) })
        })
    }
}

/// Under TLS 1.3 a server refuses a missing client certificate after the handshake; over
/// HTTP/2 its alert is often lost behind the connection closing. Said as what it most
/// likely is when no certificate was sent.
fn closed_after_handshake(error: TransportError, host: &str) -> TransportError {
    match error {
        TransportError::Other { message }
            if ["connection closed", "connection reset", "broken pipe"].iter().any(|said| message.contains(said)) =>
        {
            TransportError::Tls {
                host: host.to_owned(),
                message: "the server closed the connection after the TLS handshake, and no client certificate \
                          was sent: it may want one"
                    .to_owned(),
            }
        }
        other => other,
    }
}

/// A failure of a request sent through `proxy`: what the proxy did, said of the proxy.
fn through_proxy(error: TransportError, proxy: &str) -> TransportError {
    let proxy = volley_transport::network::without_password(proxy);
    match error {
        TransportError::ConnectionRefused { .. } => TransportError::Proxy {
            proxy,
            message: "the proxy refused the connection (is it running, and is the port right?)".to_owned(),
        },
        TransportError::Dns { host, message } => {
            TransportError::Proxy { proxy, message: format!("cannot resolve `{host}`: {message}") }
        }
        TransportError::Other { message } if message.contains("tunnel") || message.contains("proxy") => {
            TransportError::Proxy { proxy, message }
        }
        other => other,
    }
}

/// Sorts a reqwest error into refused / DNS / TLS / timeout / other by walking its
/// chain of causes.
fn classify(error: &reqwest::Error, host: &str) -> TransportError {
    classify_chain(error, host, error.is_timeout())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every different set of certificates or proxies builds a client; a long-running
    /// caller (the execution server) must not keep them all.
    #[test]
    fn configured_clients_are_bounded() {
        let transport = HttpTransport::new();
        let key = |port: usize| ClientKey {
            tls: false,
            validate_ssl: true,
            version: None,
            choice: TlsChoice::default(),
            proxies: Some(Proxies { http: Some(format!("http://127.0.0.1:{port}")), https: None, no_proxy: None }),
        };
        for port in 1..=MAX_CONFIGURED_CLIENTS + 8 {
            transport.configured_client(key(port)).expect("a client with a proxy");
        }
        let configured = transport.configured.lock();
        assert_eq!(configured.clients.len(), MAX_CONFIGURED_CLIENTS);
        assert_eq!(configured.order.len(), MAX_CONFIGURED_CLIENTS);
        assert!(!configured.clients.contains_key(&key(1)), "the oldest went first");
        assert!(configured.clients.contains_key(&key(MAX_CONFIGURED_CLIENTS + 8)));
    }
}
