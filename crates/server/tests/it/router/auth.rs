//! Authentication: the main token, scoped tokens and what each may reach.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::*;

/// Every route, with ids that need not exist (authentication comes first).
const ROUTES: [(&str, &str); 35] = [
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
    ("GET", "/flows"),
    ("GET", "/flows/flow_x/executions"),
    ("GET", "/flows/flow_x/executions/exec_x"),
    ("GET", "/event"),
    ("POST", "/tokens"),
    ("DELETE", "/tokens/tok_x"),
    ("GET", "/config"),
    ("GET", "/plugins"),
    ("POST", "/parse"),
    ("GET", "/workspace/files"),
    ("GET", "/workspace/requests"),
    ("GET", "/workspace/file"),
    ("POST", "/workspace/file"),
    ("PUT", "/workspace/file"),
    ("DELETE", "/workspace/file"),
    ("POST", "/import/curl/preview"),
    ("POST", "/import/curl/apply"),
    ("POST", "/script"),
    ("GET", "/script/runners"),
    ("DELETE", "/script/run_x"),
    ("POST", "/test"),
    ("GET", "/test/frameworks"),
    ("DELETE", "/test/run_x"),
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
    for path in ["/health", "/capabilities", "/doc"] {
        ok(&api.get(path, Some(MAIN)).await, StatusCode::OK);
    }
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
        .post("/execute", Some(MAIN), json!({ "content": format!("GET {}", upstream.url("/echo")), "flowId": flow }))
        .await;
    let exec = ok(&reply, StatusCode::OK)["reqExecId"].as_str().expect("id").to_owned();
    ok(&api.get(&format!("/flows/{flow}/executions/{exec}"), Some(MAIN)).await, StatusCode::OK);
    ok(&api.post(&format!("/flows/{flow}/finish"), Some(MAIN), json!({})).await, StatusCode::OK);
    // Unscoped executions are the main token's.
    let reply = api.post("/execute", Some(MAIN), json!({ "content": format!("GET {}", upstream.url("/echo")) })).await;
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
        let request =
            Request::get("/health").header(header::SEC_WEBSOCKET_PROTOCOL, value).body(Body::empty()).expect("request");
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
    assert_eq!(claims["expiresAt"].as_u64().expect("exp") - claims["createdAt"].as_u64().expect("created"), 900_000);
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
        api.get("/flows", token).await,
        api.get("/flows/flow_other/executions", token).await,
        api.post("/tokens", token, json!({ "flowId": flow })).await,
        api.send(Method::DELETE, &format!("/tokens/{jti}"), token, None).await,
    ];
    for reply in &forbidden {
        expect_error(reply, StatusCode::FORBIDDEN, "FORBIDDEN");
    }
    // Nothing above took effect.
    ok(&api.get(&format!("/session/{session}"), Some(MAIN)).await, StatusCode::OK);
    // Its own flow's executions it reads.
    ok(&api.get(&format!("/flows/{flow}/executions"), token).await, StatusCode::OK);
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
        config.environment = volley_engine::resolvers::Environment::fixed([
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
            serde_json::from_str(ok(reply, StatusCode::OK)["response"]["body"].as_str().expect("text")).expect("echo");
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
        config.environment = volley_engine::resolvers::Environment::fixed([
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
    let mut decoded: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).expect("base64url")).expect("JSON");
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
        json!({ "flowId": flow, "ttlMs": 1000.5 }),
    ] {
        expect_error(&api.post("/tokens", Some(MAIN), body).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }
    ok(&api.post("/tokens", Some(MAIN), json!({ "flowId": flow, "ttlMs": 86_400_000 })).await, StatusCode::CREATED);
    // The document types it `integer`, which `60000.0` is (found by schemathesis).
    ok(&api.post("/tokens", Some(MAIN), json!({ "flowId": flow, "ttlMs": 60_000.0 })).await, StatusCode::CREATED);
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
