//! Where sessions are kept beyond this instance's copies of them (`sessions.rs` holds the
//! copies: each an engine client with its variables, cookies and chained responses).
//! The store has the truth of which sessions exist, when each was last used, the cap,
//! and the versions of their state; it gives the state itself to a copy that is behind.
//! In one process the copy is the only one and never behind, so the memory store keeps
//! the ledger and no state; in a cluster, Redis keeps both.

use std::any::Any;
use std::collections::HashMap;

use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::{Map, Value};
use volley_engine::stages::ChainedResponse;

use crate::clock::now_ms;
use crate::error::ApiError;

/// A session as its store has it.
#[derive(Debug)]
pub(crate) struct SessionRecord {
    pub(crate) created_at: u64,
    pub(crate) last_used: u64,
    /// The version of its variables and cookies (1 when created).
    pub(crate) version: u64,
    /// The variables and the cookie jar (as `CookieJar::to_json` writes it), when their
    /// version is not the one the caller holds.
    pub(crate) state: Option<(Map<String, Value>, String)>,
    /// The version of the responses kept for chaining (`{{name.response…}}`).
    pub(crate) chain: u64,
}

/// A session's turn: its changes are the holder's to make until it is dropped.
pub(crate) type Turn = Box<dyn Any + Send + Sync>;

/// The sessions of a server, or of every instance of a cluster.
pub(crate) trait SessionStore: Send + Sync {
    /// Keeps a new session with its first state (version 1); `false` when `max` are kept.
    fn create<'a>(
        &'a self,
        id: &'a str,
        variables: &'a Map<String, Value>,
        cookies: &'a str,
        max: usize,
    ) -> BoxFuture<'a, Result<bool, ApiError>>;

    /// The session `id` (`touch`: marked as used now), `None` when it is gone; its state
    /// only when its version is not `held`.
    fn session<'a>(
        &'a self,
        id: &'a str,
        touch: bool,
        held: u64,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, ApiError>>;

    /// Saves what changed of a session (in its turn); the new version, `None` when it is gone.
    fn save<'a>(
        &'a self,
        id: &'a str,
        variables: Option<&'a Map<String, Value>>,
        cookies: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<u64>, ApiError>>;

    /// Keeps the response of the session's request `name` for chaining; the new version
    /// of its responses, `None` when the session is gone.
    fn save_chained<'a>(
        &'a self,
        id: &'a str,
        name: &'a str,
        response: &'a ChainedResponse,
    ) -> BoxFuture<'a, Result<Option<u64>, ApiError>>;

    /// The responses the session keeps for chaining, by request name.
    fn chained<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<(String, ChainedResponse)>, ApiError>>;

    /// Removes a session; `false` when it was gone.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, ApiError>>;

    /// Waits for the session's turn across every instance that shares the store.
    fn turn<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Turn, ApiError>>;

    /// Forgets the sessions this instance removed as idle, where the store does not
    /// expire them by itself.
    fn forget(&self, ids: &[String]);
}

/// The sessions of one server, in its memory: the ledger only, since the copies are
/// the state.
#[derive(Debug, Default)]
pub(crate) struct MemorySessions {
    sessions: Mutex<HashMap<String, Entry>>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    created_at: u64,
    last_used: u64,
    version: u64,
    chain: u64,
}

impl MemorySessions {
    /// Applies `change` to the ledger of `id`; `None` when it is gone.
    fn with<T>(&self, id: &str, change: impl FnOnce(&mut Entry) -> T) -> Option<T> {
        self.sessions.lock().get_mut(id).map(change)
    }
}

