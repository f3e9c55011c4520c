//! `POST /execute/sse`: the upstream's events relayed.

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
    let bytes = tokio::time::timeout(Duration::from_secs(20), axum::body::to_bytes(response.into_body(), usize::MAX))
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
    let reply = api.post("/execute/sse", None, json!({ "content": format!("GET {}", upstream.url("/echo")) })).await;
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
    expect_error(&api.post("/execute/sse", None, json!({})).await, StatusCode::BAD_REQUEST, "CONTENT_OR_PATH_REQUIRED");
    let content = format!("# @sse\nGET http://127.0.0.1:{}/\n", unused_port());
    let reply = api.post("/execute/sse", None, json!({ "content": content })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
    assert_eq!(reply.2["error"]["details"]["kind"], "connection_refused");
    let reply = api.post("/execute/sse", None, json!({ "content": content, "timeout": 5 })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
}
