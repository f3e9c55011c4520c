//! Where flows and their stored executions are kept. A [`Flow`] is what the routes and
//! the executions hold; what it keeps goes through its [`FlowState`]: in memory, the
//! flow itself (one shared object per flow, its executions bounded, its counts and
//! summary); with `--redis`, a handle on the flow Redis keeps, made for each read and
//! holding only the executions it recorded, to change them.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use volley_protocol::{ExecutionStatus, StoredExecution};

use super::Ledger;
use crate::clock::now_ms;
use crate::error::ApiError;
use crate::event::Sequence;
use crate::wire::{FlowListing, FlowSummary};

/// What a flow is, written once when it is created.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FlowRecord {
    pub(crate) session_id: Option<String>,
    pub(crate) label: Option<String>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) created_at: u64,
}

/// One flow, as an execution or a request holds it.
#[derive(Debug)]
pub(crate) struct Flow {
    pub(crate) id: String,
    pub(crate) session_id: Option<String>,
    pub(crate) label: Option<String>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) created_at: u64,
    state: Arc<dyn FlowState>,
}

/// What a flow keeps of its executions, and its end.
pub(crate) trait FlowState: Send + Sync + std::fmt::Debug {
    /// Where the `seq` of the flow's events comes from.
    fn sequence(&self) -> Sequence;

    /// Keeps a new execution; the oldest goes when the flow holds `limit`. `ledger` (the
    /// execution's) says whether a store that writes later took it.
    fn record(&self, flow_id: &str, execution: StoredExecution, limit: usize, ledger: &Arc<Ledger>);

    /// Changes an execution this flow recorded (gone already when the flow dropped it).
    fn update(
        &self,
        flow_id: &str,
        req_exec_id: &str,
        ledger: &Arc<Ledger>,
        change: &mut dyn FnMut(&mut StoredExecution),
    );

    /// A stored execution.
    fn execution<'a>(
        &'a self,
        flow_id: &'a str,
        req_exec_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredExecution>, ApiError>>;

    /// The stored executions, oldest first.
    fn executions<'a>(&'a self, flow_id: &'a str) -> BoxFuture<'a, Result<Vec<StoredExecution>, ApiError>>;

    /// Finishes the flow once: its summary and whether this call finished it; `None`
    /// when the flow is gone.
    fn finish<'a>(&'a self, flow_id: &'a str) -> BoxFuture<'a, Result<Option<(FlowSummary, bool)>, ApiError>>;
}

impl Flow {
    pub(crate) fn new(id: String, record: FlowRecord, state: Arc<dyn FlowState>) -> Self {
        Self {
            id,
            session_id: record.session_id,
            label: record.label,
            meta: record.meta,
            created_at: record.created_at,
            state,
        }
    }

    /// Where the `seq` of the flow's observer events comes from.
    pub(crate) fn sequence(&self) -> Sequence {
        self.state.sequence()
    }

    /// Keeps a new execution; the oldest goes when the flow holds `limit`.
    pub(crate) fn record(&self, execution: StoredExecution, limit: usize, ledger: &Arc<Ledger>) {
        self.state.record(&self.id, execution, limit, ledger);
    }

    /// Changes a kept execution (gone already when the flow dropped it).
    pub(crate) fn update(&self, req_exec_id: &str, ledger: &Arc<Ledger>, change: impl FnOnce(&mut StoredExecution)) {
        let mut change = Some(change);
        self.state.update(&self.id, req_exec_id, ledger, &mut |execution| {
            if let Some(change) = change.take() {
                change(execution);
            }
        });
    }

    pub(crate) async fn execution(&self, req_exec_id: &str) -> Result<Option<StoredExecution>, ApiError> {
        self.state.execution(&self.id, req_exec_id).await
    }

    /// The stored executions, oldest first, without their bodies and logs (what a
    /// list of them shows; one execution's read has them).
    pub(crate) async fn executions(&self) -> Result<Vec<StoredExecution>, ApiError> {
        let mut executions = self.state.executions(&self.id).await?;
        for execution in &mut executions {
            execution.body_preview = None;
            execution.logs = Vec::new();
            execution.logs_truncated = false;
            if let Some(response) = &mut execution.response {
                response.body = None;
            }
        }
        Ok(executions)
    }

