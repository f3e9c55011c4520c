//! The remote client against a stand-in execution server on 127.0.0.1:0 (real sockets,
//! canned answers of PROTOCOL.md's shapes): which calls it makes, in which order, with
//! which bodies. The real server's tests live in its crate.

use std::sync::Arc;

use futures_util::StreamExt as _;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpListener;

use super::*;

/// One call the stand-in server received.
#[derive(Debug, Clone)]
struct Call {
    method: String,
    path: String,
    authorization: Option<String>,
    accept: Option<String>,
    body: Value,
}

/// The stand-in server: records calls, answers by route.
struct FakeServer {
    url: String,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl FakeServer {
    async fn start() -> Self {
        // Control sockets open with the installed transport, as in the programs.
        volley_transport::transport::install_default(volley_http::transport::HttpTransport::shared);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let calls = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&calls);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let recorded = Arc::clone(&recorded);
                tokio::spawn(async move {
                    let (read, mut write) = socket.into_split();
                    let mut reader = BufReader::new(read);
                    let Some(call) = read_call(&mut reader).await else { return };
                    recorded.lock().push(call.clone());
                    let (status, content_type, extra, body) = answer(&call);
                    let head = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = write.write_all(head.as_bytes()).await;
                    let _ = write.write_all(body.as_bytes()).await;
                    let _ = write.shutdown().await;
                });
            }
        });
        Self { url, calls }
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().clone()
    }

    fn routes(&self) -> Vec<String> {
        self.calls().into_iter().map(|call| format!("{} {}", call.method, call.path)).collect()
    }

    fn client(&self, config: RemoteConfig) -> RemoteClient {
        RemoteClient::new(RemoteConfig { server_url: self.url.clone(), ..config }).expect("a valid URL")
    }
}

async fn read_call(reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> Option<Call> {
    let mut line = String::new();
    reader.read_line(&mut line).await.ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let (mut length, mut authorization, mut accept) = (0, None, None);
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).await.ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_owned()),
            "accept" => accept = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.ok()?;
    let body = if body.is_empty() { Value::Null } else { serde_json::from_slice(&body).ok()? };
    Some(Call { method, path, authorization, accept, body })
}

/// Status, content type, extra header lines and body for a call.
fn answer(call: &Call) -> (u16, &'static str, String, String) {
    const JSON: &str = "application/json";
    match (call.method.as_str(), call.path.as_str()) {
        ("POST", "/session") => (201, JSON, String::new(), json!({"sessionId": "s_1"}).to_string()),
        ("POST", "/flows") => (201, JSON, String::new(), json!({"flowId": "f_1"}).to_string()),
        ("PUT", path) if path.ends_with("/variables") => {
            (200, JSON, String::new(), json!({"sessionId": "s_1", "snapshotVersion": 2}).to_string())
        }
        ("POST", "/flows/f_1/finish") => (
            200,
            JSON,
            String::new(),
            json!({"flowId": "f_1", "summary": {"total": 1, "succeeded": 1, "failed": 0, "durationMs": 3}}).to_string(),
        ),
        ("POST", "/execute") if call.body["requestName"] == "missing" => (
            404,
            JSON,
            String::new(),
            json!({"error": {"code": "REQUEST_NOT_FOUND", "message": "no request named `missing`"}}).to_string(),
        ),
        ("POST", "/execute") => {
            let answer = json!({
                "runId": "r_1", "reqExecId": "x_1", "flowId": call.body["flowId"],
                "session": {"sessionId": call.body["sessionId"], "snapshotVersion": 1},
                "request": {"index": 0, "method": "GET", "url": "http://up/", "urlResolved": "http://up/"},
                "resolved": {"workspaceRoot": "/w", "basePath": "/w"},
                "response": {"status": 200, "statusText": "OK",
                             "headers": [{"name": "content-type", "value": "application/json"}],
                             "bodyMode": "buffered", "body": call.body.to_string(), "encoding": "utf-8",
                             "truncated": false, "url": "http://up/", "redirected": false, "httpVersion": "HTTP/1.1"},
                "limits": {"maxBodyBytes": 10_485_760},
                "timing": {"startTime": 1, "endTime": 2, "durationMs": 1, "ttfb": 1},
            });
            (200, JSON, String::new(), answer.to_string())
        }
        ("POST", "/execute/ws") => {
            let answer = json!({
                "runId": "r_3", "flowId": call.body["flowId"], "reqExecId": "x_3",
                "request": {"index": 0, "method": "GET", "url": "ws://up/socket", "urlResolved": "ws://up/socket"},
                "resolved": {"workspaceRoot": "/w", "basePath": "/w"},
                "ws": {"wsSessionId": "ws_1", "downstreamPath": "/ws/session/ws_1", "upstreamUrl": "ws://up/socket",
                       "replayBufferSize": 500, "lastSeq": 1},
            });
            (200, JSON, String::new(), answer.to_string())
        }
        // Not a WebSocket server: the control socket's handshake is refused.
        ("GET", path) if path.starts_with("/ws/session/") => (
            404,
            JSON,
            String::new(),
            json!({"error": {"code": "WS_SESSION_NOT_FOUND", "message": "no WebSocket session"}}).to_string(),
        ),
        ("POST", "/execute/sse") => (
            200,
            "text/event-stream",
            "x-volley-upstream-status: 201\r\nx-volley-run-id: r_2\r\n".to_owned(),
            "event: greeting\ndata: hi\n\nid: 7\ndata: second\n\n".to_owned(),
        ),
        _ => (404, JSON, String::new(), json!({"error": {"code": "NOT_FOUND", "message": "no route"}}).to_string()),
    }
}

