//! The transport's contract: one HTTP exchange, request out, response head and body
//! stream back, and the errors it fails with. Redirects, cookies, timeouts and
//! cancellation are the engine's, above the transport, so every transport gets them the
//! same way. Volley's HTTP client, `HttpTransport`, is the `volley-http` crate's.

pub use crate::error::{describe, host_of, tls_message};
pub use crate::exchange::{BodyStream, BoxFuture, Transport, TransportRequest, TransportResponse};
pub use crate::network::install_crypto_provider;
