//! The Server-Sent Events routes through raw HTTP/1.1 over `TcpStream` (exact bytes), and the
//! WebSocket routes through tokio-tungstenite.

use crate::raw;

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use raw::{Response, head_end, parse_head, parse_response, read_head};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use volley_echo_server::TestServer;

/// How long a route that never answers is watched before the test is satisfied.
const SILENCE: Duration = Duration::from_millis(300);
/// An upper bound for what should come at once, so a broken route fails instead of hanging.
const PROMPTLY: Duration = Duration::from_secs(5);

/// The whole `/sse/events` script, as documented on the route.
const SCRIPT: &[u8] = b": a comment line, to be ignored\nretry: 3000\n\n\
id: 1\ndata: first\n\n\
event: update\nid: 2\ndata: {\"n\": 2}\n\n\
id: 3\ndata: line one\ndata: line two\n\n\
data:no space after the colon\r\n\r\n\
event: update\rid: 5\rdata:  two leading spaces, one is kept\r\r\
data\n\n\
id: 7\ndata: last\n\n";

trait EventStreamResponse {
    fn assert_event_stream(&self);
}

impl EventStreamResponse for Response {
    fn assert_event_stream(&self) {
        assert_eq!(self.status, 200, "{self:?}");
        assert_eq!(self.header("content-type"), Some("text/event-stream"));
        assert_eq!(self.header("cache-control"), Some("no-cache"));
    }
}

/// Sends `GET target` with `Connection: close` and `headers`, returns the stream to read from.
async fn send_get(server: &TestServer, target: &str, headers: &[(&str, &str)]) -> TcpStream {
    raw::open(server, "GET", target, headers, b"").await
}

/// The whole response to `GET target`, read until the server closes the connection.
async fn get(server: &TestServer, target: &str, headers: &[(&str, &str)]) -> Response {
    let mut stream = send_get(server, target, headers).await;
    let mut bytes = Vec::new();
    tokio::time::timeout(PROMPTLY, stream.read_to_end(&mut bytes))
        .await
        .unwrap_or_else(|_| panic!("{target}: the response did not end"))
        .expect("read the response");
    parse_response(&bytes)
}

#[tokio::test]
async fn sse_events_sends_the_script_byte_for_byte() {
    let server = TestServer::start().await;
    let response = get(&server, "/sse/events", &[]).await;
    response.assert_event_stream();
    assert_eq!(String::from_utf8_lossy(&response.body), String::from_utf8_lossy(SCRIPT));
    assert_eq!(response.body, SCRIPT);
}

#[tokio::test]
async fn sse_events_resume_after_the_last_event_id() {
    let server = TestServer::start().await;
    let resumed = get(&server, "/sse/events", &[("Last-Event-ID", "3")]).await;
    resumed.assert_event_stream();
    let expected: &[u8] = b": a comment line, to be ignored\nretry: 3000\n\n\
        event: update\rid: 5\rdata:  two leading spaces, one is kept\r\r\
        data\n\n\
        id: 7\ndata: last\n\n";
    assert_eq!(String::from_utf8_lossy(&resumed.body), String::from_utf8_lossy(expected));

    let after_last = get(&server, "/sse/events", &[("Last-Event-ID", "7")]).await;
    assert_eq!(after_last.body, b": a comment line, to be ignored\nretry: 3000\n\n");
    let from_start = get(&server, "/sse/events", &[("Last-Event-ID", "0")]).await;
    assert_eq!(from_start.body, SCRIPT);
    let not_a_number = get(&server, "/sse/events", &[("Last-Event-ID", "abc")]).await;
    assert_eq!(not_a_number.body, SCRIPT);
}

