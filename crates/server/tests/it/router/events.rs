//! `/event`: the observer stream and its filters.

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
