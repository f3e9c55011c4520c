//! Volley's HTTP client: [`transport::HttpTransport`], the transport every client uses
//! unless it is given another. Plain `http://` over HTTP/1.1 without a proxy goes over
//! hyper's connections that this crate keeps itself (`plain`); everything else (TLS,
//! HTTP/2, proxies, client certificates) through reqwest with rustls.
//!
//! It is a crate of its own, above the transport's contract (`volley-transport`), so that
//! the result model and the remote client, which need the contract only, are not built
//! again when the HTTP client changes.

mod plain;
pub mod transport;
