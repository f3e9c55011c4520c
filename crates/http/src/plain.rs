//! Plain `http://` over HTTP/1.1 without a proxy, on connections the transport keeps
//! itself: hyper's HTTP/1.1 client connections, the idle ones kept per origin, and
//! tower-http's decompression set up as reqwest sets it up. What goes on the wire is
//! what reqwest sends (its `Accept: */*`, the same `Accept-Encoding`, `Host` last,
//! title-case names, the origin-form target, the same connector settings) and answers
//! are decoded the same way; what this path saves on every request is reqwest's layers
//! (the redirect policy, retries, its URL parses and header copies) and hyper-util's
//! pool machinery (a task per request to wait for the connection's next turn). The test
//! `plain_http_sends_what_reqwest_sends` holds the two paths to the same bytes.
//!
//! A connection goes back to the pool when its answer's body has been read to the end
//! (one cut short is closed), and is taken again only once hyper says it is ready; a
//! request that a reused connection closed under it, before anything was written, is
//! sent again on a new one, as hyper-util does.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::header::{ACCEPT, HOST};
use http::uri::Authority;
use http_body::{Frame, SizeHint};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use tower::Service;
use tower_http::decompression::Decompression;

use volley_transport::TransportError;
use volley_transport::transport::{BoxFuture, TransportRequest, TransportResponse, host_of};

/// How long an idle connection is kept (hyper-util's default, which reqwest keeps).
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The most idle connections kept per origin: more than a load's virtual users need,
/// and a bound for a long-running caller (the execution server).
const MAX_IDLE_PER_ORIGIN: usize = 1024;

/// The most origins with idle connections kept; the oldest goes first.
const MAX_ORIGINS: usize = 256;

type Sender = SendRequest<Full<Bytes>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The plain HTTP/1.1 path of a transport.
pub(crate) struct Plain {
    pool: Arc<Pool>,
    connector: HttpConnector,
    /// The environment's proxies (`HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`), read as
    /// reqwest reads them: a request one of them takes goes through reqwest.
    proxies: Matcher,
    /// Whether the environment names a proxy for `http://` at all: without one, a
    /// request does not ask [`Plain::proxies`] (its `NO_PROXY` walk is about 600
    /// instructions a request).
    http_proxied: bool,
}

impl std::fmt::Debug for Plain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plain").field("origins", &self.pool.idle.lock().origins.len()).finish_non_exhaustive()
    }
}

/// Idle connections by origin, newest last in each list.
#[derive(Default)]
struct Pool {
    idle: parking_lot::Mutex<Idle>,
}

#[derive(Default)]
struct Idle {
    /// By the origin's text (the URL parser wrote its host in lower case): hashed whole
    /// with foldhash, where `Authority` hashes a byte at a time, twice a request.
    origins: hashbrown::HashMap<String, Vec<(Sender, Instant)>>,
    /// The origins in the order they were first kept, for [`MAX_ORIGINS`].
    order: VecDeque<String>,
}

impl Pool {
    /// An idle connection to `origin` that is still open, the newest first.
    fn take(&self, origin: &Authority) -> Option<Sender> {
        let mut idle = self.idle.lock();
        let list = idle.origins.get_mut(origin.as_str())?;
        while let Some((sender, since)) = list.pop() {
            if !sender.is_closed() && since.elapsed() < IDLE_TIMEOUT {
                return Some(sender);
            }
        }
        None
    }

    fn put(&self, origin: &Authority, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle.lock();
        let idle = &mut *idle;
        let now = Instant::now();
        if let Some(list) = idle.origins.get_mut(origin.as_str()) {
            // The oldest are at the front: those idle too long, or past the bound, go.
            let stale = list.iter().take_while(|(sender, since)| sender.is_closed() || now - *since >= IDLE_TIMEOUT);
            let stale = stale.count().max((list.len() + 1).saturating_sub(MAX_IDLE_PER_ORIGIN));
            list.drain(..stale);
            list.push((sender, now));
            return;
        }
        while idle.origins.len() >= MAX_ORIGINS {
            let Some(oldest) = idle.order.pop_front() else { break };
            idle.origins.remove(&oldest);
        }
        idle.order.push_back(origin.as_str().to_owned());
        idle.origins.insert(origin.as_str().to_owned(), vec![(sender, now)]);
    }
}

