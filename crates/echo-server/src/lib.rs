//! An in-process HTTP test server for Volley's tests: real sockets on 127.0.0.1, port 0.
//!
//! [`TestServer::start`] binds an ephemeral port and serves a fixed set of routes in a
//! background tokio task; dropping the [`TestServer`] stops it. The routes cover what the
//! engine, CLI, execution server and language server need to test against real HTTP:
//!
//! - `/echo`, `/echo/{*rest}`: the request as JSON, with the exact body bytes in base64.
//! - `/status/{code}`: any status code.
//! - `/drain`: reads the body, answers `{"received": <length>}`.
//! - `/redirect/{n}`, `/redirect-to?url=…&status=…`: redirect chains.
//! - `/cookies/set`, `/cookies/set-and-redirect`, `/cookies`, `/cookies/secure`: cookie jars.
//! - `/basic-auth`, `/login`, `/bearer`, `/session`, `/api-key`, `/api-key-query`: authentication.
//! - `/digest-auth?algorithm=…&qop=…&userhash=true`: Digest authentication (RFC 7616).
//! - `/oauth/token`, `/refresh`, `/expiring`: OAuth client credentials and token refresh.
//! - `/slow`, `/slow-body`: timeouts.
//! - `/upload`: multipart forms.
//! - `/bytes/{n}`, `/text/{n}`, `/json/{n}`, `/html`, `/xml`: bodies of a kind and size
//!   (`/json/{n}`: a one-line JSON document of at least `n` bytes).
//! - `/stats`: how many requests each path received, and how many event streams are open.
//! - `/sse/events`, `/sse/slow`, `/sse/never`, `/sse/forever`, `/sse/fast`, `/sse/status/{code}`:
//!   Server-Sent Events, byte for byte (a scripted stream honouring `Last-Event-ID`, slow,
//!   stalled, endless and fast streams, error statuses).
//! - `/ws/echo`, `/ws/close`, `/ws/binary`, `/ws/hang`, `/ws/reject`, `/ws/headers`, `/ws/count`:
//!   WebSockets (echo with subprotocols, server closes, binary frames, a handshake that hangs or
//!   is refused, the handshake's headers).
//!
//! Every JSON response carries `Content-Type: application/json`; unknown paths answer 404
//! `{"error": "not found"}`.
//!
//! Over HTTPS, [`TestServer::start_tls`] serves them with a self-signed certificate, and
//! [`TestServer::start_tls_with`] with the certificate of a [`TestPki`] (a CA made at run
//! time, which also signs a client certificate given as PEM, an encrypted key or
//! PKCS#12), optionally refusing clients without such a certificate;
//! [`TestServer::start_tls_for_client_ca`] checks client certificates of another CA as an
//! OpenSSL-based server does (version 1 certificates too), and tells which it accepted. [`TestProxy`] is a
//! recording HTTP proxy (forwarding, `CONNECT` tunnels, optional Basic credentials) that
//! also speaks SOCKS5.
//!
//! With the feature `grpc` (off by default, for tests only: the `volley` binary does not
//! build tonic), `GrpcServer` is a gRPC server written with tonic that serves
//! `tests/grpc/protos/shop.proto` as the grpc-js server of `tests/grpc` does (and sends
//! rich error details, `google.rpc.BadRequest`, besides), with server reflection v1 and
//! v1alpha unless its `GrpcOptions` say otherwise, over plaintext HTTP/2 or TLS with a
//! [`TestPki`]. `build.rs` generates its code with protox and tonic-prost-build (no `protoc`).

mod auth;
mod bodies;
#[cfg(feature = "tls")]
mod client_ca;
mod cookies;
mod digest;
mod echo;
#[cfg(feature = "grpc")]
mod grpc;
mod grpc_js;
mod oauth;
mod oidc;
mod proxy;
mod query;
mod redirect;
mod response;
mod sigv4;
mod slow;
mod sse;
mod state;
mod stats;
#[cfg(feature = "tls")]
mod tls;
mod upload;
mod ws;

use std::net::{Ipv4Addr, SocketAddr};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::Response;
use axum::serve::ListenerExt as _;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

#[cfg(feature = "tls")]
pub use crate::client_ca::VerifiedClients;
pub use crate::digest::DIGEST_REALM;
#[cfg(feature = "grpc")]
pub use crate::grpc::{GrpcOptions, GrpcServer};
pub use crate::grpc_js::GrpcJsServer;
pub use crate::oidc::{OidcProvider, oidc_directory, stand_in_browser};
pub use crate::proxy::{ProxyRecord, TestProxy};
pub use crate::sigv4::SigV4Verifier;
use crate::state::AppState;
#[cfg(feature = "tls")]
pub use crate::tls::TestPki;

/// The user name `/basic-auth` and `/login` accept.
pub const USER: &str = "ada";
/// The password `/basic-auth` and `/login` accept.
pub const PASSWORD: &str = "lovelace";
/// The key `/api-key` (header `X-API-Key`) and `/api-key-query` (query `api_key`) accept.
pub const API_KEY: &str = "test-api-key";
/// The OAuth client id `/oauth/token` accepts.
pub const CLIENT_ID: &str = "volley-client";
/// The OAuth client secret `/oauth/token` accepts.
pub const CLIENT_SECRET: &str = "volley-secret";

