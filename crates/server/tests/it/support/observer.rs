//! An observer subscription (`GET /event`) read event by event, heartbeats skipped.

use std::time::Duration;

use futures_util::StreamExt as _;
use volley_engine::sse::{SseEvent, SseParser};

/// An observer subscription read event by event.
pub(crate) struct Observer {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    parser: SseParser,
}

impl Observer {
    pub(crate) async fn open(client: &reqwest::Client, url: String) -> Self {
        let response = client.get(url).send().await.expect("subscribe");
        assert_eq!(response.status(), 200);
        let mut observer = Self::reading(response);
        let connected = observer.next().await.expect("connected");
        assert_eq!(connected.event, "connected");
        observer
    }

    /// Any event stream, from its first event.
    pub(crate) fn reading(response: reqwest::Response) -> Self {
        Self { body: response.bytes_stream().boxed(), parser: SseParser::new() }
    }

    pub(crate) async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(event) = self.parser.next_event() {
                return Some(event);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.body.next()).await.ok()??.ok()?;
            self.parser.feed(&chunk);
        }
    }

    /// Events (heartbeats skipped) until one of type `last`, inclusive.
    pub(crate) async fn until(&mut self, last: &str) -> Vec<SseEvent> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            if event.event == "heartbeat" {
                continue;
            }
            let done = event.event == last;
            events.push(event);
            if done {
                return events;
            }
        }
        panic!("the stream ended before `{last}`: {:?}", events.iter().map(|e| &e.event).collect::<Vec<_>>());
    }
}
