//! Sessions: variables and a cookie jar that live across executions, each with its
//! own engine client; capped in number and removed when idle. The sessions here are
//! this instance's copies; their store ([`SessionStore`]: this process's memory, or
//! Redis with `--redis`) keeps which exist and their versions, and brings a copy that
//! another instance left behind up to date before each use.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::StatusCode;
use parking_lot::RwLock;
use serde_json::{Map, Value};
use volley_engine::{Client, CookieJar};
use volley_protocol::ErrorCode;

use crate::clock::{new_id, now_ms};
use crate::error::ApiError;
use crate::store::{SessionRecord, SessionStore, Turn};

/// One session.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) client: Client,
    pub(crate) created_at: u64,
    last_used: AtomicU64,
    snapshot_version: AtomicU64,
    /// Executions of a session run one at a time, in arrival order.
    pub(crate) run_lock: tokio::sync::Mutex<()>,
    /// The version of the chained responses this copy holds.
    chain_version: AtomicU64,
}

impl Session {
    pub(crate) fn last_used(&self) -> u64 {
        self.last_used.load(Ordering::Relaxed)
    }

    pub(crate) fn snapshot_version(&self) -> u64 {
        self.snapshot_version.load(Ordering::Relaxed)
    }

    /// The cookie jar as a store keeps it.
    pub(crate) fn cookies_json(&self) -> String {
        self.client.cookie_jar().map(CookieJar::to_json).unwrap_or_default()
    }

    /// Takes the state the store has of the session when it is newer than this copy's.
    fn load(&self, record: SessionRecord) {
        self.last_used.store(record.last_used, Ordering::Relaxed);
        let Some((variables, cookies)) = record.state.filter(|_| record.version != self.snapshot_version()) else {
            return;
        };
        volley_engine::stages::replace_variables(&self.client, variables);
        if let Some(jar) = self.client.cookie_jar() {
            if cookies.is_empty() {
                jar.clear();
            } else if let Err(error) = jar.replace_from_json(&cookies) {
                tracing::warn!(session = %self.id, "cannot read the session's cookies from Redis: {error}");
            }
        }
        self.snapshot_version.store(record.version, Ordering::Relaxed);
    }

    /// Sets the version the store gave a saved change.
    pub(crate) fn saved(&self, version: u64) {
        self.snapshot_version.store(version, Ordering::Relaxed);
    }

    /// The cookies as `(name, value, domain, path)`, to tell whether an execution
    /// changed them.
    pub(crate) fn cookies(&self) -> Vec<(String, String, String, String)> {
        self.client.cookie_jar().map(volley_engine::CookieJar::cookies).unwrap_or_default()
    }

    /// The variables as they are now (shared, not copied), to tell whether an
    /// execution's scripts changed them.
    pub(crate) fn variables(&self) -> Arc<Map<String, Value>> {
        volley_engine::stages::variables(&self.client)
    }

    /// `true` when the variables differ from `before` (a script's `client.global.set`).
    pub(crate) fn variables_differ(&self, before: &Arc<Map<String, Value>>) -> bool {
        let now = self.variables();
        !Arc::ptr_eq(&now, before) && *now != **before
    }

    /// Sets variables (`replace`: instead of all current ones); `true` when they changed.
    pub(crate) fn update_variables(&self, variables: Map<String, Value>, replace: bool) -> bool {
        let before = self.client.get_variables();
        let after = if replace {
            variables
        } else {
            let mut merged = before.clone();
            merged.extend(variables);
            merged
        };
        if after == before {
            return false;
        }
        volley_engine::stages::replace_variables(&self.client, after);
        true
    }
}

/// The live sessions: this instance's copies, and the store that has them all.
pub(crate) struct Sessions {
    map: RwLock<HashMap<String, Arc<Session>>>,
    max: usize,
    store: Arc<dyn SessionStore>,
    /// What a copy of a session made by another instance is forked from.
    base: Client,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").field("live", &self.map.read().len()).field("max", &self.max).finish_non_exhaustive()
    }
}

