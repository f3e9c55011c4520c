//! `volley serve --redis URL`: what every instance of a cluster shares through Redis.
//! Sessions, flows and their stored executions are Redis keys that expire by
//! themselves; observer events go to Redis Streams (one per flow for replay, one for
//! every event) whose `seq` Redis assigns; scoped tokens are revoked for every
//! instance; WebSocket session envelopes and commands travel through streams of
//! their own (`ws.rs`). Without `--redis` none of this exists and the server keeps
//! everything in its memory, as before.
//!
//! Writes that need no answer (events, stored executions) go through one ordered
//! queue per instance, sent to Redis in pipelines; an execution waits for its writes
//! before it answers ([`Cluster::flush`]), so that what it answered can be read
//! from any instance.

pub(crate) mod events;
mod keys;
mod scripts;
mod store;
#[cfg(test)]
mod tests;
pub(crate) mod ws;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

pub(crate) use events::EventRecord;
pub(crate) use keys::Keys;
pub(crate) use store::{FlowRecord, SessionRecord, Turn, unavailable_error};

use crate::clock::new_id;

/// Writes queued per instance before a publisher waits for room.
const WRITE_QUEUE: usize = 16 * 1024;
/// Writes sent in one pipeline at most.
const WRITE_BATCH: usize = 512;
/// How often an instance says it is alive, and says whether it has observers.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long an instance counts as alive after its last heartbeat.
pub(crate) const ALIVE_FOR: Duration = Duration::from_secs(4);
/// Events kept in the stream of every event (observers without a flow filter read it
/// live; flows replay from their own stream).
pub(crate) const GLOBAL_EVENTS: usize = 10_000;

/// How long sessions and flows live unused (Redis expires their keys).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lifetimes {
    pub(crate) session_ms: u64,
    pub(crate) flow_ms: u64,
}

/// A write queued for Redis, or a marker answered once every write before it is sent.
#[derive(Debug)]
enum Write {
    Command(redis::Cmd),
    /// An observer event: the arguments of `scripts::PUBLISH` for it. Events in a row
    /// are published by one script.
    Event([String; 10]),
    Flush(oneshot::Sender<()>),
}

/// An instance's link to the cluster.
pub(crate) struct Cluster {
    client: redis::Client,
    connection: ConnectionManager,
    /// This instance's id (`inst_…`): the owner of the WebSocket sessions it opened.
    pub(crate) instance: String,
    pub(crate) keys: Keys,
    pub(crate) lifetimes: Lifetimes,
    writes: mpsc::Sender<Write>,
    /// Whether some instance has observers, as last heard (every [`HEARTBEAT`]): an
    /// execution outside a flow then waits for its events to be written before it
    /// answers. Whether they are kept is Redis's decision (`scripts::PUBLISH`).
    listened: AtomicBool,
    /// The newest entry of the stream of every event when the instance connected: its
    /// pump reads on from there.
    events_from: String,
    /// Writes dropped because the queue was full.
    dropped: AtomicU64,
    /// The control sockets attached here to sessions other instances own: one per
    /// session, a new one replaces the previous (`ws.rs`).
    pub(crate) remote_controls: ws::RemoteControls,
    /// Cancelled when the server stops: the background tasks end.
    pub(crate) stop: CancellationToken,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").field("instance", &self.instance).finish_non_exhaustive()
    }
}

/// `--redis` could not be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot use Redis at {url}: {message}")]
pub struct RedisError {
    /// The URL, its password hidden.
    pub url: String,
    /// What went wrong.
    pub message: String,
}

