//! Flows: groups of executions that observers follow, with the store of their
//! executions (bounded per flow) and their lifecycle (finish, idle expiry, cap), kept
//! in a [`FlowStore`] (`store/flows.rs`: in memory, or Redis with `--redis`).

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use serde_json::{Map, Value};
use volley_protocol::ErrorCode;

use crate::clock::{new_id, now_ms};
use crate::error::ApiError;
use crate::store::{FlowRecord, FlowStore};
use crate::wire::FlowListing;

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

pub(crate) use crate::store::Flow;

/// The live flows, kept in their store ([`FlowStore`]: this process's memory, or Redis
/// with `--redis`).
pub(crate) struct Flows {
    max: usize,
    store: Arc<dyn FlowStore>,
}

impl std::fmt::Debug for Flows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flows").field("max", &self.max).finish_non_exhaustive()
    }
}

impl Flows {
    pub(crate) fn new(max: usize, store: Arc<dyn FlowStore>) -> Self {
        Self { max, store }
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
        self.store.create(new_id("flow"), record, self.max).await?.ok_or_else(|| self.limit_reached())
    }

    pub(crate) async fn get(&self, id: &str) -> Result<Arc<Flow>, ApiError> {
        self.store.flow(id, true).await?.ok_or_else(|| ApiError::flow_not_found(id))
    }

    /// The flow without marking it used (observers reading it do not keep it alive).
    pub(crate) async fn peek(&self, id: &str) -> Result<Option<Arc<Flow>>, ApiError> {
        self.store.flow(id, false).await
    }

    /// The live flows, newest first; only those of `session_id` when given.
    pub(crate) async fn list(&self, session_id: Option<&str>) -> Result<Vec<FlowListing>, ApiError> {
        let mut flows = self.store.list().await?;
        flows.retain(|flow| session_id.is_none_or(|id| flow.session_id.as_deref() == Some(id)));
        flows.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.flow_id.cmp(&a.flow_id)));
        Ok(flows)
    }

    /// Removes flows idle for `ttl` at `now` (ms); returns their ids.
    pub(crate) fn sweep(&self, now: u64, ttl: Duration) -> Vec<String> {
        self.store.sweep(now, ttl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemoryFlows, execution};
    use volley_protocol::ExecutionStatus;

    fn flows(max: usize) -> Flows {
        Flows::new(max, Arc::new(MemoryFlows::default()))
    }

    #[tokio::test]
    async fn keeps_the_newest_executions_and_counts_outcomes_once() {
        let flows = flows(2);
        let (flow, _) = flows.create(None, None, None).await.expect("created");
        for index in 0..5 {
            flow.record(execution(&format!("x{index}")), 3, &Arc::default());
        }
        assert_eq!(flow.executions().await.expect("read").len(), 3);
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
        let flows = flows(10);
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
        let flows = flows(2);
        let (first, _) = flows.create(None, None, None).await.expect("first");
        flows.create(None, None, None).await.expect("second");
        let error = flows.create(None, None, None).await.expect_err("cap");
        assert_eq!(error.code, "FLOW_LIMIT_REACHED");
        first.finish().await.expect("finished");
        let (_, evicted) = flows.create(None, None, None).await.expect("room made");
        assert_eq!(evicted.as_deref(), Some(first.id.as_str()));
        assert_eq!(flows.list(None).await.expect("listed").len(), 2);
    }

    #[tokio::test]
    async fn idle_flows_expire() {
        let flows = flows(10);
        let (flow, _) = flows.create(None, None, None).await.expect("created");
        assert!(flows.sweep(now_ms(), Duration::from_secs(60)).is_empty());
        assert_eq!(flows.sweep(now_ms() + 60_000, Duration::from_secs(60)), vec![flow.id.clone()]);
        assert!(flows.get(&flow.id).await.is_err());
    }
}
