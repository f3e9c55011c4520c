//! The WebSocket sessions this instance owns: the live ones, capped (a slot is taken
//! before dialing upstream), and the closed ones kept for their grace period.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::StatusCode;
use parking_lot::RwLock;
use serde_json::json;
use tokio::sync::mpsc;
use volley_protocol::ErrorCode;

use super::{Command, NewSession, WsSession};
use crate::error::ApiError;
use crate::store::Owned;

/// The sessions: the live ones, capped, and the closed ones kept for their grace period.
#[derive(Debug)]
pub(crate) struct WsSessions {
    registry: RwLock<Registry>,
    /// Sessions live or being opened (a slot is taken before dialing); closed sessions
    /// kept for their grace period take none.
    taken: AtomicUsize,
    max: usize,
}

#[derive(Debug, Default)]
struct Registry {
    /// Every session that can be found by id, closed ones in their grace period included.
    sessions: HashMap<String, Arc<WsSession>>,
    /// The ids of the closed sessions kept, oldest first: at most `max` (the oldest goes
    /// first), so they hold no more than the live ones may.
    closed: VecDeque<String>,
}

/// A slot for a session being opened; released on drop unless the session was added.
#[derive(Debug)]
pub(crate) struct Slot<'a> {
    sessions: &'a WsSessions,
    used: bool,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if !self.used {
            self.sessions.taken.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl WsSessions {
    pub(crate) fn new(max: usize) -> Self {
        Self { registry: RwLock::default(), taken: AtomicUsize::new(0), max }
    }

    /// Takes a slot, or 429 at the cap (checked before dialing upstream).
    pub(crate) fn reserve(&self) -> Result<Slot<'_>, ApiError> {
        let taken = self.taken.fetch_add(1, Ordering::AcqRel);
        if taken >= self.max {
            self.taken.fetch_sub(1, Ordering::AcqRel);
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::WsSessionLimitReached,
                format!("{} WebSocket sessions are open, the most this server keeps", self.max),
            )
            .with_details(json!({ "limit": self.max, "hint": "close sessions you no longer need (session.close)" })));
        }
        Ok(Slot { sessions: self, used: false })
    }

    /// Adds a session in a reserved slot.
    pub(crate) fn add(&self, mut slot: Slot<'_>, new: NewSession, commands: mpsc::Sender<Command>) -> Arc<WsSession> {
        let session = Arc::new(WsSession::new(new, commands));
        // Every instance finds it from here (before anyone hears of it).
        let owned = Owned {
            id: &session.id,
            max_frame: session.max_frame,
            flow_id: session.flow_id.as_deref(),
            session_id: session.session_id.as_deref(),
            req_exec_id: session.req_exec_id.as_deref(),
        };
        session.mirror.store.opened(&session.mirrored, &owned);
        {
            let mut registry = self.registry.write();
            registry.sessions.insert(session.id.clone(), Arc::clone(&session));
            slot.used = true;
        }
        session
    }

    /// The session `id`, live or closed in its grace period.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<WsSession>, ApiError> {
        self.registry.read().sessions.get(id).cloned().ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::WsSessionNotFound,
                format!("no WebSocket session `{id}` (it may have closed)"),
            )
        })
    }

    /// Frees the slot of a session whose upstream task ended (before its close is
    /// published); the session stays findable, closed, when it is to be `kept` for its
    /// grace period, and is removed otherwise. A session leaves the registry only after
    /// this, and a kept one is released once: each frees its slot exactly once.
    pub(crate) fn release(&self, id: &str, kept: bool) {
        let mut registry = self.registry.write();
        if !registry.sessions.contains_key(id) || registry.closed.iter().any(|closed| closed == id) {
            return;
        }
        self.taken.fetch_sub(1, Ordering::AcqRel);
        if !kept {
            registry.sessions.remove(id);
            return;
        }
        registry.closed.push_back(id.to_owned());
        while registry.closed.len() > self.max {
            if let Some(oldest) = registry.closed.pop_front() {
                registry.sessions.remove(&oldest);
            }
        }
    }

    /// Removes a closed session (its grace period is over, or `DELETE` asked); a session
    /// still open is left to its upstream task.
    pub(crate) fn forget(&self, id: &str) {
        let mut registry = self.registry.write();
        if registry.sessions.get(id).is_some_and(|session| session.is_closed()) {
            registry.sessions.remove(id);
            registry.closed.retain(|closed| closed != id);
        }
    }

    /// How many sessions can be found (live and closed), and how many slots are taken.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (usize, usize) {
        let found = self.registry.read().sessions.len();
        (found, self.taken.load(Ordering::Acquire))
    }
}
