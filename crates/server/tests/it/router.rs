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

mod discovery {
    use super::*;

    #[tokio::test]
    async fn health_answers_healthy_and_the_version() {
        let api = Api::open();
        let reply = api.get("/health", None).await;
        let body = ok(&reply, StatusCode::OK);
        assert_eq!(*body, json!({ "healthy": true, "version": env!("CARGO_PKG_VERSION") }));
        assert!(header_value(&reply.1, "content-type").is_some_and(|value| value.starts_with("application/json")));
    }

    #[tokio::test]
    async fn capabilities_speak_protocol_1_1_with_every_feature() {
        let api = Api::open();
        let reply = api.get("/capabilities", None).await;
        let body = ok(&reply, StatusCode::OK);
        assert_eq!(
            *body,
            json!({
                "protocolVersion": "1.1",
                "version": env!("CARGO_PKG_VERSION"),
                "features": {
                    "sessions": true,
                    "diagnostics": true,
                    "streamingBodies": false,
                    "observerWebSocket": true,
                    "requestWebSocket": true,
                    "replayBuffer": true,
                    "binaryPayloads": false,
                },
            })
        );
    }

    #[tokio::test]
    async fn doc_is_openapi_3_with_every_route() {
        let api = Api::open();
        let reply = api.get("/doc", None).await;
        let body = ok(&reply, StatusCode::OK);
        assert!(body["openapi"].as_str().is_some_and(|version| version.starts_with("3.")), "{}", body["openapi"]);
        let paths = body["paths"].as_object().expect("paths");
        let routes = [
            ("/health", "get"),
            ("/capabilities", "get"),
            ("/doc", "get"),
            ("/execute", "post"),
            ("/execute/sse", "post"),
            ("/session", "post"),
            ("/session/{id}", "get"),
            ("/session/{id}", "delete"),
            ("/session/{id}/variables", "put"),
            ("/flows", "post"),
            ("/flows/{id}/finish", "post"),
            ("/flows/{id}/executions/{exec}", "get"),
            ("/event", "get"),
            ("/tokens", "post"),
            ("/tokens/{jti}", "delete"),
            ("/execute/ws", "post"),
            ("/ws/session/{wsSessionId}", "get"),
            ("/event/ws", "get"),
        ];
        for (path, method) in routes {
            assert!(paths.get(path).and_then(|item| item.get(method)).is_some(), "{method} {path} is documented");
        }
        assert_eq!(paths.len(), 17, "no undocumented or stale paths: {:?}", paths.keys().collect::<Vec<_>>());
        // The same document as the library function.
        let library: Value = serde_json::from_str(&volley_server::openapi_json()).expect("JSON");
        assert_eq!(library, *body);
    }

    #[tokio::test]
    async fn an_unknown_route_is_404_not_found() {
        let api = Api::open();
        expect_error(&api.get("/nope", None).await, StatusCode::NOT_FOUND, "NOT_FOUND");
        expect_error(&api.post("/execute/nope", None, json!({})).await, StatusCode::NOT_FOUND, "NOT_FOUND");
    }

    #[tokio::test]
    async fn a_wrong_method_is_405_in_the_error_shape() {
        let api = Api::open();
        expect_error(&api.get("/execute", None).await, StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED");
        expect_error(&api.post("/health", None, json!({})).await, StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED");
        let put = api.send(Method::PUT, "/session", None, Some(json!({}))).await;
        expect_error(&put, StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED");
    }
}

mod execute {
    use super::*;

    #[tokio::test]
    async fn answers_every_field_of_the_protocol() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let content =
            format!("@host = {}\n\n### first\nGET {{{{host}}}}/echo?x=1\nX-Trace: abc\n", upstream.base_url());
        let reply = api.execute(json!({ "content": content })).await;
        let body = ok(&reply, StatusCode::OK);

        assert!(body["runId"].as_str().is_some_and(|id| !id.is_empty()));
        assert!(body["reqExecId"].as_str().is_some_and(|id| !id.is_empty()));
        assert!(body.get("flowId").is_none() && body.get("session").is_none() && body.get("assertions").is_none());

        let request = &body["request"];
        assert_eq!(request["index"], 0);
        assert_eq!(request["name"], "first");
        assert_eq!(request["method"], "GET");
        assert_eq!(request["url"], "{{host}}/echo?x=1");
        assert_eq!(request["urlResolved"], upstream.url("/echo?x=1"));

        let resolved = &body["resolved"];
        let root = api.workspace.root.display().to_string();
        assert_eq!(resolved["workspaceRoot"], root.as_str());
        assert_eq!(resolved["basePath"], root.as_str());
        assert!(resolved.get("httpFilePath").is_none() && resolved.get("configPath").is_none(), "{resolved}");

        let response = &body["response"];
        assert_eq!(response["status"], 200);
        assert_eq!(response["statusText"], "OK");
        let headers = response["headers"].as_array().expect("headers as a list");
        for entry in headers {
            let name = entry["name"].as_str().expect("a name");
            assert_eq!(name, name.to_ascii_lowercase(), "lower-case names");
            assert!(entry["value"].is_string());
            assert_eq!(entry.as_object().map(serde_json::Map::len), Some(2), "only name and value: {entry}");
        }
        assert!(headers.iter().any(|entry| entry["name"] == "content-type" && entry["value"] == "application/json"));
        assert_eq!(response["bodyMode"], "buffered");
        assert_eq!(response["encoding"], "utf-8");
        assert_eq!(response["truncated"], false);
        let text = response["body"].as_str().expect("a text body");
        assert_eq!(response["bodyBytes"], text.len());
        let echoed: Value = serde_json::from_str(text).expect("echo JSON");
        assert_eq!(echoed["method"], "GET");
        assert_eq!(echoed["url"], "/echo?x=1");
        assert!(
            echoed["headers"].as_array().expect("headers").iter().any(|pair| pair[0] == "x-trace" && pair[1] == "abc")
        );

        assert_eq!(body["limits"]["maxBodyBytes"], DEFAULT_MAX_BODY_SIZE);

        let timing = &body["timing"];
        let start = timing["startTime"].as_u64().expect("startTime in ms");
        let end = timing["endTime"].as_u64().expect("endTime in ms");
        assert!(start > 1_600_000_000_000 && start <= end, "{timing}");
        assert!(timing["durationMs"].as_f64().is_some_and(|duration| duration >= 0.0), "{timing}");
        assert!(timing["ttfb"].as_f64().is_some_and(|ttfb| ttfb >= 0.0), "{timing}");
    }

    #[tokio::test]
    async fn upstream_error_statuses_are_successful_executions() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        for (code, text) in [(404, "Not Found"), (500, "Internal Server Error")] {
            let reply =
                api.execute(json!({ "content": format!("GET {}", upstream.url(&format!("/status/{code}"))) })).await;
            let body = ok(&reply, StatusCode::OK);
            assert_eq!(body["response"]["status"], code);
            assert_eq!(body["response"]["statusText"], text);
        }
        // No body: `bodyMode` is `none`.
        let reply = api.execute(json!({ "content": format!("GET {}", upstream.url("/status/204")) })).await;
        let response = &ok(&reply, StatusCode::OK)["response"];
        assert_eq!(response["bodyMode"], "none");
        assert_eq!(response["bodyBytes"], 0);
        assert!(response.get("body").is_none());
    }

    #[tokio::test]
    async fn bodies_that_are_not_utf8_are_base64() {
        let bytes = [0xff_u8, 0x00, 0xfe, 0x01];
        let app = Router::new().route(
            "/bytes",
            axum::routing::get(move || async move {
                ([(header::CONTENT_TYPE, "application/octet-stream")], bytes.to_vec())
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let server = tokio::spawn(async move { axum::serve(listener, app).await.ok() });

        let api = Api::open();
        let reply = api.execute(json!({ "content": format!("GET http://{address}/bytes") })).await;
        let response = &ok(&reply, StatusCode::OK)["response"];
        assert_eq!(response["encoding"], "base64");
        assert_eq!(response["body"], "/wD+AQ==");
        assert_eq!(response["bodyBytes"], 4);
        assert_eq!(response["bodyMode"], "buffered");
        server.abort();
    }

    #[tokio::test]
    async fn assertions_are_reported_with_their_outcomes() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let content = format!(
            "# @assert status == 200\n# @assert jsonpath $.method == \"POST\"\n# @assert header content-type contains xml\nGET {}\n",
            upstream.url("/echo")
        );
        let reply = api.execute(json!({ "content": content })).await;
        let body = ok(&reply, StatusCode::OK);
        let report = &body["assertions"];
        assert_eq!(report["passed"], false);
        assert_eq!(report["total"], 3);
        assert_eq!(report["failed"], 2);
        let checks = report["checks"].as_array().expect("checks");
        let outcomes: Vec<&str> = checks.iter().map(|check| check["outcome"].as_str().expect("outcome")).collect();
        assert_eq!(outcomes, ["passed", "failed", "failed"]);
        assert_eq!(checks[0]["expression"], "status == 200");
        assert_eq!(checks[0]["span"]["line"], 1);
        assert!(checks[0].get("expected").is_none());
        assert_eq!(checks[1]["span"]["line"], 2);
        assert!(checks[1]["expected"].as_str().is_some_and(|expected| expected.contains("POST")), "{}", checks[1]);
        assert!(checks[1]["actual"].as_str().is_some_and(|actual| actual.contains("GET")), "{}", checks[1]);
        assert!(
            checks[2]["actual"].as_str().is_some_and(|actual| actual.contains("application/json")),
            "{}",
            checks[2]
        );

        // All passing.
        let content = format!("# @assert status == 200\nGET {}\n", upstream.url("/echo"));
        let reply = api.execute(json!({ "content": content })).await;
        let report = &ok(&reply, StatusCode::OK)["assertions"];
        assert_eq!(
            (report["passed"].clone(), report["total"].clone(), report["failed"].clone()),
            (json!(true), json!(1), json!(0))
        );
    }

    #[tokio::test]
    async fn requests_are_selected_by_name_and_index() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let content = format!(
            "### one\nGET {0}/echo?n=1\n\n###\n# @name second\nGET {0}/echo?n=2\n\n### third\nGET {0}/echo?n=3\n",
            upstream.base_url()
        );
        let by_default = api.execute(json!({ "content": content })).await;
        assert_eq!(echoed_query(&by_default), "n=1");
        assert_eq!(by_default.2["request"]["index"], 0);

        let by_name = api.execute(json!({ "content": content, "requestName": "second" })).await;
        assert_eq!(echoed_query(&by_name), "n=2");
        assert_eq!(by_name.2["request"]["index"], 1);
        assert_eq!(by_name.2["request"]["name"], "second");

        let by_index = api.execute(json!({ "content": content, "requestIndex": 2 })).await;
        assert_eq!(echoed_query(&by_index), "n=3");
        assert_eq!(by_index.2["request"]["index"], 2);
        assert_eq!(by_index.2["request"]["name"], "third");
    }

    #[tokio::test]
    async fn a_path_in_the_workspace_runs() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let file = api.workspace.write("api/users.http", &format!("GET {}\n", upstream.url("/echo?from=file")));
        let reply = api.execute(json!({ "path": "api/users.http" })).await;
        assert_eq!(echoed_query(&reply), "from=file");
        let resolved = &reply.2["resolved"];
        assert_eq!(resolved["httpFilePath"], file.display().to_string());
        assert_eq!(resolved["basePath"], api.workspace.root.join("api").display().to_string());
        // `./` and nested forms of the same file.
        let reply = api.execute(json!({ "path": "./api/users.http" })).await;
        assert_eq!(echoed_query(&reply), "from=file");
    }

    #[tokio::test]
    async fn base_path_is_where_body_files_resolve() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        api.workspace.write("bodies/payload.json", r#"{"hello": "file"}"#);
        let content = format!("POST {}\nContent-Type: application/json\n\n< ./payload.json\n", upstream.url("/echo"));
        let reply = api.execute(json!({ "content": content, "basePath": "bodies" })).await;
        let body = ok(&reply, StatusCode::OK);
        assert_eq!(body["resolved"]["basePath"], api.workspace.root.join("bodies").display().to_string());
        let echoed: Value = serde_json::from_str(body["response"]["body"].as_str().expect("text")).expect("echo JSON");
        assert_eq!(echoed["body"], r#"{"hello": "file"}"#);

        // Without `basePath` the file is looked for in the workspace root: not there.
        let reply = api.execute(json!({ "content": content })).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "FILE_NOT_FOUND");
        // A `basePath` that is a file.
        let reply = api.execute(json!({ "content": content, "basePath": "bodies/payload.json" })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        // `basePath` goes with `content` only.
        api.workspace.write("bodies/a.http", "GET http://127.0.0.1:9/\n");
        let reply = api.execute(json!({ "path": "bodies/a.http", "basePath": "bodies" })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }

    #[tokio::test]
    async fn variables_follow_the_documented_precedence() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let config = api.workspace.write(
            "volley.jsonc",
            r#"{
                // config < profile < session < request
                "variables": {"a": "config", "b": "config", "c": "config", "d": "config"},
                "profiles": {"dev": {"variables": {"b": "profile", "c": "profile", "d": "profile"}}},
            }"#,
        );
        let content = format!(
            "@a = file\n@b = file\n@c = file\n@d = file\n@e = file\n\nGET {}?a={{{{a}}}}&b={{{{b}}}}&c={{{{c}}}}&d={{{{d}}}}&e={{{{e}}}}\n",
            upstream.url("/echo")
        );
        // File < config.
        let reply = api.execute(json!({ "content": content })).await;
        assert_eq!(echoed_query(&reply), "a=config&b=config&c=config&d=config&e=file");
        assert_eq!(reply.2["resolved"]["configPath"], config.display().to_string());
        // Config < profile.
        let reply = api.execute(json!({ "content": content, "profile": "dev" })).await;
        assert_eq!(echoed_query(&reply), "a=config&b=profile&c=profile&d=profile&e=file");
        // Profile < session < request.
        let session = api.session(None, json!({ "c": "session", "d": "session" })).await;
        let reply = api
            .execute(
                json!({ "content": content, "profile": "dev", "sessionId": session, "variables": { "d": "request" } }),
            )
            .await;
        assert_eq!(echoed_query(&reply), "a=config&b=profile&c=session&d=request&e=file");
        // Request variables apply once: the session keeps its own.
        let view = api.get(&format!("/session/{session}"), None).await;
        assert_eq!(ok(&view, StatusCode::OK)["variables"], json!({ "c": "session", "d": "session" }));
    }

    #[tokio::test]
    async fn bodies_over_max_body_size_are_truncated() {
        let upstream = TestServer::start().await;
        let api = Api::with(|config| config.max_body_size = 64);
        let reply = api.execute(json!({ "content": format!("GET {}", upstream.url("/echo")) })).await;
        let body = ok(&reply, StatusCode::OK);
        assert_eq!(body["limits"]["maxBodyBytes"], 64);
        let response = &body["response"];
        assert_eq!(response["truncated"], true);
        assert_eq!(response["bodyBytes"], 64);
        assert_eq!(response["body"].as_str().map(str::len), Some(64));
    }
}

mod execute_errors {
    use super::*;

