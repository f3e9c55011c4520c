//! Flows: groups of executions that observers follow, with the store of their
//! executions (bounded per flow) and their lifecycle (finish, idle expiry, cap). With
//! `--redis` flows and their executions are Redis keys (`cluster/store.rs`): a `Flow`
//! here is then what one execution or request read of it.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use volley_protocol::{ErrorCode, ExecutionStatus};

use http::StatusCode;
use parking_lot::{Mutex, RwLock};
use serde_json::{Map, Value};

use crate::clock::{new_id, now_ms};
use crate::cluster::{Cluster, FlowRecord, Ledger};
use crate::error::ApiError;
use crate::hub::Sequence;
use crate::wire::{FlowListing, FlowSummary};

/// Most bytes of a response body kept in the execution store (the `/execute` answer
/// has the whole body, up to `--max-body-size`).
pub(crate) const STORED_BODY_BYTES: usize = 8 * 1024;
/// Most bytes of a request body kept as `bodyPreview`.
pub(crate) const BODY_PREVIEW_BYTES: usize = 4 * 1024;
/// Most bytes of the scripts' log lines kept (the `/execute` answer has them all).
pub(crate) const STORED_LOG_BYTES: usize = 8 * 1024;

/// An execution as the store keeps it, and its parts: the answer of
/// `GET /flows/{flowId}/executions/{reqExecId}`, shared with the observer.
pub(crate) use volley_protocol::{StageError, StoredExecution, StoredResponse};

/// One flow.
#[derive(Debug)]
pub(crate) struct Flow {
    pub(crate) id: String,
    pub(crate) session_id: Option<String>,
    pub(crate) label: Option<String>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) created_at: u64,
    last_used: AtomicU64,
    /// The `seq` of the flow's observer events.
    sequence: Arc<AtomicU64>,
    data: Mutex<FlowData>,
    /// With `--redis`: where the flow is kept (`data` then holds only the executions
    /// this copy recorded, to change them).
    cluster: Option<Arc<Cluster>>,
}

#[derive(Debug, Default)]
struct FlowData {
    finished: Option<FlowSummary>,
    executions: VecDeque<StoredExecution>,
    total: u64,
    succeeded: u64,
    failed: u64,
}

impl Flow {
    pub(crate) fn touch(&self) {
        self.last_used.store(now_ms(), Ordering::Relaxed);
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.data.lock().finished.is_some()
    }

    /// Where the `seq` of the flow's events comes from.
    pub(crate) fn sequence(&self) -> Sequence {
        match &self.cluster {
            Some(_) => Sequence::Shared,
            None => Sequence::Flow(Arc::clone(&self.sequence)),
        }
    }

    /// Keeps a new execution; the oldest goes when the flow holds `limit`. With
    /// `--redis`, `ledger` (the execution's) says whether Redis took it.
    pub(crate) fn record(&self, execution: StoredExecution, limit: usize, ledger: &Arc<Ledger>) {
        if let Some(cluster) = &self.cluster {
            cluster.record_execution(ledger, &self.id, &execution, limit);
            self.data.lock().executions.push_back(execution);
            return;
        }
        let mut data = self.data.lock();
        if data.executions.len() >= limit {
            data.executions.pop_front();
        }
        data.executions.push_back(execution);
        data.total += 1;
    }

