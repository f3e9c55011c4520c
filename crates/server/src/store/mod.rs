//! The server's shared state behind one interface per concern, with two
//! implementations chosen once at start-up: in this process's memory, or in Redis
//! (`volley serve --redis`, [`crate::cluster::Cluster`]). The code that uses the state
//! has one path; each implementation keeps its own rules (Redis expires keys by itself,
//! memory is swept), and one behaviour test of each concern runs against both.
//!
//! Scoped tokens ([`TokenStore`]), observer events ([`EventStore`]) and sessions
//! ([`SessionStore`]) go through it so far; flows and their stored executions and
//! WebSocket-session ownership still choose between the two with an
//! `Option<Arc<Cluster>>` (docs/ARCHITECTURE.md).

mod events;
mod sessions;
mod tokens;

#[cfg(test)]
pub(crate) use events::check_event_store;
pub(crate) use events::{EventStore, MemoryEvents};
#[cfg(test)]
pub(crate) use sessions::check_session_store;
pub(crate) use sessions::{MemorySessions, SessionRecord, SessionStore, Turn};
#[cfg(test)]
pub(crate) use tokens::check_token_store;
pub(crate) use tokens::{MemoryTokens, TokenStore};
