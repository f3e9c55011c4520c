//! `volley serve --redis URL`: what every instance of a cluster shares through Redis.
//! Sessions, flows and their stored executions are Redis keys that expire by
//! themselves; observer events go to Redis Streams (one per flow for replay, one for
//! every event) whose `seq` Redis assigns; scoped tokens are revoked for every
//! instance; WebSocket session envelopes and commands travel through streams of
//! their own (`ws.rs`). Without `--redis` none of this exists and the server keeps
//! everything in its memory, as before.
//!
//! Writes that need no answer (events, stored executions) go through one ordered
//! queue per instance, sent to Redis in pipelines (`writes.rs`); an execution waits
//! for its writes before it answers ([`Cluster::settle`]), so that what it answered
//! can be read from any instance, and answers an error when what it stored was lost.

pub(crate) mod events;
mod flows;
mod keys;
mod scripts;
mod store;
#[cfg(test)]
mod tests;
mod writes;
pub(crate) mod ws;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub(crate) use keys::Keys;
use writes::{WRITE_QUEUE, Write};

use crate::clock::new_id;
use crate::config::{RedisError, shown_url};

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

/// An instance's link to the cluster.
pub(crate) struct Cluster {
    client: redis::Client,
    connection: ConnectionManager,
    /// This instance's id (`inst_…`): the owner of the WebSocket sessions it opened.
    pub(crate) instance: String,
    pub(crate) keys: Keys,
    pub(crate) lifetimes: Lifetimes,
    writes: mpsc::Sender<Write>,
    /// What the write queue lost or delayed.
    losses: Arc<writes::Losses>,
    /// Whether some instance has observers, as last heard (every [`HEARTBEAT`]): an
    /// execution outside a flow then waits for its events to be written before it
    /// answers. Whether they are kept is Redis's decision (`scripts::PUBLISH`).
    listened: AtomicBool,
    /// The newest entry of the stream of every event when the instance connected: its
    /// pump reads on from there.
    events_from: String,
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

impl Cluster {
    /// Connects to Redis at `url` (checked with a `PING`) and starts the instance's
    /// writer; the event pump and the heartbeat start with [`Cluster::start`].
    pub(crate) async fn connect(url: &str, prefix: &str, lifetimes: Lifetimes) -> Result<Arc<Self>, RedisError> {
        Self::connect_with_queue(url, prefix, lifetimes, WRITE_QUEUE).await
    }

    /// [`Cluster::connect`] with a write queue of `capacity` writes.
    pub(crate) async fn connect_with_queue(
        url: &str,
        prefix: &str,
        lifetimes: Lifetimes,
        capacity: usize,
    ) -> Result<Arc<Self>, RedisError> {
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
        let (writes, queue) = mpsc::channel(capacity);
        let stop = CancellationToken::new();
        let cluster = Arc::new(Self {
            client,
            connection,
            instance: new_id("inst"),
            keys: Keys::new(prefix),
            lifetimes,
            writes,
            losses: Arc::default(),
            listened: AtomicBool::new(false),
            events_from,
            remote_controls: ws::RemoteControls::default(),
            stop,
        });
        let losses = Arc::clone(&cluster.losses);
        tokio::spawn(writes::write_loop(cluster.keys.clone(), lifetimes.flow_ms, cluster.connection(), queue, losses));
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

impl Cluster {
    /// Every store of a `--redis` server: Redis.
    pub(crate) fn stores(self: &Arc<Self>) -> crate::store::Stores {
        crate::store::Stores {
            sessions: Arc::clone(self) as _,
            flows: Arc::new(flows::ClusterFlows(Arc::clone(self))),
            tokens: Arc::clone(self) as _,
            events: Arc::clone(self) as _,
            ws: Arc::new(ws::ClusterWs(Arc::clone(self))),
            writes: Arc::clone(self) as _,
        }
    }
}

/// Decodes the string fields of a Redis value read as a map.
pub(crate) fn text(map: &std::collections::HashMap<String, redis::Value>, field: &str) -> Option<String> {
    map.get(field).and_then(|value| redis::from_redis_value_ref::<String>(value).ok()).filter(|text| !text.is_empty())
}