const CONTENT: &str = "GET http://up/\n";

#[tokio::test]
async fn one_session_and_one_flow_for_concurrent_first_runs() {
    let server = FakeServer::start().await;
    let mut initial = Map::new();
    initial.insert("a".to_owned(), json!(1));
    let mut meta = Map::new();
    meta.insert("ci".to_owned(), json!(true));
    let client = server.client(RemoteConfig {
        token: Some("t0k".to_owned()),
        variables: initial,
        flow_label: Some("nightly".to_owned()),
        flow_meta: Some(meta),
        ..RemoteConfig::default()
    });
    client.set_variable("b", 2).await.expect("kept locally");
    assert!(server.calls().is_empty(), "nothing is sent before the first run");
    assert_eq!(client.session_id(), None);

    let runs = (0..4).map(|_| client.run_string(CONTENT, RunOptions::default().variable("v", "run")));
    for response in futures_util::future::join_all(runs).await {
        let response = response.expect("a response");
        assert_eq!(response.status(), 200);
        let sent: Value = response.json().await.expect("the echoed body");
        assert_eq!(sent["sessionId"], "s_1");
        assert_eq!(sent["flowId"], "f_1");
        assert_eq!(sent["variables"], json!({"v": "run"}));
        assert_eq!(sent["content"], CONTENT);
    }
    let calls = server.calls();
    assert_eq!(
        server.routes(),
        ["POST /session", "POST /flows", "POST /execute", "POST /execute", "POST /execute", "POST /execute"]
    );
    assert_eq!(calls[0].body, json!({"variables": {"a": 1, "b": 2}}));
    assert_eq!(calls[1].body, json!({"sessionId": "s_1", "label": "nightly", "meta": {"ci": true}}));
    assert!(calls.iter().all(|call| call.authorization.as_deref() == Some("Bearer t0k")));
    assert_eq!((client.session_id().as_deref(), client.flow_id().as_deref()), (Some("s_1"), Some("f_1")));

    client.set_variable("c", "three").await.expect("sent");
    let put = server.calls().pop().expect("a call");
    assert_eq!(format!("{} {}", put.method, put.path), "PUT /session/s_1/variables");
    assert_eq!(put.body, json!({"variables": {"c": "three"}, "mode": "merge"}));
    assert_eq!(client.get_variables(), json!({"a": 1, "b": 2, "c": "three"}).as_object().cloned().expect("a map"));

    client.close().await.expect("finished");
    client.close().await.expect("once only");
    let routes = server.routes();
    assert_eq!(routes.iter().filter(|route| *route == "POST /flows/f_1/finish").count(), 1);
}

