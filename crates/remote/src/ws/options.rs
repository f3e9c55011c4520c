//! How the server sets up a session it opens (`POST /execute/ws`'s
//! `connectTimeoutMs`, `idleTimeoutMs`, `replayBufferSize`).

use std::time::Duration;

use super::super::request::{self, ExecuteBody};

/// How the server sets up a session it opens; each `None` leaves the server's default.
#[derive(Debug, Clone, Default)]
pub struct WsSessionOptions {
    /// How long the server may take to connect upstream (`connectTimeoutMs`, sent in
    /// whole milliseconds within 100..=300000; default: the definition's
    /// `@ws-connect-timeout`, else 30 s).
    pub connect_timeout: Option<Duration>,
    /// The session closes after this long without traffic (`idleTimeoutMs`; default
    /// 5 minutes).
    pub idle_timeout: Option<Duration>,
    /// How many envelopes the server keeps for a reconnecting control socket
    /// (`replayBufferSize`, 1..=5000; default 500).
    pub replay_buffer_size: Option<usize>,
}

impl WsSessionOptions {
    /// Sets the upstream connection timeout.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Sets the idle timeout of the session.
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = Some(timeout);
        self
    }

    /// Sets the size of the replay buffer.
    #[must_use]
    pub fn replay_buffer_size(mut self, size: usize) -> Self {
        self.replay_buffer_size = Some(size);
        self
    }

    pub(super) fn apply(&self, body: &mut ExecuteBody) {
        body.connect_timeout_ms = self.connect_timeout.map(request::timeout_ms);
        body.idle_timeout_ms = self.idle_timeout.map(|timeout| u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX));
        body.replay_buffer_size = self.replay_buffer_size.map(|size| u64::try_from(size).unwrap_or(u64::MAX));
    }
}
