//! The write queue of an instance: writes that need no answer (observer events,
//! stored executions, WebSocket envelopes) go to Redis in the order they were made,
//! in pipelines, from one task. The queue is bounded, and a write that finds it full,
//! or that Redis refuses (it is gone, or restarting), is never lost without a word.
//!
//! - A stored execution is a *kept* write, made for an execution's `Ledger`. Finding
//!   the queue full, it waits in the ledger (in order with the execution's other kept
//!   writes) until the execution settles ([`Cluster::settle`]), which waits for room,
//!   at most [`SETTLE_WAIT`]. A kept write that Redis refused or that found no room in
//!   time fails the execution: its client is answered an error that says so.
//! - An observer event is dropped and counted. The next pipeline that reaches Redis
//!   starts with a gap marker in the stream of every event, and every instance ends its
//!   subscribers' streams on it with `OBSERVER_LAGGED`, as the hub ends a subscriber
//!   that fell behind (`events.rs`): an observer is told that it missed events.
//! - A WebSocket session's envelope mirrored for replay (and its opening and closing)
//!   is a kept write of the session's ledger: the session waits for room before it
//!   goes on, as it waits for a slow control socket; one Redis refused is logged and
//!   counted.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::ConnectionManager;
use tokio::sync::{mpsc, oneshot};

use super::{Cluster, Keys, events};
use crate::store::{Ledger, NotStored, Writes};

/// Writes queued per instance.
pub(crate) const WRITE_QUEUE: usize = 16 * 1024;
/// Writes sent in one pipeline at most.
const WRITE_BATCH: usize = 512;
/// How long an execution waits at most for its kept writes to reach Redis (room in the
/// queue, then the answer of the pipeline that sent them): longer than a connection
/// attempt (3 s) and an answer (5 s) of the connection.
pub(crate) const SETTLE_WAIT: Duration = Duration::from_secs(10);

/// A write queued for Redis, or a marker answered once every write before it is sent.
#[derive(Debug)]
pub(super) enum Write {
    /// A write an execution or a WebSocket session must not lose: Redis's refusal is
    /// counted in its ledger.
    Kept(redis::Cmd, Arc<Ledger>),
    /// An observer event: the arguments of `scripts::PUBLISH` for it. Events in a row
    /// are published by one script.
    Event([String; 10]),
    Flush(oneshot::Sender<()>),
}

/// What the queue lost or delayed, for the log and the gap markers.
#[derive(Debug, Default)]
pub(super) struct Losses {
    /// Observer events dropped or refused since the last gap marker reached Redis.
    events_unannounced: AtomicU64,
    /// Observer events dropped or refused, in all.
    events: AtomicU64,
    /// Kept writes that waited for room in the queue.
    waited: AtomicU64,
    /// Kept writes that failed their execution.
    failed: AtomicU64,
}

impl Losses {
    fn event_lost(&self, count: u64) {
        if count == 0 {
            return;
        }
        self.events_unannounced.fetch_add(count, Ordering::Relaxed);
        let before = self.events.fetch_add(count, Ordering::Relaxed);
        if crossed_power_of_two(before, count) {
            tracing::warn!(
                lost = before + count,
                "observer events could not be written to Redis: their observers are told (OBSERVER_LAGGED)"
            );
        }
    }
}

/// Whether counting `added` more after `before` passed a power of two (logs thin out).
pub(super) fn crossed_power_of_two(before: u64, added: u64) -> bool {
    added > 0 && (before == 0 || (before + added).ilog2() > before.ilog2())
}