impl Cluster {
    /// Connects to Redis at `url` (checked with a `PING`) and starts the instance's
    /// writer; the event pump and the heartbeat start with [`Cluster::start`].
    pub(crate) async fn connect(url: &str, prefix: &str, lifetimes: Lifetimes) -> Result<Arc<Self>, RedisError> {
        let fail = |message: String| RedisError { url: shown_url(url), message };
        let client = redis::Client::open(url).map_err(|error| fail(error.to_string()))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(3)))
            .set_response_timeout(Some(Duration::from_secs(5)))
            .set_number_of_retries(3);
        let mut connection = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(|error| fail(format!("{error} (is redis-server running there?)")))?;
        let _: String =
            redis::cmd("PING").query_async(&mut connection).await.map_err(|error| fail(error.to_string()))?;
        // The pump reads the stream of every event from here: whatever is published
        // once the instance serves reaches its observers.
        let newest: redis::streams::StreamRangeReply = redis::cmd("XREVRANGE")
            .arg(Keys::new(prefix).events())
            .arg("+")
            .arg("-")
            .arg("COUNT")
            .arg(1)
            .query_async(&mut connection)
            .await
            .map_err(|error| fail(error.to_string()))?;
        let events_from = newest.ids.first().map_or_else(|| "0-0".to_owned(), |entry| entry.id.clone());
        let (writes, queue) = mpsc::channel(WRITE_QUEUE);
        let stop = CancellationToken::new();
        let cluster = Arc::new(Self {
            client,
            connection,
            instance: new_id("inst"),
            keys: Keys::new(prefix),
            lifetimes,
            writes,
            listened: AtomicBool::new(false),
            events_from,
            dropped: AtomicU64::new(0),
            remote_controls: ws::RemoteControls::default(),
            stop,
        });
        tokio::spawn(write_loop(cluster.keys.clone(), lifetimes.flow_ms, cluster.connection(), queue));
        Ok(cluster)
    }

    /// A connection for requests that need an answer (shared, multiplexed).
    pub(crate) fn connection(&self) -> ConnectionManager {
        self.connection.clone()
    }

    /// A connection of its own, without a response timeout, for blocking reads.
    pub(crate) async fn blocking_connection(&self) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(3)))
            .set_response_timeout(None);
        self.client.get_multiplexed_async_connection_with_config(&config).await
    }

    /// Queues a write; it is sent in order with every other write of this instance.
    /// A queue full of [`WRITE_QUEUE`] writes (Redis far slower than the executions)
    /// drops it, as a lagging observer is dropped: the instance never waits on it.
    pub(crate) fn write(&self, command: redis::Cmd) {
        self.queue(Write::Command(command));
    }

    fn queue(&self, write: Write) {
        if self.writes.try_send(write).is_err() {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed);
            if (dropped + 1).is_power_of_two() {
                tracing::warn!(dropped = dropped + 1, "Redis is behind: events and stored executions were dropped");
            }
        }
    }

    /// Waits until every write queued so far is sent (or failed).
    pub(crate) async fn flush(&self) {
        let (done, sent) = oneshot::channel();
        if self.writes.send(Write::Flush(done)).await.is_ok() {
            let _ = sent.await;
        }
    }

    /// Whether some instance had observers when last heard.
    pub(crate) fn is_listened(&self) -> bool {
        self.listened.load(Ordering::Relaxed)
    }

    /// This instance has an observer now: written to Redis before it returns, so that
    /// the events outside a flow that any instance publishes from then on are kept
    /// for it (`scripts::PUBLISH` asks Redis, not the instance, whether anyone listens).
    pub(crate) async fn listening(&self) {
        self.listened.store(true, Ordering::Relaxed);
        let written: redis::RedisResult<()> =
            self.keys.listener_entry(&self.instance).query_async(&mut self.connection()).await;
        if let Err(error) = written {
            tracing::warn!("cannot tell Redis that this instance has an observer: {error}");
        }
    }

    /// Starts the pump of events into `hub` and the heartbeat.
    pub(crate) fn start(self: &Arc<Self>, hub: &Arc<crate::hub::Hub>) {
        tokio::spawn(events::pump(Arc::clone(self), Arc::clone(hub)));
        tokio::spawn(heartbeat(Arc::clone(self), Arc::clone(hub)));
    }
}

/// Sends the queued writes in pipelines, in order; answers flush markers once the
/// writes before them are sent.
async fn write_loop(keys: Keys, flow_ms: u64, mut connection: ConnectionManager, mut queue: mpsc::Receiver<Write>) {
    let mut batch = Vec::with_capacity(WRITE_BATCH);
    let mut events = Vec::new();
    while queue.recv_many(&mut batch, WRITE_BATCH).await > 0 {
        let mut pipeline = redis::pipe();
        let mut flushed = Vec::new();
        let mut commands = 0;
        for write in batch.drain(..) {
            match write {
                Write::Command(command) => {
                    if !events.is_empty() {
                        pipeline.add_command(events::publish_command(&keys, flow_ms, &events)).ignore();
                        events.clear();
                        commands += 1;
                    }
                    pipeline.add_command(command).ignore();
                    commands += 1;
                }
                Write::Event(event) => events.push(event),
                Write::Flush(done) => flushed.push(done),
            }
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
            }
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

/// Every [`HEARTBEAT`]: this instance is alive (its WebSocket sessions have an owner),
/// whether it has observers, and whether any instance has.
async fn heartbeat(cluster: Arc<Cluster>, hub: Arc<crate::hub::Hub>) {
    let mut connection = cluster.connection();
    let mut interval = tokio::time::interval(HEARTBEAT);
    loop {
        tokio::select! {
            _ = interval.tick() => {}
            () = cluster.stop.cancelled() => return,
        }
        let here = hub.has_local_subscribers();
        let listened: redis::RedisResult<usize> =
            cluster.keys.heartbeat(&cluster.instance, here).invoke_async(&mut connection).await;
        match listened {
            Ok(count) => cluster.listened.store(here || count > 0, Ordering::Relaxed),
            Err(error) => tracing::warn!("Redis heartbeat failed: {error}"),
        }
    }
}

/// `url` without its password, for messages.
pub(crate) fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// Decodes the string fields of a Redis value read as a map.
pub(crate) fn text(map: &std::collections::HashMap<String, redis::Value>, field: &str) -> Option<String> {
    map.get(field).and_then(|value| redis::from_redis_value_ref::<String>(value).ok()).filter(|text| !text.is_empty())
}
