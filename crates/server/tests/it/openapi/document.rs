//! What the document says about the server as a whole, each held to the server: security
//! only when it has a token, the routes it answers `501`, the import sources it converts,
//! the range of the `seq` it reads.

use axum::body::Body;
use http::{Method, Request, header};
use serde_json::Value;
use tower::ServiceExt as _;
use volley_server::ServerConfig;

/// A server over an empty workspace, with `token` or without one; removed on drop.
struct Server {
    router: axum::Router,
    token: Option<&'static str>,
    root: std::path::PathBuf,
}

impl Server {
    fn new(token: Option<&'static str>) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let number = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("volley-openapi-document-{}-{number}", std::process::id()));
        std::fs::create_dir_all(&root).expect("workspace");
        let config = ServerConfig {
            workspace: root.canonicalize().expect("canonical"),
            token: token.map(str::to_owned),
            ..ServerConfig::default()
        };
        crate::support::install_http();
        Self { router: volley_server::router(config).expect("a router"), token, root }
    }

    async fn send(&self, method: Method, path: &str, body: Option<&Value>) -> (u16, Value) {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(token) = self.token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let body = match body {
            Some(body) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Body::from(body.to_string())
            }
            None => Body::empty(),
        };
        let response = self.router.clone().oneshot(request.body(body).expect("request")).await.expect("infallible");
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("a body");
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    async fn document(&self) -> Value {
        let (status, document) = self.send(Method::GET, "/doc", None).await;
        assert_eq!(status, 200, "{document}");
        document
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Every operation of the document: path, method, operation.
fn operations(document: &Value) -> Vec<(String, String, Value)> {
    let mut all = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            all.push((path.clone(), method.clone(), operation.clone()));
        }
    }
    all
}

#[tokio::test]
async fn security_is_declared_only_by_a_server_with_a_token() {
    let secured = Server::new(Some("main-secret")).document().await;
    assert_eq!(secured["security"], serde_json::json!([{ "bearer": [] }]));
    assert_eq!(secured["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    for (path, method, operation) in operations(&secured) {
        assert!(operation["responses"].get("401").is_some(), "{method} {path} declares 401");
    }
    assert!(secured["paths"]["/tokens"].get("post").is_some());

    let server = Server::new(None);
    let open = server.document().await;
    assert!(open.get("security").is_none(), "no security: {}", open["security"]);
    assert!(open["components"].get("securitySchemes").is_none(), "{}", open["components"]["securitySchemes"]);
    for (path, method, operation) in operations(&open) {
        assert!(operation["responses"].get("401").is_none(), "{method} {path} never answers 401");
    }
    // Nothing to sign tokens with: the route is left out, and the server refuses it.
    assert!(open["paths"]["/tokens"].get("post").is_none(), "{}", open["paths"]["/tokens"]);
    let (status, _) = server.send(Method::POST, "/tokens", Some(&serde_json::json!({ "flowId": "f" }))).await;
    assert_eq!(status, 400);
    // The observer streams take no filter too.
    for path in ["/event", "/event/ws"] {
        let filters = &open["paths"][path]["get"]["parameters"][0];
        assert_eq!(filters["name"], "filters");
        assert!(filters["schema"].get("allOf").is_none(), "{path}: {}", filters["schema"]);
    }
    let (status, _) = server.send(Method::GET, "/event/ws", None).await;
    assert_ne!(status, 401);
    // The library's document is the one each serves.
    let library = |token| serde_json::from_str::<Value>(&volley_server::openapi_json(token)).expect("JSON");
    assert_eq!(library(true), secured);
    assert_eq!(library(false), open);
}

#[tokio::test]
async fn the_routes_not_served_declare_their_501() {
    let server = Server::new(Some("main-secret"));
    let document = server.document().await;
    for (method, path, concrete) in [
        (Method::POST, "/script", "/script"),
        (Method::DELETE, "/script/{runId}", "/script/run_1"),
        (Method::POST, "/test", "/test"),
        (Method::DELETE, "/test/{runId}", "/test/run_1"),
    ] {
        let operation = &document["paths"][path][method.as_str().to_lowercase()];
        assert!(operation["responses"].get("501").is_some(), "{method} {path}: {operation}");
        let (status, body) = server.send(method.clone(), concrete, Some(&serde_json::json!({}))).await;
        assert_eq!((status, body["error"]["code"].as_str()), (501, Some("NOT_IMPLEMENTED")), "{method} {path}");
    }
}

#[tokio::test]
async fn import_sources_are_enumerated_as_the_server_converts_them() {
    let server = Server::new(None);
    let document = server.document().await;
    let body = serde_json::json!({ "input": "curl http://127.0.0.1:9/x", "planOptions": { "outputDir": "out" } });
    for path in ["/import/{source}/preview", "/import/{source}/apply"] {
        let source = &document["paths"][path]["post"]["parameters"][0];
        assert_eq!(source["name"], "source");
        let names: Vec<&str> =
            source["schema"]["enum"].as_array().expect("an enum").iter().filter_map(Value::as_str).collect();
        assert_eq!(names, ["curl", "har", "postman", "insomnia", "openapi"], "{path}");
        for name in names {
            let (status, answer) = server.send(Method::POST, &format!("/import/{name}/preview"), Some(&body)).await;
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(!message.contains("unknown import source"), "{name}: {status} {answer}");
        }
    }
    let (status, answer) = server.send(Method::POST, "/import/yaml/preview", Some(&body)).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (400, Some("VALIDATION_ERROR")));
}

