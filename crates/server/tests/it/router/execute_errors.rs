//! `POST /execute`: what it refuses, and the error shape of each refusal.

use super::*;

#[tokio::test]
async fn exactly_one_of_content_and_path() {
    let api = Api::open();
    expect_error(&api.execute(json!({})).await, StatusCode::BAD_REQUEST, "CONTENT_OR_PATH_REQUIRED");
    let both = api.execute(json!({ "content": "GET http://127.0.0.1:9/", "path": "a.http" })).await;
    expect_error(&both, StatusCode::BAD_REQUEST, "CONTENT_OR_PATH_REQUIRED");
}

#[tokio::test]
async fn malformed_bodies_and_wrong_types_are_validation_errors() {
    let api = Api::open();
    let malformed = api.raw(request(Method::POST, "/execute", None, Some(r#"{"content": "#.to_owned()))).await;
    expect_error(&read(malformed).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    let not_an_object = api.raw(request(Method::POST, "/execute", None, Some("[1, 2]".to_owned()))).await;
    expect_error(&read(not_an_object).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    for body in [
        json!({ "content": 5 }),
        json!({ "content": "GET http://127.0.0.1:9/", "requestIndex": "0" }),
        json!({ "content": "GET http://127.0.0.1:9/", "requestIndex": -1 }),
        json!({ "content": "GET http://127.0.0.1:9/", "variables": [] }),
        json!({ "content": "GET http://127.0.0.1:9/", "followRedirects": "yes" }),
    ] {
        expect_error(&api.execute(body).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }
    // No JSON content type.
    let plain = Request::post("/execute")
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from(r#"{"content": "GET http://127.0.0.1:9/"}"#))
        .expect("request");
    expect_error(&read(api.raw(plain).await).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
}

#[tokio::test]
async fn unknown_fields_are_ignored() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    let reply = api.execute(json!({ "content": format!("GET {}", upstream.url("/echo")), "somethingNew": 1 })).await;
    ok(&reply, StatusCode::OK);
}

#[tokio::test]
async fn timeouts_out_of_range_are_validation_errors() {
    let api = Api::open();
    for timeout in [0, 50, 99, 300_001, 400_000] {
        let reply = api.execute(json!({ "content": "GET http://127.0.0.1:9/", "timeoutMs": timeout })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }
}

/// The document types them `integer`, which `2.0` is: read as 2 (a fraction is refused).
#[tokio::test]
async fn whole_numbers_with_a_zero_fraction_are_read() {
    let api = Api::open();
    let content = "### one\nGET http://127.0.0.1:9/one\n\n### two\nGET http://127.0.0.1:9/two\n";
    let reply = api.execute(json!({ "content": content, "requestIndex": 2.0, "timeoutMs": 100.0 })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "REQUEST_INDEX_OUT_OF_RANGE");
    assert_eq!(reply.2["error"]["details"], json!({ "index": 2, "count": 2 }));
    let reply = api.execute(json!({ "content": content, "requestIndex": 1.5 })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
}

#[tokio::test]
async fn selection_errors() {
    let api = Api::open();
    let content = "### one\nGET http://127.0.0.1:9/one\n\n### two\nGET http://127.0.0.1:9/two\n";
    let reply = api.execute(json!({ "content": content, "requestIndex": 2 })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "REQUEST_INDEX_OUT_OF_RANGE");
    assert_eq!(reply.2["error"]["details"], json!({ "index": 2, "count": 2 }));

    for empty in ["", "# only a comment\n", "###\n"] {
        expect_error(&api.execute(json!({ "content": empty })).await, StatusCode::BAD_REQUEST, "NO_REQUESTS_FOUND");
    }

    let reply = api.execute(json!({ "content": content, "requestName": "tow" })).await;
    expect_error(&reply, StatusCode::NOT_FOUND, "REQUEST_NOT_FOUND");
    assert_eq!(reply.2["error"]["details"]["name"], "tow");

    let both = api.execute(json!({ "content": content, "requestName": "one", "requestIndex": 0 })).await;
    expect_error(&both, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
}

#[tokio::test]
async fn a_syntax_error_is_a_parse_error_with_diagnostics() {
    let api = Api::open();
    let reply = api.execute(json!({ "content": "GET http://127.0.0.1:9/\nthis is not a header\n" })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "PARSE_ERROR");
    let diagnostics = reply.2["error"]["details"]["diagnostics"].as_array().expect("diagnostics");
    assert!(diagnostics.iter().any(|diagnostic| diagnostic["line"] == 2), "{diagnostics:?}");
}

#[tokio::test]
async fn errors_elsewhere_in_the_content_do_not_refuse_the_selected_request() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    let content = format!(
        "@ = broken\n\n###\n# @name fine\nGET {}\n\n###\n# @name broken\nGET {}\nnot a header\n",
        upstream.url("/status/200"),
        upstream.url("/echo")
    );
    let reply = api.execute(json!({ "content": content, "requestName": "fine" })).await;
    assert_eq!(ok(&reply, StatusCode::OK)["response"]["status"], 200);
    let reply = api.execute(json!({ "content": content, "requestIndex": 0 })).await;
    assert_eq!(ok(&reply, StatusCode::OK)["response"]["status"], 200);

    // The selected request's own errors still refuse it, and only those are listed.
    let reply = api.execute(json!({ "content": content, "requestName": "broken" })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "PARSE_ERROR");
    let diagnostics = reply.2["error"]["details"]["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["line"], 10);
}

#[tokio::test]
async fn a_broken_file_variable_refuses_only_the_requests_that_use_it() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    // The broken `@token` is in the block of `plain`, which does not use it: the
    // same requests are refused as by `volley run` and the language server.
    let content = format!(
        "@auth = Bearer {{{{token}}}}\n\n###\n# @name plain\n@token = {{{{unclosed\nGET {}\n\n\
         ###\n# @name uses-token\nGET {}\nAuthorization: {{{{auth}}}}\n",
        upstream.url("/status/200"),
        upstream.url("/echo")
    );
    let reply = api.execute(json!({ "content": content, "requestName": "plain" })).await;
    assert_eq!(ok(&reply, StatusCode::OK)["response"]["status"], 200);

    let reply = api.execute(json!({ "content": content, "requestName": "uses-token" })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "PARSE_ERROR");
    assert_eq!(
        reply.2["error"]["details"]["diagnostics"],
        json!([{
            "code": "broken-variable",
            "message": "`auth` uses `token`, declared on line 5, which has errors",
            "hint": "fix `@token` on line 5; the requests that do not use it can still be sent",
            "line": 11,
            "column": 18,
        }])
    );
}

#[tokio::test]
async fn a_disabled_request_is_refused_even_when_selected() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    let content = format!("# @name off\n# @disabled\nDELETE {}\n", upstream.url("/echo"));
    let reply = api.execute(json!({ "content": content, "requestName": "off" })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert_eq!(
        reply.2["error"]["details"],
        json!({ "code": "request-disabled", "hint": "remove `# @disabled` to send it", "line": 2, "column": 1 })
    );
}

#[tokio::test]
async fn an_undefined_variable_is_a_validation_error_with_its_place() {
    let api = Api::open();
    let reply = api.execute(json!({ "content": "GET http://127.0.0.1:9/{{nowhere}}\n" })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert!(reply.2["error"]["message"].as_str().is_some_and(|message| message.contains("nowhere")), "{}", reply.2);
    assert_eq!(reply.2["error"]["details"]["line"], 1);
}

#[tokio::test]
async fn the_column_of_an_error_counts_characters() {
    let api = Api::open();
    // `GET http://127.0.0.1:9/«é»/{{` is 29 characters but 32 bytes: the name is at
    // column 30 in characters (33 in bytes).
    let reply = api.execute(json!({ "content": "# ☃\nGET http://127.0.0.1:9/«é»/{{nowhere}}\n" })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert_eq!(reply.2["error"]["details"]["line"], 2);
    assert_eq!(reply.2["error"]["details"]["column"], 30, "{}", reply.2);
    // The reasons of a refused request, the same way.
    let reply = api.execute(json!({ "content": "GET http://127.0.0.1:9/\nX-«é»: {{unclosed\n" })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "PARSE_ERROR");
    let diagnostics = reply.2["error"]["details"]["diagnostics"].as_array().cloned().unwrap_or_default();
    assert!(
        diagnostics.iter().any(|diagnostic| diagnostic["line"] == 2 && diagnostic["column"] == 8),
        "{diagnostics:?}"
    );
}

#[tokio::test]
async fn a_refused_connection_is_an_execute_error_with_its_kind() {
    let api = Api::open();
    let reply = api.execute(json!({ "content": format!("GET http://127.0.0.1:{}/", unused_port()) })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
    assert_eq!(reply.2["error"]["details"]["kind"], "connection_refused");
}

#[tokio::test]
async fn an_upstream_timeout_is_an_execute_error() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    let reply =
        api.execute(json!({ "content": format!("GET {}", upstream.url("/slow?ms=5000")), "timeoutMs": 100 })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
    assert_eq!(reply.2["error"]["details"]["kind"], "timeout");
}

#[tokio::test]
async fn unknown_sessions_and_flows_are_404() {
    let api = Api::open();
    let content = "GET http://127.0.0.1:9/";
    let reply = api.execute(json!({ "content": content, "sessionId": "ses_nope" })).await;
    expect_error(&reply, StatusCode::NOT_FOUND, "SESSION_NOT_FOUND");
    let reply = api.execute(json!({ "content": content, "flowId": "flow_nope" })).await;
    expect_error(&reply, StatusCode::NOT_FOUND, "FLOW_NOT_FOUND");
}

#[tokio::test]
async fn an_sse_request_belongs_to_execute_sse() {
    let upstream = TestServer::start().await;
    let api = Api::open();
    for content in [
        format!("# @sse\nGET {}\n", upstream.url("/sse/events")),
        format!("GET {}\nAccept: text/event-stream\n", upstream.url("/sse/events")),
    ] {
        expect_error(&api.execute(json!({ "content": content })).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }
}

#[tokio::test]
async fn oversized_content_and_bodies_are_413() {
    let api = Api::with(|config| config.max_body_size = 64);
    let content = format!("GET http://127.0.0.1:9/{}", "a".repeat(100));
    expect_error(&api.execute(json!({ "content": content })).await, StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE");
    // A raw body beyond the content limit plus the envelope's 1 MiB.
    let huge = json!({ "content": "x".repeat(64 + 1024 * 1024 + 100) }).to_string();
    let reply = read(api.raw(request(Method::POST, "/execute", None, Some(huge.clone()))).await).await;
    expect_error(&reply, StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE");
    // Routes whose body is optional too.
    let reply = read(api.raw(request(Method::POST, "/session", None, Some(huge))).await).await;
    expect_error(&reply, StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE");
}