    #[tokio::test]
    async fn exactly_one_of_content_and_path() {
        let api = Api::open();
        expect_error(&api.execute(json!({})).await, StatusCode::BAD_REQUEST, "CONTENT_OR_PATH_REQUIRED");
        let both = api.execute(json!({ "content": "GET http://127.0.0.1:9/", "path": "a.http" })).await;
        expect_error(&both, StatusCode::BAD_REQUEST, "CONTENT_OR_PATH_REQUIRED");
    }

    #[tokio::test]
    async fn malformed_bodies_and_wrong_types_are_validation_errors() {
        let api = Api::open();
        let malformed = api.raw(request(Method::POST, "/execute", None, Some(r#"{"content": "#.to_owned()))).await;
        expect_error(&read(malformed).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        let not_an_object = api.raw(request(Method::POST, "/execute", None, Some("[1, 2]".to_owned()))).await;
        expect_error(&read(not_an_object).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        for body in [
            json!({ "content": 5 }),
            json!({ "content": "GET http://127.0.0.1:9/", "requestIndex": "0" }),
            json!({ "content": "GET http://127.0.0.1:9/", "requestIndex": -1 }),
            json!({ "content": "GET http://127.0.0.1:9/", "variables": [] }),
            json!({ "content": "GET http://127.0.0.1:9/", "followRedirects": "yes" }),
        ] {
            expect_error(&api.execute(body).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        }
        // No JSON content type.
        let plain = Request::post("/execute")
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from(r#"{"content": "GET http://127.0.0.1:9/"}"#))
            .expect("request");
        expect_error(&read(api.raw(plain).await).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }

    #[tokio::test]
    async fn unknown_fields_are_ignored() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let reply =
            api.execute(json!({ "content": format!("GET {}", upstream.url("/echo")), "somethingNew": 1 })).await;
        ok(&reply, StatusCode::OK);
    }

    #[tokio::test]
    async fn timeouts_out_of_range_are_validation_errors() {
        let api = Api::open();
        for timeout in [0, 50, 99, 300_001, 400_000] {
            let reply = api.execute(json!({ "content": "GET http://127.0.0.1:9/", "timeoutMs": timeout })).await;
            expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        }
    }

    #[tokio::test]
    async fn selection_errors() {
        let api = Api::open();
        let content = "### one\nGET http://127.0.0.1:9/one\n\n### two\nGET http://127.0.0.1:9/two\n";
        let reply = api.execute(json!({ "content": content, "requestIndex": 2 })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "REQUEST_INDEX_OUT_OF_RANGE");
        assert_eq!(reply.2["error"]["details"], json!({ "index": 2, "count": 2 }));

        for empty in ["", "# only a comment\n", "###\n"] {
            expect_error(&api.execute(json!({ "content": empty })).await, StatusCode::BAD_REQUEST, "NO_REQUESTS_FOUND");
        }

        let reply = api.execute(json!({ "content": content, "requestName": "tow" })).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "REQUEST_NOT_FOUND");
        assert_eq!(reply.2["error"]["details"]["name"], "tow");

        let both = api.execute(json!({ "content": content, "requestName": "one", "requestIndex": 0 })).await;
        expect_error(&both, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }

    #[tokio::test]
    async fn a_syntax_error_is_a_parse_error_with_diagnostics() {
        let api = Api::open();
        let reply = api.execute(json!({ "content": "GET http://127.0.0.1:9/\nthis is not a header\n" })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "PARSE_ERROR");
        let diagnostics = reply.2["error"]["details"]["diagnostics"].as_array().expect("diagnostics");
        assert!(diagnostics.iter().any(|diagnostic| diagnostic["line"] == 2), "{diagnostics:?}");
    }

    #[tokio::test]
    async fn errors_elsewhere_in_the_content_do_not_refuse_the_selected_request() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let content = format!(
            "@ = broken\n\n###\n# @name fine\nGET {}\n\n###\n# @name broken\nGET {}\nnot a header\n",
            upstream.url("/status/200"),
            upstream.url("/echo")
        );
        let reply = api.execute(json!({ "content": content, "requestName": "fine" })).await;
        assert_eq!(ok(&reply, StatusCode::OK)["response"]["status"], 200);
        let reply = api.execute(json!({ "content": content, "requestIndex": 0 })).await;
        assert_eq!(ok(&reply, StatusCode::OK)["response"]["status"], 200);

        // The selected request's own errors still refuse it, and only those are listed.
        let reply = api.execute(json!({ "content": content, "requestName": "broken" })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "PARSE_ERROR");
        let diagnostics = reply.2["error"]["details"]["diagnostics"].as_array().expect("diagnostics");
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(diagnostics[0]["line"], 10);
    }

    #[tokio::test]
    async fn a_broken_file_variable_refuses_only_the_requests_that_use_it() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        // The broken `@token` is in the block of `plain`, which does not use it: the
        // same requests are refused as by `volley run` and the language server.
        let content = format!(
            "@auth = Bearer {{{{token}}}}\n\n###\n# @name plain\n@token = {{{{unclosed\nGET {}\n\n\
             ###\n# @name uses-token\nGET {}\nAuthorization: {{{{auth}}}}\n",
            upstream.url("/status/200"),
            upstream.url("/echo")
        );
        let reply = api.execute(json!({ "content": content, "requestName": "plain" })).await;
        assert_eq!(ok(&reply, StatusCode::OK)["response"]["status"], 200);

        let reply = api.execute(json!({ "content": content, "requestName": "uses-token" })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "PARSE_ERROR");
        assert_eq!(
            reply.2["error"]["details"]["diagnostics"],
            json!([{
                "code": "broken-variable",
                "message": "`auth` uses `token`, declared on line 5, which has errors",
                "hint": "fix `@token` on line 5; the requests that do not use it can still be sent",
                "line": 11,
                "column": 18,
            }])
        );
    }

    #[tokio::test]
    async fn a_disabled_request_is_refused_even_when_selected() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let content = format!("# @name off\n# @disabled\nDELETE {}\n", upstream.url("/echo"));
        let reply = api.execute(json!({ "content": content, "requestName": "off" })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        assert_eq!(
            reply.2["error"]["details"],
            json!({ "code": "request-disabled", "hint": "remove `# @disabled` to send it", "line": 2, "column": 1 })
        );
    }

    #[tokio::test]
    async fn an_undefined_variable_is_a_validation_error_with_its_place() {
        let api = Api::open();
        let reply = api.execute(json!({ "content": "GET http://127.0.0.1:9/{{nowhere}}\n" })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        assert!(reply.2["error"]["message"].as_str().is_some_and(|message| message.contains("nowhere")), "{}", reply.2);
        assert_eq!(reply.2["error"]["details"]["line"], 1);
    }

    #[tokio::test]
    async fn a_refused_connection_is_an_execute_error_with_its_kind() {
        let api = Api::open();
        let reply = api.execute(json!({ "content": format!("GET http://127.0.0.1:{}/", unused_port()) })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
        assert_eq!(reply.2["error"]["details"]["kind"], "connection_refused");
    }

    #[tokio::test]
    async fn an_upstream_timeout_is_an_execute_error() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let reply =
            api.execute(json!({ "content": format!("GET {}", upstream.url("/slow?ms=5000")), "timeoutMs": 100 })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
        assert_eq!(reply.2["error"]["details"]["kind"], "timeout");
    }

    #[tokio::test]
    async fn unknown_sessions_and_flows_are_404() {
        let api = Api::open();
        let content = "GET http://127.0.0.1:9/";
        let reply = api.execute(json!({ "content": content, "sessionId": "ses_nope" })).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
        let reply = api.execute(json!({ "content": content, "flowId": "flow_nope" })).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "FLOW_NOT_FOUND");
    }

    #[tokio::test]
    async fn an_sse_request_belongs_to_execute_sse() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        for content in [
            format!("# @sse\nGET {}\n", upstream.url("/sse/events")),
            format!("GET {}\nAccept: text/event-stream\n", upstream.url("/sse/events")),
        ] {
            expect_error(
                &api.execute(json!({ "content": content })).await,
                StatusCode::BAD_REQUEST,
                "VALIDATION_ERROR",
            );
        }
    }

    #[tokio::test]
    async fn oversized_content_and_bodies_are_413() {
        let api = Api::with(|config| config.max_body_size = 64);
        let content = format!("GET http://127.0.0.1:9/{}", "a".repeat(100));
        expect_error(
            &api.execute(json!({ "content": content })).await,
            StatusCode::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
        );
        // A raw body beyond the content limit plus the envelope's 1 MiB.
        let huge = json!({ "content": "x".repeat(64 + 1024 * 1024 + 100) }).to_string();
        let reply = read(api.raw(request(Method::POST, "/execute", None, Some(huge.clone()))).await).await;
        expect_error(&reply, StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE");
        // Routes whose body is optional too.
        let reply = read(api.raw(request(Method::POST, "/session", None, Some(huge))).await).await;
        expect_error(&reply, StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE");
    }
}

mod paths {
    use super::*;

    #[tokio::test]
    async fn absolute_and_escaping_paths_are_refused() {
        let api = Api::open();
        api.workspace.write("a/inside.http", "GET http://127.0.0.1:9/\n");
        let outside = api.workspace.base.join("outside.http").display().to_string();
        for path in
            ["/etc/passwd", "../x.http", "a/../../x.http", "../outside.http", "a/../../outside.http", outside.as_str()]
        {
            let reply = api.execute(json!({ "path": path })).await;
            expect_error(&reply, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
            let message = reply.2["error"]["message"].as_str().unwrap_or_default();
            assert!(
                !message.contains(&api.workspace.root.display().to_string()),
                "the workspace does not leak: {message}"
            );
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlink_out_of_the_workspace_is_refused() {
        let api = Api::open();
        std::os::unix::fs::symlink(api.workspace.base.join("outside.http"), api.workspace.root.join("link.http"))
            .expect("symlink");
        std::os::unix::fs::symlink(&api.workspace.base, api.workspace.root.join("up")).expect("symlink");
        for path in ["link.http", "up/outside.http"] {
            expect_error(&api.execute(json!({ "path": path })).await, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
        }
        // A body file reached through the symlinked directory.
        let content = "POST http://127.0.0.1:9/\n\n< ./up/outside.txt\n";
        expect_error(
            &api.execute(json!({ "content": content })).await,
            StatusCode::FORBIDDEN,
            "PATH_OUTSIDE_WORKSPACE",
        );
    }

    #[tokio::test]
    async fn a_missing_file_is_404() {
        let api = Api::open();
        expect_error(&api.execute(json!({ "path": "missing.http" })).await, StatusCode::NOT_FOUND, "FILE_NOT_FOUND");
        expect_error(
            &api.execute(json!({ "path": "no/such/dir.http" })).await,
            StatusCode::NOT_FOUND,
            "FILE_NOT_FOUND",
        );
    }

    #[tokio::test]
    async fn body_files_outside_the_workspace_are_refused() {
        let api = Api::open();
        for reference in ["< ../outside.txt", "< /etc/hostname", "<@ ../outside.txt", "< ./sub/../../outside.txt"] {
            let content = format!("POST http://127.0.0.1:9/\n\n{reference}\n");
            let reply = api.execute(json!({ "content": content })).await;
            expect_error(&reply, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
        }
    }

    #[tokio::test]
    async fn a_base_path_outside_the_workspace_is_refused() {
        let api = Api::open();
        let content = "GET http://127.0.0.1:9/";
        for base in ["../", "..", "/etc", "a/../.."] {
            let reply = api.execute(json!({ "content": content, "basePath": base })).await;
            expect_error(&reply, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
        }
        let reply = api.execute(json!({ "content": content, "basePath": "missing" })).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "FILE_NOT_FOUND");
    }
}

mod sessions {
    use super::*;

    #[tokio::test]
    async fn create_with_and_without_a_body() {
        let api = Api::open();
        let empty = api.raw(Request::post("/session").body(Body::empty()).expect("request")).await;
        let reply = read(empty).await;
        let body = ok(&reply, StatusCode::CREATED);
        assert!(body["sessionId"].as_str().is_some_and(|id| !id.is_empty()));
        assert_eq!(body.as_object().map(serde_json::Map::len), Some(1));

        let with_variables = api.session(None, json!({ "host": "h" })).await;
        let view = api.get(&format!("/session/{with_variables}"), None).await;
        assert_eq!(ok(&view, StatusCode::OK)["variables"], json!({ "host": "h" }));

        let reply = api.post("/session", None, json!({})).await;
        ok(&reply, StatusCode::CREATED);
        let reply = api.post("/session", None, json!({ "variables": "nope" })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        let malformed = read(api.raw(request(Method::POST, "/session", None, Some("{".to_owned()))).await).await;
        expect_error(&malformed, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }

    #[tokio::test]
    async fn the_view_redacts_secret_variables() {
        let api = Api::open();
        let variables = json!({
            "host": "example",
            "count": 3,
            "apiToken": "t",
            "clientSecret": "s",
            "password": "p",
            "apiKey": "k",
            "authHeader": "a",
            "credentials": {"user": "u"},
        });
        let session = api.session(None, variables).await;
        let reply = api.get(&format!("/session/{session}"), None).await;
        let body = ok(&reply, StatusCode::OK);
        assert_eq!(body["sessionId"], session.as_str());
        assert_eq!(
            body["variables"],
            json!({
                "host": "example",
                "count": 3,
                "apiToken": "[REDACTED]",
                "clientSecret": "[REDACTED]",
                "password": "[REDACTED]",
                "apiKey": "[REDACTED]",
                "authHeader": "[REDACTED]",
                "credentials": "[REDACTED]",
            })
        );
        assert_eq!(body["cookieCount"], 0);
        let created = body["createdAt"].as_u64().expect("createdAt");
        assert!(body["lastUsedAt"].as_u64().is_some_and(|used| used >= created));
        assert!(body["snapshotVersion"].is_u64());
        expect_error(&api.get("/session/ses_nope", None).await, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
    }

    #[tokio::test]
    async fn cookies_are_counted_and_change_the_snapshot_version() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let session = api.session(None, json!({})).await;
        let version = |reply: &Reply| ok(reply, StatusCode::OK)["snapshotVersion"].as_u64().expect("snapshotVersion");
        let start = version(&api.get(&format!("/session/{session}"), None).await);

        // No cookie set: unchanged.
        let reply =
            api.execute(json!({ "content": format!("GET {}", upstream.url("/echo")), "sessionId": session })).await;
        assert_eq!(ok(&reply, StatusCode::OK)["session"], json!({ "sessionId": session, "snapshotVersion": start }));
        assert_eq!(version(&api.get(&format!("/session/{session}"), None).await), start);

        // A cookie set: changed, counted, and sent on the next request.
        let content = format!("GET {}", upstream.url("/cookies/set?flavor=oat"));
        let reply = api.execute(json!({ "content": content, "sessionId": session })).await;
        let after_cookie = ok(&reply, StatusCode::OK)["session"]["snapshotVersion"].as_u64().expect("version");
        assert!(after_cookie > start);
        let view = api.get(&format!("/session/{session}"), None).await;
        assert_eq!(ok(&view, StatusCode::OK)["cookieCount"], 1);
        assert_eq!(version(&view), after_cookie);
        let reply =
            api.execute(json!({ "content": format!("GET {}", upstream.url("/cookies")), "sessionId": session })).await;
        let shown: Value =
            serde_json::from_str(ok(&reply, StatusCode::OK)["response"]["body"].as_str().expect("text")).expect("json");
        assert_eq!(shown["cookies"], json!({ "flavor": "oat" }));

        // The same cookie again: unchanged.
        let reply = api.execute(json!({ "content": content, "sessionId": session })).await;
        assert_eq!(ok(&reply, StatusCode::OK)["session"]["snapshotVersion"], after_cookie);

        // Executions without the session do not touch its jar.
        let reply = api.execute(json!({ "content": format!("GET {}", upstream.url("/cookies/set?other=1")) })).await;
        ok(&reply, StatusCode::OK);
        assert_eq!(ok(&api.get(&format!("/session/{session}"), None).await, StatusCode::OK)["cookieCount"], 1);
    }

    #[tokio::test]
    async fn the_snapshot_version_changes_only_on_real_changes() {
        let api = Api::open();
        let session = api.session(None, json!({ "a": 1 })).await;
        let path = format!("/session/{session}/variables");
        let put = |variables: Value, mode: &'static str| {
            let body = json!({ "variables": variables, "mode": mode });
            async { api.send(Method::PUT, &path, None, Some(body)).await }
        };
        let start = ok(&api.get(&format!("/session/{session}"), None).await, StatusCode::OK)["snapshotVersion"].clone();

        let reply = put(json!({ "a": 1 }), "merge").await;
        assert_eq!(*ok(&reply, StatusCode::OK), json!({ "sessionId": session, "snapshotVersion": start }));
        assert_eq!(ok(&put(json!({ "a": 1 }), "replace").await, StatusCode::OK)["snapshotVersion"], start);
        assert_eq!(ok(&put(json!({}), "merge").await, StatusCode::OK)["snapshotVersion"], start);

        let changed = ok(&put(json!({ "a": 2 }), "merge").await, StatusCode::OK)["snapshotVersion"].clone();
        assert!(changed.as_u64() > start.as_u64(), "{changed} > {start}");
        let view = api.get(&format!("/session/{session}"), None).await;
        assert_eq!(ok(&view, StatusCode::OK)["snapshotVersion"], changed);
    }

    #[tokio::test]
    async fn put_merges_or_replaces() {
        let api = Api::open();
        let session = api.session(None, json!({ "a": 1, "b": 2 })).await;
        let path = format!("/session/{session}/variables");
        let view_path = format!("/session/{session}");

        // `mode` defaults to merge.
        let reply = api.send(Method::PUT, &path, None, Some(json!({ "variables": { "b": 3, "c": 4 } }))).await;
        ok(&reply, StatusCode::OK);
        assert_eq!(
            ok(&api.get(&view_path, None).await, StatusCode::OK)["variables"],
            json!({ "a": 1, "b": 3, "c": 4 })
        );

        let reply =
            api.send(Method::PUT, &path, None, Some(json!({ "variables": { "z": true }, "mode": "replace" }))).await;
        ok(&reply, StatusCode::OK);
        assert_eq!(ok(&api.get(&view_path, None).await, StatusCode::OK)["variables"], json!({ "z": true }));

        let reply = api.send(Method::PUT, &path, None, Some(json!({ "variables": { "y": 1 }, "mode": "merge" }))).await;
        ok(&reply, StatusCode::OK);
        assert_eq!(ok(&api.get(&view_path, None).await, StatusCode::OK)["variables"], json!({ "z": true, "y": 1 }));
    }

    #[tokio::test]
    async fn put_validates_its_body_and_the_session() {
        let api = Api::open();
        let session = api.session(None, json!({})).await;
        let path = format!("/session/{session}/variables");
        let reply = api.send(Method::PUT, &path, None, Some(json!({ "variables": {}, "mode": "append" }))).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        let reply = api.send(Method::PUT, &path, None, Some(json!({ "mode": "merge" }))).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        let reply = api.send(Method::PUT, &path, None, Some(json!({ "variables": [1] }))).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        let reply = api.send(Method::PUT, "/session/ses_nope/variables", None, Some(json!({ "variables": {} }))).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
    }

    #[tokio::test]
    async fn delete_answers_204_then_404() {
        let api = Api::open();
        let session = api.session(None, json!({})).await;
        let path = format!("/session/{session}");
        let reply = api.send(Method::DELETE, &path, None, None).await;
        assert_eq!(reply.0, StatusCode::NO_CONTENT);
        assert_eq!(reply.2, Value::Null);
        expect_error(&api.send(Method::DELETE, &path, None, None).await, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
        expect_error(&api.get(&path, None).await, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
        let reply = api.execute(json!({ "content": "GET http://127.0.0.1:9/", "sessionId": session })).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
    }

    #[tokio::test]
    async fn at_the_cap_creating_a_session_is_429_and_deleting_makes_room() {
        let api = Api::with(|config| config.max_sessions = 2);
        let first = api.session(None, json!({})).await;
        api.session(None, json!({})).await;
        let reply = api.post("/session", None, json!({})).await;
        expect_error(&reply, StatusCode::TOO_MANY_REQUESTS, "SESSION_LIMIT_REACHED");
        assert_eq!(reply.2["error"]["details"]["limit"], 2);
        // The live sessions are all still there.
        ok(&api.get(&format!("/session/{first}"), None).await, StatusCode::OK);
        assert_eq!(api.send(Method::DELETE, &format!("/session/{first}"), None, None).await.0, StatusCode::NO_CONTENT);
        api.session(None, json!({})).await;
    }
}

mod flows {
    use super::*;

    #[tokio::test]
    async fn create_validates_label_meta_and_session() {
        let api = Api::open();
        // Without a body, with everything.
        let reply = read(api.raw(Request::post("/flows").body(Body::empty()).expect("request")).await).await;
        assert!(ok(&reply, StatusCode::CREATED)["flowId"].is_string());
        let session = api.session(None, json!({})).await;
        let meta: serde_json::Map<String, Value> = (0..10).map(|index| (format!("k{index}"), json!(index))).collect();
        let label = "é".repeat(256);
        api.flow(None, json!({ "sessionId": session, "label": label, "meta": meta })).await;

        let long = api.post("/flows", None, json!({ "label": "x".repeat(257) })).await;
        expect_error(&long, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        let meta: serde_json::Map<String, Value> = (0..11).map(|index| (format!("k{index}"), json!(index))).collect();
        expect_error(
            &api.post("/flows", None, json!({ "meta": meta })).await,
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
        );
        let unknown = api.post("/flows", None, json!({ "sessionId": "ses_nope" })).await;
        expect_error(&unknown, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
        expect_error(
            &api.post("/flows", None, json!({ "label": 5 })).await,
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
        );
    }

    #[tokio::test]
    async fn a_password_in_the_url_is_sent_as_basic_and_never_stored() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let flow = api.flow(None, json!({})).await;
        let port = upstream.addr().port();
        let content = format!("GET http://ada:lovelace@127.0.0.1:{port}/basic-auth\n");
        let reply = api.execute(json!({ "content": content, "flowId": flow })).await;
        let answer = ok(&reply, StatusCode::OK);
        assert_eq!(answer["response"]["status"], 200, "{answer}");
        let exec = answer["reqExecId"].as_str().expect("reqExecId");
        let reply = api.get(&format!("/flows/{flow}/executions/{exec}"), None).await;
        let stored = ok(&reply, StatusCode::OK);
        assert_eq!(stored["urlTemplate"], format!("http://ada:[REDACTED]@127.0.0.1:{port}/basic-auth"));
        assert_eq!(stored["urlResolved"], upstream.url("/basic-auth"));
        assert!(!stored.to_string().contains("lovelace"), "{stored}");
    }

    #[tokio::test]
    async fn a_stored_execution_has_the_protocol_shape_with_secrets_redacted() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let session = api.session(None, json!({ "user": "ada" })).await;
        let flow = api.flow(None, json!({ "sessionId": session, "label": "checkout" })).await;
        let content = format!(
            "@host = {}\n\n# @assert status == 200\nPOST {{{{host}}}}/echo?user={{{{user}}}}\nAuthorization: Bearer s3cret-value\nX-Api-Key: k3y\nX-Trace: abc\nContent-Type: application/json\n\n{{\"hello\": \"world\"}}\n",
            upstream.base_url()
        );
        let reply = api.execute(json!({ "content": content, "flowId": flow, "reqLabel": "create" })).await;
        let answer = ok(&reply, StatusCode::OK);
        assert_eq!(answer["flowId"], flow.as_str());
        // The flow's session is used when the body names none.
        assert_eq!(answer["session"]["sessionId"], session.as_str());
        let exec = answer["reqExecId"].as_str().expect("reqExecId");

        let reply = api.get(&format!("/flows/{flow}/executions/{exec}"), None).await;
        let stored = ok(&reply, StatusCode::OK);
        assert_eq!(stored["reqExecId"], exec);
        assert_eq!(stored["flowId"], flow.as_str());
        assert_eq!(stored["sessionId"], session.as_str());
        assert_eq!(stored["reqLabel"], "create");
        assert_eq!(stored["method"], "POST");
        assert_eq!(stored["urlTemplate"], "{{host}}/echo?user={{user}}");
        assert_eq!(stored["urlResolved"], upstream.url("/echo?user=ada"));
        assert_eq!(stored["status"], "success");
        assert!(stored.get("error").is_none());
        let headers = stored["headers"].as_array().expect("headers");
        let value_of =
            |name: &str| headers.iter().find(|entry| entry["name"] == name).map(|entry| entry["value"].clone());
        assert_eq!(value_of("authorization"), Some(json!("[REDACTED]")));
        assert_eq!(value_of("x-api-key"), Some(json!("[REDACTED]")));
        assert_eq!(value_of("x-trace"), Some(json!("abc")));
        assert!(!headers.iter().any(|entry| entry["value"].as_str().is_some_and(|value| value.contains("s3cret"))));
        assert_eq!(stored["bodyPreview"], r#"{"hello": "world"}"#);
        let timing = &stored["timing"];
        assert!(timing["startTime"].is_u64() && timing["endTime"].is_u64(), "{timing}");
        assert!(timing["durationMs"].is_number() && timing["ttfb"].is_number(), "{timing}");
        let response = &stored["response"];
        assert_eq!(response["status"], 200);
        assert_eq!(response["statusText"], "OK");
        assert!(
            response["headers"].as_array().is_some_and(|headers| headers.iter().all(|entry| entry["name"].is_string()))
        );
        assert!(response["body"].is_string());
        assert_eq!(response["encoding"], "utf-8");
        assert_eq!(response["truncated"], false);
        assert!(response["bodyBytes"].is_u64());
        assert_eq!(stored["assertions"]["passed"], true);
    }

    #[tokio::test]
    async fn secret_values_are_redacted_in_the_store_and_for_observers() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        api.workspace.write(".env", "MY_SECRET=hunter2\n");
        let flow = api.flow(None, json!({})).await;
        let observer = api.raw(request(Method::GET, &format!("/event?flowId={flow}"), None, None)).await;
        let mut events = observer.into_body().into_data_stream();
        let content =
            format!("GET {}?s={{{{$secret(MY_SECRET)}}}}\nX-S: {{{{$secret(MY_SECRET)}}}}\n", upstream.url("/echo"));
        let reply = api.execute(json!({ "content": content, "flowId": flow })).await;
        let exec = ok(&reply, StatusCode::OK)["reqExecId"].as_str().expect("id").to_owned();

        let reply = api.get(&format!("/flows/{flow}/executions/{exec}"), None).await;
        let stored = ok(&reply, StatusCode::OK);
        assert_eq!(stored["urlResolved"], upstream.url("/echo?s=[REDACTED]"));
        let headers = stored["headers"].as_array().expect("headers");
        assert!(headers.iter().any(|entry| entry["name"] == "x-s" && entry["value"] == "[REDACTED]"), "{headers:?}");
        assert!(!stored.to_string().contains("hunter2"), "{stored}");

        let mut seen = String::new();
        while !seen.contains("event: executionFinished\n") {
            let chunk = tokio::time::timeout(Duration::from_secs(10), events.next())
                .await
                .expect("events in time")
                .expect("the stream goes on")
                .expect("a readable chunk");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert!(seen.contains("event: fetchStarted\n"), "{seen}");
        assert!(!seen.contains("hunter2"), "{seen}");
    }

    #[tokio::test]
    async fn sensitive_variables_of_the_configuration_are_redacted_in_the_store() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        api.workspace.write(
            "volley.jsonc",
            r#"{
                "variables": { "apiKey": "k3y-from-config", "region": "eu-west" },
                "profiles": { "prod": { "variables": { "password": "pr0d-pass" } } }
            }"#,
        );
        let content = format!(
            "GET {}?key={{{{apiKey}}}}&p={{{{password}}}}&r={{{{region}}}}\nX-Pass: {{{{password}}}}\n",
            upstream.url("/echo")
        );
        let stored = execute_and_read_back(&api, json!({ "content": content, "profile": "prod" })).await;
        assert_eq!(stored["urlResolved"], upstream.url("/echo?key=[REDACTED]&p=[REDACTED]&r=eu-west"));
        let headers = stored["headers"].as_array().expect("headers");
        assert!(headers.iter().any(|entry| entry["name"] == "x-pass" && entry["value"] == "[REDACTED]"), "{headers:?}");
        assert!(
            !stored.to_string().contains("k3y-from-config") && !stored.to_string().contains("pr0d-pass"),
            "{stored:#}"
        );

        // JetBrains' private env file: the values people keep out of version control.
        let api = Api::open();
        api.workspace.write("http-client.env.json", r#"{ "dev": { "region": "us-east" } }"#);
        api.workspace.write("http-client.private.env.json", r#"{ "dev": { "clientSecret": "s3cret-dev" } }"#);
        api.workspace
            .write("client.http", &format!("GET {}?s={{{{clientSecret}}}}&r={{{{region}}}}\n", upstream.url("/echo")));
        let stored = execute_and_read_back(&api, json!({ "path": "client.http", "profile": "dev" })).await;
        assert_eq!(stored["urlResolved"], upstream.url("/echo?s=[REDACTED]&r=us-east"));
        assert!(!stored.to_string().contains("s3cret-dev"), "{stored}");

        // `.env` files, read as variables or through `$dotenv`.
        let api = Api::open();
        api.workspace.write(".env", "API_TOKEN=t0k3n-from-dotenv\nREGION=ap-south\n");
        let content = "GET {}?t={{API_TOKEN}}&d={{$dotenv API_TOKEN}}&r={{REGION}}\n";
        api.workspace.write("dotenv.http", &content.replace("{}", &upstream.url("/echo")));
        let stored = execute_and_read_back(&api, json!({ "path": "dotenv.http" })).await;
        assert_eq!(stored["urlResolved"], upstream.url("/echo?t=[REDACTED]&d=[REDACTED]&r=ap-south"));
        assert!(!stored.to_string().contains("t0k3n-from-dotenv"), "{stored}");
    }

    /// Executes `body` in a new flow and reads the stored execution back.
    async fn execute_and_read_back(api: &Api, mut body: Value) -> Value {
        let flow = api.flow(None, json!({})).await;
        body["flowId"] = json!(flow);
        let reply = api.execute(body).await;
        let exec = ok(&reply, StatusCode::OK)["reqExecId"].as_str().expect("reqExecId").to_owned();
        let reply = api.get(&format!("/flows/{flow}/executions/{exec}"), None).await;
        ok(&reply, StatusCode::OK).clone()
    }

    #[tokio::test]
    async fn unknown_executions_and_flows_are_404() {
        let api = Api::open();
        let flow = api.flow(None, json!({})).await;
        let reply = api.get(&format!("/flows/{flow}/executions/exec_nope"), None).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "EXECUTION_NOT_FOUND");
        let reply = api.get("/flows/flow_nope/executions/exec_nope", None).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "FLOW_NOT_FOUND");
        let reply = api.post("/flows/flow_nope/finish", None, json!({})).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "FLOW_NOT_FOUND");
    }

    #[tokio::test]
    async fn finish_summarises_the_outcomes() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let flow = api.flow(None, json!({})).await;
        let run = |content: String| api.execute(json!({ "content": content, "flowId": flow }));
        ok(&run(format!("GET {}", upstream.url("/echo"))).await, StatusCode::OK);
        ok(&run(format!("# @assert status == 201\nGET {}", upstream.url("/echo"))).await, StatusCode::OK);
        let refused = run(format!("GET http://127.0.0.1:{}/", unused_port())).await;
        expect_error(&refused, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
        let failed = refused.2["error"]["message"].clone();

        let reply = api.post(&format!("/flows/{flow}/finish"), None, json!({})).await;
        let body = ok(&reply, StatusCode::OK);
        assert_eq!(body["flowId"], flow.as_str());
        let summary = &body["summary"];
        assert_eq!(
            (summary["total"].clone(), summary["succeeded"].clone(), summary["failed"].clone()),
            (json!(3), json!(1), json!(2))
        );
        assert!(summary["durationMs"].is_u64());
        // Finishing again answers the same summary; without a body too.
        let again =
            read(api.raw(Request::post(format!("/flows/{flow}/finish")).body(Body::empty()).expect("request")).await)
                .await;
        assert_eq!(ok(&again, StatusCode::OK)["summary"], *summary);
        assert!(failed.is_string());
    }

    #[tokio::test]
    async fn a_failed_execution_is_stored_with_its_stage() {
        let api = Api::open();
        let flow = api.flow(None, json!({})).await;
        // The error answer carries no id: an observer of the flow learns it.
        let observer = api.raw(request(Method::GET, &format!("/event?flowId={flow}"), None, None)).await;
        let mut events = observer.into_body().into_data_stream();
        let answer =
            api.execute(json!({ "content": format!("GET http://127.0.0.1:{}/", unused_port()), "flowId": flow })).await;
        expect_error(&answer, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
        let failed = loop {
            let chunk = tokio::time::timeout(Duration::from_secs(10), events.next())
                .await
                .expect("events in time")
                .expect("the stream goes on")
                .expect("a readable chunk");
            let text = String::from_utf8(chunk.to_vec()).expect("UTF-8");
            if text.starts_with("event: executionFailed\n") {
                let data = text.lines().find_map(|line| line.strip_prefix("data: ")).expect("data");
                break serde_json::from_str::<Value>(data).expect("an envelope");
            }
        };
        assert_eq!(failed["flowId"], flow.as_str());
        assert_eq!(failed["payload"]["stage"], "fetch");
        let exec = failed["reqExecId"].as_str().expect("reqExecId");
        let reply = api.get(&format!("/flows/{flow}/executions/{exec}"), None).await;
        let stored = ok(&reply, StatusCode::OK);
        assert_eq!(stored["status"], "failed");
        assert_eq!(stored["error"]["stage"], "fetch");
        assert_eq!(stored["error"]["message"], answer.2["error"]["message"]);
        assert!(stored.get("response").is_none());
        assert!(stored["timing"]["endTime"].is_u64());
    }

    #[tokio::test]
    async fn at_the_cap_creating_a_flow_is_429_until_one_is_finished() {
        let api = Api::with(|config| config.max_flows = 2);
        let first = api.flow(None, json!({})).await;
        api.flow(None, json!({})).await;
        let reply = api.post("/flows", None, json!({})).await;
        expect_error(&reply, StatusCode::TOO_MANY_REQUESTS, "FLOW_LIMIT_REACHED");
        ok(&api.post(&format!("/flows/{first}/finish"), None, json!({})).await, StatusCode::OK);
        api.flow(None, json!({})).await;
        // The finished flow made room: it is gone.
        let reply = api.get(&format!("/flows/{first}/executions/exec_x"), None).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "FLOW_NOT_FOUND");
        expect_error(&api.post("/flows", None, json!({})).await, StatusCode::TOO_MANY_REQUESTS, "FLOW_LIMIT_REACHED");
    }
}

mod execute_sse {
    use super::*;

    #[tokio::test]
    async fn relays_the_upstream_events() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let content = format!("# @sse\nGET {}\n", upstream.url("/sse/events"));
        let response =
            api.raw(request(Method::POST, "/execute/sse", None, Some(json!({ "content": content }).to_string()))).await;
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers().clone();
        assert_eq!(header_value(&headers, "content-type"), Some("text/event-stream"));
        assert_eq!(header_value(&headers, "x-volley-upstream-status"), Some("200"));
        assert!(header_value(&headers, "x-volley-run-id").is_some_and(|id| !id.is_empty()));
        assert!(header_value(&headers, "x-volley-req-exec-id").is_some_and(|id| !id.is_empty()));
        let bytes =
            tokio::time::timeout(Duration::from_secs(20), axum::body::to_bytes(response.into_body(), usize::MAX))
                .await
                .expect("the stream ends with the upstream's")
                .expect("a readable stream");
        let text = String::from_utf8(bytes.to_vec()).expect("UTF-8 events");
        let events: Vec<&str> = text.split("\n\n").filter(|event| !event.is_empty()).collect();
        // Seven events, as the upstream sent them. The engine carries the last event id
        // onto events without an `id` line and the preamble's `retry` onto the first event,
        // which means the same to a client. The event with empty data keeps its `data`
        // field: without one a client would not dispatch it.
        assert_eq!(
            events,
            [
                "data: first\nid: 1\nretry: 3000",
                "data: {\"n\": 2}\nevent: update\nid: 2",
                "data: line one\ndata: line two\nid: 3",
                "data: no space after the colon\nid: 3",
                "data:  two leading spaces, one is kept\nevent: update\nid: 5",
                "data: \nid: 5",
                "data: last\nid: 7",
            ],
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_request_that_is_not_sse_is_an_execute_error() {
        let upstream = TestServer::start().await;
        let api = Api::open();
        let reply =
            api.post("/execute/sse", None, json!({ "content": format!("GET {}", upstream.url("/echo")) })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
        assert_eq!(reply.2["error"]["details"]["kind"], "not_event_stream");
        // An SSE request answered without a stream (an error status).
        let content = format!("# @sse\nGET {}\n", upstream.url("/sse/status/404"));
        let reply = api.post("/execute/sse", None, json!({ "content": content })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
        assert_eq!(reply.2["error"]["details"]["status"], 404);
    }

    #[tokio::test]
    async fn failures_before_the_stream_opens_are_plain_errors() {
        let api = Api::open();
        expect_error(
            &api.post("/execute/sse", None, json!({})).await,
            StatusCode::BAD_REQUEST,
            "CONTENT_OR_PATH_REQUIRED",
        );
        let content = format!("# @sse\nGET http://127.0.0.1:{}/\n", unused_port());
        let reply = api.post("/execute/sse", None, json!({ "content": content })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
        assert_eq!(reply.2["error"]["details"]["kind"], "connection_refused");
        let reply = api.post("/execute/sse", None, json!({ "content": content, "timeout": 5 })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }
}

mod events {
    use super::*;

    /// The first chunk of an endless event stream.
    async fn first_chunk(response: Response<Body>) -> String {
        let mut stream = response.into_body().into_data_stream();
        let chunk: Bytes = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("a first event in time")
            .expect("a first chunk")
            .expect("a readable chunk");
        String::from_utf8(chunk.to_vec()).expect("UTF-8")
    }

    #[tokio::test]
    async fn without_auth_the_stream_opens_with_connected() {
        let api = Api::open();
        let response = api.raw(request(Method::GET, "/event", None, None)).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header_value(response.headers(), "content-type"), Some("text/event-stream"));
        let first = first_chunk(response).await;
        assert!(first.starts_with("event: connected\n"), "{first}");

        let response = api.raw(request(Method::GET, "/event?flowId=flow_1&sessionId=ses_1", None, None)).await;
        let first = first_chunk(response).await;
        let data = first.lines().find_map(|line| line.strip_prefix("data: ")).expect("data");
        let data: Value = serde_json::from_str(data).expect("JSON");
        assert_eq!((data["flowId"].clone(), data["sessionId"].clone()), (json!("flow_1"), json!("ses_1")));
    }

    #[tokio::test]
    async fn under_auth_a_filter_is_required() {
        let api = Api::secured();
        expect_error(&api.get("/event", Some(MAIN)).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        let response = api.raw(request(Method::GET, "/event?sessionId=ses_1", Some(MAIN), None)).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(first_chunk(response).await.starts_with("event: connected\n"));
    }
}

mod auth {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::*;

    /// Every route, with ids that need not exist (authentication comes first).
    const ROUTES: [(&str, &str); 16] = [
        ("GET", "/health"),
        ("GET", "/capabilities"),
        ("GET", "/doc"),
        ("POST", "/execute"),
        ("POST", "/execute/sse"),
        ("POST", "/session"),
        ("GET", "/session/ses_x"),
        ("DELETE", "/session/ses_x"),
        ("PUT", "/session/ses_x/variables"),
        ("POST", "/flows"),
        ("POST", "/flows/flow_x/finish"),
        ("GET", "/flows/flow_x/executions/exec_x"),
        ("GET", "/event"),
        ("POST", "/tokens"),
        ("DELETE", "/tokens/tok_x"),
        ("GET", "/nope"),
    ];

    fn method(name: &str) -> Method {
        Method::from_bytes(name.as_bytes()).expect("a method")
    }

    /// A scoped token for `body`, with its `jti`.
    async fn scoped(api: &Api, body: Value) -> (String, String) {
        let reply = api.post("/tokens", Some(MAIN), body).await;
        let body = ok(&reply, StatusCode::CREATED);
        let token = body["token"].as_str().expect("token").to_owned();
        (token, body["jti"].as_str().expect("jti").to_owned())
    }

    #[tokio::test]
    async fn every_route_needs_the_token() {
        let api = Api::secured();
        for (name, path) in ROUTES {
            let reply = api.send(method(name), path, None, Some(json!({}))).await;
            expect_error(&reply, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
            let reply = api.send(method(name), path, Some("wrong-secret"), Some(json!({}))).await;
            expect_error(&reply, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
            let reply = api.send(method(name), path, Some(&format!("{MAIN}x")), Some(json!({}))).await;
            expect_error(&reply, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
            let reply = api.send(method(name), path, Some(""), Some(json!({}))).await;
            expect_error(&reply, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        }
    }

    #[tokio::test]
    async fn the_observer_page_needs_no_token_and_holds_no_data() {
        let api = Api::secured();
        for (path, kind) in [
            ("/", "text/html"),
            ("/ui", "text/html"),
            ("/ui/", "text/html"),
            ("/ui/observer.js", "text/javascript"),
            ("/ui/observer.css", "text/css"),
        ] {
            let (status, headers, body) = api.get(path, None).await;
            assert_eq!(status, StatusCode::OK, "{path}");
            let content_type = headers[header::CONTENT_TYPE].to_str().expect("ascii");
            assert!(content_type.starts_with(kind), "{path}: {content_type}");
            let policy = headers[header::CONTENT_SECURITY_POLICY].to_str().expect("ascii");
            assert!(policy.contains("script-src 'self'") && !policy.contains("unsafe"), "{policy}");
            assert_eq!(headers[header::CACHE_CONTROL], "no-cache");
            let text = body.as_str().expect("text");
            assert!(!text.contains(MAIN), "{path}");
        }
        let (_, _, page) = api.get("/", None).await;
        let page = page.as_str().expect("html").to_owned();
        assert!(page.contains(r#"<script type="module" src="/ui/observer.js">"#), "no inline script");
        // Everything else still needs the token: the page's data comes from these.
        for path in ["/event/ws", "/flows/flow_x/executions/exec_y", "/capabilities", "/ui/other", "/index.html"] {
            let reply = api.get(path, None).await;
            expect_error(&reply, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        }
    }

    #[tokio::test]
    async fn the_main_token_opens_the_routes() {
        let upstream = TestServer::start().await;
        let api = Api::secured();
        ok(&api.get("/health", Some(MAIN)).await, StatusCode::OK);
        ok(&api.get("/capabilities", Some(MAIN)).await, StatusCode::OK);
        ok(&api.get("/doc", Some(MAIN)).await, StatusCode::OK);
        let session = api.session(Some(MAIN), json!({})).await;
        ok(&api.get(&format!("/session/{session}"), Some(MAIN)).await, StatusCode::OK);
        let reply = api
            .send(
                Method::PUT,
                &format!("/session/{session}/variables"),
                Some(MAIN),
                Some(json!({ "variables": { "a": 1 } })),
            )
            .await;
        ok(&reply, StatusCode::OK);
        let flow = api.flow(Some(MAIN), json!({ "sessionId": session })).await;
        let reply = api
            .post(
                "/execute",
                Some(MAIN),
                json!({ "content": format!("GET {}", upstream.url("/echo")), "flowId": flow }),
            )
            .await;
        let exec = ok(&reply, StatusCode::OK)["reqExecId"].as_str().expect("id").to_owned();
        ok(&api.get(&format!("/flows/{flow}/executions/{exec}"), Some(MAIN)).await, StatusCode::OK);
        ok(&api.post(&format!("/flows/{flow}/finish"), Some(MAIN), json!({})).await, StatusCode::OK);
        // Unscoped executions are the main token's.
        let reply =
            api.post("/execute", Some(MAIN), json!({ "content": format!("GET {}", upstream.url("/echo")) })).await;
        ok(&reply, StatusCode::OK);
        // The scheme is case-insensitive.
        let lower = Request::get("/health")
            .header(header::AUTHORIZATION, format!("bearer {MAIN}"))
            .body(Body::empty())
            .expect("request");
        assert_eq!(api.raw(lower).await.status(), StatusCode::OK);
        let reply = api.send(Method::DELETE, &format!("/session/{session}"), Some(MAIN), None).await;
        assert_eq!(reply.0, StatusCode::NO_CONTENT);
    }

    #[tokio::test]
    async fn basic_auth_and_query_string_tokens_are_refused() {
        let api = Api::secured();
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("user:{MAIN}"));
        for value in [format!("Basic {basic}"), format!("Basic {MAIN}"), MAIN.to_owned(), format!("Token {MAIN}")] {
            let request =
                Request::get("/health").header(header::AUTHORIZATION, value).body(Body::empty()).expect("request");
            expect_error(&read(api.raw(request).await).await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        }
        for query in ["token", "access_token", "authorization", "bearer"] {
            let reply = api.get(&format!("/health?{query}={MAIN}"), None).await;
            expect_error(&reply, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        }
        // A bearer subprotocol with a wrong token does not open either.
        let wrong = format!("volley.bearer.{}", URL_SAFE_NO_PAD.encode("nope"));
        let request =
            Request::get("/health").header(header::SEC_WEBSOCKET_PROTOCOL, wrong).body(Body::empty()).expect("request");
        expect_error(&read(api.raw(request).await).await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    }

    #[tokio::test]
    async fn the_websocket_subprotocol_carries_the_token() {
        let api = Api::secured();
        let entry = format!("volley.bearer.{}", URL_SAFE_NO_PAD.encode(MAIN));
        for value in [entry.clone(), format!("volley.v1, {entry}")] {
            let request = Request::get("/health")
                .header(header::SEC_WEBSOCKET_PROTOCOL, value)
                .body(Body::empty())
                .expect("request");
            let reply = read(api.raw(request).await).await;
            assert_eq!(ok(&reply, StatusCode::OK)["healthy"], true);
        }
    }

    #[tokio::test]
    async fn issuing_a_scoped_token() {
        let api = Api::secured();
        let flow = api.flow(Some(MAIN), json!({})).await;
        let reply = api.post("/tokens", Some(MAIN), json!({ "flowId": flow, "ttlMs": 60_000 })).await;
        let body = ok(&reply, StatusCode::CREATED);
        let token = body["token"].as_str().expect("token");
        assert!(token.starts_with("script."), "{token}");
        assert_eq!(token.split('.').count(), 3, "{token}");
        let claims = token.split('.').nth(1).expect("claims part");
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).expect("base64url")).expect("JSON claims");
        assert_eq!(claims["flowId"], flow.as_str());
        assert_eq!(claims["jti"], body["jti"]);
        assert_eq!(claims["expiresAt"], body["expiresAt"]);
        let expires = body["expiresAt"].as_u64().expect("expiresAt");
        let created = claims["createdAt"].as_u64().expect("createdAt");
        assert_eq!(expires - created, 60_000);
        // Default lifetime: 15 minutes.
        let (token, _) = scoped(&api, json!({ "flowId": flow })).await;
        let claims = token.split('.').nth(1).expect("claims part");
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).expect("base64url")).expect("JSON claims");
        assert_eq!(
            claims["expiresAt"].as_u64().expect("exp") - claims["createdAt"].as_u64().expect("created"),
            900_000
        );
    }

    #[tokio::test]
    async fn a_scoped_token_is_refused_outside_its_scope() {
        let api = Api::secured();
        let session = api.session(Some(MAIN), json!({})).await;
        let flow = api.flow(Some(MAIN), json!({ "sessionId": session })).await;
        let (token, jti) = scoped(&api, json!({ "flowId": flow, "sessionId": session })).await;
        let token = Some(token.as_str());
        ok(&api.get("/health", token).await, StatusCode::OK);
        ok(&api.get("/capabilities", token).await, StatusCode::OK);
        let forbidden = [
            api.get("/doc", token).await,
            api.post("/session", token, json!({})).await,
            api.get(&format!("/session/{session}"), token).await,
            api.send(Method::DELETE, &format!("/session/{session}"), token, None).await,
            api.post("/flows", token, json!({ "sessionId": session })).await,
            api.post(&format!("/flows/{flow}/finish"), token, json!({})).await,
            api.post("/tokens", token, json!({ "flowId": flow })).await,
            api.send(Method::DELETE, &format!("/tokens/{jti}"), token, None).await,
        ];
        for reply in &forbidden {
            expect_error(reply, StatusCode::FORBIDDEN, "FORBIDDEN");
        }
        // Nothing above took effect.
        ok(&api.get(&format!("/session/{session}"), Some(MAIN)).await, StatusCode::OK);
        ok(&api.get("/health", token).await, StatusCode::OK);
    }

    #[tokio::test]
    async fn a_scoped_token_executes_in_its_own_flow() {
        let upstream = TestServer::start().await;
        let api = Api::secured();
        let session = api.session(Some(MAIN), json!({})).await;
        let flow = api.flow(Some(MAIN), json!({ "sessionId": session })).await;
        let other_session = api.session(Some(MAIN), json!({})).await;
        let other_flow = api.flow(Some(MAIN), json!({ "sessionId": other_session })).await;
        let (token, _) = scoped(&api, json!({ "flowId": flow })).await;
        let token = Some(token.as_str());
        let content = format!("GET {}", upstream.url("/echo"));

        // The body leaves out `flowId`: the token's flow (and its session) are used.
        let reply = api.post("/execute", token, json!({ "content": content })).await;
        let body = ok(&reply, StatusCode::OK);
        assert_eq!(body["flowId"], flow.as_str());
        assert_eq!(body["session"]["sessionId"], session.as_str());
        let exec = body["reqExecId"].as_str().expect("id").to_owned();
        let reply = api.post("/execute", token, json!({ "content": content, "flowId": flow })).await;
        ok(&reply, StatusCode::OK);

        for body in
            [json!({ "content": content, "flowId": other_flow }), json!({ "content": content, "flowId": "flow_nope" })]
        {
            expect_error(&api.post("/execute", token, body).await, StatusCode::FORBIDDEN, "FORBIDDEN");
        }
        // Its own flow with another session: the flow belongs to its own session.
        let reply = api.post("/execute", token, json!({ "content": content, "sessionId": other_session })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        let reply = api.post("/execute/sse", token, json!({ "content": content, "flowId": other_flow })).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "FORBIDDEN");

        // Reading executions: its own flow only.
        ok(&api.get(&format!("/flows/{flow}/executions/{exec}"), token).await, StatusCode::OK);
        let reply = api.get(&format!("/flows/{other_flow}/executions/{exec}"), token).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "FORBIDDEN");
    }

    #[tokio::test]
    async fn a_scoped_token_reads_only_the_allowed_environment_and_nobody_reads_the_token() {
        let upstream = TestServer::start().await;
        let api = Api::with(|config| {
            config.token = Some(MAIN.to_owned());
            config.environment = volley_engine::Environment::fixed([
                ("VOLLEY_TOKEN".to_owned(), MAIN.to_owned()),
                ("STASH".to_owned(), MAIN.to_owned()),
                ("PRIVATE".to_owned(), "private-value".to_owned()),
                ("ALLOWED".to_owned(), "allowed-value".to_owned()),
            ]);
            config.allow_env = vec!["ALLOWED".to_owned(), "VOLLEY_TOKEN".to_owned()];
        });
        let flow = api.flow(Some(MAIN), json!({})).await;
        let (token, _) = scoped(&api, json!({ "flowId": flow })).await;
        let content = format!(
            "GET {}?token={{{{$env(VOLLEY_TOKEN)}}}}&stash={{{{$processEnv STASH}}}}&private={{{{$env(PRIVATE)}}}}&allowed={{{{$env(ALLOWED)}}}}",
            upstream.url("/echo")
        );
        let query = |reply: &Reply| -> String {
            let echoed: Value =
                serde_json::from_str(ok(reply, StatusCode::OK)["response"]["body"].as_str().expect("text"))
                    .expect("echo");
            echoed["query"].as_str().expect("query").to_owned()
        };
        let scoped_reply = api.post("/execute", Some(token.as_str()), json!({ "content": content })).await;
        assert_eq!(query(&scoped_reply), "token=&stash=&private=&allowed=allowed-value");
        let main_reply = api.post("/execute", Some(MAIN), json!({ "content": content, "flowId": flow })).await;
        assert_eq!(query(&main_reply), "token=&stash=&private=private-value&allowed=allowed-value");
        // `$secret` is refused rather than empty when nothing it may read has the name.
        let secret = format!("GET {}?s={{{{$secret(PRIVATE)}}}}", upstream.url("/echo"));
        let reply = api.post("/execute", Some(token.as_str()), json!({ "content": secret })).await;
        assert!(reply.0.is_client_error(), "{}", reply.2);
        assert!(!reply.2.to_string().contains("private-value"), "{}", reply.2);
    }

    #[tokio::test]
    async fn nobody_reads_the_token_through_the_configuration_or_a_command_resolver() {
        let upstream = TestServer::start().await;
        let api = Api::with(|config| {
            config.token = Some(MAIN.to_owned());
            config.environment = volley_engine::Environment::fixed([
                ("VOLLEY_TOKEN".to_owned(), MAIN.to_owned()),
                ("STASH".to_owned(), format!("prefix-{MAIN}")),
                ("PRIVATE".to_owned(), "private-value".to_owned()),
                ("ALLOWED".to_owned(), "allowed-value".to_owned()),
            ]);
            config.allow_env = vec!["ALLOWED".to_owned(), "VOLLEY_TOKEN".to_owned()];
        });
        // The workspace's configuration is the operator's: `{env:NAME}` reads the
        // server's environment for every caller, but never the token.
        api.workspace.write(
            "volley.jsonc",
            r#"{
                "variables": { "token": "{env:VOLLEY_TOKEN}", "stash": "{env:STASH}", "private": "{env:PRIVATE}" },
                "resolvers": { "environment": { "type": "command",
                    "command": "printf '%s,%s,%s,%s' \"$VOLLEY_TOKEN\" \"$STASH\" \"$PRIVATE\" \"$ALLOWED\"" } }
            }"#,
        );
        let flow = api.flow(Some(MAIN), json!({})).await;
        let (scoped_token, _) = scoped(&api, json!({ "flowId": flow })).await;
        let content = format!(
            "GET {}?token={{{{token}}}}&stash={{{{stash}}}}&private={{{{private}}}}&command={{{{$environment}}}}",
            upstream.url("/echo")
        );
        // Who calls, and what the configuration and the command's process give them.
        let matrix = [
            (MAIN, "token=&stash=&private=private-value&command=,,private-value,allowed-value"),
            (scoped_token.as_str(), "token=&stash=&private=private-value&command=,,,allowed-value"),
        ];
        for (token, query) in matrix {
            let reply = api.post("/execute", Some(token), json!({ "content": content, "flowId": flow })).await;
            assert_eq!(echoed_query(&reply), query, "{}", reply.2);
            assert!(!reply.2.to_string().contains(MAIN), "{}", reply.2);
        }
    }

    #[tokio::test]
    async fn a_session_scoped_token_executes_in_its_session_only() {
        let upstream = TestServer::start().await;
        let api = Api::secured();
        let session = api.session(Some(MAIN), json!({ "who": "mine" })).await;
        let other = api.session(Some(MAIN), json!({})).await;
        let (token, _) = scoped(&api, json!({ "sessionId": session })).await;
        let token = Some(token.as_str());
        let content = format!("GET {}?who={{{{who}}}}", upstream.url("/echo"));
        let reply = api.post("/execute", token, json!({ "content": content })).await;
        assert_eq!(echoed_query(&reply), "who=mine");
        assert_eq!(reply.2["session"]["sessionId"], session.as_str());
        let reply = api.post("/execute", token, json!({ "content": content, "sessionId": other })).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "FORBIDDEN");
        // Flows: those of its own session only.
        let own_flow = api.flow(Some(MAIN), json!({ "sessionId": session })).await;
        let reply = api.post("/execute", token, json!({ "content": content, "flowId": own_flow })).await;
        assert_eq!(ok(&reply, StatusCode::OK)["flowId"], own_flow.as_str());
        for flow in [api.flow(Some(MAIN), json!({ "sessionId": other })).await, api.flow(Some(MAIN), json!({})).await] {
            let reply = api.post("/execute", token, json!({ "content": content, "flowId": flow })).await;
            expect_error(&reply, StatusCode::FORBIDDEN, "FORBIDDEN");
        }
        // Observers need a flow of their own.
        let reply = api.get(&format!("/event?sessionId={session}"), token).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "FORBIDDEN");
    }

    #[tokio::test]
    async fn a_scoped_token_sets_the_variables_of_its_own_session_only() {
        let api = Api::secured();
        let session = api.session(Some(MAIN), json!({})).await;
        let other = api.session(Some(MAIN), json!({})).await;
        let flow = api.flow(Some(MAIN), json!({ "sessionId": session })).await;
        let (token, _) = scoped(&api, json!({ "flowId": flow, "sessionId": session })).await;
        let token = Some(token.as_str());
        let body = json!({ "variables": { "a": 1 } });
        let reply = api.send(Method::PUT, &format!("/session/{session}/variables"), token, Some(body.clone())).await;
        assert_eq!(ok(&reply, StatusCode::OK)["sessionId"], session.as_str());
        let reply = api.send(Method::PUT, &format!("/session/{other}/variables"), token, Some(body.clone())).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "FORBIDDEN");
        // A flow-only token has no session to change.
        let (flow_only, _) = scoped(&api, json!({ "flowId": flow })).await;
        let reply = api.send(Method::PUT, &format!("/session/{session}/variables"), Some(&flow_only), Some(body)).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "FORBIDDEN");
    }

    #[tokio::test]
    async fn a_scoped_token_observes_its_own_flow_only() {
        let api = Api::secured();
        let flow = api.flow(Some(MAIN), json!({})).await;
        let other = api.flow(Some(MAIN), json!({})).await;
        let (token, _) = scoped(&api, json!({ "flowId": flow })).await;
        let response = api.raw(request(Method::GET, &format!("/event?flowId={flow}"), Some(&token), None)).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header_value(response.headers(), "content-type"), Some("text/event-stream"));
        drop(response);
        expect_error(&api.get("/event", Some(&token)).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        let reply = api.get(&format!("/event?flowId={other}"), Some(&token)).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "FORBIDDEN");
    }

    #[tokio::test]
    async fn expired_revoked_and_tampered_tokens_are_401() {
        let api = Api::secured();
        let flow = api.flow(Some(MAIN), json!({})).await;
        let other = api.flow(Some(MAIN), json!({})).await;

        let (expiring, _) = scoped(&api, json!({ "flowId": flow, "ttlMs": 1 })).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        expect_error(&api.get("/health", Some(&expiring)).await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");

        let (revoked, jti) = scoped(&api, json!({ "flowId": flow })).await;
        ok(&api.get("/health", Some(&revoked)).await, StatusCode::OK);
        let reply = api.send(Method::DELETE, &format!("/tokens/{jti}"), Some(MAIN), None).await;
        assert_eq!(reply.0, StatusCode::NO_CONTENT);
        expect_error(&api.get("/health", Some(&revoked)).await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        let reply = api.send(Method::DELETE, &format!("/tokens/{jti}"), Some(MAIN), None).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "NOT_FOUND");

        // Claims rewritten to another flow keep the old signature: refused.
        let (token, _) = scoped(&api, json!({ "flowId": flow })).await;
        let mut parts = token.split('.');
        let (prefix, claims, signature) =
            (parts.next().expect("prefix"), parts.next().expect("claims"), parts.next().expect("signature"));
        let mut decoded: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).expect("base64url")).expect("JSON");
        decoded["flowId"] = json!(other);
        let forged = format!("{prefix}.{}.{signature}", URL_SAFE_NO_PAD.encode(decoded.to_string()));
        expect_error(&api.get("/health", Some(&forged)).await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        let mut flipped = token.clone();
        let last = flipped.pop().expect("a last character");
        flipped.push(if last == 'A' { 'B' } else { 'A' });
        expect_error(&api.get("/health", Some(&flipped)).await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        for broken in ["script.", "script.abc", "script..", "script.e30.x"] {
            expect_error(&api.get("/health", Some(broken)).await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        }
        // A token signed by another server.
        let elsewhere = Api::with(|config| config.token = Some("another-secret".to_owned()));
        let flow_elsewhere = elsewhere.flow(Some("another-secret"), json!({})).await;
        let reply = elsewhere.post("/tokens", Some("another-secret"), json!({ "flowId": flow_elsewhere })).await;
        let foreign = ok(&reply, StatusCode::CREATED)["token"].as_str().expect("token").to_owned();
        expect_error(&api.get("/health", Some(&foreign)).await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        ok(&api.get("/health", Some(&token)).await, StatusCode::OK);
    }

    #[tokio::test]
    async fn token_requests_are_validated() {
        let api = Api::secured();
        let flow = api.flow(Some(MAIN), json!({})).await;
        for body in [
            json!({}),
            json!({ "ttlMs": 1000 }),
            json!({ "flowId": flow, "ttlMs": 0 }),
            json!({ "flowId": flow, "ttlMs": 86_400_001 }),
            json!({ "flowId": flow, "ttlMs": "1000" }),
        ] {
            expect_error(&api.post("/tokens", Some(MAIN), body).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        }
        ok(&api.post("/tokens", Some(MAIN), json!({ "flowId": flow, "ttlMs": 86_400_000 })).await, StatusCode::CREATED);
        let reply = api.post("/tokens", Some(MAIN), json!({ "flowId": "flow_nope" })).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "FLOW_NOT_FOUND");
        let reply = api.post("/tokens", Some(MAIN), json!({ "sessionId": "ses_nope" })).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
        let reply = api.send(Method::DELETE, "/tokens/tok_nope", Some(MAIN), None).await;
        expect_error(&reply, StatusCode::NOT_FOUND, "NOT_FOUND");
    }

    #[tokio::test]
    async fn a_server_without_a_token_issues_none() {
        let api = Api::open();
        let flow = api.flow(None, json!({})).await;
        let reply = api.post("/tokens", None, json!({ "flowId": flow })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        // An open server ignores whatever token is sent.
        ok(&api.get("/health", Some("anything")).await, StatusCode::OK);
    }
}

mod cors {
    use super::*;

    fn preflight(origin: &str) -> Request<Body> {
        Request::builder()
            .method(Method::OPTIONS)
            .uri("/execute")
            .header(header::ORIGIN, origin)
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
            .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "authorization, content-type")
            .body(Body::empty())
            .expect("request")
    }

    #[tokio::test]
    async fn a_local_preflight_needs_no_token() {
        let api = Api::secured();
        for origin in ["http://localhost:5173", "http://127.0.0.1:8080", "http://localhost"] {
            let response = api.raw(preflight(origin)).await;
            assert!(response.status().is_success(), "{origin}: {}", response.status());
            let headers = response.headers();
            assert_eq!(header_value(headers, "access-control-allow-origin"), Some(origin));
            let methods =
                header_value(headers, "access-control-allow-methods").unwrap_or_default().to_ascii_uppercase();
            assert!(methods.contains("POST"), "{methods}");
            let allowed =
                header_value(headers, "access-control-allow-headers").unwrap_or_default().to_ascii_lowercase();
            assert!(allowed.contains("authorization") && allowed.contains("content-type"), "{allowed}");
        }
        // The actual request still needs the token, and carries the CORS headers.
        let unauthorized = Request::get("/health")
            .header(header::ORIGIN, "http://localhost:5173")
            .body(Body::empty())
            .expect("request");
        let response = api.raw(unauthorized).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(header_value(response.headers(), "access-control-allow-origin"), Some("http://localhost:5173"));
        let authorized = Request::get("/health")
            .header(header::ORIGIN, "http://localhost:5173")
            .header(header::AUTHORIZATION, format!("Bearer {MAIN}"))
            .body(Body::empty())
            .expect("request");
        let response = api.raw(authorized).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header_value(response.headers(), "access-control-allow-origin"), Some("http://localhost:5173"));
    }

    #[tokio::test]
    async fn a_foreign_origin_is_not_allowed() {
        let api = Api::secured();
        for origin in ["http://evil.example", "https://localhost:5173", "http://localhost.evil.example"] {
            let response = api.raw(preflight(origin)).await;
            assert!(response.headers().get("access-control-allow-origin").is_none(), "{origin}");
        }
    }

    #[tokio::test]
    async fn a_configured_origin_is_allowed() {
        let api = Api::with(|config| {
            config.token = Some(MAIN.to_owned());
            config.cors = vec!["https://app.example.com".to_owned()];
        });
        let response = api.raw(preflight("https://app.example.com")).await;
        assert_eq!(header_value(response.headers(), "access-control-allow-origin"), Some("https://app.example.com"));
        let response = api.raw(preflight("https://other.example.com")).await;
        assert!(response.headers().get("access-control-allow-origin").is_none());
    }
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