impl Cluster {
    /// Queues a write `ledger`'s execution must not lose, in order with every other
    /// write of this instance; with the queue full of [`WRITE_QUEUE`] writes (Redis far
    /// slower than the executions), it waits in the ledger for [`Cluster::settle`].
    pub(crate) fn keep(&self, ledger: &Arc<Ledger>, command: redis::Cmd) {
        ledger.kept.fetch_add(1, Ordering::Relaxed);
        let mut waiting = ledger.waiting.lock();
        if !waiting.writes.is_empty() || waiting.draining {
            waiting.writes.push_back(command);
            return;
        }
        match self.writes.try_send(Write::Kept(command, Arc::clone(ledger))) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(write)) => {
                let waited = self.losses.waited.fetch_add(1, Ordering::Relaxed);
                if crossed_power_of_two(waited, 1) {
                    tracing::warn!(waited = waited + 1, "Redis is behind: stored executions wait for room");
                }
                if let Write::Kept(command, _) = write {
                    waiting.writes.push_back(command);
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                ledger.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Queues an observer event; with the queue full it is dropped, counted, and its
    /// observers are told (a gap).
    pub(super) fn publish_event(&self, event: [String; 10]) {
        if self.writes.try_send(Write::Event(event)).is_err() {
            self.losses.event_lost(1);
        }
    }

    /// Waits until every write queued so far is sent (or failed).
    pub(crate) async fn flush(&self) {
        let (done, sent) = oneshot::channel();
        if self.writes.send(Write::Flush(done)).await.is_ok() {
            let _ = sent.await;
        }
    }

    /// Sends the kept writes of `ledger` that wait for room, then waits until every
    /// write queued before is sent; at most [`SETTLE_WAIT`] in all. An error when one
    /// of its kept writes did not reach Redis.
    pub(crate) async fn settle(&self, ledger: &Arc<Ledger>) -> Result<(), NotStored> {
        ledger.settled.store(ledger.kept.load(Ordering::Relaxed), Ordering::Relaxed);
        let sent = tokio::time::timeout(SETTLE_WAIT, async {
            loop {
                let next = {
                    let mut waiting = ledger.waiting.lock();
                    let next = waiting.writes.pop_front();
                    waiting.draining = next.is_some();
                    next
                };
                let Some(command) = next else { break };
                if self.writes.send(Write::Kept(command, Arc::clone(ledger))).await.is_err() {
                    ledger.failed.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.flush().await;
        })
        .await;
        if sent.is_err() {
            let mut waiting = ledger.waiting.lock();
            let left = waiting.writes.len();
            waiting.writes.clear();
            waiting.draining = false;
            // Those left, or, all sent, one whose pipeline did not answer in time.
            if ledger.kept.load(Ordering::Relaxed) > 0 {
                ledger.failed.fetch_add(left.max(1), Ordering::Relaxed);
            }
        }
        match ledger.failed.swap(0, Ordering::Relaxed) {
            0 => Ok(()),
            writes => {
                let before = self.losses.failed.fetch_add(writes as u64, Ordering::Relaxed);
                tracing::warn!(
                    failed = before + writes as u64,
                    "stored executions could not be written to Redis: their executions answered an error"
                );
                Err(NotStored { writes })
            }
        }
    }
}

/// Every instance's kept writes: through this instance's queue to Redis.
impl Writes for Cluster {
    fn listened(&self) -> bool {
        self.is_listened()
    }

    fn settle<'a>(&'a self, ledger: &'a Arc<Ledger>) -> futures_util::future::BoxFuture<'a, Result<(), NotStored>> {
        Box::pin(Cluster::settle(self, ledger))
    }

    fn flush(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(Cluster::flush(self))
    }
}

/// Sends the queued writes in pipelines, in order; answers flush markers once the
/// writes before them are sent. A pipeline Redis refused counts its kept writes in
/// their ledgers and its events as lost; the next that reaches Redis announces them.
pub(super) async fn write_loop(
    keys: Keys,
    flow_ms: u64,
    mut connection: ConnectionManager,
    mut queue: mpsc::Receiver<Write>,
    losses: Arc<Losses>,
) {
    let mut batch = Vec::with_capacity(WRITE_BATCH);
    let mut events = Vec::new();
    while queue.recv_many(&mut batch, WRITE_BATCH).await > 0 {
        let mut pipeline = redis::pipe();
        let mut flushed = Vec::new();
        let mut ledgers = Vec::new();
        let (mut commands, mut event_count) = (0, 0_u64);
        // Events lost before these: told first, ahead of what comes after them.
        let unannounced = losses.events_unannounced.swap(0, Ordering::Relaxed);
        if unannounced > 0 {
            pipeline.add_command(events::gap_command(&keys, unannounced)).ignore();
            commands += 1;
        }
        for write in batch.drain(..) {
            let command = match write {
                Write::Kept(command, ledger) => {
                    ledgers.push(ledger);
                    command
                }
                Write::Event(event) => {
                    events.push(event);
                    event_count += 1;
                    continue;
                }
                Write::Flush(done) => {
                    flushed.push(done);
                    continue;
                }
            };
            if !events.is_empty() {
                pipeline.add_command(events::publish_command(&keys, flow_ms, &events)).ignore();
                events.clear();
                commands += 1;
            }
            pipeline.add_command(command).ignore();
            commands += 1;
        }
        if !events.is_empty() {
            pipeline.add_command(events::publish_command(&keys, flow_ms, &events)).ignore();
            events.clear();
            commands += 1;
        }
        if commands > 0 {
            let sent: redis::RedisResult<()> = pipeline.query_async(&mut connection).await;
            if let Err(error) = sent {
                tracing::warn!(commands, "a Redis write failed: {error}");
                for ledger in &ledgers {
                    ledger.failed.fetch_add(1, Ordering::Relaxed);
                }
                // Still to be told, counted once.
                losses.events_unannounced.fetch_add(unannounced, Ordering::Relaxed);
                losses.event_lost(event_count);
            }
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}