#[tokio::test]
async fn a_given_session_and_flow_are_used_as_they_are() {
    let server = FakeServer::start().await;
    let mut initial = Map::new();
    initial.insert("a".to_owned(), json!(1));
    let client = server.client(RemoteConfig {
        variables: initial,
        session_id: Some("s_given".to_owned()),
        flow_id: Some("f_given".to_owned()),
        profile: Some("dev".to_owned()),
        ..RemoteConfig::default()
    });
    assert_eq!(client.session_id().as_deref(), Some("s_given"));
    assert_eq!(client.flow_id().as_deref(), Some("f_given"));
    let response = client.run_string(CONTENT, RunOptions::default().index(0)).await.expect("a response");
    let sent: Value = response.json().await.expect("the echoed body");
    assert_eq!(sent["sessionId"], "s_given");
    assert_eq!(sent["flowId"], "f_given");
    assert_eq!(sent["profile"], "dev");
    assert_eq!(sent["requestIndex"], 0);
    assert_eq!(server.routes(), ["PUT /session/s_given/variables", "POST /execute"]);
    assert!(server.calls()[0].authorization.is_none());
    client.close().await.expect("nothing to finish");
    assert_eq!(server.routes().len(), 2);
}

#[tokio::test]
async fn server_errors_keep_their_code() {
    let server = FakeServer::start().await;
    let client = server.client(RemoteConfig::default());
    let error = client.run_string(CONTENT, RunOptions::default().name("missing")).await.expect_err("not found");
    assert!(matches!(&error, Error::Server { status: 404, code, .. } if code == "REQUEST_NOT_FOUND"), "{error:?}");
}

#[tokio::test]
async fn event_streams_come_from_execute_sse() {
    let server = FakeServer::start().await;
    let client = server.client(RemoteConfig::default());
    let response = client
        .run_string("# @sse\nGET http://up/events\n", RunOptions::default().timeout(Duration::from_secs(5)))
        .await
        .expect("a response");
    assert_eq!(response.status(), 201);
    assert!(response.is_streaming());
    let events: Vec<_> = response.events().expect("a stream").collect().await;
    let events: Vec<_> = events.into_iter().map(|event| event.expect("an event")).collect();
    assert_eq!(events.len(), 2);
    assert_eq!((events[0].event.as_str(), events[0].data.as_str()), ("greeting", "hi"));
    assert_eq!((events[1].id.as_deref(), events[1].data.as_str()), (Some("7"), "second"));
    let call = server.calls().pop().expect("a call");
    assert_eq!(call.path, "/execute/sse");
    assert_eq!(call.accept.as_deref(), Some("text/event-stream"));
    assert_eq!((call.body["timeout"].as_u64(), call.body["timeoutMs"].as_u64()), (Some(5000), Some(5000)));
}

