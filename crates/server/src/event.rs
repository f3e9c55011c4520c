//! An observer event as the server keeps and publishes it (the hub delivers it, an
//! `EventStore` keeps it), and where its `seq` comes from.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The `seq` written in an envelope whose `seq` Redis assigns: replaced there.
pub(crate) const SEQ_PLACEHOLDER: u64 = u64::MAX;

/// Events retained per flow for replay.
pub(crate) const RETAINED_PER_FLOW: usize = 500;
/// The kind of a gap: no event, but the news that events were lost on their way (with
/// `--redis`, Redis could not take them); a subscriber is ended as one that fell
/// behind is.
const GAP: &str = "\u{0}gap";

/// One observer event as published: its envelope serialised once for every subscriber.
#[derive(Debug)]
pub(crate) struct ObserverEvent {
    pub(crate) kind: Cow<'static, str>,
    pub(crate) session_id: Option<String>,
    pub(crate) flow_id: Option<String>,
    pub(crate) run_id: Option<String>,
    pub(crate) seq: u64,
    /// The envelope: `{type, ts, runId?, sessionId?, flowId?, reqExecId?, seq, payload}`.
    pub(crate) json: String,
}

impl ObserverEvent {
    /// A gap of `missed` events (`0`: how many is not known).
    pub(crate) fn gap(missed: u64) -> Self {
        Self {
            kind: Cow::Borrowed(GAP),
            session_id: None,
            flow_id: None,
            run_id: None,
            seq: missed,
            json: String::new(),
        }
    }

    /// How many events a gap stands for; `None` for an event.
    pub(crate) fn missed(&self) -> Option<u64> {
        (self.kind == GAP).then_some(self.seq)
    }

    /// `<flowId or runId>:<seq>`, the SSE `id`.
    pub(crate) fn sse_id(&self) -> String {
        let scope = self.flow_id.as_deref().or(self.run_id.as_deref()).unwrap_or("");
        format!("{scope}:{}", self.seq)
    }

    /// Whether the event passes the filters (every filter given must match).
    pub(crate) fn matches(&self, session_id: Option<&str>, flow_id: Option<&str>) -> bool {
        session_id.is_none_or(|id| self.session_id.as_deref() == Some(id))
            && flow_id.is_none_or(|id| self.flow_id.as_deref() == Some(id))
    }
}

/// Where an event's `seq` comes from: its flow's counter, else its run's; with
/// `--redis`, a flow's counter is in Redis.
#[derive(Debug, Clone)]
pub(crate) enum Sequence {
    Flow(Arc<AtomicU64>),
    Run(Arc<AtomicU64>),
    Shared,
}

impl Sequence {
    pub(crate) fn run() -> Self {
        Self::Run(Arc::new(AtomicU64::new(0)))
    }

    /// The next `seq`, `None` when Redis takes it.
    pub(crate) fn next(&self) -> Option<u64> {
        match self {
            Self::Flow(counter) | Self::Run(counter) => Some(counter.fetch_add(1, Ordering::Relaxed) + 1),
            Self::Shared => None,
        }
    }
}