impl SessionStore for MemorySessions {
    fn create<'a>(
        &'a self,
        id: &'a str,
        _variables: &'a Map<String, Value>,
        _cookies: &'a str,
        max: usize,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        let mut sessions = self.sessions.lock();
        let created = sessions.len() < max;
        if created {
            let now = now_ms();
            sessions.insert(id.to_owned(), Entry { created_at: now, last_used: now, version: 1, chain: 0 });
        }
        Box::pin(std::future::ready(Ok(created)))
    }

    /// Never a state: this process's copy is the only one, so it is never behind.
    fn session<'a>(
        &'a self,
        id: &'a str,
        touch: bool,
        _held: u64,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, ApiError>> {
        let record = self.with(id, |ledger| {
            if touch {
                ledger.last_used = now_ms();
            }
            SessionRecord {
                created_at: ledger.created_at,
                last_used: ledger.last_used,
                version: ledger.version,
                state: None,
                chain: ledger.chain,
            }
        });
        Box::pin(std::future::ready(Ok(record)))
    }

    fn save<'a>(
        &'a self,
        id: &'a str,
        _variables: Option<&'a Map<String, Value>>,
        _cookies: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<u64>, ApiError>> {
        let version = self.with(id, |ledger| {
            ledger.version += 1;
            ledger.version
        });
        Box::pin(std::future::ready(Ok(version)))
    }

    fn save_chained<'a>(
        &'a self,
        id: &'a str,
        _name: &'a str,
        _response: &'a ChainedResponse,
    ) -> BoxFuture<'a, Result<Option<u64>, ApiError>> {
        let version = self.with(id, |ledger| {
            ledger.chain += 1;
            ledger.chain
        });
        Box::pin(std::future::ready(Ok(version)))
    }

    /// Nothing: the copy holds the responses, and is never behind.
    fn chained<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<Vec<(String, ChainedResponse)>, ApiError>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, ApiError>> {
        let removed = self.sessions.lock().remove(id).is_some();
        Box::pin(std::future::ready(Ok(removed)))
    }

    /// At once: in one process a session's executions already take turns (its run lock).
    fn turn<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<Turn, ApiError>> {
        Box::pin(std::future::ready(Ok(Box::new(()) as Turn)))
    }

    fn forget(&self, ids: &[String]) {
        let mut sessions = self.sessions.lock();
        for id in ids {
            sessions.remove(id);
        }
    }
}

/// The behaviour every [`SessionStore`] has, run against each implementation (the Redis
/// one in `cluster/tests.rs`): the cap, use, versions that move with each save, removal.
#[cfg(test)]
pub(crate) async fn check_session_store(store: &dyn SessionStore) {
    let (a, b, c) = (crate::clock::new_id("ses"), crate::clock::new_id("ses"), crate::clock::new_id("ses"));
    let variables = Map::from_iter([("token".to_owned(), Value::from("t-1"))]);
    assert!(store.create(&a, &variables, "", 2).await.expect("answered"));
    assert!(store.create(&b, &Map::new(), "", 2).await.expect("answered"));
    assert!(!store.create(&c, &Map::new(), "", 2).await.expect("answered"), "the cap refuses a third");
    assert!(store.session(&c, false, 0).await.expect("answered").is_none(), "a refused session is not kept");

    let first = store.session(&a, false, 1).await.expect("answered").expect("kept");
    assert_eq!((first.version, first.chain), (1, 0));
    assert!(first.state.is_none(), "the version held is the store's: no state is given");
    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    let touched = store.session(&a, true, 1).await.expect("answered").expect("kept");
    assert!(touched.last_used > first.last_used, "a touch marks the session as used");
    assert_eq!(touched.created_at, first.created_at);

    let saved = store.save(&a, Some(&Map::new()), None).await.expect("answered").expect("kept");
    assert_eq!(saved, 2, "a save is a new version");
    assert_eq!(store.session(&a, false, saved).await.expect("answered").expect("kept").version, 2);
    let response =
        ChainedResponse { status: 201, headers: http::HeaderMap::new(), body: bytes::Bytes::from_static(b"{}") };
    let chain = store.save_chained(&a, "login", &response).await.expect("answered").expect("kept");
    assert_eq!(store.session(&a, false, saved).await.expect("answered").expect("kept").chain, chain);
    assert!(store.save(&c, None, Some("")).await.expect("answered").is_none(), "a missing session is not saved");

    {
        let _turn = store.turn(&a).await.expect("the turn");
    }
    let _again = store.turn(&a).await.expect("the turn, free again once dropped");

    assert!(store.remove(&a).await.expect("answered"));
    assert!(!store.remove(&a).await.expect("answered"), "a second removal finds nothing");
    assert!(store.session(&a, true, 0).await.expect("answered").is_none());
    assert!(store.create(&c, &Map::new(), "", 2).await.expect("answered"), "a removal frees a place");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_sessions_keep_the_ledger() {
        let store = MemorySessions::default();
        check_session_store(&store).await;
        // What this instance dropped as idle is forgotten.
        assert!(store.create("idle", &Map::new(), "", 10).await.expect("answered"));
        store.forget(&["idle".to_owned()]);
        assert!(store.session("idle", false, 0).await.expect("answered").is_none());
    }
}