#[tokio::test]
async fn websocket_definitions_open_a_server_session() {
    let server = FakeServer::start().await;
    let client = server.client(RemoteConfig { token: Some("t0k".to_owned()), ..RemoteConfig::default() });
    for content in ["GET ws://up/socket\n", "# @ws\nGET http://up/socket\n"] {
        let error = client.run_string(content, RunOptions::default()).await.expect_err("the handshake is refused");
        assert_eq!(error.server_code(), Some("WS_SESSION_NOT_FOUND"), "{content}: {error}");
    }
    assert_eq!(
        server.routes(),
        [
            "POST /session",
            "POST /flows",
            "POST /execute/ws",
            "GET /ws/session/ws_1",
            "POST /execute/ws",
            "GET /ws/session/ws_1"
        ]
    );
    let calls = server.calls();
    assert_eq!(calls[2].body["content"], "GET ws://up/socket\n");
    assert_eq!((&calls[2].body["sessionId"], &calls[2].body["flowId"]), (&json!("s_1"), &json!("f_1")));
    assert!(calls.iter().all(|call| call.authorization.as_deref() == Some("Bearer t0k")), "{calls:?}");

    let options = WsSessionOptions::default().replay_buffer_size(10).idle_timeout(Duration::from_secs(9));
    let handle = client
        .open_websocket_string("GET ws://up/socket\n", RunOptions::default().name("socket"), options)
        .await
        .expect("a session");
    assert_eq!(handle.id(), "ws_1");
    assert_eq!(handle.info().upstream_url, "ws://up/socket");
    assert_eq!(handle.info().req_exec_id.as_deref(), Some("x_3"));
    assert_eq!(handle.last_seq(), 0);
    let call = server.calls().pop().expect("a call");
    assert_eq!(call.path, "/execute/ws");
    assert_eq!(
        (&call.body["requestName"], &call.body["replayBufferSize"], &call.body["idleTimeoutMs"]),
        (&json!("socket"), &json!(10), &json!(9000))
    );
    assert!(call.body.get("connectTimeoutMs").is_none());
    let error = handle.connect(Some(3)).await.expect_err("refused");
    assert_eq!(error.server_code(), Some("WS_SESSION_NOT_FOUND"));
    assert_eq!(server.routes().last().map(String::as_str), Some("GET /ws/session/ws_1?afterSeq=3"));
}

#[tokio::test]
async fn files_are_read_here() {
    let server = FakeServer::start().await;
    let client = server.client(RemoteConfig::default());
    let directory = std::env::temp_dir().join(format!("volley-remote-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("a directory");
    let file = directory.join("a.http");
    std::fs::write(&file, CONTENT).expect("written");
    let response = client.run(&file, RunOptions::default()).await.expect("a response");
    let sent: Value = response.json().await.expect("the echoed body");
    assert_eq!(sent["content"], CONTENT);
    // An absolute path sends no `basePath`.
    assert!(sent.get("basePath").is_none());
    let _ = std::fs::remove_dir_all(&directory);

    let missing = client.run(directory.join("missing.http"), RunOptions::default()).await;
    assert!(matches!(missing, Err(Error::ReadFile { .. })));

    let response =
        client.run_string(CONTENT, RunOptions::default().source_path("api/users.http")).await.expect("a response");
    let sent: Value = response.json().await.expect("the echoed body");
    assert_eq!(sent["basePath"], "api");
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error_naming_it() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    drop(listener);
    let client = RemoteClient::new(RemoteConfig::new(url.clone())).expect("a valid URL");
    let error = client.run_string(CONTENT, RunOptions::default()).await.expect_err("refused");
    assert!(matches!(error, Error::Transport(TransportError::ConnectionRefused { .. })), "{error:?}");
    assert!(error.to_string().contains(&url), "{error}");
    // Nothing was created: the next run tries again.
    assert_eq!(client.session_id(), None);
}

#[test]
fn debug_never_shows_the_token() {
    let client = RemoteClient::new(RemoteConfig {
        token: Some("hunter2".to_owned()),
        ..RemoteConfig::new("http://127.0.0.1:4097")
    })
    .expect("valid");
    let shown = format!("{client:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
}

/// A thread that panics while it holds the variables' lock releases it (`parking_lot`'s
/// locks do not poison): the local copy of the variables stays readable and writable.
#[tokio::test]
async fn variables_stay_usable_after_a_panic_under_the_lock() {
    let mut config = RemoteConfig::new("http://127.0.0.1:9");
    config.variables.insert("before".to_owned(), 1.into());
    let client = RemoteClient::new(config).expect("a valid URL");
    let panicking = client.clone();
    let panicked = std::thread::spawn(move || {
        let _held = panicking.inner.variables.lock();
        panic!("panics while holding the lock");
    })
    .join();
    assert!(panicked.is_err());
    assert!(client.inner.variables.try_lock().is_some(), "the lock is released");
    // No session yet: the variable is kept here, nothing is sent.
    client.set_variable("after", 2).await.expect("kept");
    let variables = client.get_variables();
    assert_eq!((&variables["before"], &variables["after"]), (&json!(1), &json!(2)));
}
