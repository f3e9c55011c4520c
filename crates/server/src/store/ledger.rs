//! What became of the writes one execution (or WebSocket session) asked a store to
//! keep, for a store that writes later (Redis's write queue, `cluster/writes.rs`): the
//! execution waits for them before it answers, and is told when some were lost.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use parking_lot::Mutex;

/// The kept writes of one execution (or WebSocket session).
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    pub(crate) waiting: Mutex<Waiting>,
    /// Kept writes made.
    pub(crate) kept: AtomicUsize,
    /// Kept writes the store refused, or that found no room in time.
    pub(crate) failed: AtomicUsize,
    /// Kept writes settled (waited for).
    pub(crate) settled: AtomicUsize,
}

/// The kept writes of an execution that found the queue full, in order.
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    pub(crate) writes: VecDeque<redis::Cmd>,
    /// They are being sent: a new one queues behind.
    pub(crate) draining: bool,
}

impl Ledger {
    /// Whether kept writes were made since they were last settled.
    pub(crate) fn is_unsettled(&self) -> bool {
        self.kept.load(Ordering::Relaxed) > self.settled.load(Ordering::Relaxed)
    }

    /// Whether kept writes wait for room in the queue.
    pub(crate) fn has_waiting(&self) -> bool {
        !self.waiting.lock().writes.is_empty()
    }
}

/// The kept writes of an execution could not all be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotStored {
    /// How many.
    pub(crate) writes: usize,
}

/// Where the kept writes of an execution go when the store writes later: what an
/// execution waits for before it answers, so that what the answer tells can be read
/// from any instance.
pub(crate) trait Writes: Send + Sync {
    /// Whether some instance has observers: an execution outside a flow then waits for
    /// its events too.
    fn listened(&self) -> bool;

    /// Sends the kept writes of `ledger` that wait for room, then waits until every
    /// write queued before is sent (a bounded wait); how many were lost when some were.
    fn settle<'a>(&'a self, ledger: &'a Arc<Ledger>) -> BoxFuture<'a, Result<(), NotStored>>;

    /// Returns once every write queued so far is sent: what this instance wrote, every
    /// instance finds.
    fn flush(&self) -> BoxFuture<'_, ()>;
}

impl std::fmt::Debug for dyn Writes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writes").field("listened", &self.listened()).finish()
    }
}

/// The writes of one server in its memory: made at once, nothing to wait for.
#[derive(Debug, Default)]
pub(crate) struct Immediate;

impl Writes for Immediate {
    fn listened(&self) -> bool {
        false
    }

    fn settle<'a>(&'a self, _ledger: &'a Arc<Ledger>) -> BoxFuture<'a, Result<(), NotStored>> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn flush(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}
