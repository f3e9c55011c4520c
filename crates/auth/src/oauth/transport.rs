//! How the flows reach the network: [`TokenTransport`], which the engine implements
//! with its client, so that the token, discovery and device requests go out with the
//! settings of the request that needs the token (its TLS settings, proxies, timeout).

use std::future::Future;

use bytes::Bytes;
use tokio_util::sync::CancellationToken;

/// The largest token or discovery answer read.
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// A request of a flow: discovery, the token endpoint, the device authorization.
#[derive(Debug, Clone)]
pub struct SideRequest {
    pub method: http::Method,
    pub url: url::Url,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

/// Its answer, read whole.
#[derive(Debug, Clone)]
pub struct SideAnswer {
    pub status: http::StatusCode,
    pub headers: http::HeaderMap,
    /// At most [`MAX_ANSWER_BYTES`]: a larger answer is the transport's error.
    pub body: Bytes,
}

/// Sends a flow's requests as the request that needs the token would go (its TLS
/// settings, proxies and timeout; no redirects, cookies or scripts).
pub trait TokenTransport: Sync {
    /// What fails on the way (the engine's `Error`); passed on as it is
    /// ([`FlowError::Transport`](super::FlowError::Transport)), cancellation included.
    type Error;

    /// Sends `request` under `cancel`, and reads its answer whole, up to
    /// [`MAX_ANSWER_BYTES`].
    fn send(
        &self,
        request: SideRequest,
        cancel: Option<&CancellationToken>,
    ) -> impl Future<Output = Result<SideAnswer, Self::Error>> + Send;
}
