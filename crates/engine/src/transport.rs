//! How requests are sent: the transport's contract (`volley-transport`), and the
//! transport a client gets when its [`ClientConfig::transport`](crate::ClientConfig) is
//! `None`.
//!
//! The engine has no HTTP client of its own. A program chooses one once, at start-up,
//! with [`install_default`]: Volley's binary installs `volley_http`'s `HttpTransport`,
//! and a program that uses this library does the same (or gives each client its
//! transport). So an edit of the HTTP client builds that crate and the programs again,
//! not the engine and every front end above it. A client made before anything was
//! installed gets [`NotInstalled`], which refuses every request with a hint.

use std::sync::{Arc, OnceLock};

use volley_transport::TransportError;
pub use volley_transport::transport::*;

/// What makes the transport of a client that is given none.
pub type MakeTransport = fn() -> Arc<dyn Transport>;

static DEFAULT: OnceLock<MakeTransport> = OnceLock::new();

/// Makes `make` what every client given no transport of its own gets from now on (each
/// client calls it once, when it is made). The first call wins: `false` when a
/// transport was installed before, which is then kept.
///
/// ```
/// use std::sync::Arc;
/// use volley_engine::transport::{Transport, install_default};
/// # #[derive(Debug)] struct MyTransport;
/// # impl Transport for MyTransport {
/// #     fn send(&self, _: volley_engine::transport::TransportRequest)
/// #         -> volley_engine::transport::BoxFuture<'_, Result<volley_engine::transport::TransportResponse, volley_engine::TransportError>> {
/// #         unimplemented!()
/// #     }
/// # }
/// // First thing in main; Volley's HTTP client is
/// // `install_default(volley_http::transport::HttpTransport::shared)`.
/// install_default(|| Arc::new(MyTransport));
/// ```
pub fn install_default(make: MakeTransport) -> bool {
    DEFAULT.set(make).is_ok()
}

/// A transport as a client given none gets: the installed one's, or [`NotInstalled`].
#[must_use]
pub fn default_transport() -> Arc<dyn Transport> {
    DEFAULT.get().map_or_else(|| Arc::new(NotInstalled) as Arc<dyn Transport>, |make| make())
}

/// The transport of a client made while none was installed: every request fails
/// before anything is sent, saying what to do.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotInstalled;

impl Transport for NotInstalled {
    fn send(&self, _request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        Box::pin(async {
            Err(TransportError::Other {
                message: "no transport to send requests with: install one at start-up with \
                          `volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared)`, \
                          or give the client one in `ClientConfig::transport`"
                    .to_owned(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_client_without_an_installed_transport_is_refused_with_a_hint() {
        let request = TransportRequest {
            method: http::Method::GET,
            url: "http://127.0.0.1:9/".parse().unwrap(),
            headers: http::HeaderMap::new(),
            body: bytes::Bytes::new(),
            validate_ssl: true,
            version: None,
            network: None,
        };
        let error = NotInstalled.send(request).await.unwrap_err();
        assert!(error.to_string().contains("install_default"), "{error}");
    }
}