#[tokio::test]
async fn sse_status_answers_json_instead_of_a_stream() {
    let server = TestServer::start().await;
    let not_found = get(&server, "/sse/status/404", &[]).await;
    assert_eq!(not_found.status, 404);
    assert_eq!(not_found.json(), json!({"status": 404, "error": "not found"}));
    let unavailable = get(&server, "/sse/status/503", &[]).await;
    assert_eq!(unavailable.status, 503);
    assert_eq!(unavailable.json(), json!({"status": 503, "error": "service unavailable"}));
    for invalid in ["abc", "101", "600"] {
        let response = get(&server, &format!("/sse/status/{invalid}"), &[]).await;
        assert_eq!(response.status, 400, "{invalid}");
        assert!(response.json()["error"].is_string());
    }
}

#[tokio::test]
async fn sse_fast_sends_nine_bytes_per_event_in_large_chunks() {
    let server = TestServer::start().await;
    let thousand = get(&server, "/sse/fast?count=1000", &[]).await;
    thousand.assert_event_stream();
    assert_eq!(thousand.body.len(), 9000);
    assert_eq!(thousand.body, b"data: x\n\n".repeat(1000));

    let many = get(&server, "/sse/fast?count=20000", &[]).await;
    assert_eq!(many.body.len(), 180_000);
    assert!(many.body.chunks(9).all(|event| event == b"data: x\n\n"));
    assert_eq!(many.chunks, [65_529, 65_529, 48_942]);

    let default = get(&server, "/sse/fast", &[]).await;
    assert_eq!(default.body.len(), 9000);
    assert!(get(&server, "/sse/fast?count=0", &[]).await.body.is_empty());
    let too_many = get(&server, "/sse/fast?count=10000001", &[]).await;
    assert_eq!(too_many.status, 400);
    assert_eq!(too_many.json(), json!({"error": "count must be at most 10000000, got 10000001"}));
}

#[tokio::test]
async fn sse_slow_sends_numbered_events_then_ends() {
    let server = TestServer::start().await;
    let response = get(&server, "/sse/slow?count=3&interval_ms=1", &[]).await;
    response.assert_event_stream();
    assert_eq!(response.body, b"id: 1\ndata: {\"i\": 1}\n\nid: 2\ndata: {\"i\": 2}\n\nid: 3\ndata: {\"i\": 3}\n\n");
    assert_eq!(response.chunks.len(), 3, "one chunk per event");

    for invalid in ["count=10001", "count=-1", "interval_ms=soon", "interval_ms=3600001"] {
        let response = get(&server, &format!("/sse/slow?{invalid}"), &[]).await;
        assert_eq!(response.status, 400, "{invalid}");
        assert!(response.json()["error"].is_string());
    }
}

#[tokio::test]
async fn sse_slow_sends_the_head_before_the_first_event() {
    let server = TestServer::start().await;
    let mut stream = send_get(&server, "/sse/slow?count=1&interval_ms=60000", &[]).await;
    let raw = tokio::time::timeout(PROMPTLY, read_head(&mut stream)).await.expect("the head comes at once");
    let end = head_end(&raw).expect("complete head");
    assert_eq!(raw.len(), end, "no event arrives with the head");
    let head = String::from_utf8_lossy(&raw);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("content-type: text/event-stream\r\n"), "{head}");
}

#[tokio::test]
async fn sse_forever_ticks_until_the_client_leaves() {
    let server = TestServer::start().await;
    let mut stream = send_get(&server, "/sse/forever?interval_ms=1", &[]).await;
    let mut raw = Vec::new();
    let mut buffer = [0; 4096];
    tokio::time::timeout(PROMPTLY, async {
        // Each tick is its own chunk, so a tick's bytes are contiguous in the raw response.
        while !raw.windows(14).any(|window| window == b"data: tick 3\n\n") {
            let read = stream.read(&mut buffer).await.expect("read the stream");
            assert_ne!(read, 0, "the endless stream ended");
            raw.extend_from_slice(&buffer[..read]);
        }
    })
    .await
    .expect("three ticks arrive");
    let text = String::from_utf8_lossy(&raw);
    let first = text.find("data: tick 1\n\n").expect("tick 1");
    let second = text.find("data: tick 2\n\n").expect("tick 2");
    assert!(first < second, "{text}");
    assert_eq!(get(&server, "/sse/forever?interval_ms=x", &[]).await.status, 400);
}

