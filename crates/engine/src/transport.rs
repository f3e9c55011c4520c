//! How requests are sent: the transport's contract (`volley-transport`), and the
//! transport a client gets when its [`ClientConfig::transport`](crate::ClientConfig) is
//! `None`.
//!
//! The engine has no HTTP or WebSocket client of its own. A program chooses one once, at
//! start-up, with [`install_default`]: Volley's binary installs `volley_http`'s
//! `HttpTransport`, and a program that uses this library does the same (or gives each
//! client its transport). So an edit of the HTTP or WebSocket client builds that crate
//! and the programs again, not the engine and every front end above it. A client made
//! before anything was installed gets [`NotInstalled`], which refuses every request with
//! a hint.

pub use volley_transport::transport::*;
