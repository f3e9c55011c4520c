//! The remote client's WebSocket sessions against the real server: `POST /execute/ws`
//! and the control socket through `RemoteClient::open_websocket_string` and
//! `WsSessionHandle::connect` (echoes, replay after `afterSeq`, closes, idle timeout,
//! the bearer token), and `RemoteClient::run_string` on a WebSocket definition, whose
//! `Response::websocket()` drives the session as a local connection.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::json;
use support::start;
use volley_echo_server::TestServer;
use volley_engine::remote::{WsEnvelope, WsEnvelopeKind, WsSessionOptions, WsSessionSocket};
use volley_engine::websocket::{WebSocket, WsClose, WsError, WsMessage};
use volley_engine::{RemoteClient, RemoteConfig, RunOptions};
use volley_server::ServerConfig;

/// How long any one expected envelope or message may take.
const PATIENCE: Duration = Duration::from_secs(10);

fn remote(base: &str) -> RemoteClient {
    RemoteClient::new(RemoteConfig::new(base)).unwrap()
}

/// A WebSocket definition of the upstream's `route` (`/ws/echo`, …).
fn definition(upstream: &TestServer, route: &str) -> String {
    format!("# @name socket\nWEBSOCKET {}{route}\n", upstream.base_url().replacen("http", "ws", 1))
}

/// The next envelope, within [`PATIENCE`]; `None` when the socket ended.
async fn next(socket: &mut WsSessionSocket) -> Option<WsEnvelope> {
    tokio::time::timeout(PATIENCE, socket.next()).await.expect("an envelope in time").map(|item| item.unwrap())
}

/// The envelopes up to and including the first of `kind`.
async fn until(socket: &mut WsSessionSocket, kind: &WsEnvelopeKind) -> Vec<WsEnvelope> {
    let mut seen = Vec::new();
    loop {
        let envelope = next(socket).await.unwrap_or_else(|| panic!("the socket ended before {kind}: {seen:?}"));
        let done = envelope.kind == *kind;
        seen.push(envelope);
        if done {
            return seen;
        }
    }
}

fn kinds(envelopes: &[WsEnvelope]) -> Vec<&str> {
    envelopes.iter().map(|envelope| envelope.kind.as_str()).collect()
}

/// The next message of a connection, within [`PATIENCE`].
async fn message(socket: &mut WebSocket) -> Option<Result<WsMessage, WsError>> {
    tokio::time::timeout(PATIENCE, socket.next()).await.expect("a message in time")
}

/// A value whose fields are not in alphabetical order.
#[derive(serde::Serialize)]
struct Order {
    n: u8,
    list: [bool; 1],
}