/// `open_event_streams` of `/stats`.
async fn open_event_streams(server: &TestServer) -> u64 {
    get(server, "/stats", &[]).await.json()["open_event_streams"].as_u64().expect("a count")
}

/// Waits until `/stats` counts `expected` open event streams.
async fn until_open_event_streams(server: &TestServer, expected: u64) {
    tokio::time::timeout(PROMPTLY, async {
        while open_event_streams(server).await != expected {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("/stats never counted {expected} open event streams"));
}

#[tokio::test]
async fn stats_count_the_event_streams_still_open() {
    let server = TestServer::start().await;
    assert_eq!(open_event_streams(&server).await, 0);
    // Between two events of a slow stream: open until the client goes away.
    let mut waiting = send_get(&server, "/sse/slow?count=2&interval_ms=60000", &[]).await;
    read_head(&mut waiting).await;
    let mut ticking = send_get(&server, "/sse/forever?interval_ms=10", &[]).await;
    read_head(&mut ticking).await;
    until_open_event_streams(&server, 2).await;
    drop(waiting);
    until_open_event_streams(&server, 1).await;
    drop(ticking);
    until_open_event_streams(&server, 0).await;
    // A stream that ends is closed too.
    get(&server, "/sse/events", &[]).await.assert_event_stream();
    assert_eq!(open_event_streams(&server).await, 0);
}

#[tokio::test]
async fn sse_never_sends_a_head() {
    let server = TestServer::start().await;
    let mut stream = send_get(&server, "/sse/never", &[]).await;
    let mut buffer = [0; 1024];
    let read = tokio::time::timeout(SILENCE, stream.read(&mut buffer)).await;
    assert!(read.is_err(), "the server answered: {read:?}");
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

fn ws_url(server: &TestServer, path: &str) -> String {
    format!("ws://{}{path}", server.addr())
}

/// Connects to `path` with `headers` added to the handshake; returns the socket and the
/// `Sec-WebSocket-Protocol` the server selected.
async fn connect_with(
    server: &TestServer,
    path: &str,
    headers: &[(&'static str, &'static str)],
) -> (Socket, Option<String>) {
    let mut request = ws_url(server, path).into_client_request().expect("a valid WebSocket URL");
    for (name, value) in headers {
        request.headers_mut().append(*name, HeaderValue::from_static(value));
    }
    let (socket, response) = tokio::time::timeout(PROMPTLY, tokio_tungstenite::connect_async(request))
        .await
        .expect("the handshake completes")
        .unwrap_or_else(|error| panic!("{path}: handshake failed: {error}"));
    let protocol = response
        .headers()
        .get("sec-websocket-protocol")
        .map(|value| value.to_str().expect("ASCII protocol").to_owned());
    (socket, protocol)
}

async fn connect(server: &TestServer, path: &str) -> Socket {
    connect_with(server, path, &[]).await.0
}

/// The next message other than pings and pongs; `None` when the stream ended.
async fn next_message(socket: &mut Socket) -> Option<Message> {
    loop {
        let message = tokio::time::timeout(PROMPTLY, socket.next()).await.expect("a message or the end comes");
        match message {
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Ok(message)) => return Some(message),
            Some(Err(error)) => panic!("WebSocket error: {error}"),
            None => return None,
        }
    }
}

async fn next_text(socket: &mut Socket) -> String {
    match next_message(socket).await {
        Some(Message::Text(text)) => text.as_str().to_owned(),
        other => panic!("expected a text message, got {other:?}"),
    }
}

/// Expects a close frame with `code` and `reason`, then the end of the stream (the client's
/// close reply goes out on the way).
async fn expect_close(socket: &mut Socket, code: u16, reason: &str) {
    match next_message(socket).await {
        Some(Message::Close(Some(CloseFrame { code: found, reason: found_reason }))) => {
            assert_eq!((u16::from(found), found_reason.as_str()), (code, reason));
        }
        other => panic!("expected a close frame {code} {reason:?}, got {other:?}"),
    }
    assert_eq!(next_message(socket).await, None, "the stream ends after the close frame");
}

/// The head of the answer to a raw WebSocket handshake for `path` with `extra` header lines.
async fn raw_handshake(server: &TestServer, path: &str, extra: &str) -> Response {
    let mut stream = TcpStream::connect(server.addr()).await.expect("connect to the test server");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
    );
    stream.write_all(request.as_bytes()).await.expect("write the handshake");
    let raw = tokio::time::timeout(PROMPTLY, read_head(&mut stream)).await.expect("the handshake is answered");
    let end = head_end(&raw).expect("complete head");
    parse_head(&raw[..end])
}

#[tokio::test]
async fn ws_echo_echoes_text_binary_and_pings() {
    let server = TestServer::start().await;
    let mut socket = connect(&server, "/ws/echo").await;
    socket.send(Message::text("hello")).await.unwrap();
    assert_eq!(next_text(&mut socket).await, "hello");
    socket.send(Message::binary(vec![9, 8, 7])).await.unwrap();
    assert_eq!(next_message(&mut socket).await, Some(Message::binary(vec![9, 8, 7])));
    socket.send(Message::Ping(vec![1, 2].into())).await.unwrap();
    let pong = tokio::time::timeout(PROMPTLY, socket.next()).await.expect("a pong comes");
    assert!(matches!(pong, Some(Ok(Message::Pong(ref payload))) if payload[..] == [1, 2]), "{pong:?}");
    socket.close(None).await.unwrap();
    assert!(matches!(next_message(&mut socket).await, Some(Message::Close(_)) | None));
}

#[tokio::test]
async fn ws_echo_negotiates_subprotocols() {
    let server = TestServer::start().await;
    let (_, json) = connect_with(&server, "/ws/echo", &[("Sec-WebSocket-Protocol", "json")]).await;
    assert_eq!(json.as_deref(), Some("json"));
    let (_, chat) = connect_with(&server, "/ws/echo", &[("Sec-WebSocket-Protocol", "chat.v1")]).await;
    assert_eq!(chat.as_deref(), Some("chat.v1"));
    // axum picks by the server's order of preference, not the client's.
    let (_, both) = connect_with(&server, "/ws/echo", &[("Sec-WebSocket-Protocol", "json, chat.v1")]).await;
    assert_eq!(both.as_deref(), Some("chat.v1"));
    let (_, none) = connect_with(&server, "/ws/echo", &[]).await;
    assert_eq!(none, None);

    // tungstenite refuses a 101 without a protocol when it offered one, so look at the raw answer.
    let other = raw_handshake(&server, "/ws/echo", "Sec-WebSocket-Protocol: other\r\n").await;
    assert_eq!(other.status, 101, "{other:?}");
    assert_eq!(other.header("sec-websocket-protocol"), None);
    assert_eq!(other.header("sec-websocket-accept"), Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
}

#[tokio::test]
async fn ws_echo_closes_when_asked() {
    let server = TestServer::start().await;
    let mut socket = connect(&server, "/ws/echo").await;
    socket.send(Message::text("close-me")).await.unwrap();
    expect_close(&mut socket, 4000, "asked to").await;
}

#[tokio::test]
async fn ws_echo_refuses_plain_requests() {
    let server = TestServer::start().await;
    let plain = get(&server, "/ws/echo", &[]).await;
    assert_eq!(plain.status, 400);
    assert!(plain.json()["error"].is_string());
}

#[tokio::test]
async fn ws_close_sends_the_requested_close_frame() {
    let server = TestServer::start().await;
    let mut socket = connect(&server, "/ws/close?code=4001&reason=later").await;
    assert_eq!(next_text(&mut socket).await, "closing");
    expect_close(&mut socket, 4001, "later").await;

    let mut defaults = connect(&server, "/ws/close").await;
    assert_eq!(next_text(&mut defaults).await, "closing");
    expect_close(&mut defaults, 1000, "bye").await;

    let long_reason = format!("reason={}", "x".repeat(124));
    for invalid in ["code=1005", "code=999", "code=5000", "code=70000", "code=soon", long_reason.as_str()] {
        let response = raw_handshake(&server, &format!("/ws/close?{invalid}"), "").await;
        assert_eq!(response.status, 400, "{invalid}");
    }
}

#[tokio::test]
async fn ws_binary_sends_a_binary_frame_then_echoes() {
    let server = TestServer::start().await;
    let mut socket = connect(&server, "/ws/binary").await;
    assert_eq!(next_message(&mut socket).await, Some(Message::binary(vec![0, 1, 2])));
    assert_eq!(next_text(&mut socket).await, "after binary");
    socket.send(Message::text("still there")).await.unwrap();
    assert_eq!(next_text(&mut socket).await, "still there");
}

#[tokio::test]
async fn ws_reject_fails_the_handshake_with_403() {
    let server = TestServer::start().await;
    let error = tokio_tungstenite::connect_async(ws_url(&server, "/ws/reject")).await.expect_err("the handshake fails");
    let WsError::Http(response) = error else { panic!("expected an HTTP error, got {error}") };
    assert_eq!(response.status(), 403);
    let body = response.body().as_deref().expect("a body");
    assert_eq!(serde_json::from_slice::<Value>(body).unwrap(), json!({"error": "forbidden"}));
}

#[tokio::test]
async fn ws_hang_never_completes_the_handshake() {
    let server = TestServer::start().await;
    let connect = tokio_tungstenite::connect_async(ws_url(&server, "/ws/hang"));
    assert!(tokio::time::timeout(SILENCE, connect).await.is_err(), "the handshake completed");
}

#[tokio::test]
async fn ws_headers_lists_the_handshake_headers_then_echoes() {
    let server = TestServer::start().await;
    let headers = [("Cookie", "session=abc"), ("Authorization", "Bearer t0k3n"), ("Sec-WebSocket-Protocol", "chat.v1")];
    let (mut socket, protocol) = connect_with(&server, "/ws/headers", &headers).await;
    assert_eq!(protocol.as_deref(), Some("chat.v1"));
    let listed: Value = serde_json::from_str(&next_text(&mut socket).await).expect("JSON headers");
    let listed = listed["headers"].as_array().expect("a headers array");
    for expected in [
        json!(["cookie", "session=abc"]),
        json!(["authorization", "Bearer t0k3n"]),
        json!(["sec-websocket-protocol", "chat.v1"]),
        json!(["upgrade", "websocket"]),
        json!(["sec-websocket-version", "13"]),
    ] {
        assert!(listed.contains(&expected), "{expected} missing from {listed:?}");
    }
    socket.send(Message::text("echo")).await.unwrap();
    assert_eq!(next_text(&mut socket).await, "echo");
}

#[tokio::test]
async fn ws_count_sends_numbers_then_closes() {
    let server = TestServer::start().await;
    let mut socket = connect(&server, "/ws/count?n=3").await;
    for expected in ["1", "2", "3"] {
        assert_eq!(next_text(&mut socket).await, expected);
    }
    expect_close(&mut socket, 1000, "done").await;

    let mut zero = connect(&server, "/ws/count?n=0").await;
    expect_close(&mut zero, 1000, "done").await;
    assert_eq!(raw_handshake(&server, "/ws/count?n=1001", "").await.status, 400);
}
