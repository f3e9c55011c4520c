//! `/sessions`: creation, variables, snapshot versions, removal.

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
    let reply = api.execute(json!({ "content": format!("GET {}", upstream.url("/echo")), "sessionId": session })).await;
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
    assert_eq!(ok(&api.get(&view_path, None).await, StatusCode::OK)["variables"], json!({ "a": 1, "b": 3, "c": 4 }));

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
