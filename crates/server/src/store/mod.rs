//! The server's shared state behind one interface per concern, with two
//! implementations chosen once at start-up: in this process's memory, or in Redis
//! (`volley serve --redis`, `cluster/`). The code that uses the state
//! has one path; each implementation keeps its own rules (Redis expires keys by itself,
//! memory is swept), and one behaviour test of each concern runs against both.
//!
//! Sessions ([`SessionStore`]), flows and their stored executions ([`FlowStore`]),
//! scoped tokens ([`TokenStore`]), observer events ([`EventStore`]) and WebSocket-session
//! ownership ([`WsStore`]) go through it.

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
    pub(crate) sessions: std::sync::Arc<dyn SessionStore>,
    pub(crate) flows: std::sync::Arc<dyn FlowStore>,
    pub(crate) tokens: std::sync::Arc<dyn TokenStore>,
    pub(crate) events: std::sync::Arc<dyn EventStore>,
    pub(crate) ws: std::sync::Arc<dyn WsStore>,
    pub(crate) writes: std::sync::Arc<dyn Writes>,
}

impl Stores {
    /// Every store in this process's memory.
    pub(crate) fn memory() -> Self {
        Self {
            sessions: std::sync::Arc::new(MemorySessions::default()),
            flows: std::sync::Arc::new(MemoryFlows::default()),
            tokens: std::sync::Arc::new(MemoryTokens::default()),
            events: std::sync::Arc::new(MemoryEvents::default()),
            ws: std::sync::Arc::new(MemoryWs),
            writes: std::sync::Arc::new(Immediate),
        }
    }
}
