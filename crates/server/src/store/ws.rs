//! Who owns a WebSocket session. The upstream connection lives on the instance that
//! opened it; the sessions it owns are in its `WsSessions` (`ws/`). The store mirrors
//! what an owned session publishes, so that another instance can serve its control
//! socket, and finds the sessions other instances own. In one process there is no
//! other instance: the memory store mirrors nothing and finds nothing.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::WebSocket;
use futures_util::future::BoxFuture;
use volley_protocol::SessionEnvelopeKind;

use super::Ledger;
use crate::error::ApiError;

/// A new session this instance owns, as other instances need to know it.
#[derive(Debug)]
pub(crate) struct Owned<'a> {
    pub(crate) id: &'a str,
    pub(crate) max_frame: usize,
    pub(crate) flow_id: Option<&'a str>,
    pub(crate) session_id: Option<&'a str>,
    pub(crate) req_exec_id: Option<&'a str>,
}

/// The WebSocket sessions of a server, or of every instance of a cluster.
pub(crate) trait WsStore: Send + Sync {
    /// Makes a new session of this instance known (before anyone hears of it); its
    /// writes are kept for `mirrored`.
    fn opened(&self, mirrored: &Arc<Ledger>, session: &Owned<'_>);

    /// Mirrors an envelope of a session this instance owns (`kept`: how many its replay
    /// buffer holds now; `lifetime`: how long the mirror stays after the last one).
    #[allow(clippy::too_many_arguments)] // The envelope's place in the session's stream.
    fn envelope(
        &self,
        mirrored: &Arc<Ledger>,
        id: &str,
        seq: u64,
        kind: SessionEnvelopeKind,
        envelope: &str,
        kept: usize,
        lifetime: Duration,
    );

    /// A session this instance owns has closed.
    fn closed(&self, mirrored: &Arc<Ledger>, id: &str, socket_code: u16);

    /// The session `id` when another instance owns it.
    fn elsewhere<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Box<dyn Elsewhere>>, ApiError>>;
}

impl std::fmt::Debug for dyn WsStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsStore").finish_non_exhaustive()
    }
}

/// A session another instance owns, as a control socket or a `DELETE` here reaches it.
pub(crate) trait Elsewhere: Send {
    fn flow_id(&self) -> Option<&str>;

    fn session_id(&self) -> Option<&str>;

    /// Asks its owner to close it, and waits a few seconds at most until it is closed.
    fn close(self: Box<Self>) -> BoxFuture<'static, Result<(), ApiError>>;

    /// Serves a control socket for it from `after_seq` (`grace`: how long a session
    /// ended here for a gone owner is kept).
    fn control(self: Box<Self>, socket: WebSocket, after_seq: u64, grace: Duration) -> BoxFuture<'static, ()>;
}

/// The WebSocket sessions of one server: all its own.
#[derive(Debug, Default)]
pub(crate) struct MemoryWs;

impl WsStore for MemoryWs {
    fn opened(&self, _mirrored: &Arc<Ledger>, _session: &Owned<'_>) {}

    fn envelope(
        &self,
        _mirrored: &Arc<Ledger>,
        _id: &str,
        _seq: u64,
        _kind: SessionEnvelopeKind,
        _envelope: &str,
        _kept: usize,
        _lifetime: Duration,
    ) {
    }

    fn closed(&self, _mirrored: &Arc<Ledger>, _id: &str, _socket_code: u16) {}

    fn elsewhere<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<Option<Box<dyn Elsewhere>>, ApiError>> {
        Box::pin(std::future::ready(Ok(None)))
    }
}
