//! The observer hub: every execution publishes its events here; each observer stream
//! subscribes with its filters. Publishing never waits for observers: each subscriber
//! has a bounded queue, and one that falls behind is dropped (it gets a final `error`
//! event). The last events of every flow are retained for replay, from the flow's
//! creation to its removal: an event of a flow that is gone reaches live subscribers
//! only, so nothing brings its buffer back.
//!
//! What is kept, and where events go beyond this instance, is the hub's
//! [`EventStore`]: in memory, or with `--redis` Redis (`cluster/events.rs`), which
//! numbers flow events and keeps them for replay; the instance's pump delivers every
//! event of the cluster back into the hub's subscribers, and a gap
//! ([`ObserverEvent::gap`]) where events were lost on their way, which ends every
//! subscriber's stream as falling behind does.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use tokio::sync::broadcast;
use volley_protocol::{ObserverEnvelope, ObserverEvent as Event};

use crate::clock::now_ms;
pub(crate) use crate::event::{ObserverEvent, RETAINED_PER_FLOW, SEQ_PLACEHOLDER, Sequence};
use crate::store::{EventStore, MemoryEvents};

/// Events queued per subscriber before it counts as lagging.
pub(crate) const SUBSCRIBER_QUEUE: usize = 4096;

/// Where events go.
#[derive(Debug)]
pub(crate) struct Hub {
    sender: broadcast::Sender<Arc<ObserverEvent>>,
    /// The `seq` of workspace events, which belong to no run, session or flow.
    workspace_sequence: Arc<AtomicU64>,
    /// Where events are kept for replay and, in a cluster, published.
    store: Arc<dyn EventStore>,
}

impl Default for Hub {
    fn default() -> Self {
        Self::new(Arc::new(MemoryEvents::default()))
    }
}

impl Hub {
    pub(crate) fn new(store: Arc<dyn EventStore>) -> Self {
        let (sender, _) = broadcast::channel(SUBSCRIBER_QUEUE);
        Self { sender, workspace_sequence: Arc::default(), store }
    }

    /// Whether anyone may see an event outside a flow (flow events are retained for
    /// replay either way). With `--redis` Redis decides when it is written, since an
    /// observer may have subscribed on another instance a moment ago.
    pub(crate) fn has_subscribers(&self) -> bool {
        self.store.shared() || self.has_local_subscribers()
    }

    /// Whether this instance has observers.
    pub(crate) fn has_local_subscribers(&self) -> bool {
        self.sender.receiver_count() > 0
    }

    /// Subscribes on this instance.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<ObserverEvent>> {
        self.sender.subscribe()
    }

    /// Subscribes an observer stream: with `--redis`, returns once Redis knows that
    /// this instance has an observer, so that no instance's event published after
    /// it is lost for this subscriber.
    pub(crate) async fn listen(&self) -> broadcast::Receiver<Arc<ObserverEvent>> {
        let receiver = self.subscribe();
        self.store.listening().await;
        receiver
    }

    /// Hands an event of the cluster to this instance's subscribers.
    pub(crate) fn deliver(&self, event: Arc<ObserverEvent>) {
        let _ = self.sender.send(event);
    }

    /// Starts retaining the events of a new flow (before its first event).
    pub(crate) fn open_flow(&self, flow_id: &str) {
        self.store.open_flow(flow_id);
    }

    /// Publishes an event; `seq` is `None` when Redis numbers it (a flow's event with
    /// `--redis`: its envelope holds [`SEQ_PLACEHOLDER`]).
    pub(crate) fn publish(&self, event: ObserverEvent, seq: Option<u64>) {
        if let Some(event) = self.store.keep(event, seq) {
            // No subscriber is not an error.
            let _ = self.sender.send(event);
        }
    }

    /// The retained events of `flow_id` with `seq > after`, and the oldest retained seq.
    pub(crate) async fn retained_after(&self, flow_id: &str, after: u64) -> (Vec<Arc<ObserverEvent>>, Option<u64>) {
        self.store.retained_after(flow_id, after).await
    }

    /// Announces a file of the workspace created, updated or deleted through the
    /// server (`workspaceFileChanged`). The event has no session or flow: it reaches the
    /// subscribers without filters, which only a server without a token has.
    pub(crate) fn announce_file(self: &Arc<Self>, path: &str, change: &'static str) {
        let emitter = Emitter {
            hub: Arc::clone(self),
            run_id: None,
            session_id: None,
            flow_id: None,
            req_exec_id: None,
            sequence: Sequence::Run(Arc::clone(&self.workspace_sequence)),
        };
        emitter.emit(Event::WorkspaceFileChanged(volley_protocol::WorkspaceFileChanged {
            path: path.to_owned(),
            change: change.to_owned(),
        }));
    }

    /// Drops the events of a flow that is gone (expired or evicted).
    pub(crate) fn forget_flow(&self, flow_id: &str) {
        self.store.forget_flow(flow_id);
    }

    /// How many flows have events retained in this process.
    #[cfg(test)]
    pub(crate) fn retained_flows(&self) -> usize {
        self.store.retained_flows()
    }
}

