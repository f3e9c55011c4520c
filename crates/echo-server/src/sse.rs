//! Server-Sent Events: a fixed script of events that exercises the parsing rules, slow,
//! endless, stalled and fast streams, and error statuses, all written byte for byte.
//!
//! The streams are plain bodies (`Body::from_stream`), not axum's `Sse` helper, so the exact
//! bytes (CR, CRLF, comments) are under control. They run inside the response body: when the
//! client goes away hyper drops the body and the stream stops; no task is spawned.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::stream;
use futures_util::{Stream, StreamExt as _};
use serde_json::json;

use crate::query;
use crate::response;
use crate::state::AppState;

/// What `/sse/events` always sends first: a comment and a `retry` field (no event).
const PREAMBLE: &[u8] = b": a comment line, to be ignored\nretry: 3000\n\n";

/// One event of `/sse/events` and the last event id a client holds after it.
struct Block {
    last_event_id: u64,
    bytes: &'static [u8],
}

/// The events of `/sse/events`, in order. Blocks without an `id` line carry the id before them.
const SCRIPT: &[Block] = &[
    Block { last_event_id: 1, bytes: b"id: 1\ndata: first\n\n" },
    Block { last_event_id: 2, bytes: b"event: update\nid: 2\ndata: {\"n\": 2}\n\n" },
    Block { last_event_id: 3, bytes: b"id: 3\ndata: line one\ndata: line two\n\n" },
    Block { last_event_id: 3, bytes: b"data:no space after the colon\r\n\r\n" },
    Block { last_event_id: 5, bytes: b"event: update\rid: 5\rdata:  two leading spaces, one is kept\r\r" },
    Block { last_event_id: 5, bytes: b"data\n\n" },
    Block { last_event_id: 7, bytes: b"id: 7\ndata: last\n\n" },
];

/// One `/sse/fast` event: 9 bytes.
const FAST_EVENT: &[u8] = b"data: x\n\n";
/// `/sse/fast` writes this many events per chunk: just under 64 KiB.
const FAST_EVENTS_PER_CHUNK: u64 = 64 * 1024 / FAST_EVENT.len() as u64;

const DEFAULT_SLOW_COUNT: u64 = 5;
const MAX_SLOW_COUNT: u64 = 10_000;
const DEFAULT_SLOW_INTERVAL_MS: u64 = 200;
const DEFAULT_FOREVER_INTERVAL_MS: u64 = 100;
const DEFAULT_FAST_COUNT: u64 = 1000;
const MAX_FAST_COUNT: u64 = 10_000_000;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/sse/events", get(events))
        .route("/sse/slow", get(slow))
        .route("/sse/never", get(never))
        .route("/sse/forever", get(forever))
        .route("/sse/fast", get(fast))
        .route("/sse/status/{code}", get(status))
}

/// 200 `text/event-stream`: this exact byte sequence, one chunk per line of this listing,
/// then the body ends:
///
/// ```text
/// : a comment line, to be ignored\nretry: 3000\n\n
/// id: 1\ndata: first\n\n
/// event: update\nid: 2\ndata: {"n": 2}\n\n
/// id: 3\ndata: line one\ndata: line two\n\n
/// data:no space after the colon\r\n\r\n
/// event: update\rid: 5\rdata:  two leading spaces, one is kept\r\r
/// data\n\n
/// id: 7\ndata: last\n\n
/// ```
///
/// Parsed by the WHATWG rules that is seven events: `first` (id 1); `update` `{"n": 2}` (id 2);
/// `line one\nline two` (id 3); `no space after the colon` (no id line: last event id stays 3);
/// `update` ` two leading spaces, one is kept` (id 5); an empty `data` (last id stays 5);
/// `last` (id 7). The client should set its reconnection time to 3000 ms.
///
/// With `Last-Event-ID: N` (a decimal number) every event whose last event id is ≤ N is left
/// out, so `Last-Event-ID: 3` gets the first line, then the events from `id: 5` on. The first
/// line is always sent. A `Last-Event-ID` that is not a number is ignored (the whole script).
async fn events(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let resume_after = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let blocks = SCRIPT
        .iter()
        .filter(move |block| block.last_event_id > resume_after)
        .map(|block| Ok(Bytes::from_static(block.bytes)));
    event_stream(&state, stream::iter(std::iter::once(Ok(Bytes::from_static(PREAMBLE))).chain(blocks)))
}

