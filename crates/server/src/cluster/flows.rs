//! Flows and their stored executions as Redis keys (the writes in `store.rs`): a
//! [`Flow`] of a `--redis` server is a handle made for each read, which holds the
//! executions it recorded until they end, to change them; each is written when
//! recorded (`pending`) and when it ends, not at every step between.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use volley_protocol::{ExecutionStatus, StoredExecution};

use super::Cluster;
use crate::error::ApiError;
use crate::hub::Sequence;
use crate::store::{Created, Flow, FlowRecord, FlowState, FlowStore, Ledger};
use crate::wire::{FlowListing, FlowSummary};

/// Every instance's flows, in Redis, which expires them.
#[derive(Debug)]
pub(super) struct ClusterFlows(pub(super) Arc<Cluster>);

/// A handle on a flow Redis keeps.
#[derive(Debug)]
struct ClusterFlow {
    cluster: Arc<Cluster>,
    /// The executions recorded through this handle, to change them.
    recorded: Mutex<VecDeque<StoredExecution>>,
}

impl ClusterFlows {
    fn handle(&self, id: String, record: FlowRecord) -> Arc<Flow> {
        let state = ClusterFlow { cluster: Arc::clone(&self.0), recorded: Mutex::default() };
        Arc::new(Flow::new(id, record, Arc::new(state)))
    }
}

impl FlowStore for ClusterFlows {
    fn create(&self, id: String, record: FlowRecord, max: usize) -> BoxFuture<'_, Result<Created, ApiError>> {
        Box::pin(async move {
            let created = self.0.create_flow(&id, &record, max).await?;
            Ok(created.map(|evicted| (self.handle(id, record), evicted)))
        })
    }

    fn flow<'a>(&'a self, id: &'a str, touch: bool) -> BoxFuture<'a, Result<Option<Arc<Flow>>, ApiError>> {
        Box::pin(async move { Ok(self.0.flow(id, touch).await?.map(|record| self.handle(id.to_owned(), record))) })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<FlowListing>, ApiError>> {
        Box::pin(self.0.list_flows())
    }

    /// Nothing to remove: the keys expire by themselves.
    fn sweep(&self, _now: u64, _ttl: Duration) -> Vec<String> {
        Vec::new()
    }
}

impl FlowState for ClusterFlow {
    /// Redis numbers the flow's events.
    fn sequence(&self) -> Sequence {
        Sequence::Shared
    }

    fn record(&self, flow_id: &str, execution: StoredExecution, limit: usize, ledger: &Arc<Ledger>) {
        self.cluster.record_execution(ledger, flow_id, &execution, limit);
        self.recorded.lock().push_back(execution);
    }

    fn update(
        &self,
        flow_id: &str,
        req_exec_id: &str,
        ledger: &Arc<Ledger>,
        change: &mut dyn FnMut(&mut StoredExecution),
    ) {
        let mut recorded = self.recorded.lock();
        if let Some(execution) = recorded.iter_mut().rev().find(|stored| stored.req_exec_id == req_exec_id) {
            let was_final = matches!(execution.status, ExecutionStatus::Success | ExecutionStatus::Failed);
            change(execution);
            // Written when it ends (and as recorded, `pending`, before): the steps
            // between would each rewrite the whole execution in Redis.
            if matches!(execution.status, ExecutionStatus::Success | ExecutionStatus::Failed) {
                self.cluster.update_execution(ledger, flow_id, execution, (!was_final).then_some(execution.status));
            }
        }
    }

    fn execution<'a>(
        &'a self,
        flow_id: &'a str,
        req_exec_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredExecution>, ApiError>> {
        Box::pin(self.cluster.execution(flow_id, req_exec_id))
    }

    fn executions<'a>(&'a self, flow_id: &'a str) -> BoxFuture<'a, Result<Vec<StoredExecution>, ApiError>> {
        Box::pin(self.cluster.executions(flow_id))
    }

    fn finish<'a>(&'a self, flow_id: &'a str) -> BoxFuture<'a, Result<Option<(FlowSummary, bool)>, ApiError>> {
        Box::pin(self.cluster.finish_flow(flow_id))
    }
}