    /// Finishes the flow (once; later calls answer the same summary).
    pub(crate) async fn finish(&self) -> Result<(FlowSummary, bool), ApiError> {
        self.state.finish(&self.id).await?.ok_or_else(|| ApiError::flow_not_found(&self.id))
    }
}

/// A new flow and the id of the flow evicted to make room for it; `None` at the cap.
pub(crate) type Created = Option<(Arc<Flow>, Option<String>)>;

/// The flows of a server, or of every instance of a cluster.
pub(crate) trait FlowStore: Send + Sync {
    /// Keeps a new flow `id`; at `max` the oldest finished flow makes room.
    fn create(&self, id: String, record: FlowRecord, max: usize) -> BoxFuture<'_, Result<Created, ApiError>>;

    /// The flow `id` (`touch`: marked as used now), `None` when it is gone.
    fn flow<'a>(&'a self, id: &'a str, touch: bool) -> BoxFuture<'a, Result<Option<Arc<Flow>>, ApiError>>;

    /// The live flows, in no order.
    fn list(&self) -> BoxFuture<'_, Result<Vec<FlowListing>, ApiError>>;

    /// Removes the flows idle for `ttl` at `now` (ms), where they do not expire by
    /// themselves; returns their ids.
    fn sweep(&self, now: u64, ttl: Duration) -> Vec<String>;
}

/// The flows of one server, in its memory.
#[derive(Debug, Default)]
pub(crate) struct MemoryFlows {
    /// Each flow with what it keeps (its state, seen as the concrete type).
    flows: RwLock<HashMap<String, Kept>>,
}

type Kept = (Arc<Flow>, Arc<MemoryFlow>);

/// A flow in memory: the flow itself.
#[derive(Debug)]
struct MemoryFlow {
    created_at: u64,
    last_used: AtomicU64,
    /// The `seq` of the flow's observer events.
    sequence: Arc<AtomicU64>,
    data: Mutex<FlowData>,
}

#[derive(Debug, Default)]
struct FlowData {
    finished: Option<FlowSummary>,
    executions: VecDeque<StoredExecution>,
    total: u64,
    succeeded: u64,
    failed: u64,
}

impl MemoryFlow {
    fn is_finished(&self) -> bool {
        self.data.lock().finished.is_some()
    }

    fn summary(&self, data: &FlowData) -> FlowSummary {
        data.finished.unwrap_or(FlowSummary {
            total: data.total,
            succeeded: data.succeeded,
            failed: data.failed,
            duration_ms: now_ms().saturating_sub(self.created_at),
        })
    }
}

impl FlowState for MemoryFlow {
    fn sequence(&self) -> Sequence {
        Sequence::Flow(Arc::clone(&self.sequence))
    }

    fn record(&self, _flow_id: &str, execution: StoredExecution, limit: usize, _ledger: &Arc<Ledger>) {
        let mut data = self.data.lock();
        if data.executions.len() >= limit {
            data.executions.pop_front();
        }
        data.executions.push_back(execution);
        data.total += 1;
    }

    fn update(
        &self,
        _flow_id: &str,
        req_exec_id: &str,
        _ledger: &Arc<Ledger>,
        change: &mut dyn FnMut(&mut StoredExecution),
    ) {
        let mut data = self.data.lock();
        let data = &mut *data;
        if let Some(execution) = data.executions.iter_mut().rev().find(|stored| stored.req_exec_id == req_exec_id) {
            let was_final = matches!(execution.status, ExecutionStatus::Success | ExecutionStatus::Failed);
            change(execution);
            if !was_final {
                match execution.status {
                    ExecutionStatus::Success => data.succeeded += 1,
                    ExecutionStatus::Failed => data.failed += 1,
                    ExecutionStatus::Pending | ExecutionStatus::Running => {}
                }
            }
        }
    }

