//! The clients of the cluster tests: JSON requests that note which instance answered,
//! a Server-Sent Events reader and a WebSocket of JSON envelopes, each with the
//! timeouts of a test.

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use volley_engine::sse::{SseEvent, SseParser};

use super::cluster::{UPSTREAM_HEADER, client};

/// How long any one read (an event, a frame, an answer) may take before the test fails
/// instead of hanging.
pub(crate) const READ: Duration = Duration::from_secs(15);

/// An HTTP answer: status, JSON body (`Null` when not JSON), and the instance nginx
/// says served it.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Value,
    pub(crate) upstream: Option<String>,
}

/// JSON requests with an optional bearer token.
pub(crate) struct Api {
    http: reqwest::Client,
    token: Option<String>,
}

impl Api {
    pub(crate) fn new(token: Option<&str>) -> Self {
        Self { http: client(), token: token.map(str::to_owned) }
    }

    pub(crate) async fn get(&self, url: &str) -> Answer {
        self.send(reqwest::Method::GET, url, None).await
    }

    pub(crate) async fn post(&self, url: &str, body: Value) -> Answer {
        self.send(reqwest::Method::POST, url, Some(body)).await
    }

    pub(crate) async fn put(&self, url: &str, body: Value) -> Answer {
        self.send(reqwest::Method::PUT, url, Some(body)).await
    }

    pub(crate) async fn delete(&self, url: &str) -> Answer {
        self.send(reqwest::Method::DELETE, url, None).await
    }

    pub(crate) async fn send(&self, method: reqwest::Method, url: &str, body: Option<Value>) -> Answer {
        let description = format!("{method} {url}");
        self.try_send(method, url, body).await.unwrap_or_else(|| panic!("{description}: no answer"))
    }

    /// `GET url`, or `None` when nothing answers.
    pub(crate) async fn try_get(&self, url: &str) -> Option<Answer> {
        self.try_send(reqwest::Method::GET, url, None).await
    }

    pub(crate) async fn try_send(&self, method: reqwest::Method, url: &str, body: Option<Value>) -> Option<Answer> {
        let mut request = self.http.request(method, url).timeout(READ);
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_string());
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.ok()?;
        let status = response.status().as_u16();
        let upstream = response.headers().get(UPSTREAM_HEADER).and_then(|value| value.to_str().ok()).map(str::to_owned);
        let bytes = response.bytes().await.ok()?;
        Some(Answer { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null), upstream })
    }
}

/// An observer subscription (`GET /event`), read event by event.
pub(crate) struct EventStream {
    response: reqwest::Response,
    parser: SseParser,
}

impl EventStream {
    /// Subscribes (with `Last-Event-ID` when given) and reads the `connected` event.
    pub(crate) async fn open(api: &Api, url: &str, last_event_id: Option<&str>) -> Self {
        let mut request = api.http.get(url);
        if let Some(token) = &api.token {
            request = request.bearer_auth(token);
        }
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response =
            tokio::time::timeout(READ, request.send()).await.expect("subscribed in time").expect("subscribe");
        assert_eq!(response.status(), 200, "{url}");
        let mut stream = Self { response, parser: SseParser::new() };
        let connected = stream.next().await;
        assert_eq!(connected.event, "connected", "{connected:?}");
        stream
    }

    /// The next event that is not a heartbeat.
    pub(crate) async fn next(&mut self) -> SseEvent {
        loop {
            if let Some(event) = self.parser.next_event() {
                if event.event != "heartbeat" {
                    return event;
                }
                continue;
            }
            let chunk = tokio::time::timeout(READ, self.response.chunk())
                .await
                .unwrap_or_else(|_| panic!("no event within {READ:?}"))
                .expect("the event stream")
                .expect("the event stream ended");
            self.parser.feed(&chunk);
        }
    }

    /// The next `count` envelopes with their SSE `id`; each event's name must be its
    /// envelope's type.
    pub(crate) async fn envelopes(&mut self, count: usize) -> Vec<(Option<String>, Value)> {
        let mut envelopes = Vec::with_capacity(count);
        while envelopes.len() < count {
            let event = self.next().await;
            let envelope: Value = event.json().expect("a JSON envelope");
            assert_eq!(envelope["type"], event.event.as_str(), "{envelope}");
            envelopes.push((event.id, envelope));
        }
        envelopes
    }
}

/// A client WebSocket: an observer stream or a control socket.
pub(crate) struct Socket {
    inner: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Socket {
    pub(crate) async fn connect(url: &str, token: Option<&str>) -> Self {
        Self::connect_through(url, token).await.0
    }

    /// Connects; the socket and the instance nginx says serves it (`X-Volley-Upstream`
    /// of the handshake's answer).
    pub(crate) async fn connect_through(url: &str, token: Option<&str>) -> (Self, Option<String>) {
        let mut request = url.into_client_request().expect("a WebSocket request");
        if let Some(token) = token {
            request.headers_mut().insert("authorization", format!("Bearer {token}").parse().expect("header"));
        }
        let (inner, handshake) = tokio::time::timeout(READ, tokio_tungstenite::connect_async(request))
            .await
            .unwrap_or_else(|_| panic!("{url}: no handshake within {READ:?}"))
            .unwrap_or_else(|error| panic!("{url}: {error}"));
        let upstream =
            handshake.headers().get(UPSTREAM_HEADER).and_then(|value| value.to_str().ok()).map(str::to_owned);
        (Self { inner }, upstream)
    }

    /// The next frame that is not a ping or pong; `None` when the stream ended.
    pub(crate) async fn frame(&mut self) -> Option<Message> {
        loop {
            let next = tokio::time::timeout(READ, self.inner.next())
                .await
                .unwrap_or_else(|_| panic!("no frame within {READ:?}"));
            match next {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(message)) => return Some(message),
                Some(Err(_)) | None => return None,
            }
        }
    }

    /// The next JSON text frame.
    pub(crate) async fn next(&mut self) -> Value {
        match self.frame().await {
            Some(Message::Text(text)) => serde_json::from_str(text.as_str()).expect("a JSON envelope"),
            other => panic!("expected a JSON text frame, got {other:?}"),
        }
    }

    /// The next envelope, which must be of type `kind`.
    pub(crate) async fn expect(&mut self, kind: &str) -> Value {
        let envelope = self.next().await;
        assert_eq!(envelope["type"], kind, "{envelope}");
        envelope
    }

    /// Envelopes until one of type `last`, inclusive.
    pub(crate) async fn until(&mut self, last: &str) -> Vec<Value> {
        let mut envelopes = Vec::new();
        loop {
            let envelope = self.next().await;
            let done = envelope["type"] == last;
            envelopes.push(envelope);
            if done {
                return envelopes;
            }
        }
    }

    /// The envelopes before `session.replay.end`, and that one.
    pub(crate) async fn replay(&mut self) -> (Vec<Value>, Value) {
        let mut envelopes = self.until("session.replay.end").await;
        let end = envelopes.pop().expect("session.replay.end");
        (envelopes, end)
    }

    pub(crate) async fn send(&mut self, message: Value) {
        tokio::time::timeout(READ, self.inner.send(Message::text(message.to_string())))
            .await
            .expect("sent in time")
            .expect("send");
    }

    /// The close code the server ends with (`None` for a stream that ended without a
    /// close frame); nothing but a close may come first.
    pub(crate) async fn closed(&mut self) -> Option<u16> {
        match self.frame().await {
            Some(Message::Close(frame)) => Some(frame.map_or(1005, |frame| u16::from(frame.code))),
            None => None,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}
