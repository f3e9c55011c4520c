//! A gRPC test server written with tonic (feature `grpc`): `shop.v1.Orders` of
//! `tests/grpc/protos/shop.proto` as the grpc-js server of `tests/grpc` serves it, with
//! server reflection (v1 and v1alpha) unless told otherwise, over plaintext HTTP/2 or TLS.
//! The code of the messages and of the service comes from `build.rs`; what each method
//! answers is in `orders.rs`.

mod orders;
mod rich_status;

use std::net::{Ipv4Addr, SocketAddr};

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};

use crate::TestPki;

/// The code tonic-prost-build generated from the protos (`build.rs`), in modules named
/// after the proto packages so that the generated paths between them resolve.
#[allow(clippy::all, clippy::pedantic, missing_debug_implementations, unreachable_pub)] // Generated code.
pub(crate) mod shop {
    pub(crate) mod v1 {
        include!(concat!(env!("OUT_DIR"), "/shop.v1.rs"));
    }
    pub(crate) mod common {
        include!(concat!(env!("OUT_DIR"), "/shop.common.rs"));
    }
}

/// The compiled `shop.proto`, its imports included: what reflection answers with.
const DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/shop.protoset"));

/// How a [`GrpcServer`] serves: by default, plaintext HTTP/2 with reflection.
#[derive(Debug, Clone, Copy)]
pub struct GrpcOptions<'a> {
    /// Server reflection, `grpc.reflection.v1` and `grpc.reflection.v1alpha`.
    pub reflection: bool,
    /// TLS with the server certificate of this test CA (ALPN `h2`); without it,
    /// plaintext HTTP/2 (prior knowledge).
    pub tls: Option<&'a TestPki>,
}

impl Default for GrpcOptions<'_> {
    fn default() -> Self {
        Self { reflection: true, tls: None }
    }
}

/// A running gRPC server on 127.0.0.1 with an ephemeral port, serving `shop.v1.Orders`
/// (`tests/grpc/protos/shop.proto`) as the grpc-js server of `tests/grpc` does:
///
/// - `Place` (unary): the request as an `Order` with id `order-1` and `request_id` the
///   caller's `x-request-id` metadata, initial metadata `x-served-by: tonic`; item `fail`
///   answers `INVALID_ARGUMENT` with `no such item: "fail" (try another)` and, unlike
///   grpc-js, a `google.rpc.Status` in `grpc-status-details-bin` whose one detail is a
///   `google.rpc.BadRequest` (field `item`, "no such item"); item `slow` answers after 2 s.
/// - `List` (server streaming): `count` orders, `order-N` with item `item N` and quantity N.
/// - `Total` (client streaming): the sum of the `units`, in the currency of the last amount.
/// - `Chat` (bidirectional): each line echoed as `echo: TEXT` with its position; a line
///   whose text starts with `slow` is echoed 300 ms later with ` (heard N)` appended, N the
///   number of lines received by then. The stream ends once the client has ended and every
///   echo is written.
///
/// Dropping it stops the server.
///
/// ```
/// # async fn example() {
/// use volley_echo_server::{GrpcOptions, GrpcServer};
/// let server = GrpcServer::start(GrpcOptions::default()).await;
/// assert_eq!(server.authority(), format!("127.0.0.1:{}", server.addr.port()));
/// # }
/// ```
#[derive(Debug)]
pub struct GrpcServer {
    /// The socket address.
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl GrpcServer {
    /// Binds 127.0.0.1:0 and serves in a background task of the current tokio runtime.
    pub async fn start(options: GrpcOptions<'_>) -> GrpcServer {
        let listener =
            TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("gRPC test server: cannot bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("gRPC test server: bound listener has no local address");
        let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
        let mut builder = Server::builder();
        if let Some(pki) = options.tls {
            // tonic's rustls configuration takes the process's provider; ring unless one is set.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let identity = Identity::from_pem(pki.server_pem(), pki.server_key_pem());
            builder = builder
                .tls_config(ServerTlsConfig::new().identity(identity))
                .expect("gRPC test server: the test PKI's certificate is usable");
        }
        let (reflection_v1, reflection_v1alpha) = if options.reflection {
            let configure =
                || tonic_reflection::server::Builder::configure().register_encoded_file_descriptor_set(DESCRIPTOR_SET);
            (
                Some(configure().build_v1().expect("gRPC test server: reflection v1 reads shop.proto")),
                Some(configure().build_v1alpha().expect("gRPC test server: reflection v1alpha reads shop.proto")),
            )
        } else {
            (None, None)
        };
        let router = builder
            .add_service(shop::v1::orders_server::OrdersServer::new(orders::Orders))
            .add_optional_service(reflection_v1)
            .add_optional_service(reflection_v1alpha);
        let (shutdown, shutdown_signal) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let signal = async move {
                // A dropped sender is a shutdown signal too.
                shutdown_signal.await.ok();
            };
            if let Err(error) = router.serve_with_incoming_shutdown(incoming, signal).await {
                eprintln!("volley gRPC test server on {addr} stopped: {error}");
            }
        });
        GrpcServer { addr, shutdown: Some(shutdown), task }
    }

    /// `"127.0.0.1:PORT"`, the authority of the targets of calls.
    #[must_use]
    pub fn authority(&self) -> String {
        self.addr.to_string()
    }
}

impl Drop for GrpcServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            shutdown.send(()).ok();
        }
        self.task.abort();
    }
}
