//! Volley's network layer, below the engine: the contract of one HTTP exchange, of
//! opening a WebSocket and of a TLS configuration ([`transport`]; the client that keeps
//! it is the `volley-http` crate), the TLS and proxy settings a run resolves into
//! ([`network`]), `CONNECT` tunnels through proxies ([`tunnel`]), Server-Sent Events
//! ([`sse`]), WebSocket connections as a response hands them out ([`websocket`]), and
//! the errors they fail with ([`TransportError`]).
//!
//! It knows nothing of `.http` files, variables or secrets: the engine builds a
//! [`transport::TransportRequest`] and hides its secrets in the errors that come back
//! ([`TransportError::map_texts`]). Redirects, cookies, timeouts and cancellation are the
//! engine's too, so every transport gets them the same way.

mod error;
mod exchange;
mod future;
pub mod network;
pub mod sse;
mod tls;
pub mod transport;
pub mod tunnel;
pub mod websocket;

pub use error::{TransportError, classify_chain};