    fn execution<'a>(
        &'a self,
        _flow_id: &'a str,
        req_exec_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredExecution>, ApiError>> {
        let found = self.data.lock().executions.iter().find(|stored| stored.req_exec_id == req_exec_id).cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn executions<'a>(&'a self, _flow_id: &'a str) -> BoxFuture<'a, Result<Vec<StoredExecution>, ApiError>> {
        let executions = self.data.lock().executions.iter().cloned().collect();
        Box::pin(std::future::ready(Ok(executions)))
    }

    fn finish<'a>(&'a self, _flow_id: &'a str) -> BoxFuture<'a, Result<Option<(FlowSummary, bool)>, ApiError>> {
        let mut data = self.data.lock();
        let finished = if let Some(summary) = data.finished {
            (summary, false)
        } else {
            let summary = self.summary(&data);
            data.finished = Some(summary);
            (summary, true)
        };
        Box::pin(std::future::ready(Ok(Some(finished))))
    }
}

impl FlowStore for MemoryFlows {
    fn create(&self, id: String, record: FlowRecord, max: usize) -> BoxFuture<'_, Result<Created, ApiError>> {
        let kept = Arc::new(MemoryFlow {
            created_at: record.created_at,
            last_used: AtomicU64::new(now_ms()),
            sequence: Arc::new(AtomicU64::new(0)),
            data: Mutex::default(),
        });
        let flow = Arc::new(Flow::new(id, record, Arc::clone(&kept) as Arc<dyn FlowState>));
        let mut flows = self.flows.write();
        let mut evicted = None;
        if flows.len() >= max {
            let oldest_finished = flows
                .iter()
                .filter(|(_, (_, kept))| kept.is_finished())
                .min_by_key(|(_, (_, kept))| kept.last_used.load(Ordering::Relaxed))
                .map(|(id, _)| id.clone());
            let Some(oldest) = oldest_finished else {
                return Box::pin(std::future::ready(Ok(None)));
            };
            flows.remove(&oldest);
            evicted = Some(oldest);
        }
        flows.insert(flow.id.clone(), (Arc::clone(&flow), kept));
        Box::pin(std::future::ready(Ok(Some((flow, evicted)))))
    }

