//! Sessions, flows, stored executions and scoped tokens as Redis keys, with the
//! lifetimes and caps of the in-memory store: Redis expires them, each cap is checked
//! in the script that adds.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use volley_protocol::{ExecutionStatus, StoredExecution};

use super::{Cluster, scripts};
use crate::clock::{new_id, now_ms};
use crate::error::ApiError;
use crate::store::{FlowRecord, Ledger, SessionRecord, SessionStore, TokenStore};
use crate::wire::{FlowListing, FlowSummary};

/// How long a session's turn is held without being extended (its holder extends it
/// while the execution runs; a holder that died frees it after this).
const TURN_LEASE: Duration = Duration::from_secs(15);

/// A response kept for chaining, as Redis holds it: header values and body in base64
/// (they need not be UTF-8).
#[derive(Debug, Serialize, Deserialize)]
struct StoredChained {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

/// Redis did not answer: the request cannot be served by this instance now.
pub(crate) fn unavailable(error: &redis::RedisError) -> ApiError {
    tracing::warn!("Redis request failed: {error}");
    ApiError::store_unavailable()
}

impl Cluster {
    /// Adds a session; `false` at the cap.
    pub(super) async fn create_session(
        &self,
        id: &str,
        variables: &Map<String, Value>,
        cookies: &str,
        max: usize,
    ) -> Result<bool, ApiError> {
        let variables = serde_json::to_string(variables).unwrap_or_default();
        let created: i64 = scripts::SESSION_CREATE
            .key(self.keys.sessions())
            .key(self.keys.session(id))
            .arg(id)
            .arg(now_ms())
            .arg(self.lifetimes.session_ms)
            .arg(max)
            .arg(variables)
            .arg(cookies)
            .invoke_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))?;
        Ok(created == 1)
    }

    /// The session `id` (`touch`: marked as used), `None` when it is gone; its
    /// variables and cookies only when their version is not `held`.
    pub(super) async fn session(&self, id: &str, touch: bool, held: u64) -> Result<Option<SessionRecord>, ApiError> {
        let fields: Option<HashMap<String, String>> = scripts::SESSION_GET
            .key(self.keys.sessions())
            .key(self.keys.session(id))
            .key(self.keys.session_responses(id))
            .arg(id)
            .arg(now_ms())
            .arg(self.lifetimes.session_ms)
            .arg(u8::from(touch))
            .arg(held)
            .invoke_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))?;
        Ok(fields.map(|fields| {
            let number = |name: &str| fields.get(name).and_then(|value| value.parse().ok()).unwrap_or(0);
            SessionRecord {
                created_at: number("createdAt"),
                last_used: number("lastUsed"),
                version: number("version"),
                state: fields.get("variables").map(|variables| {
                    let variables = serde_json::from_str(variables).unwrap_or_default();
                    (variables, fields.get("cookies").cloned().unwrap_or_default())
                }),
                chain: number("chain"),
            }
        }))
    }

    /// Writes what changed of a session; its new version, `None` when it is gone.
    pub(super) async fn save_session(
        &self,
        id: &str,
        variables: Option<&Map<String, Value>>,
        cookies: Option<&str>,
    ) -> Result<Option<u64>, ApiError> {
        let text = variables.map(|variables| serde_json::to_string(variables).unwrap_or_default());
        scripts::SESSION_SAVE
            .key(self.keys.session(id))
            .arg(text.as_deref().unwrap_or(""))
            .arg(cookies.unwrap_or(""))
            .arg(u8::from(text.is_some()))
            .arg(u8::from(cookies.is_some()))
            .invoke_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))
    }

    /// Keeps the response of the session's request `name` for chaining; the new version
    /// of its responses, `None` when the session is gone.
    pub(super) async fn save_chained(
        &self,
        id: &str,
        name: &str,
        response: &volley_engine::stages::ChainedResponse,
    ) -> Result<Option<u64>, ApiError> {
        let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let stored = StoredChained {
            status: response.status,
            headers: response
                .headers
                .iter()
                .map(|(name, value)| (name.to_string(), encode(value.as_bytes())))
                .collect(),
            body: encode(&response.body),
        };
        scripts::SESSION_CHAIN
            .key(self.keys.session(id))
            .key(self.keys.session_responses(id))
            .arg(name)
            .arg(serde_json::to_string(&stored).unwrap_or_default())
            .arg(self.lifetimes.session_ms)
            .invoke_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))
    }

    /// The responses a session keeps for chaining, by request name.
    pub(super) async fn chained(
        &self,
        id: &str,
    ) -> Result<Vec<(String, volley_engine::stages::ChainedResponse)>, ApiError> {
        let fields: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.keys.session_responses(id))
            .query_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))?;
        let decode = |text: &str| base64::engine::general_purpose::STANDARD.decode(text).ok();
        Ok(fields
            .into_iter()
            .filter_map(|(name, json)| {
                let stored: StoredChained = serde_json::from_str(&json).ok()?;
                let mut headers = http::HeaderMap::new();
                for (header, value) in stored.headers {
                    let value = http::HeaderValue::from_bytes(&decode(&value)?).ok()?;
                    headers.append(http::HeaderName::from_bytes(header.as_bytes()).ok()?, value);
                }
                let body = bytes::Bytes::from(decode(&stored.body)?);
                Some((name, volley_engine::stages::ChainedResponse { status: stored.status, headers, body }))
            })
            .collect())
    }

    /// Removes a session; `false` when it was gone.
    pub(super) async fn remove_session(&self, id: &str) -> Result<bool, ApiError> {
        let mut pipeline = redis::pipe();
        pipeline
            .del(self.keys.session(id))
            .zrem(self.keys.sessions(), id)
            .ignore()
            .del(self.keys.session_responses(id))
            .ignore();
        let (removed,): (u32,) =
            pipeline.query_async(&mut self.connection()).await.map_err(|error| unavailable(&error))?;
        Ok(removed > 0)
    }

    /// Waits for the session's turn, cluster-wide: one execution of a session at a
    /// time, whatever instance runs it. The turn ends when the guard is dropped.
    pub(super) async fn session_turn(&self, id: &str) -> Result<Turn, ApiError> {
        let key = self.keys.session_lock(id);
        let holder = new_id("turn");
        let mut pause = Duration::from_millis(1);
        loop {
            let taken: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(&holder)
                .arg("NX")
                .arg("PX")
                .arg(TURN_LEASE.as_millis() as u64)
                .query_async(&mut self.connection())
                .await
                .map_err(|error| unavailable(&error))?;
            if taken.is_some() {
                break;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(25));
        }
        let mut connection = self.connection();
        let (lease_key, lease_holder) = (key.clone(), holder.clone());
        let lease = tokio::spawn(async move {
            let mut interval = tokio::time::interval(TURN_LEASE / 3);
            interval.tick().await;
            loop {
                interval.tick().await;
                let extended: redis::RedisResult<i64> = scripts::EXTEND
                    .key(&lease_key)
                    .arg(&lease_holder)
                    .arg(TURN_LEASE.as_millis() as u64)
                    .invoke_async(&mut connection)
                    .await;
                if !matches!(extended, Ok(1)) {
                    return;
                }
            }
        });
        Ok(Turn { connection: self.connection(), key, holder, lease })
    }

    /// Adds a flow; `None` at the cap (no finished flow to evict), else the id of the
    /// flow evicted to make room, if any.
    pub(super) async fn create_flow(
        &self,
        id: &str,
        record: &FlowRecord,
        max: usize,
    ) -> Result<Option<Option<String>>, ApiError> {
        let (created, evicted): (i64, String) = scripts::FLOW_CREATE
            .key(self.keys.flows())
            .key(self.keys.flow(id))
            .arg(id)
            .arg(record.created_at)
            .arg(self.lifetimes.flow_ms)
            .arg(max)
            .arg(self.keys.flow(""))
            .arg(serde_json::to_string(record).unwrap_or_default())
            .invoke_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))?;
        Ok((created == 1).then(|| (!evicted.is_empty()).then_some(evicted)))
    }

    /// The flow `id` (`touch`: marked as used), `None` when it is gone.
    pub(super) async fn flow(&self, id: &str, touch: bool) -> Result<Option<FlowRecord>, ApiError> {
        let record: Option<String> = scripts::FLOW_GET
            .key(self.keys.flows())
            .key(self.keys.flow(id))
            .arg(id)
            .arg(now_ms())
            .arg(self.lifetimes.flow_ms)
            .arg(u8::from(touch))
            .invoke_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))?;
        Ok(record.and_then(|record| serde_json::from_str(&record).ok()))
    }

    /// Finishes a flow once: its summary and whether this call finished it; `None`
    /// when it is gone.
    pub(super) async fn finish_flow(&self, id: &str) -> Result<Option<(FlowSummary, bool)>, ApiError> {
        let parts: Option<Vec<u64>> = scripts::FLOW_FINISH
            .key(self.keys.flow(id))
            .arg(now_ms())
            .invoke_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))?;
        Ok(parts.and_then(|parts| match parts[..] {
            [first, total, succeeded, failed, duration_ms] => {
                Some((FlowSummary { total, succeeded, failed, duration_ms }, first == 1))
            }
            _ => None,
        }))
    }

    /// Queues a new execution of a flow (the oldest goes past `limit`), kept for
    /// `ledger`'s execution.
    pub(super) fn record_execution(
        &self,
        ledger: &Arc<Ledger>,
        flow_id: &str,
        execution: &StoredExecution,
        limit: usize,
    ) {
        let keys = [
            self.keys.flow(flow_id),
            self.keys.flow_part(flow_id, "executions"),
            self.keys.flow_part(flow_id, "order"),
        ];
        let json = serde_json::to_string(execution).unwrap_or_default();
        let (limit, lifetime) = (limit.to_string(), self.lifetimes.flow_ms.to_string());
        let args = [execution.req_exec_id.as_str(), json.as_str(), limit.as_str(), lifetime.as_str()];
        self.keep(ledger, scripts::eval(scripts::EXECUTION_RECORD, &keys, &args));
    }

    /// Queues the new state of an execution, kept for `ledger`'s execution; `outcome`
    /// the count it just joined.
    pub(super) fn update_execution(
        &self,
        ledger: &Arc<Ledger>,
        flow_id: &str,
        execution: &StoredExecution,
        outcome: Option<ExecutionStatus>,
    ) {
        let keys = [self.keys.flow(flow_id), self.keys.flow_part(flow_id, "executions")];
        let json = serde_json::to_string(execution).unwrap_or_default();
        let counter = match outcome {
            Some(ExecutionStatus::Success) => "succeeded",
            Some(ExecutionStatus::Failed) => "failed",
            _ => "",
        };
        self.keep(
            ledger,
            scripts::eval(scripts::EXECUTION_UPDATE, &keys, &[execution.req_exec_id.as_str(), json.as_str(), counter]),
        );
    }

    /// A stored execution of a flow.
    pub(super) async fn execution(
        &self,
        flow_id: &str,
        req_exec_id: &str,
    ) -> Result<Option<StoredExecution>, ApiError> {
        let json: Option<String> = redis::cmd("HGET")
            .arg(self.keys.flow_part(flow_id, "executions"))
            .arg(req_exec_id)
            .query_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))?;
        Ok(json.and_then(|json| serde_json::from_str(&json).ok()))
    }

    /// The live flows (in no order).
    pub(super) async fn list_flows(&self) -> Result<Vec<FlowListing>, ApiError> {
        let now = now_ms();
        let rows: Vec<(String, String, u64, u64, u64, u64, String)> = scripts::FLOW_LIST
            .key(self.keys.flows())
            .arg(now)
            .arg(self.lifetimes.flow_ms)
            .arg(self.keys.flow(""))
            .invoke_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, record, total, succeeded, failed, created_at, finished)| {
                let record: FlowRecord = serde_json::from_str(&record).ok()?;
                let done: Vec<u64> = finished.split(',').filter_map(|part| part.parse().ok()).collect();
                let summary = match done[..] {
                    [total, succeeded, failed, duration_ms] => FlowSummary { total, succeeded, failed, duration_ms },
                    _ => FlowSummary { total, succeeded, failed, duration_ms: now.saturating_sub(created_at) },
                };
                Some(FlowListing {
                    flow_id: id,
                    session_id: record.session_id,
                    label: record.label,
                    meta: record.meta,
                    created_at: record.created_at,
                    summary,
                    finished: !finished.is_empty(),
                })
            })
            .collect())
    }

    /// A flow's stored executions, oldest first.
    pub(super) async fn executions(&self, flow_id: &str) -> Result<Vec<StoredExecution>, ApiError> {
        let rows: Vec<String> = scripts::EXECUTION_LIST
            .key(self.keys.flow_part(flow_id, "order"))
            .key(self.keys.flow_part(flow_id, "executions"))
            .invoke_async(&mut self.connection())
            .await
            .map_err(|error| unavailable(&error))?;
        Ok(rows.iter().filter_map(|json| serde_json::from_str(json).ok()).collect())
    }
}

