//! Sessions: variables and a cookie jar that live across executions, each with its
//! own engine client; capped in number and removed when idle.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::StatusCode;
use parking_lot::RwLock;
use serde_json::{Map, Value};
use volley_engine::Client;
use volley_protocol::ErrorCode;

use crate::clock::{new_id, now_ms};
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

    /// Marks a real change of variables or cookies.
    pub(crate) fn changed(&self) -> u64 {
        self.snapshot_version.fetch_add(1, Ordering::Relaxed) + 1
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

/// The live sessions.
#[derive(Debug)]
pub(crate) struct Sessions {
    map: RwLock<HashMap<String, Arc<Session>>>,
    max: usize,
}

impl Sessions {
    pub(crate) fn new(max: usize) -> Self {
        Self { map: RwLock::default(), max }
    }

    /// A new session around `client`; 429 at the cap (live sessions are never evicted).
    pub(crate) fn create(&self, client: Client) -> Result<Arc<Session>, ApiError> {
        let now = now_ms();
        let session = Arc::new(Session {
            id: new_id("ses"),
            client,
            created_at: now,
            last_used: AtomicU64::new(now),
            snapshot_version: AtomicU64::new(1),
            run_lock: tokio::sync::Mutex::new(()),
        });
        let mut map = self.map.write();
        if map.len() >= self.max {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::SessionLimitReached,
                format!("{} sessions are open, the most this server keeps", self.max),
            )
            .with_details(serde_json::json!({
                "limit": self.max,
                "hint": "delete sessions you no longer need (DELETE /session/{id}), or start the server with a larger --max-sessions",
            })));
        }
        map.insert(session.id.clone(), Arc::clone(&session));
        Ok(session)
    }

    /// The session `id`, marked as used.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<Session>, ApiError> {
        let session = self.map.read().get(id).cloned().ok_or_else(|| ApiError::session_not_found(id))?;
        session.touch();
        Ok(session)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.read().len()
    }

    pub(crate) fn remove(&self, id: &str) -> bool {
        self.map.write().remove(id).is_some()
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

    #[test]
    fn the_cap_refuses_and_idle_sessions_expire_unless_running() {
        let sessions = Sessions::new(2);
        let idle = sessions.create(client()).expect("first");
        let busy = sessions.create(client()).expect("second");
        assert_eq!(sessions.create(client()).expect_err("cap").code, "SESSION_LIMIT_REACHED");
        let _turn = busy.run_lock.try_lock().expect("free");
        let later = now_ms() + 60_000;
        assert!(sessions.sweep(now_ms(), Duration::from_secs(60)).is_empty());
        assert_eq!(sessions.sweep(later, Duration::from_secs(60)), vec![idle.id.clone()]);
        assert!(sessions.get(&busy.id).is_ok(), "a session that is executing stays");
        assert!(sessions.get(&idle.id).is_err());
    }

    #[test]
    fn variables_change_only_when_they_differ() {
        let sessions = Sessions::new(1);
        let session = sessions.create(client()).expect("created");
        let mut variables = Map::new();
        variables.insert("a".to_owned(), Value::from(1));
        assert!(session.update_variables(variables.clone(), false));
        assert!(!session.update_variables(variables.clone(), false));
        assert!(!session.update_variables(variables, true));
        assert!(session.update_variables(Map::new(), true));
        assert!(session.client.get_variables().is_empty());
    }

    #[test]
    fn a_script_like_change_of_the_variables_is_seen() {
        let sessions = Sessions::new(1);
        let session = sessions.create(client()).expect("created");
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
