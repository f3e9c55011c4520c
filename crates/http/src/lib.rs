//! Volley's HTTP client: [`transport::HttpTransport`], the transport the programs (the
//! `volley` binary, the Node addon) install for every client given no other. Plain
//! `http://` over HTTP/1.1 without a proxy goes over hyper's connections that this crate
//! keeps itself (`plain`); everything else (TLS, HTTP/2, proxies, client certificates)
//! through reqwest with rustls; WebSockets over sockets of their own (`websocket`).
//!
//! It is a crate of its own, above the transport's contract (`volley-transport`), and
//! only the programs depend on it: the engine and the front ends need the contract only,
//! so they are not built again when the HTTP client changes.

mod client_certificate;
mod plain;
mod tls;
pub mod transport;
mod websocket;