#[tokio::test]
async fn a_session_echoes_text_and_json() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let handle = client
        .open_websocket_string(&definition(&upstream, "/ws/echo"), RunOptions::default(), WsSessionOptions::default())
        .await
        .unwrap();
    let info = handle.info();
    assert!(info.ws_session_id.starts_with("ws_"), "{info:?}");
    assert_eq!(info.downstream_path, format!("/ws/session/{}", info.ws_session_id));
    assert_eq!(info.upstream_url, upstream.url("/ws/echo").replacen("http", "ws", 1));
    assert_eq!(info.subprotocol, None);
    assert_eq!(info.replay_buffer_size, 500);
    assert!(info.run_id.starts_with("run_") && info.req_exec_id.is_some(), "{info:?}");
    assert_eq!(info.flow_id, client.flow_id());
    assert_eq!(info.request["name"], "socket");

    let mut socket = handle.connect(None).await.unwrap();
    let start = until(&mut socket, &WsEnvelopeKind::ReplayEnd).await;
    assert_eq!(kinds(&start), ["session.opened", "session.replay.end"]);
    assert_eq!(start[0].seq, 1);
    assert_eq!(start[0].ws_session_id, info.ws_session_id);
    assert_eq!(start[0].payload.as_ref().unwrap()["upstreamUrl"], json!(info.upstream_url));
    assert_eq!(start[1].payload, Some(json!({"afterSeq": 0, "replayed": 1, "gap": false})));
    assert_eq!(socket.last_seq(), 1);

    socket.send_text("hello").await.unwrap();
    let sent = until(&mut socket, &WsEnvelopeKind::Inbound).await;
    assert_eq!(kinds(&sent), ["session.outbound", "session.inbound"]);
    assert_eq!((sent[0].payload_type.as_deref(), sent[0].text().as_deref()), (Some("text"), Some("hello")));
    assert_eq!((sent[1].payload_type.as_deref(), sent[1].text().as_deref()), (Some("text"), Some("hello")));
    assert_eq!((sent[1].seq, sent[1].byte_length), (3, Some(5)));

    // Fields in their order, not sorted: the upstream gets (and the echo returns) the
    // text serde writes for the value.
    socket.send_json(&Order { n: 1, list: [true] }).await.unwrap();
    let sent = until(&mut socket, &WsEnvelopeKind::Inbound).await;
    assert_eq!(kinds(&sent), ["session.outbound", "session.inbound"]);
    assert_eq!(sent[1].payload_type.as_deref(), Some("json"));
    assert_eq!(sent[1].payload, Some(json!({"n": 1, "list": [true]})));
    assert_eq!(sent[1].text().as_deref(), Some(r#"{"n":1,"list":[true]}"#));
    assert_eq!(socket.last_seq(), 5);
    assert_eq!(handle.last_seq(), 5);

    socket.ping().await.unwrap();
    socket.close(1000, "done").await.unwrap();
    let closed = until(&mut socket, &WsEnvelopeKind::Closed).await;
    assert_eq!(closed.last().unwrap().payload, Some(json!({"code": 1000, "reason": "done", "wasClean": true})));
    assert_eq!(closed.last().unwrap().closed(), Some(WsClose { code: 1000, reason: "done".to_owned() }));
    assert!(next(&mut socket).await.is_none(), "the server closes the control socket after session.closed");
    assert_eq!(socket.close_frame().map(|close| close.code), Some(1000));
}

#[tokio::test]
async fn a_new_control_socket_replays_after_seq_and_replaces_the_old_one() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let handle = client
        .open_websocket_string(&definition(&upstream, "/ws/echo"), RunOptions::default(), WsSessionOptions::default())
        .await
        .unwrap();
    let mut first = handle.connect(None).await.unwrap();
    until(&mut first, &WsEnvelopeKind::ReplayEnd).await;
    first.send_text("one").await.unwrap();
    until(&mut first, &WsEnvelopeKind::Inbound).await;
    let after_one = first.last_seq();
    assert_eq!(after_one, 3);

    // Everything from the start, then live.
    let mut second = handle.connect(Some(0)).await.unwrap();
    let replay = until(&mut second, &WsEnvelopeKind::ReplayEnd).await;
    assert_eq!(kinds(&replay), ["session.opened", "session.outbound", "session.inbound", "session.replay.end"]);
    assert_eq!(replay.iter().map(|envelope| envelope.seq).take(3).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(replay[3].payload, Some(json!({"afterSeq": 0, "replayed": 3, "gap": false})));
    // The old socket was replaced: closed with 1000.
    assert!(next(&mut first).await.is_none());
    assert_eq!(first.close_frame().map(|close| close.code), Some(1000));

    second.send_text("two").await.unwrap();
    until(&mut second, &WsEnvelopeKind::Inbound).await;
    second.sender().disconnect().await.unwrap();
    drop(second);

    // Only what came after the first socket's last envelope.
    let mut third = handle.connect(Some(after_one)).await.unwrap();
    let replay = until(&mut third, &WsEnvelopeKind::ReplayEnd).await;
    assert_eq!(kinds(&replay), ["session.outbound", "session.inbound", "session.replay.end"]);
    assert_eq!(replay[1].text().as_deref(), Some("two"));
    assert_eq!(replay[2].payload, Some(json!({"afterSeq": 3, "replayed": 2, "gap": false})));
    assert_eq!(handle.last_seq(), 5);

    // Nothing new: only the end of the replay.
    let mut fourth = handle.connect(Some(handle.last_seq())).await.unwrap();
    let replay = until(&mut fourth, &WsEnvelopeKind::ReplayEnd).await;
    assert_eq!(kinds(&replay), ["session.replay.end"]);
    fourth.close(1000, "").await.unwrap();
    until(&mut fourth, &WsEnvelopeKind::Closed).await;
}

#[tokio::test]
async fn the_upstream_closing_ends_the_session() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let handle = client
        .open_websocket_string(&definition(&upstream, "/ws/echo"), RunOptions::default(), WsSessionOptions::default())
        .await
        .unwrap();
    let mut socket = handle.connect(None).await.unwrap();
    socket.send_text("close-me").await.unwrap();
    let closed = until(&mut socket, &WsEnvelopeKind::Closed).await;
    assert_eq!(closed.last().unwrap().closed(), Some(WsClose { code: 4000, reason: "asked to".to_owned() }));
    assert!(next(&mut socket).await.is_none());
    // The session is gone: refused before the upgrade, or (while it is being removed)
    // closed with 1008.
    match handle.connect(None).await {
        Err(error) => assert_eq!(error.server_code(), Some("WS_SESSION_NOT_FOUND"), "{error}"),
        Ok(mut late) => {
            while next(&mut late).await.is_some() {}
            assert_eq!(late.close_frame().map(|close| close.code), Some(1008));
        }
    }
}