impl Plain {
    pub(crate) fn new() -> Self {
        // reqwest's connector, as its client builder sets it up.
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_keepalive(Some(Duration::from_secs(15)));
        connector.set_keepalive_interval(Some(Duration::from_secs(15)));
        connector.set_keepalive_retries(Some(3));
        connector.enforce_http(false);
        // The variables `Matcher` takes an `http://` proxy from; set but empty, they
        // name none, and the matcher is asked anyway (it decides as reqwest does).
        let http_proxied = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
            .iter()
            .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()));
        Self { pool: Arc::default(), connector, proxies: Matcher::from_system(), http_proxied }
    }

    /// The request as this path sends it, when it is one for this path: `http://`, no
    /// TLS or proxy settings of its own, not HTTP/2, no proxy of the environment's.
    pub(crate) fn takes(&self, request: &TransportRequest) -> Option<http::Uri> {
        if request.url.scheme() != "http" || request.network.is_some() || request.version == Some(http::Version::HTTP_2)
        {
            return None;
        }
        // Parsed from the URL's text, as reqwest makes its `Uri`.
        let uri = http::Uri::try_from(request.url.as_str()).ok()?;
        uri.authority()?;
        (!self.http_proxied || self.proxies.intercept(&uri).is_none()).then_some(uri)
    }

    /// Sends `request` to `uri` (what [`Plain::takes`] returned for it).
    pub(crate) fn send(
        &self,
        request: TransportRequest,
        uri: http::Uri,
    ) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        Box::pin(async move {
            let mut outgoing = http::Request::new(Full::new(request.body));
            *outgoing.method_mut() = request.method;
            *outgoing.uri_mut() = uri;
            *outgoing.headers_mut() = request.headers;
            // reqwest's one default header.
            outgoing.headers_mut().entry(ACCEPT).or_insert(http::HeaderValue::from_static("*/*"));
            // Adds `Accept-Encoding` (when the request has none) and decodes the answer.
            let mut service = Decompression::new(Exchange { plain: self }).no_zstd().gzip(true).br(true).deflate(true);
            let response = service.call(outgoing).await.map_err(|source| {
                // Said as reqwest says it, the URL quoted (the engine hides its secrets).
                classify(&Sending { url: request.url.to_string(), source }, &host_of(&request.url))
            })?;
            let (parts, body) = response.into_parts();
            // The host is written out when an error names it, not for every answer.
            let url = request.url;
            let body =
                body.into_data_stream().map(move |chunk| chunk.map_err(|error| classify(&*error, &host_of(&url))));
            Ok(TransportResponse {
                status: parts.status,
                version: parts.version,
                headers: parts.headers,
                body: Box::pin(body),
            })
        })
    }

    async fn connect(&self, uri: &http::Uri) -> Result<Sender, BoxError> {
        let io = self.connector.clone().call(uri.clone()).await?;
        let (sender, connection) = http1::Builder::new().title_case_headers(true).handshake(io).await?;
        tokio::spawn(async move {
            // Its end (closed, or failed) is seen by the sender.
            let _ = connection.await;
        });
        Ok(sender)
    }
}

/// One exchange on a pooled connection, as a service for the decompression layer.
struct Exchange<'a> {
    plain: &'a Plain,
}

impl<'a> Service<http::Request<Full<Bytes>>> for Exchange<'a> {
    type Response = http::Response<Pooled>;
    type Error = BoxError;
    type Future = BoxFuture<'a, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: http::Request<Full<Bytes>>) -> Self::Future {
        let plain = self.plain;
        Box::pin(async move {
            let uri = request.uri().clone();
            let origin = uri.authority().cloned().ok_or("a URL without a host")?;
            // hyper-util's `Host`: the host, and the port unless it is 80.
            if !request.headers().contains_key(HOST) {
                let host = uri.host().unwrap_or_default();
                let value = match uri.port_u16().filter(|port| *port != 80) {
                    // `host:port` as the authority writes it, after any user information.
                    Some(_) => http::HeaderValue::from_str(
                        origin.as_str().rsplit_once('@').map_or(origin.as_str(), |(_, at)| at),
                    ),
                    None => http::HeaderValue::from_str(host),
                };
                request.headers_mut().insert(HOST, value?);
            }
            *request.uri_mut() = origin_form(&uri);
            loop {
                let (mut sender, reused) = match plain.pool.take(&origin) {
                    Some(sender) => (sender, true),
                    None => (plain.connect(&uri).await?, false),
                };
                if sender.ready().await.is_err() {
                    if reused {
                        continue;
                    }
                    return Err("the connection closed before the request was sent".into());
                }
                match sender.try_send_request(request).await {
                    Ok(response) => {
                        let (parts, body) = response.into_parts();
                        let pooled = Pooled { body, sender: Some((sender, origin, plain.pool.clone())) };
                        return Ok(http::Response::from_parts(parts, pooled));
                    }
                    Err(mut error) => match error.take_message() {
                        // Closed under it before a byte was written: again, on another.
                        Some(unsent) if reused => request = unsent,
                        _ => return Err(error.into_error().into()),
                    },
                }
            }
        })
    }
}