    /// Changes a kept execution (gone already when the flow dropped it).
    pub(crate) fn update(&self, req_exec_id: &str, ledger: &Arc<Ledger>, change: impl FnOnce(&mut StoredExecution)) {
        let mut data = self.data.lock();
        let data = &mut *data;
        if let Some(execution) = data.executions.iter_mut().rev().find(|stored| stored.req_exec_id == req_exec_id) {
            let was_final = matches!(execution.status, ExecutionStatus::Success | ExecutionStatus::Failed);
            change(execution);
            if let Some(cluster) = &self.cluster {
                // Written when it ends (and as recorded, `pending`, before): the steps
                // between would each rewrite the whole execution in Redis.
                let is_final = matches!(execution.status, ExecutionStatus::Success | ExecutionStatus::Failed);
                if is_final {
                    cluster.update_execution(ledger, &self.id, execution, (!was_final).then_some(execution.status));
                }
                return;
            }
            if !was_final {
                match execution.status {
                    ExecutionStatus::Success => data.succeeded += 1,
                    ExecutionStatus::Failed => data.failed += 1,
                    ExecutionStatus::Pending | ExecutionStatus::Running => {}
                }
            }
        }
    }

    pub(crate) async fn execution(&self, req_exec_id: &str) -> Result<Option<StoredExecution>, ApiError> {
        if let Some(cluster) = &self.cluster {
            return cluster.execution(&self.id, req_exec_id).await;
        }
        let data = self.data.lock();
        Ok(data.executions.iter().find(|stored| stored.req_exec_id == req_exec_id).cloned())
    }

    /// The stored executions, oldest first, without their bodies and logs (what a
    /// list of them shows; one execution's read has them).
    pub(crate) async fn executions(&self) -> Result<Vec<StoredExecution>, ApiError> {
        let mut executions = match &self.cluster {
            Some(cluster) => cluster.executions(&self.id).await?,
            None => self.data.lock().executions.iter().cloned().collect(),
        };
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

    /// The flow as `GET /flows` lists it (kept in this process).
    fn listing(&self) -> FlowListing {
        let data = self.data.lock();
        let summary = data.finished.unwrap_or(FlowSummary {
            total: data.total,
            succeeded: data.succeeded,
            failed: data.failed,
            duration_ms: now_ms().saturating_sub(self.created_at),
        });
        FlowListing {
            flow_id: self.id.clone(),
            session_id: self.session_id.clone(),
            label: self.label.clone(),
            meta: self.meta.clone(),
            created_at: self.created_at,
            summary,
            finished: data.finished.is_some(),
        }
    }

    /// Finishes the flow (once; later calls answer the same summary).
    pub(crate) async fn finish(&self) -> Result<(FlowSummary, bool), ApiError> {
        if let Some(cluster) = &self.cluster {
            return cluster.finish_flow(&self.id).await?.ok_or_else(|| ApiError::flow_not_found(&self.id));
        }
        Ok(self.finish_here())
    }

    fn finish_here(&self) -> (FlowSummary, bool) {
        let now = now_ms();
        let mut data = self.data.lock();
        if let Some(summary) = data.finished {
            return (summary, false);
        }
        let summary = FlowSummary {
            total: data.total,
            succeeded: data.succeeded,
            failed: data.failed,
            duration_ms: now.saturating_sub(self.created_at),
        };
        data.finished = Some(summary);
        (summary, true)
    }

    #[cfg(test)]
    pub(crate) fn stored_count(&self) -> usize {
        self.data.lock().executions.len()
    }
}

/// The live flows (with `--redis`, in Redis).
#[derive(Debug)]
pub(crate) struct Flows {
    map: RwLock<HashMap<String, Arc<Flow>>>,
    max: usize,
    cluster: Option<Arc<Cluster>>,
}

impl Flows {
    pub(crate) fn new(max: usize) -> Self {
        Self { map: RwLock::default(), max, cluster: None }
    }

    /// Flows kept in Redis.
    pub(crate) fn shared(max: usize, cluster: Arc<Cluster>) -> Self {
        Self { map: RwLock::default(), max, cluster: Some(cluster) }
    }

    fn flow(&self, id: String, record: FlowRecord) -> Flow {
        Flow {
            id,
            session_id: record.session_id,
            label: record.label,
            meta: record.meta,
            created_at: record.created_at,
            last_used: AtomicU64::new(now_ms()),
            sequence: Arc::new(AtomicU64::new(0)),
            data: Mutex::default(),
            cluster: self.cluster.clone(),
        }
    }