#[tokio::test]
async fn an_idle_session_closes_with_1001() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let options = WsSessionOptions::default().idle_timeout(Duration::from_millis(300)).replay_buffer_size(10);
    let handle =
        client.open_websocket_string(&definition(&upstream, "/ws/echo"), RunOptions::default(), options).await.unwrap();
    assert_eq!(handle.info().replay_buffer_size, 10);
    let mut socket = handle.connect(None).await.unwrap();
    let closed = until(&mut socket, &WsEnvelopeKind::Closed).await;
    assert_eq!(closed.last().unwrap().closed().map(|close| close.code), Some(1001));
    assert!(next(&mut socket).await.is_none());
    assert_eq!(socket.close_frame().map(|close| close.code), Some(1001));
}

#[tokio::test]
async fn sessions_and_control_sockets_carry_the_token() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { token: Some("s3cret".to_owned()), ..ServerConfig::default() }).await;
    let client =
        RemoteClient::new(RemoteConfig { token: Some("s3cret".to_owned()), ..RemoteConfig::new(&server.base) })
            .unwrap();
    let handle = client
        .open_websocket_string(&definition(&upstream, "/ws/echo"), RunOptions::default(), WsSessionOptions::default())
        .await
        .unwrap();
    let mut socket = handle.connect(None).await.unwrap();
    socket.send_text("with a token").await.unwrap();
    let sent = until(&mut socket, &WsEnvelopeKind::Inbound).await;
    assert_eq!(sent.last().unwrap().text().as_deref(), Some("with a token"));
    socket.close(1000, "").await.unwrap();

    let anonymous = remote(&server.base);
    let error = anonymous
        .open_websocket_string(&definition(&upstream, "/ws/echo"), RunOptions::default(), WsSessionOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.server_code(), Some("UNAUTHORIZED"));
}

#[tokio::test]
async fn requests_that_are_not_websockets_are_refused() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let text = format!("GET {}\n", upstream.url("/echo"));
    let error =
        client.open_websocket_string(&text, RunOptions::default(), WsSessionOptions::default()).await.unwrap_err();
    assert_eq!(error.server_code(), Some("EXECUTE_ERROR"), "{error}");
}

#[tokio::test]
async fn run_gives_the_session_as_a_websocket() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let text = format!("# @ws-subprotocols json\n{}", definition(&upstream, "/ws/echo"));
    let response = client.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 101);
    assert!(response.is_websocket());
    assert_eq!(response.url().as_str(), upstream.url("/ws/echo").replacen("http", "ws", 1));
    assert_eq!(response.headers()["sec-websocket-protocol"], "json");
    let mut socket = response.websocket().unwrap();
    assert!(response.websocket().is_none(), "taken once");
    assert_eq!(socket.protocol(), Some("json"));

    socket.send_text("hi").await.unwrap();
    assert_eq!(message(&mut socket).await.unwrap().unwrap(), WsMessage::Text("hi".to_owned()));
    socket.send_json(&json!({"a": [1, 2]})).await.unwrap();
    assert_eq!(message(&mut socket).await.unwrap().unwrap(), WsMessage::Text(r#"{"a":[1,2]}"#.to_owned()));
    // A ping only keeps the session alive: nothing comes back for it.
    socket.ping(b"x".to_vec()).await.unwrap();
    socket.send_text("close-me").await.unwrap();
    assert_eq!(
        message(&mut socket).await.unwrap().unwrap(),
        WsMessage::Close(Some(WsClose { code: 4000, reason: "asked to".to_owned() }))
    );
    assert!(message(&mut socket).await.is_none());
}

#[tokio::test]
async fn run_maps_binary_frames_and_our_close() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let response = client.run_string(&definition(&upstream, "/ws/binary"), RunOptions::default()).await.unwrap();
    assert!(response.headers().is_empty());
    let (sender, mut receiver) = response.websocket().unwrap().split();
    let first = tokio::time::timeout(PATIENCE, receiver.next()).await.unwrap().unwrap();
    assert!(matches!(first, Err(WsError::Binary { len: 3 })), "{first:?}");
    let second = tokio::time::timeout(PATIENCE, receiver.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(second, WsMessage::Text("after binary".to_owned()));
    sender.close(4001, "bye").await.unwrap();
    let last = tokio::time::timeout(PATIENCE, receiver.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(last, WsMessage::Close(Some(WsClose { code: 4001, reason: "bye".to_owned() })));
    assert!(tokio::time::timeout(PATIENCE, receiver.next()).await.unwrap().is_none());
    // A close code no close frame may carry (1005 is reserved) is a session error; the
    // stream goes on.
    let response = client.run_string(&definition(&upstream, "/ws/echo"), RunOptions::default()).await.unwrap();
    let mut socket = response.websocket().unwrap();
    socket.close(1005, "").await.unwrap();
    let refused = message(&mut socket).await.unwrap();
    assert!(matches!(&refused, Err(WsError::Connection(text)) if text.starts_with("WS_PROTOCOL_ERROR")), "{refused:?}");
    socket.close(1000, "").await.unwrap();
    assert_eq!(
        message(&mut socket).await.unwrap().unwrap(),
        WsMessage::Close(Some(WsClose { code: 1000, reason: String::new() }))
    );
}