/// The target of a request line: the path and query (`/` for none).
fn origin_form(uri: &http::Uri) -> http::Uri {
    match uri.path_and_query() {
        Some(path) if path.as_str() != "/" => {
            let mut parts = http::uri::Parts::default();
            parts.path_and_query = Some(path.clone());
            http::Uri::from_parts(parts).unwrap_or_default()
        }
        _ => http::Uri::default(),
    }
}

/// A response body that gives its connection back to the pool once read to its end.
struct Pooled {
    body: Incoming,
    sender: Option<(Sender, Authority, Arc<Pool>)>,
}

impl http_body::Body for Pooled {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if (matches!(polled, Poll::Ready(None)) || (polled.is_ready() && self.body.is_end_stream()))
            && let Some((sender, origin, pool)) = self.sender.take()
        {
            pool.put(&origin, sender);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A request that failed before its answer's head arrived.
#[derive(Debug, thiserror::Error)]
#[error("error sending request for url ({url})")]
struct Sending {
    url: String,
    #[source]
    source: BoxError,
}

/// Sorts a failure of this path as the transport sorts reqwest's.
fn classify(error: &(dyn std::error::Error + 'static), host: &str) -> TransportError {
    volley_transport::classify_chain(error, host, false)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;

    use super::*;
    use crate::transport::{HttpTransport, Transport as _};

    /// `{"hello":"plain"}\n`, gzip-compressed.
    const GZIPPED: [u8; 38] = [
        31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 171, 86, 202, 72, 205, 201, 201, 87, 178, 82, 42, 200, 73, 204, 204, 83, 170,
        229, 2, 0, 53, 225, 233, 218, 18, 0, 0, 0,
    ];

    /// A server on 127.0.0.1 that keeps every request's bytes as they arrived, answers
    /// each with a gzip-encoded JSON body, and counts its connections. With
    /// `close_after_answer`, it closes each connection after its first answer without
    /// saying so.
    struct Recorder {
        port: u16,
        requests: Arc<parking_lot::Mutex<Vec<Vec<u8>>>>,
        connections: Arc<AtomicUsize>,
    }

    impl Recorder {
        async fn start(close_after_answer: bool) -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let requests = Arc::new(parking_lot::Mutex::new(Vec::new()));
            let connections = Arc::new(AtomicUsize::new(0));
            let (kept, counted) = (requests.clone(), connections.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((mut socket, _)) = listener.accept().await else { return };
                    counted.fetch_add(1, Ordering::SeqCst);
                    let kept = kept.clone();
                    tokio::spawn(async move {
                        let mut buffer = Vec::new();
                        loop {
                            let Some(request) = read_request(&mut socket, &mut buffer).await else { return };
                            kept.lock().push(request);
                            let answer = [
                                format!(
                                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
                                    GZIPPED.len()
                                )
                                .as_bytes(),
                                &GZIPPED,
                            ]
                            .concat();
                            if socket.write_all(&answer).await.is_err() || close_after_answer {
                                return;
                            }
                        }
                    });
                }
            });
            Self { port, requests, connections }
        }

        fn url(&self, path: &str) -> url::Url {
            url::Url::parse(&format!("http://127.0.0.1:{}{path}", self.port)).unwrap()
        }
    }

