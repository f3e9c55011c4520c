//! What the observer shows of each thing it follows: flows, executions with their
//! outcome and checks, WebSocket sessions with their last messages. `state.rs` builds
//! them from the server's events; the view reads them.

use std::collections::VecDeque;

/// Messages kept per WebSocket session.
pub const MAX_MESSAGES: usize = 1_000;

/// A flow.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flow {
    pub id: String,
    pub label: String,
    pub finished: bool,
    pub total: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub duration_ms: Option<f64>,
    /// The server no longer knows this flow (it restarted, or the flow expired): it will
    /// never finish, and its stored executions are gone.
    pub gone: bool,
}

/// Where an execution stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Pending,
    Running,
    Succeeded,
    Failed,
}

/// The assertions of an execution: passed of total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checks {
    pub passed: u64,
    pub total: u64,
}

/// One execution, from its events.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    /// `reqExecId`, else `runId`.
    pub key: String,
    pub flow_id: Option<String>,
    pub req_exec_id: Option<String>,
    pub label: String,
    /// The request's `# @description`, empty when it has none.
    pub description: String,
    /// What a device flow asks of a person while the execution waits ("open …, enter …").
    pub sign_in: Option<String>,
    /// A gRPC call's response messages so far, and the last one's preview.
    pub grpc_messages: Option<(usize, String)>,
    pub method: String,
    pub url: String,
    pub status: Option<u16>,
    pub duration_ms: Option<f64>,
    pub checks: Option<Checks>,
    /// `(stage, message)` of a failed execution.
    pub error: Option<(String, String)>,
    pub outcome: Outcome,
    /// When its first event was sent (ms since the epoch, the server's clock).
    pub ts: u64,
}

impl Execution {
    /// Whether it failed: an error, a status of 400 or more, or a failed check.
    #[must_use]
    pub fn failed(&self) -> bool {
        self.outcome == Outcome::Failed
    }

    /// What the filter words are matched against.
    pub(crate) fn haystack(&self) -> String {
        let status = self.status.map(|status| status.to_string()).unwrap_or_default();
        format!("{} {} {} {} {}", self.method, self.url, status, self.label, self.description).to_lowercase()
    }
}

/// Which way a WebSocket message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Inbound,
    Outbound,
}

/// One message of a WebSocket session (its first 4 KiB).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub direction: Direction,
    pub ts: u64,
    pub json: bool,
    pub byte_length: u64,
    pub preview: String,
    pub truncated: bool,
}

/// A server-owned WebSocket session.
#[derive(Debug, Clone, PartialEq)]
pub struct WsSession {
    pub id: String,
    pub flow_id: Option<String>,
    pub upstream_url: String,
    /// `(code, reason)` once closed.
    pub closed: Option<(u64, String)>,
    /// The server no longer has the session (a restart while it was open): it will not
    /// close, and its messages end here.
    pub gone: bool,
    pub messages: VecDeque<Message>,
    /// Messages dropped to keep [`MAX_MESSAGES`].
    pub dropped: u64,
}
