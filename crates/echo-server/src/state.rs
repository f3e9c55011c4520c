//! Shared server state: issued tokens and sessions, per-path request counts and the
//! event streams still open.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

/// State shared by all handlers of one server. Cheap to clone; the lock is never held across
/// an `.await`.
#[derive(Clone, Debug, Default)]
pub(crate) struct AppState {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    /// The last number handed out; tokens, sessions and fresh tokens share it.
    last_id: u64,
    /// Tokens from `/login` and `/oauth/token`, accepted by `/bearer`.
    bearer_tokens: HashSet<String>,
    /// Session ids from `/login`, accepted by `/session`.
    sessions: HashSet<String>,
    /// Tokens from `/refresh`, accepted by `/expiring`.
    fresh_tokens: HashSet<String>,
    /// Nonces `/digest-auth` handed out, with the highest `nc` used with each (0: unused).
    digest_nonces: HashMap<String, u32>,
    /// Requests per path (without query), since the server started.
    requests: BTreeMap<String, u64>,
    /// Event stream bodies not yet dropped: still sending, or waiting for the next event.
    open_event_streams: u64,
}

impl AppState {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // No handler panics while holding the lock, and the data stays consistent anyway.
        self.inner.lock()
    }

    /// A login: a bearer token `token-<n>` and a session id `session-<n>`, both remembered.
    pub(crate) fn issue_login(&self) -> (String, String) {
        let mut inner = self.lock();
        inner.last_id += 1;
        let token = format!("token-{}", inner.last_id);
        let session = format!("session-{}", inner.last_id);
        inner.bearer_tokens.insert(token.clone());
        inner.sessions.insert(session.clone());
        (token, session)
    }

    /// A bearer token `token-<n>`, remembered for `/bearer`.
    pub(crate) fn issue_bearer_token(&self) -> String {
        let mut inner = self.lock();
        inner.last_id += 1;
        let token = format!("token-{}", inner.last_id);
        inner.bearer_tokens.insert(token.clone());
        token
    }

    /// A refreshed token `fresh-<n>`, remembered for `/expiring`.
    pub(crate) fn issue_fresh_token(&self) -> String {
        let mut inner = self.lock();
        inner.last_id += 1;
        let token = format!("fresh-{}", inner.last_id);
        inner.fresh_tokens.insert(token.clone());
        token
    }

    /// A fresh Digest nonce `nonce-<n>-<random>`, remembered for `/digest-auth`.
    pub(crate) fn issue_digest_nonce(&self) -> String {
        let mut inner = self.lock();
        inner.last_id += 1;
        let random: u64 =
            std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), inner.last_id);
        let nonce = format!("nonce-{}-{random:016x}", inner.last_id);
        inner.digest_nonces.insert(nonce.clone(), 0);
        nonce
    }

    /// Records that `nonce` was used with the count `nc` (`None` without `qop`): an
    /// unknown nonce, or a count not above the last one (a replay), is refused.
    pub(crate) fn use_digest_nonce(&self, nonce: &str, nc: Option<u32>) -> Result<(), &'static str> {
        let mut inner = self.lock();
        let Some(last) = inner.digest_nonces.get_mut(nonce) else {
            return Err("unknown nonce");
        };
        let next = nc.unwrap_or(*last + 1);
        if next <= *last {
            return Err("nonce count not above the last one (a replay)");
        }
        *last = next;
        Ok(())
    }

    pub(crate) fn is_bearer_token(&self, token: &str) -> bool {
        self.lock().bearer_tokens.contains(token)
    }

    pub(crate) fn is_session(&self, session: &str) -> bool {
        self.lock().sessions.contains(session)
    }

    pub(crate) fn is_fresh_token(&self, token: &str) -> bool {
        self.lock().fresh_tokens.contains(token)
    }

    pub(crate) fn record_request(&self, path: &str) {
        *self.lock().requests.entry(path.to_owned()).or_default() += 1;
    }

    pub(crate) fn request_counts(&self) -> BTreeMap<String, u64> {
        self.lock().requests.clone()
    }

    /// An event stream body starts: counted until [`event_stream_closed`](Self::event_stream_closed).
    pub(crate) fn event_stream_opened(&self) {
        self.lock().open_event_streams += 1;
    }

    pub(crate) fn event_stream_closed(&self) {
        let mut inner = self.lock();
        inner.open_event_streams = inner.open_event_streams.saturating_sub(1);
    }

    pub(crate) fn open_event_streams(&self) -> u64 {
        self.lock().open_event_streams
    }
}