    fn limit_reached(&self) -> ApiError {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::FlowLimitReached,
            format!("{} flows are running, the most this server keeps", self.max),
        )
        .with_details(serde_json::json!({
            "limit": self.max,
            "hint": "finish flows when done (POST /flows/{id}/finish); finished flows make room",
        }))
    }

    /// A new flow; at the cap the oldest finished flow makes room, else 429. Returns
    /// the ids of evicted flows beside it.
    pub(crate) async fn create(
        &self,
        session_id: Option<String>,
        label: Option<String>,
        meta: Option<Map<String, Value>>,
    ) -> Result<(Arc<Flow>, Option<String>), ApiError> {
        let record = FlowRecord { session_id, label, meta, created_at: now_ms() };
        let id = new_id("flow");
        if let Some(cluster) = &self.cluster {
            let evicted = cluster.create_flow(&id, &record, self.max).await?.ok_or_else(|| self.limit_reached())?;
            return Ok((Arc::new(self.flow(id, record)), evicted));
        }
        let flow = Arc::new(self.flow(id, record));
        let mut map = self.map.write();
        let mut evicted = None;
        if map.len() >= self.max {
            let oldest_finished = map
                .values()
                .filter(|flow| flow.is_finished())
                .min_by_key(|flow| flow.last_used.load(Ordering::Relaxed))
                .map(|flow| flow.id.clone());
            let Some(id) = oldest_finished else {
                return Err(self.limit_reached());
            };
            map.remove(&id);
            evicted = Some(id);
        }
        map.insert(flow.id.clone(), Arc::clone(&flow));
        Ok((flow, evicted))
    }

    pub(crate) async fn get(&self, id: &str) -> Result<Arc<Flow>, ApiError> {
        if let Some(cluster) = &self.cluster {
            let record = cluster.flow(id, true).await?.ok_or_else(|| ApiError::flow_not_found(id))?;
            return Ok(Arc::new(self.flow(id.to_owned(), record)));
        }
        let flow = self.map.read().get(id).cloned().ok_or_else(|| ApiError::flow_not_found(id))?;
        flow.touch();
        Ok(flow)
    }

    /// The flow without marking it used (observers reading it do not keep it alive).
    pub(crate) async fn peek(&self, id: &str) -> Result<Option<Arc<Flow>>, ApiError> {
        if let Some(cluster) = &self.cluster {
            return Ok(cluster.flow(id, false).await?.map(|record| Arc::new(self.flow(id.to_owned(), record))));
        }
        Ok(self.map.read().get(id).cloned())
    }

