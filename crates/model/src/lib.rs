//! The result model of a run, shared by every executor (the engine's `Client`, the
//! remote client of `volley-remote`) and the front ends: its errors ([`Error`] and one
//! enum per stage), its [`Response`], the redaction of its secrets ([`redact`]) and its
//! options ([`RunOptions`], [`Selection`], [`CookieJar`], [`Environment`]), and the
//! [`Execute`] trait both executors implement.
//!
//! `volley-engine` re-exports all of it under its old paths (`volley_engine::Error`,
//! `volley_engine::Response`, `volley_engine::redact`, …). Items marked `#[doc(hidden)]`
//! are for the engine and the remote client, which build responses and read options;
//! they are not part of the API.

pub mod cookies;
pub mod environment;
pub mod error;
pub mod execute;
pub mod options;
pub mod redact;
pub mod response;
pub mod select;

// The leaf crates under the paths the moved modules name them by (as in the engine).
use volley_assert as assert;
use volley_transport::{sse, transport, websocket};

pub use cookies::{CookieJar, CookieJarError, CookieSettings};
pub use environment::Environment;
pub use error::{BuildError, ConfigError, Error, SelectionError, TransportError};
pub use execute::Execute;
pub use options::RunOptions;
pub use response::{BodyError, BodyFile, GrpcResult, Response, SentRequest, Timing};
pub use select::Selection;
