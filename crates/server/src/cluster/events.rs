//! Observer events through Redis: every instance publishes into the stream of every
//! event (and, for a flow's events, into the flow's stream, which replays), with the
//! flow's `seq` taken in Redis in the same step, so that one order holds for every
//! instance. Each instance pumps the stream of every event into its own hub, whose
//! subscribers filter as they always have.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::streams::{StreamRangeReply, StreamReadOptions, StreamReadReply};

use super::{Cluster, GLOBAL_EVENTS, Keys, scripts, text};
use crate::clock::now_ms;
use crate::hub::{Hub, ObserverEvent, RETAINED_PER_FLOW};
use crate::store::EventStore;

/// The key before an envelope's `seq`.
const SEQ_KEY: &str = "\"seq\":";
/// [`SEQ_PLACEHOLDER`](crate::hub::SEQ_PLACEHOLDER) as an envelope holds it.
const SEQ_MARKER: &str = "\"seq\":18446744073709551615";

/// The text of an envelope written with [`SEQ_PLACEHOLDER`](crate::hub::SEQ_PLACEHOLDER) before and after the
/// number, for Redis to put the `seq` between. Envelopes are written with sorted keys,
/// so `seq` comes after `payload` and `error`: the last marker is the envelope's own,
/// whatever they hold.
pub(crate) fn split_at_seq(json: &str) -> Option<(&str, &str)> {
    let at = json.rfind(SEQ_MARKER)?;
    Some((&json[..at + SEQ_KEY.len()], &json[at + SEQ_MARKER.len()..]))
}

/// An event to publish: its envelope, and its `seq` unless Redis takes the flow's next.
#[derive(Debug)]
pub(crate) struct EventRecord<'a> {
    pub(crate) kind: &'a str,
    pub(crate) session_id: Option<&'a str>,
    pub(crate) flow_id: Option<&'a str>,
    pub(crate) run_id: Option<&'a str>,
    pub(crate) seq: Option<u64>,
    pub(crate) json: &'a str,
}

impl Cluster {
    /// Queues `event` for the streams (in this instance's order of writes).
    pub(crate) fn publish(&self, event: &EventRecord<'_>) {
        let (head, tail, seq) = match (event.seq, split_at_seq(event.json)) {
            (None, Some((head, tail))) => (head, tail, String::new()),
            (Some(seq), _) => (event.json, "", seq.to_string()),
            (None, None) => return,
        };
        let [flow, stream, counter] = match event.flow_id {
            Some(flow) => [self.keys.flow(flow), self.keys.flow_part(flow, "events"), self.keys.flow_part(flow, "seq")],
            None => [String::new(), String::new(), String::new()],
        };
        let text = |value: Option<&str>| value.unwrap_or("").to_owned();
        self.publish_event([
            flow,
            stream,
            counter,
            head.to_owned(),
            tail.to_owned(),
            seq,
            event.kind.to_owned(),
            text(event.session_id),
            text(event.flow_id),
            text(event.run_id),
        ]);
    }
}

/// The `EVAL` that publishes `events` (ten arguments each, as [`Cluster::publish`] queues them).
pub(crate) fn publish_command(keys: &Keys, flow_ms: u64, events: &[[String; 10]]) -> redis::Cmd {
    let mut command = redis::cmd("EVAL");
    command
        .arg(scripts::PUBLISH)
        .arg(2)
        .arg(keys.events())
        .arg(keys.listeners())
        .arg(flow_ms)
        .arg(RETAINED_PER_FLOW)
        .arg(GLOBAL_EVENTS)
        .arg(now_ms());
    for event in events {
        command.arg(event.as_slice());
    }
    command
}

/// The entry of the stream of every event that says `missed` events of this instance
/// were lost: every instance ends its subscribers' streams on it.
pub(crate) fn gap_command(keys: &Keys, missed: u64) -> redis::Cmd {
    let mut command = redis::cmd("XADD");
    command.arg(keys.events()).arg("MAXLEN").arg("~").arg(GLOBAL_EVENTS).arg("*").arg("g").arg(missed);
    command
}

impl Cluster {
    /// The events of `flow_id` kept in its stream with `seq > after`, and the oldest
    /// kept `seq`.
    pub(crate) async fn retained_after(&self, flow_id: &str, after: u64) -> (Vec<Arc<ObserverEvent>>, Option<u64>) {
        let mut connection = self.connection();
        let reply: redis::RedisResult<StreamRangeReply> = redis::cmd("XRANGE")
            .arg(self.keys.flow_part(flow_id, "events"))
            .arg("-")
            .arg("+")
            .query_async(&mut connection)
            .await;
        let entries = match reply {
            Ok(reply) => reply.ids,
            Err(error) => {
                tracing::warn!(flow = flow_id, "cannot read the flow's events from Redis: {error}");
                return (Vec::new(), None);
            }
        };
        let events: Vec<Arc<ObserverEvent>> =
            entries.iter().filter_map(|entry| decode(&entry.map)).map(Arc::new).collect();
        let oldest = events.first().map(|event| event.seq);
        (events.into_iter().filter(|event| event.seq > after).collect(), oldest)
    }
}

/// Events through Redis: published into its streams, numbered and kept there for every
/// instance; this instance's subscribers get them from the pump, like everyone else's.
impl EventStore for Cluster {
    fn shared(&self) -> bool {
        true
    }

