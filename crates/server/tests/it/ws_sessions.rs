//! Server-owned WebSocket sessions on real sockets: `POST /execute/ws` against the local
//! test upstream, the control socket `/ws/session/{id}` driven by a tungstenite client
//! (replay, gaps, replacement, closes, errors, limits, idling, shutdown, authentication),
//! and the observer stream `/event/ws`.
//!
//! The tests run on multi-threaded runtimes, like the server's own, so that the server's
//! tasks and the client race as they do in production (a session still findable after
//! its `session.closed` showed only there).

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use support::{Running, client, post, send, start};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::handshake::client::Response as Handshake;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use volley_echo_server::TestServer;
use volley_server::ServerConfig;

use crate::support;

/// How long any one read may take before the test fails instead of hanging.
const READ: Duration = Duration::from_secs(10);
/// The main token of the servers started with authentication.
const MAIN: &str = "main";

/// How a socket presents its token.
#[derive(Clone, Copy)]
enum Auth<'a> {
    None,
    /// `Authorization: Bearer …`.
    Bearer(&'a str),
    /// `Sec-WebSocket-Protocol: volley.v1, volley.bearer.<base64url(token)>`.
    Protocol(&'a str),
}

/// A client WebSocket on the server (a control socket or an observer stream).
struct Socket {
    inner: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Socket {
    /// Connects `ws://{server}{path}`; the handshake's error (an HTTP refusal) as is.
    async fn connect(server: &Running, path: &str, auth: Auth<'_>) -> Result<(Self, Handshake), tungstenite::Error> {
        let url = format!("{}{path}", server.base.replacen("http", "ws", 1));
        let mut request = url.into_client_request().expect("request");
        match auth {
            Auth::None => {}
            Auth::Bearer(token) => {
                request.headers_mut().insert("authorization", format!("Bearer {token}").parse().expect("header"));
            }
            Auth::Protocol(token) => {
                let offer = format!("volley.v1, volley.bearer.{}", URL_SAFE_NO_PAD.encode(token));
                request.headers_mut().insert("sec-websocket-protocol", offer.parse().expect("header"));
            }
        }
        let (inner, handshake) =
            tokio::time::timeout(READ, tokio_tungstenite::connect_async(request)).await.expect("handshake in time")?;
        Ok((Self { inner }, handshake))
    }

    /// The control socket of session `id`, replaying after `after_seq`.
    async fn control(server: &Running, id: &str, after_seq: u64) -> Self {
        Self::control_with(server, id, after_seq, Auth::None).await
    }

    async fn control_with(server: &Running, id: &str, after_seq: u64, auth: Auth<'_>) -> Self {
        let path = format!("/ws/session/{id}?afterSeq={after_seq}");
        Self::connect(server, &path, auth).await.expect("control socket").0
    }

    /// The next frame that is not a ping or pong.
    async fn frame(&mut self) -> Option<Message> {
        loop {
            let next = tokio::time::timeout(READ, self.inner.next()).await.expect("a frame in time");
            match next {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(message)) => return Some(message),
                Some(Err(_)) | None => return None,
            }
        }
    }

    /// The next JSON text frame.
    async fn next(&mut self) -> Value {
        match self.frame().await {
            Some(Message::Text(text)) => serde_json::from_str(text.as_str()).expect("a JSON envelope"),
            other => panic!("expected a JSON text frame, got {other:?}"),
        }
    }

    /// The next envelope, which must be of type `kind`.
    async fn expect(&mut self, kind: &str) -> Value {
        let envelope = self.next().await;
        assert_eq!(envelope["type"], kind, "{envelope}");
        envelope
    }

    /// The next envelope, which must be a `session.error` with `code`.
    async fn expect_error(&mut self, code: &str) -> Value {
        let envelope = self.expect("session.error").await;
        assert_eq!(envelope["error"]["code"], code, "{envelope}");
        assert!(envelope["error"]["message"].is_string(), "{envelope}");
        envelope
    }

    /// The envelopes up to `session.replay.end`, and that one.
    async fn replay(&mut self) -> (Vec<Value>, Value) {
        let mut replayed = Vec::new();
        loop {
            let envelope = self.next().await;
            if envelope["type"] == "session.replay.end" {
                return (replayed, envelope);
            }
            replayed.push(envelope);
        }
    }

    /// The first `count` envelopes of a fresh session, wherever `session.replay.end`
    /// falls among them (what the upstream sends at once may come before or after it).
    async fn published(&mut self, count: usize) -> Vec<Value> {
        let mut envelopes = Vec::new();
        let mut replay_ended = false;
        while envelopes.len() < count || !replay_ended {
            let envelope = self.next().await;
            if envelope["type"] == "session.replay.end" {
                replay_ended = true;
            } else {
                envelopes.push(envelope);
            }
        }
        envelopes
    }

    /// Envelopes until one of type `last`, inclusive.
    async fn until(&mut self, last: &str) -> Vec<Value> {
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

    async fn send(&mut self, message: Value) {
        self.send_frame(Message::text(message.to_string())).await;
    }

    async fn send_frame(&mut self, message: Message) {
        tokio::time::timeout(READ, self.inner.send(message)).await.expect("sent in time").expect("send");
    }

    /// `session.send` of `payload`, then its `session.outbound` and `session.inbound` echo.
    async fn echo(&mut self, payload: Value) -> (Value, Value) {
        self.send(json!({ "type": "session.send", "payload": payload })).await;
        let outbound = self.expect("session.outbound").await;
        let inbound = self.expect("session.inbound").await;
        assert_eq!(outbound["payload"], payload, "{outbound}");
        assert_eq!(inbound["payload"], payload, "{inbound}");
        (outbound, inbound)
    }

    /// The close frame the server ends with; its code. Nothing else may come first.
    async fn closed(&mut self) -> u16 {
        match self.frame().await {
            Some(Message::Close(Some(CloseFrame { code, .. }))) => {
                let code = u16::from(code);
                // The stream ends after the closing handshake.
                assert!(self.frame().await.is_none(), "nothing after the close frame");
                code
            }
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

fn ws_url(upstream: &TestServer, path: &str) -> String {
    format!("{}{path}", upstream.base_url().replacen("http", "ws", 1))
}

/// `POST /execute/ws` with `body`; the status and answer.
async fn execute_ws(http: &reqwest::Client, server: &Running, body: Value) -> (u16, Value) {
    post(http, format!("{}/execute/ws", server.base), body).await
}

/// Opens a session; the answer.
async fn open(http: &reqwest::Client, server: &Running, body: Value) -> Value {
    let (status, answer) = execute_ws(http, server, body).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

/// A new flow and an observer of it on `/event/ws`.
async fn observed_flow(http: &reqwest::Client, server: &Running) -> (String, Socket) {
    let flow = create_flow(http, server, None).await;
    let (observer, _) =
        Socket::connect(server, &format!("/event/ws?flowId={flow}"), Auth::None).await.expect("observer");
    (flow, observer)
}

/// Opens a session on `/ws/echo`; its id.
async fn open_echo(http: &reqwest::Client, server: &Running, upstream: &TestServer) -> String {
    let answer = open(http, server, json!({ "content": format!("GET {}\n", ws_url(upstream, "/ws/echo")) })).await;
    session_id(&answer)
}

fn session_id(answer: &Value) -> String {
    answer["ws"]["wsSessionId"].as_str().expect("wsSessionId").to_owned()
}

/// Connects to a fresh session and reads its opening replay.
async fn attach_fresh(server: &Running, id: &str) -> Socket {
    let mut control = Socket::control(server, id, 0).await;
    control.expect("session.opened").await;
    let end = control.expect("session.replay.end").await;
    assert_eq!(end["payload"], json!({ "afterSeq": 0, "replayed": 1, "gap": false }));
    control
}

async fn create_flow(http: &reqwest::Client, server: &Running, token: Option<&str>) -> String {
    let (status, flow) = send(http.post(format!("{}/flows", server.base)), Some(json!({})), token).await;
    assert_eq!(status, 201, "{flow}");
    flow["flowId"].as_str().expect("flowId").to_owned()
}

fn seq(envelope: &Value) -> u64 {
    envelope["seq"].as_u64().expect("seq")
}

fn kinds(envelopes: &[Value]) -> Vec<&str> {
    envelopes.iter().map(|envelope| envelope["type"].as_str().expect("type")).collect()
}

/// The error code of an HTTP error answer.
fn code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or_default()
}

/// The HTTP status a refused handshake answered.
fn refused(result: Result<(Socket, Handshake), tungstenite::Error>) -> u16 {
    match result {
        Err(tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("expected an HTTP refusal, got {other}"),
        Ok(_) => panic!("expected an HTTP refusal, the handshake succeeded"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_session_opens_replays_its_opening_and_relays_text_and_json() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let flow = create_flow(&http, &server, None).await;
    let url = ws_url(&upstream, "/ws/echo");
    let answer = open(&http, &server, json!({ "content": format!("GET {url}\n"), "flowId": flow })).await;
    let ws = &answer["ws"];
    let id = session_id(&answer);
    assert!(id.starts_with("ws_"), "{answer}");
    assert_eq!(ws["downstreamPath"], format!("/ws/session/{id}"));
    assert_eq!(ws["upstreamUrl"], url);
    assert_eq!(ws["replayBufferSize"], 500);
    assert_eq!(ws["lastSeq"], 1);
    assert!(ws.get("subprotocol").is_none(), "no subprotocol was negotiated: {answer}");
    assert_eq!(answer["flowId"], flow);
    assert!(answer["runId"].is_string() && answer["reqExecId"].is_string(), "{answer}");
    assert_eq!(answer["request"]["method"], "GET");
    let exec = answer["reqExecId"].as_str().expect("reqExecId");

    let mut control = Socket::control(&server, &id, 0).await;
    let opened = control.expect("session.opened").await;
    assert_eq!(seq(&opened), 1);
    assert_eq!(opened["payload"], json!({ "upstreamUrl": url }));
    let end = control.expect("session.replay.end").await;
    assert_eq!(end["payload"], json!({ "afterSeq": 0, "replayed": 1, "gap": false }));

    control.send(json!({ "type": "session.send", "payload": "hi" })).await;
    let outbound = control.expect("session.outbound").await;
    let inbound = control.expect("session.inbound").await;
    control.send(json!({ "type": "session.send", "payloadType": "json", "payload": { "a": 1 } })).await;
    let json_out = control.expect("session.outbound").await;
    let json_in = control.expect("session.inbound").await;
    // A payload without `payloadType` that is not a string is JSON.
    control.send(json!({ "type": "session.send", "payload": [1, 2] })).await;
    let array_out = control.expect("session.outbound").await;
    let array_in = control.expect("session.inbound").await;

    let texts = [&outbound, &inbound];
    for envelope in texts {
        assert_eq!(envelope["payloadType"], "text", "{envelope}");
        assert_eq!(envelope["payload"], "hi", "{envelope}");
        assert_eq!(envelope["byteLength"], 2, "{envelope}");
    }
    for envelope in [&json_out, &json_in] {
        assert_eq!(envelope["payloadType"], "json", "{envelope}");
        assert_eq!(envelope["payload"], json!({ "a": 1 }), "{envelope}");
        assert_eq!(envelope["byteLength"], r#"{"a":1}"#.len(), "{envelope}");
    }
    for envelope in [&array_out, &array_in] {
        assert_eq!(envelope["payloadType"], "json", "{envelope}");
        assert_eq!(envelope["payload"], json!([1, 2]), "{envelope}");
    }
    let all = [&opened, &outbound, &inbound, &json_out, &json_in, &array_out, &array_in];
    let seqs: Vec<u64> = all.iter().map(|envelope| seq(envelope)).collect();
    assert_eq!(seqs, (1..=7).collect::<Vec<_>>());
    for envelope in all {
        assert!(envelope["ts"].as_u64().is_some_and(|ts| ts > 0), "{envelope}");
        assert_eq!(envelope["wsSessionId"], id.as_str(), "{envelope}");
        assert_eq!(envelope["reqExecId"], exec, "{envelope}");
        assert_eq!(envelope["flowId"], flow, "{envelope}");
        if envelope["type"] != "session.opened" {
            assert_eq!(envelope["encoding"], "utf-8", "{envelope}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_negotiated_subprotocol_is_reported_only_when_there_is_one() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let url = ws_url(&upstream, "/ws/echo");
    let answer = open(&http, &server, json!({ "content": format!("# @ws-subprotocols chat.v1\nGET {url}\n") })).await;
    assert_eq!(answer["ws"]["subprotocol"], "chat.v1", "{answer}");
    assert!(answer.get("flowId").is_none(), "{answer}");
    let mut control = Socket::control(&server, &session_id(&answer), 0).await;
    let opened = control.expect("session.opened").await;
    assert_eq!(opened["payload"], json!({ "upstreamUrl": url, "subprotocol": "chat.v1" }));
    assert!(opened.get("flowId").is_none(), "no flow: {opened}");

    let plain = open(&http, &server, json!({ "content": format!("GET {url}\n") })).await;
    assert!(plain["ws"].get("subprotocol").is_none(), "{plain}");
    let mut control = Socket::control(&server, &session_id(&plain), 0).await;
    let opened = control.expect("session.opened").await;
    assert!(opened["payload"].get("subprotocol").is_none(), "{opened}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reconnecting_socket_gets_what_it_missed_in_order_then_live_traffic() {
    const MESSAGES: usize = 20;
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let id = open_echo(&http, &server, &upstream).await;

    // Sends, then goes away without reading: the upstream keeps answering.
    let mut first = attach_fresh(&server, &id).await;
    for i in 0..MESSAGES {
        first.send(json!({ "type": "session.send", "payload": format!("m{i}") })).await;
    }
    // Closed, and over once the server has read all of it: nothing it sent is lost,
    // and what the upstream answers after that has no socket to go to.
    first.inner.close(None).await.expect("close");
    while first.frame().await.is_some() {}
    drop(first);

    // Last seen: `session.opened` (1).
    let mut second = Socket::control(&server, &id, 1).await;
    let (replayed, end) = second.replay().await;
    assert_eq!(end["payload"]["afterSeq"], 1, "{end}");
    assert_eq!(end["payload"]["replayed"], replayed.len(), "{end}");
    assert_eq!(end["payload"]["gap"], false, "{end}");
    let mut seen = replayed.clone();
    while seen.len() < 2 * MESSAGES {
        seen.push(second.next().await);
    }
    let seqs: Vec<u64> = seen.iter().map(seq).collect();
    let last = 1 + 2 * MESSAGES as u64;
    assert_eq!(seqs, (2..=last).collect::<Vec<_>>(), "each envelope once, in order");
    let expected: Vec<Value> = (0..MESSAGES).map(|i| json!(format!("m{i}"))).collect();
    for kind in ["session.outbound", "session.inbound"] {
        let payloads: Vec<Value> = seen
            .iter()
            .filter(|envelope| envelope["type"] == kind)
            .map(|envelope| envelope["payload"].clone())
            .collect();
        assert_eq!(payloads, expected, "{kind}");
    }

    // Everything is published now: a socket that saw up to 30 gets exactly the rest.
    let mut third = Socket::control(&server, &id, 30).await;
    let (replayed, end) = third.replay().await;
    assert_eq!(replayed, seen[29..].to_vec(), "the same envelopes, byte for byte");
    assert_eq!(end["payload"], json!({ "afterSeq": 30, "replayed": last - 30, "gap": false }));
    assert_eq!(second.closed().await, 1000, "replaced");

    let (outbound, inbound) = third.echo(json!("live")).await;
    assert_eq!((seq(&outbound), seq(&inbound)), (last + 1, last + 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replay_gap_is_reported_and_the_socket_stays_open() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let answer = open(
        &http,
        &server,
        json!({ "content": format!("GET {}\n", ws_url(&upstream, "/ws/echo")), "replayBufferSize": 2 }),
    )
    .await;
    assert_eq!(answer["ws"]["replayBufferSize"], 2);
    let id = session_id(&answer);
    let mut first = attach_fresh(&server, &id).await;
    first.echo(json!("x")).await;
    drop(first);

    // Seq 1 is no longer kept: 2 and 3 are.
    let mut second = Socket::control(&server, &id, 0).await;
    let gap = second.expect_error("WS_REPLAY_GAP").await;
    assert_eq!(gap["payload"], json!({ "afterSeq": 0, "oldestAvailableSeq": 2 }));
    assert_eq!(gap["wsSessionId"], id.as_str());
    let end = second.expect("session.replay.end").await;
    assert_eq!(end["payload"], json!({ "afterSeq": 0, "replayed": 0, "gap": true }));
    let (outbound, inbound) = second.echo(json!("y")).await;
    assert_eq!((seq(&outbound), seq(&inbound)), (4, 5));

    // Right after a seq that is gone: no gap.
    let mut third = Socket::control(&server, &id, 3).await;
    let (replayed, end) = third.replay().await;
    assert_eq!(replayed, vec![outbound, inbound]);
    assert_eq!(end["payload"], json!({ "afterSeq": 3, "replayed": 2, "gap": false }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_second_control_socket_replaces_the_first() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let id = open_echo(&http, &server, &upstream).await;
    let mut first = attach_fresh(&server, &id).await;
    let mut second = attach_fresh(&server, &id).await;
    assert_eq!(first.closed().await, 1000);
    let (outbound, inbound) = second.echo(json!("still here")).await;
    assert_eq!((seq(&outbound), seq(&inbound)), (2, 3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_upstream_close_ends_the_session_and_observers_hear_of_it() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (flow, mut observer) = observed_flow(&http, &server).await;

    // `/ws/echo` closes with 4000 `asked to` when told `close-me`.
    let url = ws_url(&upstream, "/ws/echo");
    let answer = open(&http, &server, json!({ "content": format!("GET {url}\n"), "flowId": flow })).await;
    let id = session_id(&answer);
    let mut control = attach_fresh(&server, &id).await;
    control.send(json!({ "type": "session.send", "payload": "close-me" })).await;
    assert_eq!(seq(&control.expect("session.outbound").await), 2);
    let closed = control.expect("session.closed").await;
    assert_eq!(closed["payload"], json!({ "code": 4000, "reason": "asked to", "wasClean": true }));
    assert_eq!(seq(&closed), 3);
    assert_eq!(closed["flowId"], flow);
    assert_eq!(control.closed().await, 1000);
    // Gone at once: 404 before any upgrade.
    let (status, gone) = send(http.get(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!(status, 404, "{gone}");
    assert_eq!(code(&gone), "WS_SESSION_NOT_FOUND");
    assert_eq!(refused(Socket::connect(&server, &format!("/ws/session/{id}?afterSeq=2"), Auth::None).await), 404);

    let events = observer.until("wsSessionClosed").await;
    let opened = events.iter().find(|event| event["type"] == "wsSessionOpened").expect("wsSessionOpened");
    assert_eq!(opened["payload"]["wsSessionId"], id.as_str());
    assert_eq!(opened["payload"]["upstreamUrl"], url);
    assert_eq!(opened["flowId"], flow);
    assert_eq!(opened["reqExecId"], answer["reqExecId"]);
    let closed = events.last().expect("wsSessionClosed");
    assert_eq!(closed["payload"]["wsSessionId"], id.as_str());
    assert_eq!(closed["payload"]["code"], 4000);
    assert_eq!(closed["payload"]["wasClean"], true);
    assert!(seq(closed) > seq(opened));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_session_that_closed_before_anyone_attached_replays_its_messages_and_close() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (flow, mut observer) = observed_flow(&http, &server).await;
    // `/ws/count?n=3` sends `1`, `2`, `3` and closes with 1000 `done` right after the
    // handshake, before any control socket can attach.
    let url = ws_url(&upstream, "/ws/count?n=3");
    let answer = open(&http, &server, json!({ "content": format!("GET {url}\n"), "flowId": flow })).await;
    let id = session_id(&answer);
    let events = observer.until("wsSessionClosed").await;
    assert_eq!(events.last().expect("wsSessionClosed")["payload"]["wsSessionId"], id.as_str());
    // Closed, and still known.
    let (status, known) = send(http.get(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!((status, code(&known)), (400, "VALIDATION_ERROR"), "{known}");

    let mut control = Socket::control(&server, &id, 0).await;
    let (replayed, end) = control.replay().await;
    assert_eq!(
        kinds(&replayed),
        ["session.opened", "session.inbound", "session.inbound", "session.inbound", "session.closed"]
    );
    assert_eq!(replayed.iter().map(seq).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    let payloads: Vec<&Value> = replayed[1..4].iter().map(|envelope| &envelope["payload"]).collect();
    assert_eq!(payloads, [&json!("1"), &json!("2"), &json!("3")]);
    assert_eq!(replayed[4]["payload"], json!({ "code": 1000, "reason": "done", "wasClean": true }));
    assert_eq!(end["payload"], json!({ "afterSeq": 0, "replayed": 5, "gap": false }));
    assert_eq!(control.closed().await, 1000, "nothing more will come");

    // Again from the last message seen: the close only.
    let mut again = Socket::control(&server, &id, 4).await;
    let (replayed, end) = again.replay().await;
    assert_eq!(kinds(&replayed), ["session.closed"]);
    assert_eq!(end["payload"], json!({ "afterSeq": 4, "replayed": 1, "gap": false }));
    assert_eq!(again.closed().await, 1000);

    // DELETE removes it before its grace period is over.
    let (status, _) = send(http.delete(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!(status, 204);
    let (status, gone) = send(http.get(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!((status, code(&gone)), (404, "WS_SESSION_NOT_FOUND"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_closed_session_is_removed_after_its_grace_period() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { ws_closed_grace: Duration::from_millis(100), ..ServerConfig::default() }).await;
    let http = client();
    let (flow, mut observer) = observed_flow(&http, &server).await;
    // `/ws/close?code=C&reason=R` sends `closing` and closes right after the handshake.
    let url = ws_url(&upstream, "/ws/close?code=4001&reason=done%20here");
    let answer = open(&http, &server, json!({ "content": format!("GET {url}\n"), "flowId": flow })).await;
    let id = session_id(&answer);
    let events = observer.until("wsSessionClosed").await;
    let closed = events.last().expect("wsSessionClosed");
    assert_eq!(closed["payload"]["wsSessionId"], id.as_str(), "{events:?}");
    assert_eq!(closed["payload"]["code"], 4001);
    assert_eq!(closed["payload"]["reason"], "done here");
    until_gone(&http, &server, &format!("/ws/session/{id}"), "WS_SESSION_NOT_FOUND").await;
    assert_eq!(refused(Socket::connect(&server, &format!("/ws/session/{id}?afterSeq=0"), Auth::None).await), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn observers_see_the_upstream_url_without_sensitive_values() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (flow, mut observer) = observed_flow(&http, &server).await;
    let url = ws_url(&upstream, "/ws/echo");
    let body = json!({
        "content": format!("GET {url}?access_token={{{{apiToken}}}}\n"),
        "flowId": flow,
        "variables": { "apiToken": "tok-123456" },
    });
    let answer = open(&http, &server, body).await;
    // The answer's echo of the request follows the same policy (the control socket may
    // be read by a token scoped to the flow).
    assert_eq!(answer["request"]["urlResolved"], format!("{url}?access_token=[REDACTED]"), "{answer}");
    assert_eq!(answer["ws"]["upstreamUrl"], format!("{url}?access_token=[REDACTED]"), "{answer}");
    let events = observer.until("wsSessionOpened").await;
    let opened = events.last().expect("wsSessionOpened");
    assert_eq!(opened["payload"]["upstreamUrl"], format!("{url}?access_token=[REDACTED]"));
    assert!(events.iter().all(|event| !event.to_string().contains("tok-123456")), "{events:?}");
    let mut control = Socket::control(&server, &session_id(&answer), 0).await;
    let session_opened = control.expect("session.opened").await;
    assert_eq!(session_opened["payload"]["upstreamUrl"], format!("{url}?access_token=[REDACTED]"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn observers_see_the_messages_of_a_session_without_attaching_to_it() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (flow, mut observer) = observed_flow(&http, &server).await;
    let url = ws_url(&upstream, "/ws/echo");
    let answer = open(&http, &server, json!({ "content": format!("GET {url}\n"), "flowId": flow })).await;
    let id = session_id(&answer);
    let mut control = attach_fresh(&server, &id).await;
    let (outbound, inbound) = control.echo(json!({ "n": 1, "text": "héllo" })).await;
    // 6,001 bytes: byte 4,096 falls inside an `é`, so the preview stops before it.
    let long = format!("x{}", "é".repeat(3000));
    control.echo(json!(long)).await;

    let events = observer.until("wsSessionOpened").await;
    assert_eq!(events.last().expect("opened")["payload"]["wsSessionId"], id.as_str());
    let mut messages = Vec::new();
    while messages.len() < 4 {
        let event = observer.next().await;
        if event["type"] == "wsSessionMessage" {
            messages.push(event);
        }
    }
    let sent = &messages[0];
    assert_eq!(sent["flowId"], flow);
    assert_eq!(sent["reqExecId"], answer["reqExecId"]);
    assert_eq!(
        sent["payload"],
        json!({
            "wsSessionId": id,
            "direction": "outbound",
            "wsSeq": seq(&outbound),
            "payloadType": "json",
            "byteLength": outbound["byteLength"],
            "preview": "{\"n\":1,\"text\":\"héllo\"}",
            "truncated": false,
        })
    );
    assert_eq!(messages[1]["payload"]["direction"], "inbound");
    assert_eq!(messages[1]["payload"]["wsSeq"], seq(&inbound));
    let cut = &messages[3]["payload"];
    assert_eq!(cut["payloadType"], "text");
    assert_eq!(cut["byteLength"], 6001, "a string payload goes as a text frame");
    assert_eq!(cut["truncated"], true);
    let preview = cut["preview"].as_str().expect("preview");
    assert_eq!(preview.len(), 4095, "4,096 bytes would split a character");
    assert!(seq(&messages[0]) < seq(&messages[3]), "numbered in the flow's sequence");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn session_close_closes_upstream_and_the_socket() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let id = open_echo(&http, &server, &upstream).await;
    let mut control = attach_fresh(&server, &id).await;
    control.send(json!({ "type": "session.close", "code": 4100, "reason": "finished" })).await;
    let closed = control.expect("session.closed").await;
    assert_eq!(closed["payload"], json!({ "code": 4100, "reason": "finished", "wasClean": true }));
    assert_eq!(seq(&closed), 2);
    assert_eq!(control.closed().await, 1000);
    let (status, gone) = send(http.get(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!((status, code(&gone)), (404, "WS_SESSION_NOT_FOUND"));

    // The defaults: 1000 and an empty reason.
    let id = open_echo(&http, &server, &upstream).await;
    let mut control = attach_fresh(&server, &id).await;
    control.send(json!({ "type": "session.close" })).await;
    let closed = control.expect("session.closed").await;
    assert_eq!(closed["payload"], json!({ "code": 1000, "reason": "", "wasClean": true }));
    assert_eq!(control.closed().await, 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn delete_closes_a_session_with_or_without_a_control_socket() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { max_ws_sessions: 1, ..ServerConfig::default() }).await;
    let http = client();
    let id = open_echo(&http, &server, &upstream).await;
    let mut control = attach_fresh(&server, &id).await;
    let (status, _) = send(http.delete(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!(status, 204);
    let closed = control.expect("session.closed").await;
    assert_eq!(closed["payload"]["code"], 1000);
    assert_eq!(control.closed().await, 1000);
    // Gone at once: the slot is free and the id unknown.
    let (status, gone) = send(http.delete(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!((status, code(&gone)), (404, "WS_SESSION_NOT_FOUND"));
    // A session nobody connected to closes the same way.
    let lonely = open_echo(&http, &server, &upstream).await;
    let (status, _) = send(http.delete(format!("{}/ws/session/{lonely}", server.base)), None, None).await;
    assert_eq!(status, 204);
    let again = open_echo(&http, &server, &upstream).await;
    assert_ne!(again, lonely);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_plain_get_tells_whether_a_session_exists_without_taking_its_socket() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let id = open_echo(&http, &server, &upstream).await;
    let mut control = attach_fresh(&server, &id).await;
    // Known: refused for want of an upgrade, and the control socket keeps working.
    let (status, answer) = send(http.get(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
    control.echo(json!("still here")).await;
    // Unknown: WS_SESSION_NOT_FOUND.
    let (status, answer) = send(http.get(format!("{}/ws/session/ws_nope", server.base)), None, None).await;
    assert_eq!((status, code(&answer)), (404, "WS_SESSION_NOT_FOUND"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_upstream_that_never_answers_times_out_and_frees_its_slot() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { max_ws_sessions: 1, ..ServerConfig::default() }).await;
    let http = client();
    let content = format!("GET {}\n", ws_url(&upstream, "/ws/hang"));
    let started = std::time::Instant::now();
    let (status, answer) = execute_ws(&http, &server, json!({ "content": content, "connectTimeoutMs": 200 })).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(code(&answer), "EXECUTE_ERROR");
    assert_eq!(answer["error"]["details"]["kind"], "timeout", "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5), "the connect timeout applies");

    // The only slot is free again.
    let id = open_echo(&http, &server, &upstream).await;
    let (status, full) =
        execute_ws(&http, &server, json!({ "content": format!("GET {}\n", ws_url(&upstream, "/ws/echo")) })).await;
    assert_eq!((status, code(&full)), (429, "WS_SESSION_LIMIT_REACHED"), "{full}");
    attach_fresh(&server, &id).await.echo(json!("ok")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_session_cap_is_checked_before_dialing_and_freed_on_close() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { max_ws_sessions: 1, ..ServerConfig::default() }).await;
    let http = client();
    let id = open_echo(&http, &server, &upstream).await;
    let echo = json!({ "content": format!("GET {}\n", ws_url(&upstream, "/ws/echo")) });
    let (status, full) = execute_ws(&http, &server, echo.clone()).await;
    assert_eq!(status, 429, "{full}");
    assert_eq!(code(&full), "WS_SESSION_LIMIT_REACHED");
    assert_eq!(full["error"]["details"]["limit"], 1, "{full}");
    // An upstream that would hang (30 s connect timeout) is refused without dialing.
    let hang = json!({ "content": format!("GET {}\n", ws_url(&upstream, "/ws/hang")) });
    let (status, _) = tokio::time::timeout(Duration::from_secs(5), execute_ws(&http, &server, hang))
        .await
        .expect("refused without dialing");
    assert_eq!(status, 429);

    let mut control = attach_fresh(&server, &id).await;
    control.send(json!({ "type": "session.close" })).await;
    control.expect("session.closed").await;
    // Whoever heard of the close may open a new session at once.
    let (status, again) = execute_ws(&http, &server, echo).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(control.closed().await, 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn binary_frames_are_refused_both_ways_and_the_session_stays_open() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let answer = open(&http, &server, json!({ "content": format!("GET {}\n", ws_url(&upstream, "/ws/binary")) })).await;
    let mut control = Socket::control(&server, &session_id(&answer), 0).await;
    // The upstream sends 3 bytes of binary, then `after binary`.
    let envelopes = control.published(3).await;
    assert_eq!(kinds(&envelopes), ["session.opened", "session.error", "session.inbound"]);
    assert_eq!(envelopes[1]["error"]["code"], "WS_BINARY_UNSUPPORTED");
    assert_eq!(envelopes[1]["byteLength"], 3);
    assert_eq!(seq(&envelopes[1]), 2, "an upstream error is numbered and kept");
    assert_eq!(envelopes[2]["payload"], "after binary");

    control.send_frame(Message::binary(vec![7_u8; 5])).await;
    let refused = control.expect_error("WS_BINARY_UNSUPPORTED").await;
    assert_eq!(refused["byteLength"], 5);
    let (outbound, _) = control.echo(json!("text works")).await;
    assert_eq!(seq(&outbound), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn frames_over_the_limit_are_refused_both_ways_and_the_session_stays_open() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { ws_max_frame: 1024, ..ServerConfig::default() }).await;
    let http = client();
    // `/ws/headers` first sends the handshake's headers as JSON: over 1024 bytes here.
    let padding = "p".repeat(1500);
    let content = format!("GET {}\nX-Padding: {padding}\n", ws_url(&upstream, "/ws/headers"));
    let answer = open(&http, &server, json!({ "content": content })).await;
    let mut control = Socket::control(&server, &session_id(&answer), 0).await;
    let envelopes = control.published(2).await;
    assert_eq!(kinds(&envelopes), ["session.opened", "session.error"]);
    let too_large = &envelopes[1];
    assert_eq!(too_large["error"]["code"], "WS_FRAME_TOO_LARGE", "{too_large}");
    assert!(too_large["byteLength"].as_u64().is_some_and(|length| length > 1500), "{too_large}");
    assert!(too_large.get("payload").is_none(), "the frame is not relayed: {too_large}");

    let big = json!({ "type": "session.send", "payload": "x".repeat(2000) });
    control.send(big).await;
    control.expect_error("WS_FRAME_TOO_LARGE").await;
    let (outbound, inbound) = control.echo(json!("small")).await;
    assert_eq!((seq(&outbound), seq(&inbound)), (3, 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn json_payloads_keep_their_text_both_ways() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let id = open_echo(&http, &server, &upstream).await;
    let mut control = attach_fresh(&server, &id).await;
    // Keys out of order, numbers as written, spaces: the upstream gets this text (the
    // echo sends it back), and both envelopes carry it unchanged.
    let payload = r#"{"zeta": 1, "alpha": [1.50, 2e3], "mid": {"b": true, "a": null}}"#;
    let message = format!(r#"{{"type":"session.send","payloadType":"json","payload":{payload}}}"#);
    control.send_frame(Message::text(message)).await;
    for kind in ["session.outbound", "session.inbound"] {
        let Some(Message::Text(text)) = control.frame().await else { panic!("expected the {kind} envelope") };
        let envelope: Value = serde_json::from_str(text.as_str()).expect("a JSON envelope");
        assert_eq!((envelope["type"].as_str(), envelope["payloadType"].as_str()), (Some(kind), Some("json")));
        assert_eq!(envelope["byteLength"], payload.len(), "{text}");
        assert!(text.contains(&format!(r#""payload":{payload}"#)), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_client_messages_get_errors_and_the_session_stays_open() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let id = open_echo(&http, &server, &upstream).await;
    let mut control = attach_fresh(&server, &id).await;
    control.send_frame(Message::text("not json {")).await;
    let invalid = control.expect_error("WS_INVALID_JSON").await;
    assert_eq!(invalid["wsSessionId"], id.as_str());
    let protocol_errors = [
        json!({ "type": "session.shout", "payload": "x" }),
        json!({ "payload": "no type" }),
        json!({ "type": "session.send" }),
        json!({ "type": "session.send", "payloadType": "text", "payload": 5 }),
        json!({ "type": "session.send", "payloadType": "binary", "payload": "x" }),
        json!({ "type": "session.close", "code": 1005 }),
        json!({ "type": "session.close", "code": 70_000 }),
    ];
    for message in protocol_errors {
        control.send(message.clone()).await;
        let error = control.expect("session.error").await;
        assert_eq!(error["error"]["code"], "WS_PROTOCOL_ERROR", "{message} → {error}");
    }
    // A ping is answered by nothing: the next envelope is the echo's.
    control.send(json!({ "type": "session.ping" })).await;
    let (outbound, inbound) = control.echo(json!("still open")).await;
    assert_eq!((seq(&outbound), seq(&inbound)), (2, 3), "client errors are not numbered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_idle_session_closes_with_1001() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let content = format!("GET {}\n", ws_url(&upstream, "/ws/echo"));
    let answer = open(&http, &server, json!({ "content": content, "idleTimeoutMs": 200 })).await;
    let id = session_id(&answer);
    let mut control = attach_fresh(&server, &id).await;
    let closed = control.expect("session.closed").await;
    assert_eq!(closed["payload"], json!({ "code": 1001, "reason": "idle timeout", "wasClean": true }));
    assert_eq!(control.closed().await, 1001);
    let (status, _) = send(http.get(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pings_keep_a_session_from_idling() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let content = format!("GET {}\n", ws_url(&upstream, "/ws/echo"));
    let answer = open(&http, &server, json!({ "content": content, "idleTimeoutMs": 400 })).await;
    let mut control = attach_fresh(&server, &session_id(&answer)).await;
    // Twice the idle timeout, a ping every 50 ms.
    for _ in 0..16 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        control.send(json!({ "type": "session.ping" })).await;
    }
    control.echo(json!("awake")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_closes_sessions_with_1001_and_the_server_stops() {
    let upstream = TestServer::start().await;
    let mut server = start(ServerConfig::default()).await;
    let http = client();
    let id = open_echo(&http, &server, &upstream).await;
    let mut control = attach_fresh(&server, &id).await;
    let (mut observer, _) = Socket::connect(&server, "/event/ws", Auth::None).await.expect("observer");
    drop(server.stop.take());
    let closed = control.expect("session.closed").await;
    assert_eq!(closed["payload"], json!({ "code": 1001, "reason": "server shutdown", "wasClean": true }));
    assert_eq!(control.closed().await, 1001);
    // Observer streams end too (they stop at once: a `wsSessionClosed` may or may not
    // come first).
    loop {
        match observer.frame().await {
            Some(Message::Text(_)) => {}
            Some(Message::Close(Some(frame))) => {
                assert_eq!(u16::from(frame.code), 1001);
                break;
            }
            other => panic!("expected the observer's close frame, got {other:?}"),
        }
    }
    tokio::time::timeout(Duration::from_secs(5), &mut server.done)
        .await
        .expect("stopped before the grace period")
        .expect("joined")
        .expect("served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn definitions_and_limits_are_validated_before_connecting() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { max_ws_sessions: 1, ..ServerConfig::default() }).await;
    let http = client();
    let echo = ws_url(&upstream, "/ws/echo");
    let with_body = format!("GET {echo}\nContent-Type: text/plain\n\nhello\n");
    let (status, answer) = execute_ws(&http, &server, json!({ "content": with_body })).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
    // SPEC.md's rule, though a local run sends such messages: they go on the session socket.
    assert_eq!(answer["error"]["details"]["code"], "websocket-body", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("session socket"), "{message}");
    // A method other than GET on a URL known only after substitution is the route's rule.
    let post_later = format!("@socket = {echo}\n\nPOST {{{{socket}}}}\n");
    let (status, answer) = execute_ws(&http, &server, json!({ "content": post_later })).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
    // Written out, the parser already knows (`conflicting-protocol`): the same error.
    let (status, answer) = execute_ws(&http, &server, json!({ "content": format!("POST {echo}\n") })).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
    assert_eq!(answer["error"]["details"]["code"], "conflicting-protocol", "{answer}");
    let plain = format!("GET {}/echo\n", upstream.base_url());
    let (status, answer) = execute_ws(&http, &server, json!({ "content": plain })).await;
    assert_eq!((status, code(&answer)), (400, "EXECUTE_ERROR"), "{answer}");
    assert_eq!(answer["error"]["details"]["kind"], "not_websocket");
    for size in [0, 5001] {
        let body = json!({ "content": format!("GET {echo}\n"), "replayBufferSize": size });
        let (status, answer) = execute_ws(&http, &server, body).await;
        assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{size}: {answer}");
    }
    let (status, answer) =
        execute_ws(&http, &server, json!({ "content": format!("GET {echo}\n"), "idleTimeoutMs": 5 })).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
    // An /execute of a WebSocket definition points to /execute/ws.
    let (status, answer) =
        post(&http, format!("{}/execute", server.base), json!({ "content": format!("GET {echo}\n") })).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
    // None of the refusals kept the only slot.
    let id = open_echo(&http, &server, &upstream).await;
    // Unknown sessions are 404; a known one needs an upgrade.
    let (status, answer) = send(http.get(format!("{}/ws/session/ws_nope", server.base)), None, None).await;
    assert_eq!((status, code(&answer)), (404, "WS_SESSION_NOT_FOUND"));
    let (status, answer) = send(http.get(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
    let (status, answer) = send(http.get(format!("{}/ws/session/{id}?afterSeq=-1", server.base)), None, None).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn control_sockets_need_the_token_in_a_header_or_a_subprotocol() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { token: Some(MAIN.to_owned()), ..ServerConfig::default() }).await;
    let http = client();
    let url = format!("{}/execute/ws", server.base);
    let body = json!({ "content": format!("GET {}\n", ws_url(&upstream, "/ws/echo")) });
    let (status, answer) = send(http.post(&url), Some(body.clone()), None).await;
    assert_eq!((status, code(&answer)), (401, "UNAUTHORIZED"));
    let (status, answer) = send(http.post(&url), Some(body.clone()), Some(MAIN)).await;
    assert_eq!(status, 200, "{answer}");
    let id = session_id(&answer);
    let path = format!("/ws/session/{id}");

    assert_eq!(refused(Socket::connect(&server, &path, Auth::None).await), 401);
    assert_eq!(refused(Socket::connect(&server, &path, Auth::Bearer("wrong")).await), 401);
    assert_eq!(refused(Socket::connect(&server, &path, Auth::Protocol("wrong")).await), 401);

    let (mut header, handshake) = Socket::connect(&server, &path, Auth::Bearer(MAIN)).await.expect("bearer");
    assert!(handshake.headers().get("sec-websocket-protocol").is_none());
    header.replay().await;
    let (mut protocol, handshake) = Socket::connect(&server, &path, Auth::Protocol(MAIN)).await.expect("subprotocol");
    assert_eq!(
        handshake.headers().get("sec-websocket-protocol").and_then(|value| value.to_str().ok()),
        Some("volley.v1")
    );
    protocol.replay().await;
    assert_eq!(header.closed().await, 1000, "replaced");
    protocol.echo(json!("authenticated")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scoped_tokens_control_the_sessions_of_their_own_flow_only() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { token: Some(MAIN.to_owned()), ..ServerConfig::default() }).await;
    let http = client();
    let mut scoped = Vec::new();
    let mut flows = Vec::new();
    for _ in 0..2 {
        let flow = create_flow(&http, &server, Some(MAIN)).await;
        let (status, token) =
            send(http.post(format!("{}/tokens", server.base)), Some(json!({ "flowId": flow })), Some(MAIN)).await;
        assert_eq!(status, 201, "{token}");
        scoped.push(token["token"].as_str().expect("token").to_owned());
        flows.push(flow);
    }
    let url = format!("{}/execute/ws", server.base);
    let content = format!("GET {}\n", ws_url(&upstream, "/ws/echo"));
    // Without a flowId the token's own flow is used.
    let (status, answer) = send(http.post(&url), Some(json!({ "content": content })), Some(&scoped[0])).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["flowId"], flows[0]);
    let id = session_id(&answer);
    let (status, answer) =
        send(http.post(&url), Some(json!({ "content": content, "flowId": flows[0] })), Some(&scoped[1])).await;
    assert_eq!((status, code(&answer)), (403, "FORBIDDEN"), "{answer}");

    let path = format!("/ws/session/{id}");
    assert_eq!(refused(Socket::connect(&server, &path, Auth::Bearer(&scoped[1])).await), 403);
    assert_eq!(refused(Socket::connect(&server, &path, Auth::Protocol(&scoped[1])).await), 403);
    let mut own = Socket::control_with(&server, &id, 0, Auth::Bearer(&scoped[0])).await;
    let (replayed, _) = own.replay().await;
    assert_eq!(replayed[0]["flowId"], flows[0]);
    own.echo(json!("in scope")).await;
    drop(own);
    let mut own = Socket::control_with(&server, &id, 0, Auth::Protocol(&scoped[0])).await;
    own.replay().await;

    // A session outside any flow is out of every scoped token's reach.
    let (status, answer) = send(http.post(&url), Some(json!({ "content": content })), Some(MAIN)).await;
    assert_eq!(status, 200, "{answer}");
    let path = format!("/ws/session/{}", session_id(&answer));
    assert_eq!(refused(Socket::connect(&server, &path, Auth::Bearer(&scoped[0])).await), 403);
}

/// Observer envelopes until the `count`-th `executionFinished`, inclusive.
async fn executions(observer: &mut Socket, count: usize) -> Vec<Value> {
    let mut events = Vec::new();
    let mut finished = 0;
    while finished < count {
        let event = observer.next().await;
        if event["type"] == "executionFinished" {
            finished += 1;
        }
        events.push(event);
    }
    events
}

async fn execute_in(http: &reqwest::Client, server: &Running, upstream: &TestServer, scope: Value) {
    let mut body = json!({ "content": format!("GET {}/echo\n", upstream.base_url()) });
    if let (Value::Object(body), Value::Object(scope)) = (&mut body, scope) {
        body.extend(scope);
    }
    let (status, answer) = post(http, format!("{}/execute", server.base), body).await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_observer_socket_streams_the_stages_of_an_execution_filtered() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (mut sessions, mut flows) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let (status, session) = post(&http, format!("{}/session", server.base), json!({})).await;
        assert_eq!(status, 201);
        let session = session["sessionId"].as_str().expect("sessionId").to_owned();
        let (status, flow) = post(&http, format!("{}/flows", server.base), json!({ "sessionId": session })).await;
        assert_eq!(status, 201);
        flows.push(flow["flowId"].as_str().expect("flowId").to_owned());
        sessions.push(session);
    }
    let connect = |query: String| {
        let server = &server;
        async move { Socket::connect(server, &format!("/event/ws?{query}"), Auth::None).await.expect("observer").0 }
    };
    let mut by_flow = connect(format!("flowId={}", flows[0])).await;
    let mut by_session = connect(format!("sessionId={}", sessions[1])).await;
    // A, B, A, B: a filter that let the other through would show it in between.
    for round in 0..4 {
        let i = round % 2;
        execute_in(&http, &server, &upstream, json!({ "sessionId": sessions[i], "flowId": flows[i] })).await;
    }

    let events = executions(&mut by_flow, 2).await;
    let first: Vec<&str> = kinds(&events[..events.len() / 2]);
    assert_eq!(
        first,
        [
            "requestQueued",
            "parseStarted",
            "parseFinished",
            "interpolateStarted",
            "interpolateFinished",
            "compileStarted",
            "compileFinished",
            "fetchStarted",
            "fetchFinished",
            "executionFinished",
        ]
    );
    assert_eq!(kinds(&events[events.len() / 2..]), first);
    let seqs: Vec<u64> = events.iter().map(seq).collect();
    assert!(seqs.windows(2).all(|pair| pair[1] == pair[0] + 1), "consecutive per flow: {seqs:?}");
    for event in &events {
        assert_eq!(event["flowId"], flows[0], "{event}");
        assert_eq!(event["sessionId"], sessions[0], "{event}");
        assert!(event["runId"].is_string() && event["ts"].is_u64() && event.get("payload").is_some(), "{event}");
    }
    let fetch = events.iter().find(|event| event["type"] == "fetchFinished").expect("fetchFinished");
    assert_eq!(fetch["payload"]["status"], 200);
    let events = executions(&mut by_session, 2).await;
    assert!(events.iter().all(|event| event["sessionId"] == sessions[1] && event["flowId"] == flows[1]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_observer_socket_replays_a_flow_after_a_seq_then_goes_live() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let flow = create_flow(&http, &server, None).await;
    for _ in 0..2 {
        execute_in(&http, &server, &upstream, json!({ "flowId": flow })).await;
    }
    let observe = |after: u64| {
        let (server, flow) = (&server, &flow);
        async move {
            let path = format!("/event/ws?flowId={flow}&afterSeq={after}");
            Socket::connect(server, &path, Auth::None).await.expect("observer").0
        }
    };
    let mut everything = observe(0).await;
    let retained = executions(&mut everything, 2).await;
    let seqs: Vec<u64> = retained.iter().map(seq).collect();
    assert!(seqs.windows(2).all(|pair| pair[1] > pair[0]), "{seqs:?}");
    let cut = retained.iter().find(|event| event["type"] == "executionFinished").map(seq).expect("first end");

    let mut after = observe(cut).await;
    let replayed = executions(&mut after, 1).await;
    let expected: Vec<Value> = retained.iter().filter(|event| seq(event) > cut).cloned().collect();
    assert_eq!(replayed, expected, "exactly the retained events after the cut");
    execute_in(&http, &server, &upstream, json!({ "flowId": flow })).await;
    let live = executions(&mut after, 1).await;
    assert_eq!(seq(&live[0]), seq(replayed.last().expect("replayed")) + 1, "no gap, no duplicate");
    let seqs: Vec<u64> = live.iter().map(seq).collect();
    assert!(seqs.windows(2).all(|pair| pair[1] == pair[0] + 1), "{seqs:?}");
    assert_eq!(live[0]["type"], "requestQueued");

    let (status, answer) = send(http.get(format!("{}/event/ws?afterSeq=3", server.base)), None, None).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
    assert_eq!(refused(Socket::connect(&server, "/event/ws?afterSeq=3", Auth::None).await), 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn under_auth_the_observer_socket_needs_a_filter_and_scoped_tokens_their_flow() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { token: Some(MAIN.to_owned()), ..ServerConfig::default() }).await;
    let http = client();
    assert_eq!(refused(Socket::connect(&server, "/event/ws", Auth::None).await), 401);
    let (status, answer) = send(http.get(format!("{}/event/ws", server.base)), None, Some(MAIN)).await;
    assert_eq!((status, code(&answer)), (400, "VALIDATION_ERROR"), "{answer}");
    assert_eq!(refused(Socket::connect(&server, "/event/ws", Auth::Bearer(MAIN)).await), 400);

    let flow = create_flow(&http, &server, Some(MAIN)).await;
    let other = create_flow(&http, &server, Some(MAIN)).await;
    let (_, token) =
        send(http.post(format!("{}/tokens", server.base)), Some(json!({ "flowId": flow })), Some(MAIN)).await;
    let token = token["token"].as_str().expect("token").to_owned();
    assert_eq!(
        refused(Socket::connect(&server, &format!("/event/ws?flowId={other}"), Auth::Bearer(&token)).await),
        403
    );
    let (mut observer, handshake) =
        Socket::connect(&server, &format!("/event/ws?flowId={flow}"), Auth::Protocol(&token)).await.expect("observer");
    assert_eq!(
        handshake.headers().get("sec-websocket-protocol").and_then(|value| value.to_str().ok()),
        Some("volley.v1")
    );
    let content = format!("GET {}\n", ws_url(&upstream, "/ws/echo"));
    let (status, answer) =
        send(http.post(format!("{}/execute/ws", server.base)), Some(json!({ "content": content })), Some(&token)).await;
    assert_eq!(status, 200, "{answer}");
    let events = observer.until("wsSessionOpened").await;
    assert_eq!(events.last().expect("opened")["payload"]["wsSessionId"], session_id(&answer).as_str());
}

/// Waits until `path` answers 404 with `error_code` (something expiring on a timer).
async fn until_gone(http: &reqwest::Client, server: &Running, path: &str, error_code: &str) {
    let deadline = tokio::time::Instant::now() + READ;
    loop {
        let (status, answer) = send(http.get(format!("{}{path}", server.base)), None, None).await;
        if status == 404 && code(&answer) == error_code {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{path} still answers {status} {answer}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_session_outliving_its_flow_does_not_bring_back_the_flows_events() {
    let upstream = TestServer::start().await;
    let config = ServerConfig {
        flow_ttl: Duration::from_secs(1),
        sweep_interval: Duration::from_millis(20),
        ..ServerConfig::default()
    };
    let server = start(config).await;
    let http = client();
    let (flow, mut live) = observed_flow(&http, &server).await;
    let url = ws_url(&upstream, "/ws/echo");
    let answer = open(&http, &server, json!({ "content": format!("GET {url}\n"), "flowId": flow })).await;
    let mut control = attach_fresh(&server, &session_id(&answer)).await;
    // The flow expires; the session it opened lives on.
    until_gone(&http, &server, &format!("/flows/{flow}/executions/exec_none"), "FLOW_NOT_FOUND").await;

    let (outbound, inbound) = control.echo(json!("after the flow")).await;
    // Heard live: published (and retained, if anything still retained them).
    let mut heard = Vec::new();
    while heard.len() < 2 {
        let event = live.next().await;
        if event["type"] == "wsSessionMessage" {
            heard.push(event["payload"]["wsSeq"].clone());
        }
    }
    assert_eq!(heard, [json!(seq(&outbound)), json!(seq(&inbound))]);

    // A replay of the gone flow has nothing: the first event is the next live one.
    let path = format!("/event/ws?flowId={flow}&afterSeq=0");
    let (mut replay, _) = Socket::connect(&server, &path, Auth::None).await.expect("observer");
    let (next, _) = control.echo(json!("later")).await;
    let first = replay.next().await;
    assert_eq!(first["type"], "wsSessionMessage", "{first}");
    assert_eq!(first["payload"]["wsSeq"], seq(&next), "no event of the gone flow was kept: {first}");
}