/// Publishes the events of one run (or of a flow's lifecycle) with their ids.
#[derive(Debug, Clone)]
pub(crate) struct Emitter {
    pub(crate) hub: Arc<Hub>,
    pub(crate) run_id: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) flow_id: Option<String>,
    pub(crate) req_exec_id: Option<String>,
    pub(crate) sequence: Sequence,
}

impl Emitter {
    /// Whether an event would reach anyone (now, or by replay for a flow): callers with a
    /// costly payload check first.
    pub(crate) fn is_heard(&self) -> bool {
        self.flow_id.is_some() || self.hub.has_subscribers()
    }

    /// Numbers `event` and publishes it in its envelope (when anyone would hear it).
    pub(crate) fn emit(&self, event: Event) {
        let seq = self.sequence.next();
        if !self.is_heard() {
            return;
        }
        let kind = event.name();
        let envelope = ObserverEnvelope {
            event,
            ts: now_ms(),
            seq: seq.unwrap_or(SEQ_PLACEHOLDER),
            run_id: self.run_id.clone(),
            session_id: self.session_id.clone(),
            flow_id: self.flow_id.clone(),
            req_exec_id: self.req_exec_id.clone(),
        };
        let event = ObserverEvent {
            kind: Cow::Borrowed(kind),
            session_id: self.session_id.clone(),
            flow_id: self.flow_id.clone(),
            run_id: self.run_id.clone(),
            seq: seq.unwrap_or(0),
            json: sorted_json(&envelope),
        };
        self.hub.publish(event, seq);
    }
}

