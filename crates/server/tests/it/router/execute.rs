//! `POST /execute`: the answer to a request that was sent, field by field.

use super::*;

#[tokio::test]
async fn answers_every_field_of_the_protocol() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    let content = format!("@host = {}\n\n### first\nGET {{{{host}}}}/echo?x=1\nX-Trace: abc\n", upstream.base_url());
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
    assert!(echoed["headers"].as_array().expect("headers").iter().any(|pair| pair[0] == "x-trace" && pair[1] == "abc"));

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
        axum::routing::get(
            move || async move { ([(header::CONTENT_TYPE, "application/octet-stream")], bytes.to_vec()) },
        ),
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
    assert!(checks[2]["actual"].as_str().is_some_and(|actual| actual.contains("application/json")), "{}", checks[2]);

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
        .execute(json!({ "content": content, "profile": "dev", "sessionId": session, "variables": { "d": "request" } }))
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

/// `>> ./file` saves the response body inside the workspace; a path that leaves it is
/// not written, and the execution's logs say so.
#[tokio::test]
async fn a_saved_response_stays_in_the_workspace() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    let content = format!("GET {}\n\n>> ./saved/created.json\n", upstream.url("/status/201"));
    let reply = api.execute(json!({ "content": content })).await;
    let body = ok(&reply, StatusCode::OK);
    let saved = std::fs::read_to_string(api.workspace.root.join("saved/created.json")).expect("saved");
    assert_eq!(saved, body["response"]["body"].as_str().expect("body"));
    let escape = format!("GET {}\n\n>>! ../escaped.json\n", upstream.url("/status/201"));
    let reply = api.execute(json!({ "content": escape })).await;
    let body = ok(&reply, StatusCode::OK);
    let logs = body["logs"].to_string();
    assert!(logs.contains("was not saved"), "{logs}");
    assert!(!api.workspace.root.parent().expect("parent").join("escaped.json").exists());
}