/// Scoped tokens as Redis keys that expire with the token, so that a token issued by
/// one instance verifies on every instance and a revocation holds everywhere.
impl TokenStore for Cluster {
    fn issued<'a>(&'a self, jti: &'a str, expires_at: u64) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let lifetime = expires_at.saturating_sub(now_ms()).max(1);
            redis::cmd("SET")
                .arg(self.keys.token(jti))
                .arg(expires_at)
                .arg("PX")
                .arg(lifetime)
                .query_async::<()>(&mut self.connection())
                .await
                .map_err(|error| unavailable(&error))
        })
    }

    fn live<'a>(&'a self, jti: &'a str) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(async move {
            redis::cmd("EXISTS")
                .arg(self.keys.token(jti))
                .query_async(&mut self.connection())
                .await
                .map_err(|error| unavailable(&error))
        })
    }

    fn revoke<'a>(&'a self, jti: &'a str) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(async move {
            let removed: u32 = redis::cmd("DEL")
                .arg(self.keys.token(jti))
                .query_async(&mut self.connection())
                .await
                .map_err(|error| unavailable(&error))?;
            Ok(removed > 0)
        })
    }

    /// Nothing to do: the keys expire by themselves.
    fn sweep(&self, _now: u64) {}
}

/// Every instance's sessions: the state and the ledger in Redis, which expires them.
impl SessionStore for Cluster {
    fn create<'a>(
        &'a self,
        id: &'a str,
        variables: &'a Map<String, Value>,
        cookies: &'a str,
        max: usize,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(self.create_session(id, variables, cookies, max))
    }

    fn session<'a>(
        &'a self,
        id: &'a str,
        touch: bool,
        held: u64,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, ApiError>> {
        Box::pin(Cluster::session(self, id, touch, held))
    }

    fn save<'a>(
        &'a self,
        id: &'a str,
        variables: Option<&'a Map<String, Value>>,
        cookies: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<u64>, ApiError>> {
        Box::pin(self.save_session(id, variables, cookies))
    }

    fn save_chained<'a>(
        &'a self,
        id: &'a str,
        name: &'a str,
        response: &'a volley_engine::stages::ChainedResponse,
    ) -> BoxFuture<'a, Result<Option<u64>, ApiError>> {
        Box::pin(Cluster::save_chained(self, id, name, response))
    }

    fn chained<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(String, volley_engine::stages::ChainedResponse)>, ApiError>> {
        Box::pin(Cluster::chained(self, id))
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(self.remove_session(id))
    }

    fn turn<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<crate::store::Turn, ApiError>> {
        Box::pin(async move { Ok(Box::new(self.session_turn(id).await?) as crate::store::Turn) })
    }

    /// Nothing to forget: the keys expire by themselves, and this instance only dropped
    /// its copies.
    fn forget(&self, _ids: &[String]) {}
}

/// A session's turn, held until dropped.
#[derive(Debug)]
pub(crate) struct Turn {
    connection: redis::aio::ConnectionManager,
    key: String,
    holder: String,
    lease: tokio::task::JoinHandle<()>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.lease.abort();
        let (mut connection, key, holder) =
            (self.connection.clone(), std::mem::take(&mut self.key), std::mem::take(&mut self.holder));
        tokio::spawn(async move {
            let released: redis::RedisResult<i64> =
                scripts::UNLOCK.key(key).arg(holder).invoke_async(&mut connection).await;
            if let Err(error) = released {
                tracing::warn!("cannot release a session's turn in Redis: {error}");
            }
        });
    }
}
