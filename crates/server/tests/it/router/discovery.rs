//! `/health`, `/capabilities` and `/doc`.

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
    // A server with a token documents every route (one without leaves out `POST /tokens`).
    let api = Api::secured();
    let reply = api.get("/doc", Some(MAIN)).await;
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
        ("/flows", "get"),
        ("/flows/{id}/finish", "post"),
        ("/flows/{id}/executions", "get"),
        ("/flows/{id}/executions/{exec}", "get"),
        ("/event", "get"),
        ("/tokens", "post"),
        ("/tokens/{jti}", "delete"),
        ("/execute/ws", "post"),
        ("/ws/session/{wsSessionId}", "get"),
        ("/event/ws", "get"),
        ("/config", "get"),
        ("/plugins", "get"),
        ("/parse", "post"),
        ("/workspace/files", "get"),
        ("/workspace/requests", "get"),
        ("/workspace/file", "get"),
        ("/workspace/file", "post"),
        ("/workspace/file", "put"),
        ("/workspace/file", "delete"),
        ("/import/{source}/preview", "post"),
        ("/import/{source}/apply", "post"),
        ("/script", "post"),
        ("/script/runners", "get"),
        ("/script/{runId}", "delete"),
        ("/test", "post"),
        ("/test/frameworks", "get"),
        ("/test/{runId}", "delete"),
    ];
    for (path, method) in routes {
        assert!(paths.get(path).and_then(|item| item.get(method)).is_some(), "{method} {path} is documented");
    }
    assert_eq!(paths.len(), 32, "no undocumented or stale paths: {:?}", paths.keys().collect::<Vec<_>>());
    // The same document as the library function.
    let library: Value = serde_json::from_str(&volley_server::openapi_json(true)).expect("JSON");
    assert_eq!(library, *body);
}

/// Requests no route takes, each answered in the one error shape.
#[tokio::test]
async fn unknown_routes_are_404_and_wrong_methods_405() {
    let api = Api::open();
    let cases = [
        (Method::GET, "/nope", StatusCode::NOT_FOUND, "NOT_FOUND"),
        (Method::POST, "/execute/nope", StatusCode::NOT_FOUND, "NOT_FOUND"),
        (Method::GET, "/execute", StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED"),
        (Method::POST, "/health", StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED"),
        (Method::PUT, "/session", StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED"),
    ];
    for (method, path, status, code) in cases {
        let body = (method != Method::GET).then(|| json!({}));
        expect_error(&api.send(method, path, None, body).await, status, code);
    }
}