    fn flow<'a>(&'a self, id: &'a str, touch: bool) -> BoxFuture<'a, Result<Option<Arc<Flow>>, ApiError>> {
        let found = self.flows.read().get(id).map(|(flow, kept)| {
            if touch {
                kept.last_used.store(now_ms(), Ordering::Relaxed);
            }
            Arc::clone(flow)
        });
        Box::pin(std::future::ready(Ok(found)))
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<FlowListing>, ApiError>> {
        let listed = self
            .flows
            .read()
            .values()
            .map(|(flow, kept)| {
                let data = kept.data.lock();
                FlowListing {
                    flow_id: flow.id.clone(),
                    session_id: flow.session_id.clone(),
                    label: flow.label.clone(),
                    meta: flow.meta.clone(),
                    created_at: flow.created_at,
                    summary: kept.summary(&data),
                    finished: data.finished.is_some(),
                }
            })
            .collect();
        Box::pin(std::future::ready(Ok(listed)))
    }

    fn sweep(&self, now: u64, ttl: Duration) -> Vec<String> {
        let ttl = ttl.as_millis() as u64;
        crate::clock::remove_where(&mut self.flows.write(), |(_, kept)| {
            now.saturating_sub(kept.last_used.load(Ordering::Relaxed)) >= ttl
        })
    }
}

/// A running execution `id`, nothing of it known yet (for tests).
#[cfg(test)]
pub(crate) fn execution(id: &str) -> StoredExecution {
    StoredExecution {
        req_exec_id: id.to_owned(),
        flow_id: "flow".to_owned(),
        session_id: None,
        req_label: None,
        method: "GET".to_owned(),
        url_template: String::new(),
        url_resolved: String::new(),
        headers: Vec::new(),
        body_preview: None,
        timing: crate::wire::TimingInfo { start_time: 0, end_time: None, duration_ms: None, ttfb: None },
        response: None,
        assertions: None,
        logs: Vec::new(),
        logs_truncated: false,
        status: ExecutionStatus::Running,
        error: None,
    }
}

/// The behaviour every [`FlowStore`] has, run against each implementation (the Redis
/// one in `cluster/tests.rs`). `written` waits until what an execution's `ledger` holds
/// is stored (a store that writes later).
#[cfg(test)]
pub(crate) async fn check_flow_store<W, F>(store: &dyn FlowStore, written: W)
where
    W: Fn(Arc<Ledger>) -> F,
    F: std::future::Future<Output = ()>,
{
    let record = |label: &str| FlowRecord {
        session_id: Some("ses_a".to_owned()),
        label: Some(label.to_owned()),
        meta: None,
        created_at: now_ms(),
    };
    let (first, evicted) =
        store.create(crate::clock::new_id("flow"), record("one"), 2).await.expect("answered").expect("kept");
    assert!(evicted.is_none());
    assert_eq!((first.label.as_deref(), first.session_id.as_deref()), (Some("one"), Some("ses_a")));
    let (second, _) =
        store.create(crate::clock::new_id("flow"), record("two"), 2).await.expect("answered").expect("kept");
    assert!(
        store.create(crate::clock::new_id("flow"), record("three"), 2).await.expect("answered").is_none(),
        "the cap"
    );

    // Executions: the newest `limit` kept, each outcome counted once.
    let ledger: Arc<Ledger> = Arc::default();
    for index in 0..5 {
        first.record(execution(&format!("x{index}")), 3, &ledger);
    }
    first.update("x4", &ledger, |stored| stored.status = ExecutionStatus::Success);
    first.update("x4", &ledger, |stored| stored.status = ExecutionStatus::Success);
    first.update("x3", &ledger, |stored| {
        stored.status = ExecutionStatus::Failed;
        stored.logs = vec!["line".to_owned()];
    });
    written(Arc::clone(&ledger)).await;
    let read = store.flow(&first.id, true).await.expect("answered").expect("kept");
    assert!(read.execution("x1").await.expect("answered").is_none(), "the oldest went");
    let kept = read.execution("x3").await.expect("answered").expect("kept");
    assert_eq!((kept.status, kept.logs.len()), (ExecutionStatus::Failed, 1));
    let listed = read.executions().await.expect("answered");
    let ids: Vec<_> = listed.iter().map(|stored| stored.req_exec_id.as_str()).collect();
    assert_eq!(ids, ["x2", "x3", "x4"]);
    assert!(listed.iter().all(|stored| stored.logs.is_empty()), "a list has no logs");

    let counts = |summary: FlowSummary| (summary.total, summary.succeeded, summary.failed, summary.duration_ms);
    let (summary, finished_now) = read.finish().await.expect("finished");
    assert!(finished_now);
    assert_eq!((summary.total, summary.succeeded, summary.failed), (5, 1, 1));
    let (again, finished_now) = first.finish().await.expect("finished");
    assert!(!finished_now && counts(again) == counts(summary), "a second finish answers the same summary");

    let mut listings = store.list().await.expect("answered");
    listings.sort_by_key(|listing| listing.label.clone());
    assert_eq!(listings.len(), 2);
    assert!(listings[0].finished && counts(listings[0].summary) == counts(summary));
    assert!(!listings[1].finished && listings[1].flow_id == second.id);

    // At the cap, the finished flow makes room.
    let (_, evicted) =
        store.create(crate::clock::new_id("flow"), record("three"), 2).await.expect("answered").expect("kept");
    assert_eq!(evicted.as_deref(), Some(first.id.as_str()));
    assert!(store.flow(&first.id, false).await.expect("answered").is_none());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_flows_keep_what_every_flow_store_keeps() {
        let store = MemoryFlows::default();
        check_flow_store(&store, |_| std::future::ready(())).await;
        // Idle flows are swept.
        let listed = store.list().await.expect("answered");
        assert_eq!(store.sweep(now_ms() + 61_000, Duration::from_secs(60)).len(), listed.len());
        assert!(store.list().await.expect("answered").is_empty());
    }
}
