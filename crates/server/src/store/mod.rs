//! The server's shared state behind one interface per concern, with two
//! implementations chosen once at start-up: in this process's memory, or in Redis
//! (`volley serve --redis`, `cluster/`). The code that uses the state
//! has one path; each implementation keeps its own rules (Redis expires keys by itself,
//! memory is swept), and one behaviour test of each concern runs against both.
//!
//! Sessions ([`SessionStore`]), flows and their stored executions ([`FlowStore`]),
//! scoped tokens ([`TokenStore`]), observer events ([`EventStore`]) and WebSocket-session
//! ownership ([`WsStore`]) go through it.

use std::sync::Arc;

mod events;
mod flows;
mod ledger;
mod sessions;
mod tokens;
mod ws;

#[cfg(test)]
pub(crate) use events::check_event_store;
pub(crate) use events::{EventStore, MemoryEvents};
pub(crate) use flows::{Created, Flow, FlowRecord, FlowState, FlowStore, MemoryFlows};
#[cfg(test)]
pub(crate) use flows::{check_flow_store, execution};
pub(crate) use ledger::{Immediate, Ledger, NotStored, Writes};
#[cfg(test)]
pub(crate) use sessions::check_session_store;
pub(crate) use sessions::{MemorySessions, SessionRecord, SessionStore, Turn};
#[cfg(test)]
pub(crate) use tokens::check_token_store;
pub(crate) use tokens::{MemoryTokens, TokenStore};
pub(crate) use ws::{Elsewhere, MemoryWs, Owned, WsStore};

/// The stores of a server, chosen once at start-up.
pub(crate) struct Stores {
    pub(crate) sessions: Arc<dyn SessionStore>,
    pub(crate) flows: Arc<dyn FlowStore>,
    pub(crate) tokens: Arc<dyn TokenStore>,
    pub(crate) events: Arc<dyn EventStore>,
    pub(crate) ws: Arc<dyn WsStore>,
    pub(crate) writes: Arc<dyn Writes>,
}

impl Stores {
    /// Every store in this process's memory.
    pub(crate) fn memory() -> Self {
        Self {
            sessions: Arc::new(MemorySessions::default()),
            flows: Arc::new(MemoryFlows::default()),
            tokens: Arc::new(MemoryTokens::default()),
            events: Arc::new(MemoryEvents::default()),
            ws: Arc::new(MemoryWs),
            writes: Arc::new(Immediate),
        }
    }
}
