//! Where observer events go beyond this instance's subscribers: each flow's last events,
//! kept for replay, and in a cluster every instance's observers.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use parking_lot::Mutex;

use crate::event::{ObserverEvent, RETAINED_PER_FLOW};

/// The events of a server, or of every instance of a cluster.
pub(crate) trait EventStore: Send + Sync {
    /// Whether observers of other instances hear through the store, so that every event
    /// is published whoever listens here (the store decides when it is written).
    fn shared(&self) -> bool;

    /// Returns once the store knows that this instance has an observer, so that no event
    /// published after it is lost for that observer.
    fn listening(&self) -> BoxFuture<'_, ()>;

    /// Starts keeping the events of a new flow (before its first event).
    fn open_flow(&self, flow_id: &str);

    /// Drops the events of a flow that is gone (expired or evicted).
    fn forget_flow(&self, flow_id: &str);

    /// Keeps `event`, numbered `seq`, or by the store when `None` (its envelope then holds
    /// the placeholder). Gives it back, shared, when this instance's subscribers get it
    /// from the caller now; `None` when the store hands it to them (a cluster's relay).
    fn keep(&self, event: ObserverEvent, seq: Option<u64>) -> Option<Arc<ObserverEvent>>;

    /// The kept events of `flow_id` with `seq > after`, and the oldest kept seq.
    fn retained_after<'a>(
        &'a self,
        flow_id: &'a str,
        after: u64,
    ) -> BoxFuture<'a, (Vec<Arc<ObserverEvent>>, Option<u64>)>;

    /// How many flows have events kept in this process.
    #[cfg(test)]
    fn retained_flows(&self) -> usize;
}

impl std::fmt::Debug for dyn EventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStore").field("shared", &self.shared()).finish_non_exhaustive()
    }
}

/// The events of one server, in its memory: the last [`RETAINED_PER_FLOW`] of every
/// flow opened and not yet forgotten.
#[derive(Debug, Default)]
pub(crate) struct MemoryEvents {
    retained: Mutex<HashMap<String, VecDeque<Arc<ObserverEvent>>>>,
}

impl EventStore for MemoryEvents {
    fn shared(&self) -> bool {
        false
    }

    fn listening(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    fn open_flow(&self, flow_id: &str) {
        self.retained.lock().entry(flow_id.to_owned()).or_default();
    }

    fn forget_flow(&self, flow_id: &str) {
        self.retained.lock().remove(flow_id);
    }

    fn keep(&self, event: ObserverEvent, _seq: Option<u64>) -> Option<Arc<ObserverEvent>> {
        let event = Arc::new(event);
        // Only the flows opened and not yet forgotten keep their events: a WebSocket
        // session or a relayed stream outliving its flow must not bring its buffer back.
        if let Some(flow_id) = &event.flow_id {
            let mut retained = self.retained.lock();
            if let Some(events) = retained.get_mut(flow_id) {
                if events.len() == RETAINED_PER_FLOW {
                    events.pop_front();
                }
                events.push_back(Arc::clone(&event));
            }
        }
        Some(event)
    }

    fn retained_after<'a>(
        &'a self,
        flow_id: &'a str,
        after: u64,
    ) -> BoxFuture<'a, (Vec<Arc<ObserverEvent>>, Option<u64>)> {
        let retained = self.retained.lock();
        let found = match retained.get(flow_id) {
            Some(events) => {
                let oldest = events.front().map(|event| event.seq);
                (events.iter().filter(|event| event.seq > after).cloned().collect(), oldest)
            }
            None => (Vec::new(), None),
        };
        Box::pin(std::future::ready(found))
    }

    #[cfg(test)]
    fn retained_flows(&self) -> usize {
        self.retained.lock().len()
    }
}

/// The behaviour every [`EventStore`] has, run against each implementation (the Redis
/// one in `cluster/tests.rs`): the events of `flow`, a live flow (in Redis, one the flow
/// store created), are kept in order and replayed after a `seq`, with the oldest kept
/// one. Redis writes through a queue, so the replay is awaited for a while.
#[cfg(test)]
pub(crate) async fn check_event_store(store: &dyn EventStore, flow: &str) {
    use std::borrow::Cow;
    use std::time::{Duration, Instant};

    let flow = flow.to_owned();
    store.open_flow(&flow);
    for seq in 1..=3 {
        let event = ObserverEvent {
            kind: Cow::Borrowed("fetchStarted"),
            session_id: None,
            flow_id: Some(flow.clone()),
            run_id: None,
            seq,
            json: format!(r#"{{"flowId":"{flow}","seq":{seq},"type":"fetchStarted"}}"#),
        };
        let delivered_here = store.keep(event, Some(seq)).is_some();
        assert_eq!(delivered_here, !store.shared(), "the caller delivers only what no relay does");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let (events, oldest) = loop {
        let (events, oldest) = store.retained_after(&flow, 1).await;
        if events.len() == 2 || Instant::now() > deadline {
            break (events, oldest);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let seqs: Vec<u64> = events.iter().map(|event| event.seq).collect();
    assert_eq!((seqs, oldest), (vec![2, 3], Some(1)), "replayed after seq 1");
    assert!(events.iter().all(|event| event.json.contains(&format!(r#""seq":{}"#, event.seq))));
    let (never, oldest) = store.retained_after("flow_never", 0).await;
    assert!(never.is_empty() && oldest.is_none(), "nothing kept for a flow without events");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_events_keep_the_flows_last_events() {
        let store = MemoryEvents::default();
        check_event_store(&store, "flow_1").await;
        assert_eq!(store.retained_flows(), 1);
        store.forget_flow("nothing");
        assert_eq!(store.retained_flows(), 1);
    }
}