    /// One request's bytes: the head, and as many more as its `Content-Length` says.
    async fn read_request(socket: &mut tokio::net::TcpStream, buffer: &mut Vec<u8>) -> Option<Vec<u8>> {
        loop {
            if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length:"))
                    .map_or(0, |value| value.trim().parse::<usize>().unwrap());
                let total = end + 4 + length;
                if buffer.len() >= total {
                    return Some(buffer.drain(..total).collect());
                }
            }
            let mut chunk = [0u8; 4096];
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(read) => buffer.extend_from_slice(&chunk[..read]),
            }
        }
    }

    fn request(method: &str, url: url::Url, headers: &[(&str, &str)], body: &str) -> TransportRequest {
        let mut map = http::HeaderMap::new();
        for (name, value) in headers {
            map.append(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        TransportRequest {
            method: method.parse().unwrap(),
            url,
            headers: map,
            body: Bytes::from(body.to_owned()),
            validate_ssl: true,
            version: None,
            network: None,
        }
    }

    /// Status, headers and the decoded body of an answer.
    async fn read(response: TransportResponse) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let headers = response
            .headers
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
            .collect();
        let mut body = Vec::new();
        let mut stream = response.body;
        while let Some(chunk) = stream.next().await {
            body.extend_from_slice(&chunk.unwrap());
        }
        (response.status.as_u16(), headers, body)
    }

    /// The same requests through reqwest and through this path: byte for byte the same
    /// on the wire, and the same answers back (decoded the same way).
    #[tokio::test]
    async fn plain_http_sends_what_reqwest_sends() {
        let transport = HttpTransport::new();
        let server = Recorder::start(false).await;
        let cases = [
            request("GET", server.url("/"), &[], ""),
            request("GET", server.url("/users?id=1&q=a%20b#part"), &[("user-agent", "volley/test")], ""),
            request(
                "POST",
                server.url("/orders"),
                &[("content-type", "application/json"), ("x-Trace", "1"), ("x-trace", "2"), ("accept", "text/plain")],
                r#"{"id": 1}"#,
            ),
            request("POST", server.url("/empty"), &[], ""),
            request("PUT", server.url("/put"), &[("accept-encoding", "identity"), ("host", "example.test")], "x"),
            request("HEAD", server.url("/head"), &[], ""),
            request("DELETE", server.url("/d/%C3%A9"), &[("cookie", "a=1; b=2")], ""),
            request(
                "GET",
                url::Url::parse(&server.url("/").as_str().replace("://", "://user:secret@")).unwrap(),
                &[],
                "",
            ),
        ];
        for case in cases {
            let before = server.requests.lock().len();
            let through_reqwest = read(transport.send_through_reqwest(case.clone()).await.unwrap()).await;
            let plain = transport.plain.get_or_init(Plain::new);
            let uri = plain.takes(&case).expect("plain HTTP/1.1 takes it");
            let through_plain = read(plain.send(case.clone(), uri).await.unwrap()).await;
            let sent = server.requests.lock()[before..].to_vec();
            assert_eq!(sent.len(), 2);
            assert_eq!(
                String::from_utf8_lossy(&sent[1]),
                String::from_utf8_lossy(&sent[0]),
                "{} {}: the same bytes",
                case.method,
                case.url
            );
            assert_eq!(through_plain, through_reqwest, "{} {}: the same answer", case.method, case.url);
        }
        // The decoded answer, as reqwest gives it: no `Content-Encoding` or `Content-Length`.
        let (_, headers, body) = read(transport.send(request("GET", server.url("/"), &[], "")).await.unwrap()).await;
        assert_eq!(body, b"{\"hello\":\"plain\"}\n");
        assert!(!headers.iter().any(|(name, _)| name == "content-encoding" || name == "content-length"));
    }

    /// Requests one after the other share one connection; a connection the server
    /// closed without saying so is not used again, and the request goes on another.
    #[tokio::test]
    async fn connections_are_reused_and_closed_ones_replaced() {
        let transport = HttpTransport::new();
        let server = Recorder::start(false).await;
        for _ in 0..5 {
            let (status, _, _) = read(transport.send(request("GET", server.url("/"), &[], "")).await.unwrap()).await;
            assert_eq!(status, 200);
        }
        assert_eq!(server.connections.load(Ordering::SeqCst), 1);

        let closing = Recorder::start(true).await;
        for _ in 0..5 {
            let (status, _, _) = read(transport.send(request("GET", closing.url("/"), &[], "")).await.unwrap()).await;
            assert_eq!(status, 200);
        }
        assert_eq!(closing.connections.load(Ordering::SeqCst), 5);
    }

    /// What this path does not take: TLS, HTTP/2 prior knowledge, settings of a request's
    /// own (proxies, certificates).
    #[test]
    fn only_plain_http_1_without_settings() {
        let plain = Plain::new();
        let url = |text: &str| url::Url::parse(text).unwrap();
        assert!(plain.takes(&request("GET", url("http://127.0.0.1:1/"), &[], "")).is_some());
        assert!(plain.takes(&request("GET", url("https://127.0.0.1:1/"), &[], "")).is_none());
        let mut h2 = request("GET", url("http://127.0.0.1:1/"), &[], "");
        h2.version = Some(http::Version::HTTP_2);
        assert!(plain.takes(&h2).is_none());
        let mut configured = request("GET", url("http://127.0.0.1:1/"), &[], "");
        configured.network = Some(Arc::new(volley_transport::network::Network {
            ca: Vec::new(),
            hosts: Vec::new(),
            proxies: None,
            io: Arc::new(volley_io::RealFs),
        }));
        assert!(plain.takes(&configured).is_none());
    }
}