    fn listening(&self) -> BoxFuture<'_, ()> {
        Box::pin(Cluster::listening(self))
    }

    /// Nothing to do: the flow's key keeps its events.
    fn open_flow(&self, _flow_id: &str) {}

    /// Nothing to do: the flow's keys expire with it.
    fn forget_flow(&self, _flow_id: &str) {}

    fn keep(&self, event: ObserverEvent, seq: Option<u64>) -> Option<Arc<ObserverEvent>> {
        self.publish(&EventRecord {
            kind: &event.kind,
            session_id: event.session_id.as_deref(),
            flow_id: event.flow_id.as_deref(),
            run_id: event.run_id.as_deref(),
            seq,
            json: &event.json,
        });
        None
    }

    fn retained_after<'a>(
        &'a self,
        flow_id: &'a str,
        after: u64,
    ) -> BoxFuture<'a, (Vec<Arc<ObserverEvent>>, Option<u64>)> {
        Box::pin(Cluster::retained_after(self, flow_id, after))
    }

    #[cfg(test)]
    fn retained_flows(&self) -> usize {
        0
    }
}

/// Reads the stream of every event into `hub`, from the moment the instance connected;
/// reconnects (from the last entry read) when Redis goes away. A Redis that came back
/// as another server (restarted: its `run_id` changed) lost what the stream held and
/// had not been read: the subscribers are told (a gap), and reading goes on from the
/// newest entry.
pub(crate) async fn pump(cluster: Arc<Cluster>, hub: Arc<Hub>) {
    let key = cluster.keys.events();
    let mut last = Some(cluster.events_from.clone());
    let mut server: Option<String> = None;
    loop {
        let mut connection = match cluster.blocking_connection().await {
            Ok(connection) => connection,
            Err(error) => {
                tracing::warn!("cannot reach Redis for observer events: {error}; retrying");
                if wait_or_stop(&cluster, Duration::from_secs(1)).await {
                    return;
                }
                continue;
            }
        };
        match redis::cmd("INFO").arg("server").query_async::<String>(&mut connection).await.map(|info| run_id(&info)) {
            Ok(now) => {
                if server.is_some() && server != now {
                    tracing::warn!("Redis restarted: observers are told that they may have missed events");
                    hub.deliver(Arc::new(ObserverEvent::gap(0)));
                    last = None;
                }
                server = now;
            }
            Err(error) => {
                tracing::warn!("cannot read observer events from Redis: {error}; retrying");
                if wait_or_stop(&cluster, Duration::from_secs(1)).await {
                    return;
                }
                continue;
            }
        }
        if last.is_none() {
            let newest: redis::RedisResult<StreamRangeReply> = redis::cmd("XREVRANGE")
                .arg(&key)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(1)
                .query_async(&mut connection)
                .await;
            match newest {
                Ok(reply) => last = Some(reply.ids.first().map_or_else(|| "0-0".to_owned(), |entry| entry.id.clone())),
                Err(error) => {
                    tracing::warn!("cannot read observer events from Redis: {error}; retrying");
                    if wait_or_stop(&cluster, Duration::from_secs(1)).await {
                        return;
                    }
                    continue;
                }
            }
        }
        loop {
            let from = last.clone().unwrap_or_else(|| "0-0".to_owned());
            let options = StreamReadOptions::default().block(2000).count(1000);
            let mut command = redis::cmd("XREAD");
            command.arg(&options).arg("STREAMS").arg(&key).arg(&from);
            let read = command.query_async(&mut connection);
            let reply: redis::RedisResult<Option<StreamReadReply>> = tokio::select! {
                reply = read => reply,
                () = cluster.stop.cancelled() => return,
            };
            match reply {
                Ok(Some(reply)) => {
                    for entry in reply.keys.into_iter().flat_map(|stream| stream.ids) {
                        if hub.has_local_subscribers()
                            && let Some(event) = decode(&entry.map)
                        {
                            hub.deliver(Arc::new(event));
                        }
                        last = Some(entry.id);
                    }
                }
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!("reading observer events from Redis failed: {error}; reconnecting");
                    break;
                }
            }
        }
        if wait_or_stop(&cluster, Duration::from_millis(200)).await {
            return;
        }
    }
}

/// Sleeps `pause`; `true` when the server stopped meanwhile.
async fn wait_or_stop(cluster: &Cluster, pause: Duration) -> bool {
    tokio::select! {
        () = tokio::time::sleep(pause) => false,
        () = cluster.stop.cancelled() => true,
    }
}

/// The `run_id` of `INFO server`: another one after Redis restarted.
fn run_id(info: &str) -> Option<String> {
    info.lines().find_map(|line| line.strip_prefix("run_id:")).map(|id| id.trim().to_owned())
}

/// An event as a stream entry holds it, or a gap.
fn decode(map: &HashMap<String, redis::Value>) -> Option<ObserverEvent> {
    if let Some(missed) = text(map, "g") {
        return Some(ObserverEvent::gap(missed.parse().unwrap_or(0)));
    }
    Some(ObserverEvent {
        kind: text(map, "k")?.into(),
        session_id: text(map, "s"),
        flow_id: text(map, "f"),
        run_id: text(map, "r"),
        seq: text(map, "q")?.parse().ok()?,
        json: text(map, "j")?,
    })
}