/// The JSON text of an envelope with the keys of every object sorted, as the server has
/// always written its events (through a `serde_json::Value`, whose maps are sorted).
fn sorted_json(envelope: &ObserverEnvelope) -> String {
    serde_json::to_value(envelope).map(|value| value.to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use volley_protocol::{FlowStarted, ParseSource, ParseStarted, RequestLine, WsSessionMessage};

    use super::*;

    fn emitter(hub: &Arc<Hub>, flow: Option<&str>) -> Emitter {
        Emitter {
            hub: Arc::clone(hub),
            run_id: Some("run_1".to_owned()),
            session_id: Some("ses_1".to_owned()),
            flow_id: flow.map(str::to_owned),
            req_exec_id: None,
            sequence: Sequence::run(),
        }
    }

    #[test]
    fn filters_match_every_given_field() {
        let hub = Arc::new(Hub::default());
        let mut receiver = hub.subscribe();
        emitter(&hub, Some("flow_1")).emit(Event::ParseStarted(ParseStarted { source: ParseSource::Content }));
        let event = receiver.try_recv().expect("published");
        assert!(event.matches(None, None));
        assert!(event.matches(Some("ses_1"), Some("flow_1")));
        assert!(!event.matches(Some("ses_2"), Some("flow_1")));
        assert!(!event.matches(None, Some("flow_2")));
        assert_eq!(event.sse_id(), "flow_1:1");
        let envelope: Value = serde_json::from_str(&event.json).expect("json");
        assert_eq!(envelope["type"], "parseStarted");
        assert_eq!(envelope["runId"], "run_1");
        assert_eq!(envelope["seq"], 1);
    }

    #[test]
    fn envelopes_are_written_with_sorted_keys_as_before_the_typed_events() {
        let hub = Arc::new(Hub::default());
        let mut receiver = hub.subscribe();
        let mut emitter = emitter(&hub, Some("flow_1"));
        emitter.req_exec_id = Some("exec_1".to_owned());
        emitter.emit(Event::FetchFinished(volley_protocol::FetchFinished {
            method: "GET".to_owned(),
            url: "http://api/items".to_owned(),
            status: 200,
            ttfb: 1.5,
        }));
        let event = receiver.try_recv().expect("published");
        let ts = serde_json::from_str::<Value>(&event.json).expect("json")["ts"].clone();
        // What `emit("fetchFinished", json!(…))` wrote.
        let before = serde_json::json!({
            "type": "fetchFinished", "ts": ts, "seq": 1,
            "payload": { "method": "GET", "url": "http://api/items", "status": 200, "ttfb": 1.5 },
            "runId": "run_1", "sessionId": "ses_1", "flowId": "flow_1", "reqExecId": "exec_1",
        });
        assert_eq!(event.json, before.to_string());
        assert!(event.json.starts_with(r#"{"flowId":"flow_1","payload":{"method":"GET","status":200,"ttfb":1.5,"#));
    }

    #[tokio::test]
    async fn retains_the_last_events_of_a_flow() {
        let hub = Arc::new(Hub::default());
        hub.open_flow("flow_1");
        let emitter = emitter(&hub, Some("flow_1"));
        for _ in 0..RETAINED_PER_FLOW + 20 {
            emitter.emit(Event::FetchStarted(RequestLine::default()));
        }
        let (events, oldest) = hub.retained_after("flow_1", 510).await;
        assert_eq!(oldest, Some(21));
        assert_eq!(events.len(), 10);
        assert_eq!(events[0].seq, 511);
        hub.forget_flow("flow_1");
        assert_eq!(hub.retained_after("flow_1", 0).await.1, None);
    }

    #[tokio::test]
    async fn events_of_a_flow_that_is_gone_are_heard_live_and_never_retained() {
        let hub = Arc::new(Hub::default());
        hub.open_flow("flow_1");
        let session = emitter(&hub, Some("flow_1"));
        session.emit(Event::FlowStarted(FlowStarted::default()));
        assert_eq!(hub.retained_flows(), 1);
        hub.forget_flow("flow_1");
        // A WebSocket session of the flow goes on talking.
        let mut live = hub.subscribe();
        for _ in 0..3 {
            session.emit(Event::WsSessionMessage(WsSessionMessage::default()));
        }
        assert_eq!(hub.retained_flows(), 0, "the buffer of a gone flow does not come back");
        let (events, oldest) = hub.retained_after("flow_1", 0).await;
        assert!(events.is_empty() && oldest.is_none(), "nothing to replay");
        assert_eq!(live.try_recv().expect("heard live").kind, "wsSessionMessage");
        // Nor is a buffer made for a flow that was never opened.
        emitter(&hub, Some("flow_unknown")).emit(Event::FetchStarted(RequestLine::default()));
        assert_eq!(hub.retained_flows(), 0);
    }

    #[test]
    fn a_lagging_subscriber_is_told_and_publishing_never_blocks() {
        let hub = Arc::new(Hub::default());
        let mut slow = hub.subscribe();
        let emitter = emitter(&hub, None);
        for _ in 0..SUBSCRIBER_QUEUE + 5 {
            emitter.emit(Event::FetchStarted(RequestLine::default()));
        }
        assert!(matches!(slow.try_recv(), Err(broadcast::error::TryRecvError::Lagged(5))));
    }
}
