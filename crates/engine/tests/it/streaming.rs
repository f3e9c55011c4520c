//! Server-Sent Events and WebSocket definitions through the library, against the local
//! test server's streaming routes.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::Value;
use support::{client, config, echoed_header};
use volley_echo_server::TestServer;
use volley_engine::assert::Outcome;
use volley_engine::sse::SseEvent;
use volley_engine::websocket::{WsClose, WsError, WsMessage};
use volley_engine::{
    CancellationToken, Client, ClientConfig, CookieJar, Error, RequestDefaults, RunOptions, TransportError,
};

async fn all_events(response: &volley_engine::Response) -> Vec<SseEvent> {
    let events: Vec<_> = response.events().unwrap().collect().await;
    events.into_iter().map(Result::unwrap).collect()
}

#[tokio::test]
async fn sse_events_follow_the_whatwg_rules() {
    let server = TestServer::start().await;
    let text =
        format!("# @sse\n# @assert status == 200\n# @assert body contains x\nGET {}\n", server.url("/sse/events"));
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert!(response.is_streaming());
    assert_eq!(response.request().headers["accept"], "text/event-stream", "`@sse` asks for an event stream");
    let checks: Vec<_> = response.assertions().iter().map(|result| &result.outcome).collect();
    assert_eq!(checks[0], &Outcome::Passed);
    assert!(
        matches!(checks[1], Outcome::Invalid { message, .. } if message.contains("streamed")),
        "a body check does not apply to a stream: {checks:?}"
    );
    let events = all_events(&response).await;
    let seen: Vec<(&str, &str, Option<&str>)> =
        events.iter().map(|event| (event.event.as_str(), event.data.as_str(), event.id.as_deref())).collect();
    assert_eq!(
        seen,
        [
            ("message", "first", Some("1")),
            ("update", "{\"n\": 2}", Some("2")),
            ("message", "line one\nline two", Some("3")),
            ("message", "no space after the colon", Some("3")),
            ("update", " two leading spaces, one is kept", Some("5")),
            ("message", "", Some("5")),
            ("message", "last", Some("7")),
        ]
    );
    assert_eq!(events[0].retry, Some(Duration::from_secs(3)));
    assert_eq!(events[1].json::<Value>().unwrap()["n"], 2);
    assert!(matches!(response.events(), Err(volley_engine::BodyError::Consumed)), "a stream is read once");
}

#[tokio::test]
async fn last_event_id_resumes_and_accept_alone_marks_a_stream() {
    let server = TestServer::start().await;
    let text = format!(
        "@resume = 3\n# @lastEventId {{{{resume}}}}\nGET {}\nAccept: text/event-stream\n",
        server.url("/sse/events")
    );
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.request().headers["last-event-id"], "3");
    assert!(response.is_streaming(), "an `Accept: text/event-stream` header is enough");
    let ids: Vec<_> = all_events(&response).await.into_iter().map(|event| event.id).collect();
    assert_eq!(ids, [Some("5".to_owned()), Some("5".to_owned()), Some("7".to_owned())]);
}

#[tokio::test]
async fn the_timeout_covers_the_connection_not_the_stream() {
    let server = TestServer::start().await;
    // The head never comes: the timeout ends the run.
    let never = format!("# @sse\n# @timeout 200\nGET {}\n", server.url("/sse/never"));
    let error = client().run_string(&never, RunOptions::default()).await.unwrap_err();
    assert!(matches!(error, Error::Transport(TransportError::Timeout { .. })), "{error:?}");
    // The head comes at once and the events over 600 ms: a 200 ms timeout does not cut them.
    let slow = format!("# @sse\n# @timeout 200\nGET {}\n", server.url("/sse/slow?count=3&interval_ms=200"));
    let response = client().run_string(&slow, RunOptions::default()).await.unwrap();
    let data: Vec<_> = all_events(&response).await.into_iter().map(|event| event.data).collect();
    assert_eq!(data, ["{\"i\": 1}", "{\"i\": 2}", "{\"i\": 3}"]);
}

#[tokio::test]
async fn cancelling_ends_the_stream_cleanly() {
    let server = TestServer::start().await;
    let cancel = CancellationToken::new();
    let text = format!("# @sse\nGET {}\n", server.url("/sse/forever?interval_ms=20"));
    let response = client().run_string(&text, RunOptions::default().cancel(cancel.clone())).await.unwrap();
    let mut events = response.events().unwrap();
    assert_eq!(events.next().await.unwrap().unwrap().data, "tick 1");
    assert_eq!(events.next().await.unwrap().unwrap().data, "tick 2");
    cancel.cancel();
    let after = tokio::time::timeout(Duration::from_secs(2), events.next()).await.expect("the stream ends at once");
    assert!(after.is_none(), "no error, no more events: {after:?}");
}