/// `?count=N&interval_ms=M` (defaults 5 and 200, N ≤ 10000): 200 and the headers at once, then
/// `id: i\ndata: {"i": i}\n\n` for i in 1..=N, event i after i × M ms, then the body ends.
async fn slow(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, Response> {
    let count = query::number(&query, "count", DEFAULT_SLOW_COUNT, MAX_SLOW_COUNT).map_err(response::bad_request)?;
    let interval =
        query::milliseconds(&query, "interval_ms", DEFAULT_SLOW_INTERVAL_MS).map_err(response::bad_request)?;
    Ok(event_stream(
        &state,
        ticks(interval, move |i| (i <= count).then(|| format!("id: {i}\ndata: {{\"i\": {i}}}\n\n"))),
    ))
}

/// Never answers: not even the status line. The handler waits until the client goes away
/// (hyper then drops it).
async fn never() -> Response {
    std::future::pending().await
}

/// `?interval_ms=M` (default 100): 200 and the headers at once, then `data: tick i\n\n`
/// (i = 1, 2, …) every M ms, without end.
async fn forever(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, Response> {
    let interval =
        query::milliseconds(&query, "interval_ms", DEFAULT_FOREVER_INTERVAL_MS).map_err(response::bad_request)?;
    Ok(event_stream(&state, ticks(interval, |i| Some(format!("data: tick {i}\n\n")))))
}

/// `?count=N` (default 1000, N ≤ 10 000 000): `data: x\n\n` N times (9 × N body bytes) as fast
/// as the client reads, in chunks of up to 7281 events (65 529 bytes), then the body ends.
/// For throughput benchmarks of SSE parsers.
async fn fast(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, Response> {
    let count = query::number(&query, "count", DEFAULT_FAST_COUNT, MAX_FAST_COUNT).map_err(response::bad_request)?;
    let full_chunk = Bytes::from(FAST_EVENT.repeat(FAST_EVENTS_PER_CHUNK as usize));
    let chunks = count.div_ceil(FAST_EVENTS_PER_CHUNK);
    let chunks = (0..chunks).map(move |chunk| {
        let events = (count - chunk * FAST_EVENTS_PER_CHUNK).min(FAST_EVENTS_PER_CHUNK);
        Ok(full_chunk.slice(..events as usize * FAST_EVENT.len()))
    });
    Ok(event_stream(&state, stream::iter(chunks)))
}

/// Answers `code` (200–599) with `application/json` `{"status": code, "error": "<reason>"}`
/// (the reason phrase in lowercase, e.g. `not found`) instead of an event stream; 204, 205
/// and 304 have no body. Other codes: 400.
async fn status(Path(code): Path<String>) -> Response {
    let status = match response::final_status(&code) {
        Ok(status) => status,
        Err(message) => return response::bad_request(message),
    };
    let reason = status.canonical_reason().unwrap_or("error").to_ascii_lowercase();
    response::json_unless_bodiless(status, json!({"status": status.as_u16(), "error": reason}))
}

/// 200 with `Content-Type: text/event-stream`, `Cache-Control: no-cache` and `body`,
/// counted in `/stats` as open until hyper drops it (it ended, or the client went away).
fn event_stream<S>(state: &AppState, body: S) -> Response
where
    S: Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    let open = OpenEventStream::new(state.clone());
    // The closure owns the guard, so the guard lives exactly as long as the body.
    let body = body.map(move |chunk| {
        let _open = &open;
        chunk
    });
    (
        StatusCode::OK,
        [
            (CONTENT_TYPE, HeaderValue::from_static("text/event-stream")),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// `event(i)` for i = 1, 2, … one every `interval`, the first after one interval, until it
/// returns `None`.
fn ticks<F>(interval: Duration, event: F) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static
where
    F: Fn(u64) -> Option<String> + Send + Sync + 'static,
{
    stream::unfold((1_u64, event), move |(i, event)| async move {
        let bytes = event(i)?;
        tokio::time::sleep(interval).await;
        Some((Ok(Bytes::from(bytes)), (i + 1, event)))
    })
}

/// An event stream body in `/stats`' `open_event_streams`, from its creation to its drop.
struct OpenEventStream(AppState);

impl OpenEventStream {
    fn new(state: AppState) -> Self {
        state.event_stream_opened();
        Self(state)
    }
}

impl Drop for OpenEventStream {
    fn drop(&mut self) {
        self.0.event_stream_closed();
    }
}
