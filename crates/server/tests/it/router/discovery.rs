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