#[tokio::test]
async fn an_error_status_is_read_whole_and_the_raw_stream_is_available() {
    let server = TestServer::start().await;
    let text = format!("# @sse\nGET {}\n", server.url("/sse/status/404"));
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 404);
    assert!(!response.is_streaming(), "not an event stream: read like any response");
    assert_eq!(response.json::<Value>().await.unwrap()["error"], "not found");

    let text = format!("# @sse\nGET {}\n", server.url("/sse/fast?count=1000"));
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    let chunks: Vec<_> = response.body_stream().collect().await;
    let bytes: usize = chunks.into_iter().map(|chunk| chunk.unwrap().len()).sum();
    assert_eq!(bytes, 9000, "the raw body, byte for byte");
}

#[tokio::test]
async fn websocket_echo_with_subprotocols_json_ping_and_close() {
    let server = TestServer::start().await;
    let url = server.url("/ws/echo").replacen("http", "ws", 1);
    let text = format!("# @ws-subprotocols other, json\n# @assert status == 101\nWEBSOCKET {url}\n");
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 101);
    assert!(response.is_websocket());
    assert!(response.assertions_passed());
    assert_eq!(response.request().headers["sec-websocket-protocol"], "other, json");
    let mut socket = response.websocket().unwrap();
    assert!(response.websocket().is_none(), "the connection is taken once");
    assert_eq!(socket.protocol(), Some("json"));

    socket.send_text("hello").await.unwrap();
    assert_eq!(socket.next().await.unwrap().unwrap(), WsMessage::Text("hello".to_owned()));
    socket.send_json(&serde_json::json!({"a": [1, 2]})).await.unwrap();
    let echoed = socket.next().await.unwrap().unwrap();
    assert_eq!(echoed.json::<Value>().unwrap().unwrap()["a"][1], 2);
    socket.ping("p").await.unwrap();
    assert!(matches!(socket.next().await.unwrap().unwrap(), WsMessage::Pong(payload) if payload == "p"));
    socket.send_text("close-me").await.unwrap();
    let close = socket.next().await.unwrap().unwrap();
    assert_eq!(close, WsMessage::Close(Some(WsClose { code: 4000, reason: "asked to".to_owned() })));
    assert!(socket.next().await.is_none(), "the stream ends after the close");
    assert!(matches!(socket.send_text("late").await, Err(WsError::Closed | WsError::Connection(_))));
}

#[tokio::test]
async fn websocket_handshakes_carry_headers_variables_and_cookies() {
    let server = TestServer::start().await;
    let client = Client::new(ClientConfig { cookie_jar: Some(CookieJar::new()), ..config() });
    client.set_variable("token", "t-1");
    let cookies = format!("GET {}\n", server.url("/cookies/set?flavour=oat"));
    client.run_string(&cookies, RunOptions::default()).await.unwrap();
    // `@ws` on an http:// URL connects to the ws:// URL of the same place.
    let text = format!("# @ws\nGET {}\nAuthorization: Bearer {{{{token}}}}\n", server.url("/ws/headers"));
    let response = client.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.url().scheme(), "ws");
    let mut socket = response.websocket().unwrap();
    let WsMessage::Text(text) = socket.next().await.unwrap().unwrap() else { panic!("a text message") };
    let headers: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(echoed_header(&headers, "authorization"), Some("Bearer t-1"));
    assert_eq!(echoed_header(&headers, "cookie"), Some("flavour=oat"));
    assert!(echoed_header(&headers, "user-agent").unwrap().starts_with("volley/"));
}

#[tokio::test]
async fn websocket_close_codes_and_binary_frames_are_reported() {
    let server = TestServer::start().await;
    let url = server.url("/ws/close?code=4001&reason=later").replacen("http", "ws", 1);
    let response = client().run_string(&format!("GET {url}\n"), RunOptions::default()).await.unwrap();
    let mut socket = response.websocket().unwrap();
    assert_eq!(socket.next().await.unwrap().unwrap(), WsMessage::Text("closing".to_owned()));
    assert_eq!(
        socket.next().await.unwrap().unwrap(),
        WsMessage::Close(Some(WsClose { code: 4001, reason: "later".to_owned() }))
    );

    let url = server.url("/ws/binary").replacen("http", "ws", 1);
    let response = client().run_string(&format!("GET {url}\n"), RunOptions::default()).await.unwrap();
    let mut socket = response.websocket().unwrap();
    assert!(matches!(socket.next().await.unwrap(), Err(WsError::Binary { len: 3 })), "an error item, not a crash");
    assert_eq!(socket.next().await.unwrap().unwrap(), WsMessage::Text("after binary".to_owned()));
    socket.send_text("still open").await.unwrap();
    assert_eq!(socket.next().await.unwrap().unwrap(), WsMessage::Text("still open".to_owned()));
}

