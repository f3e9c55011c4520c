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

/// The `data` of each event of a stream (skipping `connected`), read until `count` came.
async fn flow_events(response: Response<Body>, count: usize) -> Vec<(String, Value)> {
    let mut stream = response.into_body().into_data_stream();
    let mut text = String::new();
    loop {
        let events: Vec<(String, Value)> = text
            .split("\n\n")
            .filter_map(|event| {
                let id = event.lines().find_map(|line| line.strip_prefix("id: "))?;
                let data = event.lines().find_map(|line| line.strip_prefix("data: "))?;
                Some((id.to_owned(), serde_json::from_str(data).ok()?))
            })
            .collect();
        if events.len() >= count {
            return events;
        }
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("events in time")
            .expect("a chunk")
            .expect("a readable chunk");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
}

#[tokio::test]
async fn a_flow_subscriber_gets_the_events_published_before_it_came_then_the_live_ones() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    let flow = api.flow(None, json!({})).await;
    let content = format!("GET {}/echo\n", upstream.base_url());
    ok(&api.execute(json!({ "content": content, "flowId": flow })).await, StatusCode::OK);
    // Subscribed after the execution, as a client that does not wait for its stream.
    let response = api.raw(request(Method::GET, &format!("/event?flowId={flow}"), None, None)).await;
    let replayed = flow_events(response, 2).await;
    let kinds: Vec<&str> = replayed.iter().map(|(_, event)| event["type"].as_str().unwrap_or_default()).collect();
    assert_eq!(&kinds[..2], ["flowStarted", "requestQueued"], "{kinds:?}");
    assert_eq!(replayed[0].0, format!("{flow}:1"));

    // A reconnection with Last-Event-ID gets what came after it, then live events, once each.
    let mut resume = request(Method::GET, &format!("/event?flowId={flow}"), None, None);
    resume.headers_mut().insert("last-event-id", format!("{flow}:2").parse().expect("header"));
    let response = api.raw(resume).await;
    let finish = api.post(&format!("/flows/{flow}/finish"), None, json!({})).await;
    ok(&finish, StatusCode::OK);
    let events = flow_events(response, 3).await;
    let seqs: Vec<u64> = events.iter().map(|(_, event)| event["seq"].as_u64().expect("seq")).collect();
    assert_eq!(seqs.first(), Some(&3), "{seqs:?}");
    let mut unique = seqs.clone();
    unique.dedup();
    assert_eq!(unique, seqs, "no event twice");
    assert!(seqs.windows(2).all(|pair| pair[0] < pair[1]), "{seqs:?}");
}
