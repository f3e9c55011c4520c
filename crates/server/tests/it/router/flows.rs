//! `/flows` and the execution store of a flow.

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
    expect_error(&api.post("/flows", None, json!({ "meta": meta })).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    let unknown = api.post("/flows", None, json!({ "sessionId": "ses_nope" })).await;
    expect_error(&unknown, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
    expect_error(&api.post("/flows", None, json!({ "label": 5 })).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
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
    let value_of = |name: &str| headers.iter().find(|entry| entry["name"] == name).map(|entry| entry["value"].clone());
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
    assert!(!stored.to_string().contains("k3y-from-config") && !stored.to_string().contains("pr0d-pass"), "{stored:#}");

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
        read(api.raw(Request::post(format!("/flows/{flow}/finish")).body(Body::empty()).expect("request")).await).await;
    assert_eq!(ok(&again, StatusCode::OK)["summary"], *summary);
    assert!(failed.is_string());

    // The listing has the flow, finished, with the same summary; its executions in the
    // order they ran, with their outcome and without bodies.
    let other = api.flow(None, json!({ "label": "later" })).await;
    let reply = api.get("/flows", None).await;
    let listed = ok(&reply, StatusCode::OK);
    let flows = listed["flows"].as_array().expect("flows");
    let ids: Vec<_> = flows.iter().map(|flow| flow["flowId"].as_str().expect("an id")).collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(ids.contains(&flow.as_str()) && ids.contains(&other.as_str()), "{listed}");
    let listing = flows.iter().find(|listed| listed["flowId"] == flow.as_str()).expect("the flow");
    assert_eq!((listing["finished"].clone(), listing["summary"].clone()), (json!(true), summary.clone()));
    assert!(listing["createdAt"].is_u64());
    let reply = api.get(&format!("/flows/{flow}/executions"), None).await;
    let executions = ok(&reply, StatusCode::OK);
    let executions = executions["executions"].as_array().expect("executions");
    let statuses: Vec<_> = executions.iter().map(|stored| stored["status"].as_str().expect("a status")).collect();
    assert_eq!(statuses, ["success", "failed", "failed"]);
    assert_eq!(executions[0]["response"]["status"], 200);
    assert!(executions[0]["response"].get("body").is_none(), "{}", executions[0]);
    assert_eq!(executions[2]["error"]["kind"], "connection_refused", "{}", executions[2]);
    let unknown = api.get("/flows/flow_nope/executions", None).await;
    expect_error(&unknown, StatusCode::NOT_FOUND, "FLOW_NOT_FOUND");
}

#[tokio::test]
async fn flows_are_listed_by_session() {
    let api = Api::open();
    let session = api.session(None, json!({})).await;
    let mine = api.flow(None, json!({ "sessionId": session })).await;
    api.flow(None, json!({})).await;
    let reply = api.get(&format!("/flows?sessionId={session}"), None).await;
    let listed = ok(&reply, StatusCode::OK);
    assert_eq!(listed["flows"].as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed["flows"][0]["flowId"], mine.as_str());
    assert_eq!(listed["flows"][0]["sessionId"], session.as_str());
    assert_eq!(listed["flows"][0]["finished"], false);
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
    assert_eq!(stored["error"]["kind"], failed["payload"]["kind"]);
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

#[tokio::test]
async fn a_stored_body_is_cut_after_redaction() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    let secret = "zq-secret-across-the-cut-9f";
    let session = api.session(None, json!({ "apiToken": secret })).await;
    let flow = api.flow(None, json!({ "sessionId": session })).await;
    let execute = |padding: usize| {
        let content = format!("POST {}\n\n{}{{{{apiToken}}}}\n", upstream.url("/echo"), "a".repeat(padding));
        api.execute(json!({ "content": content, "flowId": flow }))
    };
    // Where the secret lands in the echoed body (the caller's own answer shows it), then
    // a padding that puts its first four bytes before the 8 KiB the store keeps.
    let first = execute(8000).await;
    let body = ok(&first, StatusCode::OK)["response"]["body"].as_str().unwrap_or_default().to_owned();
    let at = body.find(secret).expect("the secret in the caller's answer");
    let reply = execute(8000 + 8 * 1024 - 4 - at).await;
    let answer = ok(&reply, StatusCode::OK);
    let body = answer["response"]["body"].as_str().unwrap_or_default();
    assert_eq!(body.find(secret), Some(8 * 1024 - 4), "the secret straddles the cut");
    let exec = answer["reqExecId"].as_str().expect("reqExecId");
    let stored =
        ok(&api.get(&format!("/flows/{flow}/executions/{exec}"), None).await, StatusCode::OK)["response"].clone();
    assert_eq!(stored["truncated"], true);
    let kept = stored["body"].as_str().unwrap_or_default();
    assert!(!kept.contains("zq-s"), "a part of the secret is stored: …{}", &kept[kept.len().saturating_sub(40)..]);
    assert!(kept.ends_with("[RED"), "…{}", &kept[kept.len().saturating_sub(40)..]);
}

/// The store keeps the headers as they went out: the session jar's cookie is there
/// (hidden), and its value is hidden where the upstream echoes it.
#[tokio::test]
async fn a_stored_execution_has_the_headers_as_sent() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    let session = api.session(None, json!({})).await;
    let flow = api.flow(None, json!({ "sessionId": session })).await;
    let set = format!("GET {}\n", upstream.url("/cookies/set?sid=s1d-7f3a9c"));
    ok(&api.execute(json!({ "content": set, "flowId": flow })).await, StatusCode::OK);
    let echo = format!("GET {}\n", upstream.url("/echo"));
    let reply = api.execute(json!({ "content": echo, "flowId": flow })).await;
    let exec = ok(&reply, StatusCode::OK)["reqExecId"].as_str().expect("reqExecId").to_owned();
    let reply = api.get(&format!("/flows/{flow}/executions/{exec}"), None).await;
    let stored = ok(&reply, StatusCode::OK);
    let headers = stored["headers"].as_array().expect("headers");
    assert!(headers.iter().any(|entry| entry["name"] == "cookie" && entry["value"] == "[REDACTED]"), "{headers:?}");
    assert!(!stored.to_string().contains("s1d-7f3a9c"), "{stored}");
}