/// Request bodies (echo, upload, forms) may be this large; axum's default is 2 MiB.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// A running test server on 127.0.0.1 with an ephemeral port.
///
/// Each server has its own state (issued tokens, sessions, request counts). Dropping it stops
/// accepting connections at once and lets open connections finish their current request.
///
/// ```
/// # async fn example() {
/// let server = volley_echo_server::TestServer::start().await;
/// assert_eq!(server.url("/echo"), format!("http://127.0.0.1:{}/echo", server.addr().port()));
/// # }
/// ```
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
    scheme: &'static str,
}

impl TestServer {
    /// Binds 127.0.0.1:0 and serves in a background tokio task.
    ///
    /// Must be called inside a tokio runtime, which then runs the server.
    pub async fn start() -> TestServer {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("test server: cannot bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("test server: bound listener has no local address");
        let (shutdown, shutdown_signal) = oneshot::channel::<()>();
        let server = axum::serve(listener.tap_io(no_delay), router()).with_graceful_shutdown(async move {
            // A dropped sender is a shutdown signal too.
            shutdown_signal.await.ok();
        });
        let task = tokio::spawn(async move {
            if let Err(error) = server.await {
                eprintln!("volley test server on {addr} stopped: {error}");
            }
        });
        TestServer { addr, shutdown: Some(shutdown), task, scheme: "http" }
    }

    /// Like [`start`](Self::start), over HTTPS with a self-signed certificate for
    /// `localhost` and `127.0.0.1` (HTTP/2 and HTTP/1.1 by ALPN): clients must not check
    /// certificates to reach it.
    #[cfg(feature = "tls")]
    pub async fn start_tls() -> TestServer {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("test server: cannot bind 127.0.0.1:0");
        Self::serve_tls(listener, tls::TlsListener::new)
    }

    /// Like [`start_tls`](Self::start_tls), with the server certificate of `pki`
    /// (clients trust it by trusting [`TestPki::ca_pem`]); with
    /// `require_client_certificate`, a connection without a client certificate signed
    /// by that CA is refused during the handshake (mutual TLS).
    #[cfg(feature = "tls")]
    pub async fn start_tls_with(pki: &TestPki, require_client_certificate: bool) -> TestServer {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("test server: cannot bind 127.0.0.1:0");
        Self::serve_tls(listener, |tcp| tls::TlsListener::with_pki(tcp, pki, require_client_certificate))
    }

    /// Like [`start_tls_with`](Self::start_tls_with) refusing clients without a
    /// certificate, the client certificate checked as an OpenSSL-based server checks it,
    /// against the CA `client_ca_pem` (which need not be `pki`'s): valid now, signed by
    /// that CA (directly or through the intermediates the client sends), any X.509
    /// version. TLS 1.3 only. The [`VerifiedClients`] tell what the server accepted.
    #[cfg(feature = "tls")]
    pub async fn start_tls_for_client_ca(pki: &TestPki, client_ca_pem: &str) -> (TestServer, VerifiedClients) {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("test server: cannot bind 127.0.0.1:0");
        let verified = VerifiedClients::default();
        let server = Self::serve_tls(listener, |tcp| {
            tls::TlsListener::with_client_ca(tcp, pki, client_ca_pem, verified.clone())
        });
        (server, verified)
    }

    #[cfg(feature = "tls")]
    fn serve_tls(listener: TcpListener, make: impl FnOnce(TcpListener) -> tls::TlsListener) -> TestServer {
        let addr = listener.local_addr().expect("test server: bound listener has no local address");
        let (shutdown, shutdown_signal) = oneshot::channel::<()>();
        let server = axum::serve(make(listener), router()).with_graceful_shutdown(async move {
            shutdown_signal.await.ok();
        });
        let task = tokio::spawn(async move {
            if let Err(error) = server.await {
                eprintln!("volley TLS test server on {addr} stopped: {error}");
            }
        });
        TestServer { addr, shutdown: Some(shutdown), task, scheme: "https" }
    }

    /// The socket address.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `"http://127.0.0.1:PORT"` (`https` for [`start_tls`](Self::start_tls)).
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// [`base_url`](Self::base_url) + `path` (`path` starts with `'/'`).
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        debug_assert!(path.starts_with('/'), "test server paths start with '/': {path:?}");
        format!("{}{path}", self.base_url())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // The graceful signal makes open connections close after their current request;
        // aborting the accept loop closes the listening socket right away.
        if let Some(shutdown) = self.shutdown.take() {
            shutdown.send(()).ok();
        }
        self.task.abort();
    }
}

/// Serves the routes on `listener` until the process ends (`volley echo-server`).
pub async fn serve(listener: TcpListener) -> std::io::Result<()> {
    axum::serve(listener.tap_io(no_delay), router()).await
}

/// Responses go out as soon as they are written: without it, a response written in two
/// parts can wait for the client's delayed ACK (40 ms on Linux).
fn no_delay(stream: &mut tokio::net::TcpStream) {
    stream.set_nodelay(true).ok();
}

/// All routes, one router per feature, with fresh state.
fn router() -> Router {
    let state = AppState::default();
    Router::new()
        .merge(echo::routes())
        .merge(bodies::routes())
        .merge(redirect::routes())
        .merge(cookies::routes())
        .merge(auth::routes())
        .merge(digest::routes())
        .merge(oauth::routes())
        .merge(slow::routes())
        .merge(upload::routes())
        .merge(stats::routes())
        .merge(sse::routes())
        .merge(ws::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(state.clone(), stats::count_requests))
        .with_state(state)
}

async fn not_found() -> Response {
    response::json(StatusCode::NOT_FOUND, json!({"error": "not found"}))
}