impl Sessions {
    /// Sessions kept in `store`; copies of those made elsewhere fork `base`.
    pub(crate) fn new(max: usize, store: Arc<dyn SessionStore>, base: Client) -> Self {
        Self { map: RwLock::default(), max, store, base }
    }

    fn limit_reached(&self) -> ApiError {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::SessionLimitReached,
            format!("{} sessions are open, the most this server keeps", self.max),
        )
        .with_details(serde_json::json!({
            "limit": self.max,
            "hint": "delete sessions you no longer need (DELETE /session/{id}), or start the server with a larger --max-sessions",
        }))
    }

    /// A new session around `client`; 429 at the cap (live sessions are never evicted).
    pub(crate) async fn create(&self, client: Client) -> Result<Arc<Session>, ApiError> {
        let now = now_ms();
        let session = Arc::new(Session {
            id: new_id("ses"),
            client,
            created_at: now,
            last_used: AtomicU64::new(now),
            snapshot_version: AtomicU64::new(1),
            run_lock: tokio::sync::Mutex::new(()),
            chain_version: AtomicU64::new(0),
        });
        let variables = session.client.get_variables();
        if !self.store.create(&session.id, &variables, &session.cookies_json(), self.max).await? {
            return Err(self.limit_reached());
        }
        self.map.write().insert(session.id.clone(), Arc::clone(&session));
        Ok(session)
    }

    /// The session `id`, marked as used, as its store has it now.
    pub(crate) async fn get(&self, id: &str) -> Result<Arc<Session>, ApiError> {
        let cached = self.map.read().get(id).cloned();
        let held = cached.as_ref().map_or(0, |session| session.snapshot_version());
        let record = self.store.session(id, true, held).await?;
        // Without a copy here, the store must give the state: one that has none to give
        // (a removal under way) has no session either.
        let Some(record) = record.filter(|record| cached.is_some() || record.state.is_some()) else {
            self.map.write().remove(id);
            return Err(ApiError::session_not_found(id));
        };
        let chain = record.chain;
        if let Some(session) = cached {
            session.load(record);
            self.load_chain(&session, chain).await?;
            return Ok(session);
        }
        let client = volley_engine::stages::fork(&self.base, Map::new(), Some(CookieJar::new()));
        let session = Arc::new(Session {
            id: id.to_owned(),
            client,
            created_at: record.created_at,
            last_used: AtomicU64::new(record.last_used),
            snapshot_version: AtomicU64::new(0),
            run_lock: tokio::sync::Mutex::new(()),
            chain_version: AtomicU64::new(0),
        });
        session.load(record);
        self.load_chain(&session, chain).await?;
        let mut map = self.map.write();
        Ok(Arc::clone(map.entry(id.to_owned()).or_insert(session)))
    }

    /// Takes the responses the store keeps for chaining when they are newer than this
    /// copy's (`version`: the store's).
    async fn load_chain(&self, session: &Session, version: u64) -> Result<(), ApiError> {
        if version == session.chain_version.load(Ordering::Relaxed) {
            return Ok(());
        }
        let responses = self.store.chained(&session.id).await?;
        volley_engine::stages::replace_chained_responses(&session.client, responses);
        session.chain_version.store(version, Ordering::Relaxed);
        Ok(())
    }

    /// Keeps the response of the session's request `name` for chaining from any
    /// instance (in the session's turn).
    pub(crate) async fn save_chained(&self, session: &Session, name: &str) -> Result<(), ApiError> {
        let Some(response) = volley_engine::stages::chained_response(&session.client, name) else { return Ok(()) };
        if let Some(version) = self.store.save_chained(&session.id, name, &response).await? {
            session.chain_version.store(version, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Waits for the session's turn across every instance (its changes are then this
    /// caller's to make) and brings this copy up to date in it. The turn ends when the
    /// guard is dropped.
    pub(crate) async fn turn(&self, session: &Session) -> Result<Turn, ApiError> {
        let turn = self.store.turn(&session.id).await?;
        match self.store.session(&session.id, false, session.snapshot_version()).await? {
            Some(record) => {
                let chain = record.chain;
                session.load(record);
                self.load_chain(session, chain).await?;
                Ok(turn)
            }
            None => Err(ApiError::session_not_found(&session.id)),
        }
    }

    /// Saves what an execution or a caller changed of the session (in its turn), and
    /// gives the copy the version the store gave the change: its snapshot version.
    pub(crate) async fn save(&self, session: &Session, variables: bool, cookies: bool) -> Result<u64, ApiError> {
        if !variables && !cookies {
            return Ok(session.snapshot_version());
        }
        let values = variables.then(|| session.client.get_variables());
        let jar = cookies.then(|| session.cookies_json());
        match self.store.save(&session.id, values.as_ref(), jar.as_deref()).await? {
            Some(version) => {
                session.saved(version);
                Ok(version)
            }
            None => Err(ApiError::session_not_found(&session.id)),
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.read().len()
    }

    pub(crate) async fn remove(&self, id: &str) -> Result<bool, ApiError> {
        self.map.write().remove(id);
        self.store.remove(id).await
    }

    /// Removes sessions idle for `ttl` at `now` (ms), except those running an
    /// execution; returns their ids.
    pub(crate) fn sweep(&self, now: u64, ttl: Duration) -> Vec<String> {
        let ttl = ttl.as_millis() as u64;
        let removed = crate::clock::remove_where(&mut self.map.write(), |session| {
            now.saturating_sub(session.last_used()) >= ttl && session.run_lock.try_lock().is_ok()
        });
        self.store.forget(&removed);
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> Client {
        Client::new(volley_engine::ClientConfig::default())
    }

    fn sessions(max: usize) -> Sessions {
        Sessions::new(max, Arc::new(crate::store::MemorySessions::default()), client())
    }

    #[tokio::test]
    async fn the_cap_refuses_and_idle_sessions_expire_unless_running() {
        let sessions = sessions(2);
        let idle = sessions.create(client()).await.expect("first");
        let busy = sessions.create(client()).await.expect("second");
        assert_eq!(sessions.create(client()).await.expect_err("cap").code, "SESSION_LIMIT_REACHED");
        let _turn = busy.run_lock.try_lock().expect("free");
        let later = now_ms() + 60_000;
        assert!(sessions.sweep(now_ms(), Duration::from_secs(60)).is_empty());
        assert_eq!(sessions.sweep(later, Duration::from_secs(60)), vec![idle.id.clone()]);
        assert!(sessions.get(&busy.id).await.is_ok(), "a session that is executing stays");
        assert!(sessions.get(&idle.id).await.is_err());
    }

    #[tokio::test]
    async fn variables_change_only_when_they_differ() {
        let sessions = sessions(1);
        let session = sessions.create(client()).await.expect("created");
        let mut variables = Map::new();
        variables.insert("a".to_owned(), Value::from(1));
        assert!(session.update_variables(variables.clone(), false));
        assert!(!session.update_variables(variables.clone(), false));
        assert!(!session.update_variables(variables, true));
        assert!(session.update_variables(Map::new(), true));
        assert!(session.client.get_variables().is_empty());
    }

    #[tokio::test]
    async fn a_script_like_change_of_the_variables_is_seen() {
        let sessions = sessions(1);
        let session = sessions.create(client()).await.expect("created");
        let before = session.variables();
        assert!(!session.variables_differ(&before));
        session.client.set_variable("token", "t-1");
        assert!(session.variables_differ(&before));
        let after = session.variables();
        // Set again to the same value: a new map, the same variables.
        session.client.set_variable("token", "t-1");
        assert!(!session.variables_differ(&after));
    }
}
