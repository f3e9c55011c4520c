//! The transport's contract: one HTTP exchange, request out, response head and body
//! stream back; the opening of a WebSocket; the errors they fail with; and the transport
//! a program installs once for every client given none ([`install_default`]).
//! Redirects, cookies, timeouts and cancellation are the engine's, above the transport,
//! so every transport gets them the same way. Volley's HTTP and WebSocket client,
//! `HttpTransport`, is the `volley-http` crate's.

pub use crate::error::{describe, host_of, tls_message};
pub use crate::exchange::{
    BodyStream, BoxFuture, MakeTransport, NotInstalled, TlsFor, Transport, TransportRequest, TransportResponse,
    default_transport, install_default,
};
pub use crate::network::install_crypto_provider;
