//! Sessions: variables and a cookie jar that live across executions, each with its
//! own engine client; capped in number and removed when idle. With `--redis` the
//! variables and cookies live in Redis (`cluster/store.rs`) and the sessions here are
//! this instance's copies, brought up to date before each use.

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
use crate::cluster::{Cluster, SessionRecord, Turn};
use crate::error::ApiError;

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
    /// A copy of a session kept in Redis: its version is Redis's.
    shared: bool,
    /// With `--redis`: the version of the chained responses this copy holds.
    chain_version: AtomicU64,
}

impl Session {
    pub(crate) fn touch(&self) {
        self.last_used.store(now_ms(), Ordering::Relaxed);
    }

    pub(crate) fn last_used(&self) -> u64 {
        self.last_used.load(Ordering::Relaxed)
    }

    pub(crate) fn snapshot_version(&self) -> u64 {
        self.snapshot_version.load(Ordering::Relaxed)
    }

    /// Marks a real change of variables or cookies (with `--redis`, saving the
    /// change numbered it already).
    pub(crate) fn changed(&self) -> u64 {
        if self.shared {
            return self.snapshot_version();
        }
        self.snapshot_version.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The cookie jar as Redis keeps it.
    pub(crate) fn cookies_json(&self) -> String {
        self.client.cookie_jar().map(CookieJar::to_json).unwrap_or_default()
    }

    /// Takes the state Redis has of the session when it is newer than this copy's.
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

    /// Sets the version Redis gave a saved change.
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

/// The live sessions (with `--redis`, this instance's copies of them).
#[derive(Debug)]
pub(crate) struct Sessions {
    map: RwLock<HashMap<String, Arc<Session>>>,
    max: usize,
    /// With `--redis`: where sessions live, and the client copies are forked from.
    shared: Option<(Arc<Cluster>, Client)>,
}

impl Sessions {
    pub(crate) fn new(max: usize) -> Self {
        Self { map: RwLock::default(), max, shared: None }
    }

    /// Sessions kept in Redis; this instance's copies fork `base`.
    pub(crate) fn shared(max: usize, cluster: Arc<Cluster>, base: Client) -> Self {
        Self { map: RwLock::default(), max, shared: Some((cluster, base)) }
    }

    /// The cluster the sessions live in, with `--redis`.
    pub(crate) fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.shared.as_ref().map(|(cluster, _)| cluster)
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
            shared: self.shared.is_some(),
            chain_version: AtomicU64::new(0),
        });
        if let Some(cluster) = self.cluster() {
            let variables = session.client.get_variables();
            if !cluster.create_session(&session.id, &variables, &session.cookies_json(), self.max).await? {
                return Err(self.limit_reached());
            }
            self.map.write().insert(session.id.clone(), Arc::clone(&session));
            return Ok(session);
        }
        let mut map = self.map.write();
        if map.len() >= self.max {
            return Err(self.limit_reached());
        }
        map.insert(session.id.clone(), Arc::clone(&session));
        Ok(session)
    }

    /// The session `id`, marked as used (with `--redis`, as Redis has it now).
    pub(crate) async fn get(&self, id: &str) -> Result<Arc<Session>, ApiError> {
        let Some((cluster, base)) = &self.shared else {
            let session = self.map.read().get(id).cloned().ok_or_else(|| ApiError::session_not_found(id))?;
            session.touch();
            return Ok(session);
        };
        let cached = self.map.read().get(id).cloned();
        let held = cached.as_ref().map_or(0, |session| session.snapshot_version());
        let Some(record) = cluster.session(id, true, held).await? else {
            self.map.write().remove(id);
            return Err(ApiError::session_not_found(id));
        };
        let chain = record.chain;
        if let Some(session) = cached {
            session.load(record);
            Self::load_chain(cluster, &session, chain).await?;
            return Ok(session);
        }
        let client = volley_engine::stages::fork(base, Map::new(), Some(CookieJar::new()));
        let session = Arc::new(Session {
            id: id.to_owned(),
            client,
            created_at: record.created_at,
            last_used: AtomicU64::new(record.last_used),
            snapshot_version: AtomicU64::new(0),
            run_lock: tokio::sync::Mutex::new(()),
            shared: true,
            chain_version: AtomicU64::new(0),
        });
        session.load(record);
        Self::load_chain(cluster, &session, chain).await?;
        let mut map = self.map.write();
        Ok(Arc::clone(map.entry(id.to_owned()).or_insert(session)))
    }

    /// Takes the responses Redis keeps for chaining when they are newer than this
    /// copy's (`version`: Redis's).
    async fn load_chain(cluster: &Cluster, session: &Session, version: u64) -> Result<(), ApiError> {
        if version == session.chain_version.load(Ordering::Relaxed) {
            return Ok(());
        }
        let responses = cluster.chained(&session.id).await?;
        volley_engine::stages::replace_chained_responses(&session.client, responses);
        session.chain_version.store(version, Ordering::Relaxed);
        Ok(())
    }

    /// With `--redis`: keeps the response of the session's request `name` for
    /// chaining from any instance (in the session's turn).
    pub(crate) async fn save_chained(&self, session: &Session, name: &str) -> Result<(), ApiError> {
        let Some(cluster) = self.cluster() else { return Ok(()) };
        let Some(response) = volley_engine::stages::chained_response(&session.client, name) else { return Ok(()) };
        if let Some(version) = cluster.save_chained(&session.id, name, &response).await? {
            session.chain_version.store(version, Ordering::Relaxed);
        }
        Ok(())
    }

    /// With `--redis`: waits for the session's turn across the cluster (its changes
    /// are then this caller's to make) and brings this copy up to date in it. The turn
    /// ends when the guard is dropped; `None` without `--redis`.
    pub(crate) async fn turn(&self, session: &Session) -> Result<Option<Turn>, ApiError> {
        let Some(cluster) = self.cluster() else { return Ok(None) };
        let turn = cluster.session_turn(&session.id).await?;
        Self::refresh(cluster, session).await?;
        Ok(Some(turn))
    }

    /// Inside the session's turn: brings this copy up to date.
    async fn refresh(cluster: &Cluster, session: &Session) -> Result<(), ApiError> {
        match cluster.session(&session.id, false, session.snapshot_version()).await? {
            Some(record) => {
                let chain = record.chain;
                session.load(record);
                Self::load_chain(cluster, session, chain).await
            }
            None => Err(ApiError::session_not_found(&session.id)),
        }
    }

    /// With `--redis`: saves what an execution or a caller changed of the session (in
    /// its turn) and takes the version Redis gave the change.
    pub(crate) async fn save(&self, session: &Session, variables: bool, cookies: bool) -> Result<(), ApiError> {
        let Some(cluster) = self.cluster() else { return Ok(()) };
        if !variables && !cookies {
            return Ok(());
        }
        let values = variables.then(|| session.client.get_variables());
        let jar = cookies.then(|| session.cookies_json());
        match cluster.save_session(&session.id, values.as_ref(), jar.as_deref()).await? {
            Some(version) => {
                session.saved(version);
                Ok(())
            }
            None => Err(ApiError::session_not_found(&session.id)),
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.read().len()
    }

    pub(crate) async fn remove(&self, id: &str) -> Result<bool, ApiError> {
        let here = self.map.write().remove(id).is_some();
        match self.cluster() {
            Some(cluster) => cluster.remove_session(id).await,
            None => Ok(here),
        }
    }

    /// Removes sessions idle for `ttl` at `now` (ms), except those running an
    /// execution; returns their ids.
    pub(crate) fn sweep(&self, now: u64, ttl: Duration) -> Vec<String> {
        let mut map = self.map.write();
        let ttl = ttl.as_millis() as u64;
        crate::clock::remove_where(&mut map, |session| {
            now.saturating_sub(session.last_used()) >= ttl && session.run_lock.try_lock().is_ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> Client {
        Client::new(volley_engine::ClientConfig::default())
    }

    #[tokio::test]
    async fn the_cap_refuses_and_idle_sessions_expire_unless_running() {
        let sessions = Sessions::new(2);
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
        let sessions = Sessions::new(1);
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
        let sessions = Sessions::new(1);
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
