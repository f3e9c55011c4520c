//! Every route of the execution server, driven through the public `router()` with
//! `tower::ServiceExt::oneshot`: status codes, answer shapes and the one error shape of
//! PROTOCOL.md. Executions go to the local upstream of `volley-echo-server` (127.0.0.1,
//! never the internet); each test has its own workspace in a temporary directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use futures_util::StreamExt as _;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt as _;
use volley_echo_server::TestServer;
use volley_server::{DEFAULT_MAX_BODY_SIZE, ServerConfig};

mod auth;
mod cors;
mod discovery;
mod events;
mod execute;
mod execute_errors;
mod execute_sse;
mod flows;
mod paths;
mod sessions;
mod workspace;

/// The main token of servers started with one.
const MAIN: &str = "main-secret";

/// Status, headers and the body as JSON (`Null` when empty, a string when not JSON).
type Reply = (StatusCode, HeaderMap, Value);

/// A workspace directory inside a temporary base directory (which also holds files
/// outside the workspace); removed on drop.
struct Workspace {
    base: PathBuf,
    root: PathBuf,
}

impl Workspace {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |time| time.as_nanos());
        let base = std::env::temp_dir().join(format!(
            "volley-router-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let root = base.join("workspace");
        std::fs::create_dir_all(&root).expect("create the workspace");
        std::fs::write(base.join("outside.txt"), "outside the workspace").expect("write outside.txt");
        std::fs::write(base.join("outside.http"), "GET http://127.0.0.1:9/outside\n").expect("write outside.http");
        Self { root: root.canonicalize().expect("canonical workspace"), base }
    }

    /// Writes `text` to `relative` inside the workspace (directories created).
    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create directories");
        }
        std::fs::write(&path, text).expect("write a workspace file");
        path
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// A router over its own workspace.
struct Api {
    router: Router,
    workspace: Workspace,
}

impl Api {
    /// A server without a token.
    fn open() -> Self {
        Self::with(|_| {})
    }

    /// A server with the token [`MAIN`].
    fn secured() -> Self {
        Self::with(|config| config.token = Some(MAIN.to_owned()))
    }

    fn with(change: impl FnOnce(&mut ServerConfig)) -> Self {
        let workspace = Workspace::new();
        let mut config = ServerConfig { workspace: workspace.root.clone(), ..ServerConfig::default() };
        change(&mut config);
        crate::support::install_http();
        let router = volley_server::router(config).expect("a router");
        Self { router, workspace }
    }

    async fn send(&self, method: Method, path: &str, token: Option<&str>, body: Option<Value>) -> Reply {
        send(&self.router, method, path, token, body).await
    }

    async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.send(Method::GET, path, token, None).await
    }

    async fn post(&self, path: &str, token: Option<&str>, body: Value) -> Reply {
        self.send(Method::POST, path, token, Some(body)).await
    }

    /// `POST /execute` without a token.
    async fn execute(&self, body: Value) -> Reply {
        self.post("/execute", None, body).await
    }

    /// `POST /session` → the new id.
    async fn session(&self, token: Option<&str>, variables: Value) -> String {
        let reply = self.post("/session", token, json!({ "variables": variables })).await;
        id_of(&reply, "sessionId")
    }

    /// `POST /flows` → the new id.
    async fn flow(&self, token: Option<&str>, body: Value) -> String {
        let reply = self.post("/flows", token, body).await;
        id_of(&reply, "flowId")
    }

    async fn raw(&self, request: Request<Body>) -> Response<Body> {
        self.router.clone().oneshot(request).await.expect("the router is infallible")
    }
}

/// Sends one request through `router`: JSON body, `Authorization: Bearer <token>`.
async fn send(router: &Router, method: Method, path: &str, token: Option<&str>, body: Option<Value>) -> Reply {
    let request = request(method, path, token, body.map(|body| body.to_string()));
    let response = router.clone().oneshot(request).await.expect("the router is infallible");
    read(response).await
}

/// A request with a JSON body given as text (so tests can send malformed JSON).
fn request(method: Method, path: &str, token: Option<&str>, body: Option<String>) -> Request<Body> {
    let mut builder = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    match body {
        Some(body) => builder.header(header::CONTENT_TYPE, "application/json").body(Body::from(body)),
        None => builder.body(Body::empty()),
    }
    .expect("a valid request")
}

async fn read(response: Response<Body>) -> Reply {
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = tokio::time::timeout(Duration::from_secs(20), axum::body::to_bytes(response.into_body(), usize::MAX))
        .await
        .expect("the body ends")
        .expect("a readable body");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    (status, headers, body)
}

/// Asserts the status and returns the body.
#[track_caller]
fn ok(reply: &Reply, status: StatusCode) -> &Value {
    assert_eq!(reply.0, status, "unexpected status; body: {}", reply.2);
    &reply.2
}

/// Asserts an error answer: `status`, `{"error": {"code", "message", "details"?}}` with
/// `code`, and the JSON content type.
#[track_caller]
fn expect_error(reply: &Reply, status: StatusCode, code: &str) {
    let (actual, headers, body) = reply;
    assert_eq!(*actual, status, "unexpected status; body: {body}");
    let object = body.as_object().unwrap_or_else(|| panic!("the error body is an object: {body}"));
    assert_eq!(object.keys().collect::<Vec<_>>(), ["error"], "only `error` at the top: {body}");
    let error = body["error"].as_object().unwrap_or_else(|| panic!("`error` is an object: {body}"));
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|message| !message.is_empty()), "a message: {body}");
    assert!(error.keys().all(|key| ["code", "message", "details"].contains(&key.as_str())), "{body}");
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or_default();
    assert!(content_type.starts_with("application/json"), "content type {content_type:?}");
}

#[track_caller]
fn id_of(reply: &Reply, field: &str) -> String {
    let body = ok(reply, StatusCode::CREATED);
    body[field].as_str().unwrap_or_else(|| panic!("`{field}` in {body}")).to_owned()
}

/// A port on 127.0.0.1 where nothing listens.
fn unused_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    listener.local_addr().expect("an address").port()
}

/// The query the echo route saw, as `name=value` pairs.
fn echoed_query(reply: &Reply) -> String {
    let body = ok(reply, StatusCode::OK);
    let echoed: Value =
        serde_json::from_str(body["response"]["body"].as_str().expect("a text body")).expect("echo JSON");
    echoed["query"].as_str().unwrap_or_default().to_owned()
}

fn header_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// The workspace helper keeps its files apart: a sanity check of the fixture itself.
#[test]
fn workspaces_are_separate_and_removed() {
    let first = Workspace::new();
    let second = Workspace::new();
    assert_ne!(first.root, second.root);
    let base = first.base.clone();
    assert!(Path::new(&base).join("outside.txt").is_file());
    drop(first);
    assert!(!base.exists());
}
