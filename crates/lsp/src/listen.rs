//! Listening to a streaming response (an event stream or a WebSocket) for a while after a
//! send: its first events or messages, kept for the outcome and, for sends given a `live`
//! id, sent at once as `volley/stream` notifications, as a gRPC call's response messages
//! are while it runs.

use std::time::Duration;

use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use volley_engine::websocket::WsMessage;
use volley_engine::{CancellationToken, Response};

use crate::outcome::{StreamInfo, StreamItem, milliseconds};

/// How long a streaming response (SSE, WebSocket) is listened to by default.
pub(crate) const STREAM_WINDOW: Duration = Duration::from_secs(2);
/// How many events or messages of a streaming response are kept by default.
pub(crate) const STREAM_ITEMS: usize = 50;

/// The notification of a streaming response's progress, for sends given a `live` id.
#[derive(Debug)]
pub(crate) enum StreamNotification {}

impl tower_lsp_server::ls_types::notification::Notification for StreamNotification {
    type Params = StreamUpdate;
    const METHOD: &'static str = "volley/stream";
}

/// What `volley/stream` carries: first the opening (status, no item), then one
/// notification per event or message.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StreamUpdate {
    /// The `live` id of the send.
    pub(crate) live: String,
    /// The request's index in its file.
    pub(crate) request_index: usize,
    /// `sse`, `websocket` or `grpc`.
    pub(crate) kind: String,
    /// The response status, on the opening notification.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) item: Option<StreamItem>,
}

/// Where the items of a streaming response go as they arrive.
#[derive(Clone, Copy)]
pub(crate) struct Live<'a> {
    pub(crate) client: &'a tower_lsp_server::Client,
    pub(crate) id: &'a str,
}

/// How to listen to a streaming response.
pub(crate) struct Listen<'a> {
    pub(crate) window: Duration,
    pub(crate) limit: usize,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) live: Option<Live<'a>>,
    pub(crate) request_index: usize,
}

impl Listen<'_> {
    /// Sends what the stream of `info` got live (the opening's `status`, or an item), when
    /// the send has a `live` id.
    async fn send(&self, info: &StreamInfo, status: Option<u16>, item: Option<&StreamItem>) {
        if let Some(live) = self.live {
            let update = StreamUpdate {
                live: live.id.to_owned(),
                request_index: self.request_index,
                kind: info.kind.to_owned(),
                status,
                item: item.cloned(),
            };
            live.client.send_notification::<StreamNotification>(update).await;
        }
    }

    /// Sends a gRPC call's response message live (kind `grpc`, event `message`, its number
    /// as the id, pretty JSON as the data); the outcome has them all once the call ends.
    pub(crate) async fn grpc_message(&self, number: usize, message: &serde_json::Value, started: Instant) {
        if let Some(live) = self.live {
            let data = serde_json::to_string_pretty(message).unwrap_or_default();
            let item = StreamItem {
                event: "message".to_owned(),
                data,
                id: Some(number.to_string()),
                at_ms: milliseconds(started.elapsed()),
            };
            let update = StreamUpdate {
                live: live.id.to_owned(),
                request_index: self.request_index,
                kind: "grpc".to_owned(),
                status: None,
                item: Some(item),
            };
            live.client.send_notification::<StreamNotification>(update).await;
        }
    }

    /// Keeps `item` and sends it live.
    async fn push(&self, info: &mut StreamInfo, item: StreamItem) {
        self.send(info, None, Some(&item)).await;
        info.items.push(item);
    }
}

/// The first events of an event stream, within `window`.
pub(crate) async fn listen_events(response: &Response, listen: &Listen<'_>) -> StreamInfo {
    let Listen { window, limit, cancel, .. } = *listen;
    let mut info = StreamInfo { kind: "sse", items: Vec::new(), stopped: "window", error: None };
    listen.send(&info, Some(response.status()), None).await;
    let mut events = match response.events() {
        Ok(events) => events,
        Err(error) => {
            info.stopped = "error";
            info.error = Some(response.redact(&error.to_string()));
            return info;
        }
    };
    let started = tokio::time::Instant::now();
    let deadline = started + window;
    while info.items.len() < limit {
        let next = tokio::select! {
            next = events.next() => next,
            () = tokio::time::sleep_until(deadline) => return info,
            () = cancel.cancelled() => return info,
        };
        match next {
            Some(Ok(event)) => {
                let item = StreamItem {
                    event: event.event,
                    data: response.redact(&event.data),
                    id: event.id,
                    at_ms: milliseconds(started.elapsed()),
                };
                listen.push(&mut info, item).await;
            }
            Some(Err(error)) => {
                info.stopped = "error";
                info.error = Some(response.redact(&error.to_string()));
                return info;
            }
            None => {
                info.stopped = "ended";
                return info;
            }
        }
    }
    info.stopped = "limit";
    info
}

/// The first messages of a WebSocket within `window`; the socket is then closed.
pub(crate) async fn listen_websocket(response: &Response, listen: &Listen<'_>) -> StreamInfo {
    let Listen { window, limit, cancel, .. } = *listen;
    let mut info = StreamInfo { kind: "websocket", items: Vec::new(), stopped: "window", error: None };
    listen.send(&info, Some(response.status()), None).await;
    let Some(mut socket) = response.websocket() else {
        info.stopped = "error";
        info.error = Some("the WebSocket was already taken".to_owned());
        return info;
    };
    let started = tokio::time::Instant::now();
    let deadline = started + window;
    while info.items.len() < limit {
        let next = tokio::select! {
            next = socket.next() => next,
            () = tokio::time::sleep_until(deadline) => break,
            () = cancel.cancelled() => break,
        };
        let at_ms = milliseconds(started.elapsed());
        match next {
            Some(Ok(WsMessage::Text(text))) => {
                let item = StreamItem { event: "text".to_owned(), data: response.redact(&text), id: None, at_ms };
                listen.push(&mut info, item).await;
            }
            Some(Ok(WsMessage::Sent(text))) => {
                // The definition's own messages, in their place among the server's.
                let item = StreamItem { event: "sent".to_owned(), data: response.redact(&text), id: None, at_ms };
                listen.send(&info, None, Some(&item)).await;
                info.items.push(item);
            }
            Some(Ok(WsMessage::Pong(payload))) => {
                let data = String::from_utf8_lossy(&payload).into_owned();
                listen.push(&mut info, StreamItem { event: "pong".to_owned(), data, id: None, at_ms }).await;
            }
            Some(Ok(WsMessage::Close(close))) => {
                let data = close.map(|close| format!("{} {}", close.code, close.reason)).unwrap_or_default();
                listen.push(&mut info, StreamItem { event: "close".to_owned(), data, id: None, at_ms }).await;
                info.stopped = "ended";
                return info;
            }
            Some(Err(error)) => {
                info.stopped = "error";
                info.error = Some(response.redact(&error.to_string()));
                return info;
            }
            None => {
                info.stopped = "ended";
                return info;
            }
        }
    }
    if info.items.len() >= limit {
        info.stopped = "limit";
    }
    let _ = socket.close(1000, "").await;
    info
}