    /// The live flows, newest first; only those of `session_id` when given.
    pub(crate) async fn list(&self, session_id: Option<&str>) -> Result<Vec<FlowListing>, ApiError> {
        let mut flows = match &self.cluster {
            Some(cluster) => cluster.list_flows().await?,
            None => self.map.read().values().map(|flow| flow.listing()).collect(),
        };
        flows.retain(|flow| session_id.is_none_or(|id| flow.session_id.as_deref() == Some(id)));
        flows.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.flow_id.cmp(&a.flow_id)));
        Ok(flows)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.read().len()
    }

    /// Removes flows idle for `ttl` at `now` (ms); returns their ids.
    pub(crate) fn sweep(&self, now: u64, ttl: Duration) -> Vec<String> {
        let mut map = self.map.write();
        let ttl = ttl.as_millis() as u64;
        crate::clock::remove_where(&mut map, |flow| now.saturating_sub(flow.last_used.load(Ordering::Relaxed)) >= ttl)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::wire::TimingInfo;

    /// A running execution `id`, nothing of it known yet.
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
            timing: TimingInfo { start_time: 0, end_time: None, duration_ms: None, ttfb: None },
            response: None,
            assertions: None,
            logs: Vec::new(),
            logs_truncated: false,
            status: ExecutionStatus::Running,
            error: None,
        }
    }

    #[tokio::test]
    async fn keeps_the_newest_executions_and_counts_outcomes_once() {
        let flows = Flows::new(2);
        let (flow, _) = flows.create(None, None, None).await.expect("created");
        for index in 0..5 {
            flow.record(execution(&format!("x{index}")), 3, &Arc::default());
        }
        assert_eq!(flow.stored_count(), 3);
        assert!(flow.execution("x1").await.expect("read").is_none());
        flow.update("x4", &Arc::default(), |stored| stored.status = ExecutionStatus::Success);
        flow.update("x4", &Arc::default(), |stored| stored.status = ExecutionStatus::Success);
        flow.update("x3", &Arc::default(), |stored| stored.status = ExecutionStatus::Failed);
        let (summary, first) = flow.finish().await.expect("finished");
        assert!(first);
        assert_eq!((summary.total, summary.succeeded, summary.failed), (5, 1, 1));
        assert!(!flow.finish().await.expect("finished").1);
    }

    #[tokio::test]
    async fn flows_are_listed_newest_first_with_their_executions_without_bodies() {
        let flows = Flows::new(10);
        let (first, _) = flows.create(Some("sess_a".to_owned()), Some("one".to_owned()), None).await.expect("first");
        let (second, _) = flows.create(None, None, None).await.expect("second");
        let mut stored = execution("x0");
        stored.body_preview = Some("{}".to_owned());
        stored.logs = vec!["line".to_owned()];
        first.record(stored, 10, &Arc::default());
        first.record(execution("x1"), 10, &Arc::default());
        first.update("x1", &Arc::default(), |stored| stored.status = ExecutionStatus::Failed);
        first.finish().await.expect("finished");

        let listed = flows.list(None).await.expect("listed");
        let ids: Vec<_> = listed.iter().map(|flow| flow.flow_id.as_str()).collect();
        let expected = if second.created_at == first.created_at {
            let mut ids = vec![first.id.as_str(), second.id.as_str()];
            ids.sort_unstable_by(|a, b| b.cmp(a));
            ids
        } else {
            vec![second.id.as_str(), first.id.as_str()]
        };
        assert_eq!(ids, expected);
        let one = flows.list(Some("sess_a")).await.expect("listed");
        assert_eq!(one.len(), 1);
        assert!(one[0].finished);
        assert_eq!((one[0].summary.total, one[0].summary.failed), (2, 1));

        let executions = first.executions().await.expect("read");
        let ids: Vec<_> = executions.iter().map(|stored| stored.req_exec_id.as_str()).collect();
        assert_eq!(ids, ["x0", "x1"]);
        assert!(executions[0].body_preview.is_none() && executions[0].logs.is_empty());
    }

    #[tokio::test]
    async fn at_the_cap_finished_flows_make_room_and_live_ones_do_not() {
        let flows = Flows::new(2);
        let (first, _) = flows.create(None, None, None).await.expect("first");
        flows.create(None, None, None).await.expect("second");
        let error = flows.create(None, None, None).await.expect_err("cap");
        assert_eq!(error.code, "FLOW_LIMIT_REACHED");
        first.finish().await.expect("finished");
        let (_, evicted) = flows.create(None, None, None).await.expect("room made");
        assert_eq!(evicted.as_deref(), Some(first.id.as_str()));
        assert_eq!(flows.len(), 2);
    }

    #[tokio::test]
    async fn idle_flows_expire() {
        let flows = Flows::new(10);
        let (flow, _) = flows.create(None, None, None).await.expect("created");
        assert!(flows.sweep(now_ms(), Duration::from_secs(60)).is_empty());
        assert_eq!(flows.sweep(now_ms() + 60_000, Duration::from_secs(60)), vec![flow.id.clone()]);
        assert!(flows.get(&flow.id).await.is_err());
    }
}