#[tokio::test]
async fn after_seq_is_documented_as_the_unsigned_64_bit_integer_the_server_reads() {
    let server = Server::new(None);
    let document = server.document().await;
    let observer = &document["paths"]["/event/ws"]["get"]["parameters"][0]["schema"]["properties"]["afterSeq"];
    let session = document["paths"]["/ws/session/{wsSessionId}"]["get"]["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .find(|parameter| parameter["name"] == "afterSeq")
        .expect("afterSeq")["schema"]
        .clone();
    for schema in [observer, &session] {
        assert_eq!(schema["minimum"], 0, "{schema}");
        assert_eq!(schema["maximum"].as_u64(), Some(u64::MAX), "{schema}");
        assert!(schema.get("format").is_none(), "not int64, whose maximum is lower: {schema}");
    }
    // The largest is read (the route then wants the handshake); one more is refused.
    let (_, largest) = server.send(Method::GET, &format!("/event/ws?flowId=f&afterSeq={}", u64::MAX), None).await;
    let message = largest["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("upgrade"), "{largest}");
    let (status, over) = server.send(Method::GET, "/event/ws?flowId=f&afterSeq=18446744073709551616", None).await;
    assert_eq!((status, over["error"]["code"].as_str()), (400, Some("VALIDATION_ERROR")), "{over}");
}

#[tokio::test]
async fn the_workspace_file_pattern_takes_the_paths_the_server_writes() {
    let server = Server::new(None);
    let document = server.document().await;
    let checker = super::schema::Document::new(&document);
    let body_schema = |name: &str| document["components"]["schemas"][name]["properties"]["path"].clone();
    let query = document["paths"]["/workspace/file"]["delete"]["parameters"][0]["schema"].clone();
    // A name of only an extension is a hidden file without one (as `Path::extension` reads it).
    for (path, written) in [
        ("a.http", true),
        ("dir/b.REST", true),
        ("..http", true),
        (".http", false),
        ("dir/.HTTP", false),
        ("a.txt", false),
    ] {
        for schema in [body_schema("CreateFile"), body_schema("UpdateFile"), query.clone()] {
            assert_eq!(checker.check(&schema, &Value::from(path)).is_ok(), written, "{path}: {schema}");
        }
        let body = serde_json::json!({ "path": path, "content": "" });
        let (status, answer) = server.send(Method::POST, "/workspace/file", Some(&body)).await;
        assert_eq!(status != 400, written, "{path}: {status} {answer}");
    }
}