#[tokio::test]
async fn failed_handshakes_are_transport_errors() {
    let server = TestServer::start().await;
    let hang = server.url("/ws/hang").replacen("http", "ws", 1);
    let text = format!("# @ws-connect-timeout 200\nGET {hang}\n");
    let error = client().run_string(&text, RunOptions::default()).await.unwrap_err();
    assert!(
        matches!(error, Error::Transport(TransportError::HandshakeTimeout { after }) if after == Duration::from_millis(200)),
        "{error:?}"
    );
    // The same timeout from a variable.
    let text = format!("# @ws-connect-timeout {{{{connect}}}}\nGET {hang}\n");
    let error = client().run_string(&text, RunOptions::default().variable("connect", "250ms")).await.unwrap_err();
    assert!(
        matches!(error, Error::Transport(TransportError::HandshakeTimeout { after }) if after == Duration::from_millis(250)),
        "{error:?}"
    );
    let reject = server.url("/ws/reject").replacen("http", "ws", 1);
    let error = client().run_string(&format!("GET {reject}\n"), RunOptions::default()).await.unwrap_err();
    let Error::Transport(transport) = &error else { panic!("{error:?}") };
    assert_eq!(transport.kind(), "websocket_handshake");
    assert!(transport.to_string().contains("403"), "{transport}");
    let refused = client().run_string("GET ws://127.0.0.1:1/socket\n", RunOptions::default()).await.unwrap_err();
    assert!(matches!(refused, Error::Transport(TransportError::ConnectionRefused { .. })), "{refused:?}");
}

/// A definition's body is its messages: sent once connected, each after the server
/// messages it waits for, variables substituted, told in their place.
#[tokio::test]
async fn a_websocket_definitions_messages_are_sent_in_their_turn() {
    let server = TestServer::start().await;
    let url = server.url("/ws/echo").replacen("http", "ws", 1);
    let text = format!(
        "@n = 2\nWEBSOCKET {url}\n\none\n=== wait-for-server\n{{\"n\": {{{{n}}}}}}\n=== wait-for-server\nclose-me\n"
    );
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.request().body.as_ref(), b"one\n{\"n\": 2}\nclose-me", "shown as sent");
    let socket = response.websocket().unwrap();
    let transcript: Vec<WsMessage> = socket.map(Result::unwrap).collect().await;
    assert_eq!(
        transcript,
        [
            WsMessage::Sent("one".to_owned()),
            WsMessage::Text("one".to_owned()),
            WsMessage::Sent("{\"n\": 2}".to_owned()),
            WsMessage::Text("{\"n\": 2}".to_owned()),
            WsMessage::Sent("close-me".to_owned()),
            WsMessage::Close(Some(WsClose { code: 4000, reason: "asked to".to_owned() })),
        ]
    );
    // A message that cannot be substituted: refused before connecting.
    let before = server_requests(&server).await;
    let broken = format!("WEBSOCKET {url}\n\nfine\n===\n{{{{missing}}}}\n");
    let error = client().run_string(&broken, RunOptions::default()).await.unwrap_err();
    assert!(error.to_string().contains("undefined variable `missing`"), "{error}");
    assert_eq!(server_requests(&server).await, before, "nothing was sent");
}

#[tokio::test]
async fn secure_websockets_check_certificates_unless_told_not_to() {
    let server = TestServer::start_tls().await;
    let url = server.url("/ws/echo").replacen("https", "wss", 1);
    let checked = client().run_string(&format!("GET {url}\n"), RunOptions::default()).await.unwrap_err();
    assert!(matches!(checked, Error::Transport(TransportError::Tls { .. })), "{checked:?}");
    let insecure = Client::new(ClientConfig {
        defaults: RequestDefaults { validate_ssl: Some(false), ..RequestDefaults::default() },
        ..config()
    });
    let response = insecure.run_string(&format!("GET {url}\n"), RunOptions::default()).await.unwrap();
    let mut socket = response.websocket().unwrap();
    socket.send_text("over tls").await.unwrap();
    assert_eq!(socket.next().await.unwrap().unwrap(), WsMessage::Text("over tls".to_owned()));
}

/// How many requests `/ws/echo` has received.
async fn server_requests(server: &TestServer) -> u64 {
    let text = format!("GET {}\n", server.url("/stats"));
    let stats: Value = client().run_string(&text, RunOptions::default()).await.unwrap().json().await.unwrap();
    stats["requests"]["/ws/echo"].as_u64().unwrap_or(0)
}
