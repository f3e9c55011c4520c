//! Scripts through the execution server, as people use them: a real server on 127.0.0.1
//! (port 0) with the echo server as the upstream. A handler's `client.global.set` is a
//! variable of its session and of no other, a scoped token's scripts see only its
//! session, `client.test` results are checks of the answer and of the observers' events,
//! `client.log` lines come back redacted, a failing pre-request script is a
//! `script-error`; and the remote client reads it all back.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use serde_json::{Value, json};
use support::{Observer, client, post, send, start};
use volley_echo_server::TestServer;
use volley_engine::assert::Outcome;
use volley_engine::{RemoteClient, RemoteConfig, RunOptions};
use volley_server::ServerConfig;

use crate::support;

/// Logs in on the echo server; the handler keeps the token as a global.
const LOGIN: &str = r#"POST {{base}}/login
Content-Type: application/json

{"user": "ada", "password": "lovelace"}

> {%
  client.global.set("token", response.body.token);
  client.log("logged in as", response.body.user);
%}
"#;

/// An authorised call with the token a handler set.
const WHO_AM_I: &str = r#"GET {{base}}/bearer
Authorization: Bearer {{token}}

> {%
  client.test("authorised", () => client.assert(response.status === 200, "status " + response.status));
%}
"#;

/// `POST /session` with `variables`: its id.
async fn session(http: &reqwest::Client, base: &str, token: Option<&str>, variables: Value) -> String {
    let (status, body) =
        send(http.post(format!("{base}/session")), Some(json!({ "variables": variables })), token).await;
    assert_eq!(status, 201, "{body}");
    body["sessionId"].as_str().unwrap().to_owned()
}

/// `POST /execute` of `content` with the other fields of `fields`.
async fn execute(
    http: &reqwest::Client,
    base: &str,
    token: Option<&str>,
    content: &str,
    fields: Value,
) -> (u16, Value) {
    let mut body = fields;
    body["content"] = json!(content);
    send(http.post(format!("{base}/execute")), Some(body), token).await
}

#[tokio::test]
async fn a_global_set_by_a_handler_is_a_variable_of_its_session_only() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let variables = json!({ "base": upstream.base_url() });
    let first = session(&http, &server.base, None, variables.clone()).await;
    let other = session(&http, &server.base, None, variables).await;

    let (status, login) = execute(&http, &server.base, None, LOGIN, json!({ "sessionId": first })).await;
    assert_eq!(status, 200, "{login}");
    assert_eq!(login["logs"], json!(["logged in as ada"]));
    // The handler changed the session's variables: a new snapshot version.
    assert_eq!(login["session"]["snapshotVersion"], 2, "{login}");

    let (status, call) = execute(&http, &server.base, None, WHO_AM_I, json!({ "sessionId": first })).await;
    assert_eq!(status, 200, "{call}");
    let body: Value = serde_json::from_str(call["response"]["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["authenticated"], true, "{call}");
    assert_eq!(call["assertions"]["checks"][0]["outcome"], "passed", "{call}");
    // Nothing changed this time.
    assert_eq!(call["session"]["snapshotVersion"], 2, "{call}");
    // The session shows the global, redacted (its name says it is a token).
    let (_, shown) = send(http.get(format!("{}/session/{first}", server.base)), None, None).await;
    assert_eq!(shown["variables"]["token"], "[REDACTED]", "{shown}");

    // Another session never had it.
    let (status, refused) = execute(&http, &server.base, None, WHO_AM_I, json!({ "sessionId": other })).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["details"]["code"], "undefined-variable", "{refused}");
    let peek = "GET {{base}}/echo\n\n> {%\n  client.log(\"token:\", client.global.get(\"token\"));\n%}\n";
    let (status, peeked) = execute(&http, &server.base, None, peek, json!({ "sessionId": other })).await;
    assert_eq!(status, 200, "{peeked}");
    assert_eq!(peeked["logs"], json!(["token: null"]));
}

#[tokio::test]
async fn a_scoped_tokens_scripts_see_only_its_session() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { token: Some("main-secret".to_owned()), ..ServerConfig::default() }).await;
    let http = client();
    let main = Some("main-secret");
    let variables = json!({ "base": upstream.base_url() });
    let theirs = session(&http, &server.base, main, variables.clone()).await;
    let mine = session(&http, &server.base, main, variables).await;
    let set = "GET {{base}}/echo\n\n> {%\n  client.global.set(\"owner\", \"theirs\");\n%}\n";
    let (status, answer) = execute(&http, &server.base, main, set, json!({ "sessionId": theirs })).await;
    assert_eq!(status, 200, "{answer}");

    let (status, issued) =
        send(http.post(format!("{}/tokens", server.base)), Some(json!({ "sessionId": mine })), main).await;
    assert_eq!(status, 201, "{issued}");
    let scoped = issued["token"].as_str().unwrap().to_owned();
    let scoped = Some(scoped.as_str());

    // The token's session is taken when none is named; its scripts see its variables only.
    let look = concat!(
        "< {%\n  client.log(\"owner before:\", client.global.get(\"owner\"));\n%}\n",
        "GET {{base}}/echo\n\n",
        "> {%\n  client.global.set(\"owner\", \"mine\");\n  client.log(\"owner after:\", client.global.get(\"owner\"));\n%}\n",
    );
    let (status, answer) = execute(&http, &server.base, scoped, look, json!({})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["session"]["sessionId"], mine.as_str(), "{answer}");
    assert_eq!(answer["logs"], json!(["owner before: null", "owner after: mine"]));
    let (status, again) = execute(&http, &server.base, scoped, look, json!({})).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["logs"], json!(["owner before: mine", "owner after: mine"]));

    // The other session is out of its reach, and kept its own value.
    let (status, refused) = execute(&http, &server.base, scoped, look, json!({ "sessionId": theirs })).await;
    assert_eq!((status, &refused["error"]["code"]), (403, &json!("FORBIDDEN")), "{refused}");
    let (_, shown) = send(http.get(format!("{}/session/{theirs}", server.base)), None, main).await;
    assert_eq!(shown["variables"]["owner"], "theirs", "{shown}");
}

#[tokio::test]
async fn tests_are_checks_of_the_answer_the_store_and_the_events() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (status, flow) = post(&http, format!("{}/flows", server.base), json!({})).await;
    assert_eq!(status, 201);
    let flow = flow["flowId"].as_str().unwrap().to_owned();
    let mut observer = Observer::open(&http, format!("{}/event?flowId={flow}", server.base)).await;

    let content = concat!(
        "GET {{base}}/status/201\n\n",
        "> {%\n",
        "  client.test(\"created\", () => client.assert(response.status === 201, \"status \" + response.status));\n",
        "  client.test(\"a body\", () => client.assert(response.body === \"yes\", \"no body\"));\n",
        "  client.log(\"checked\", response.status);\n",
        "%}\n",
    );
    let fields = json!({ "flowId": flow, "variables": { "base": upstream.base_url() } });
    let (status, answer) = execute(&http, &server.base, None, content, fields).await;
    assert_eq!(status, 200, "{answer}");
    let report = &answer["assertions"];
    assert_eq!((&report["passed"], &report["total"], &report["failed"]), (&json!(false), &json!(2), &json!(1)));
    let checks = report["checks"].as_array().unwrap();
    assert_eq!((&checks[0]["expression"], &checks[0]["outcome"]), (&json!("created"), &json!("passed")));
    assert_eq!((&checks[1]["expression"], &checks[1]["outcome"]), (&json!("a body"), &json!("failed")));
    assert_eq!(checks[1]["message"], "AssertionError: no body");
    assert!(checks[1].get("expected").is_none(), "{}", checks[1]);
    // Placed on the test's line of the text.
    assert_eq!((&checks[1]["span"]["line"], &checks[1]["span"]["column"]), (&json!(5), &json!(3)));
    assert_eq!(answer["logs"], json!(["checked 201"]));

    let events = observer.until("executionFinished").await;
    let payload = |kind: &str| -> Value {
        let event = events.iter().find(|event| event.event == kind).unwrap_or_else(|| panic!("no {kind}"));
        serde_json::from_str::<Value>(&event.data).unwrap()["payload"].clone()
    };
    assert_eq!(payload("assertionReport")["checks"], report["checks"]);
    let finished = payload("executionFinished");
    assert_eq!(finished["assertions"], json!({ "passed": false, "total": 2, "failed": 1 }));
    assert_eq!(finished["logs"], 1, "a count, not the lines: {finished}");

    let exec = answer["reqExecId"].as_str().unwrap();
    let (_, stored) = send(http.get(format!("{}/flows/{flow}/executions/{exec}", server.base)), None, None).await;
    assert_eq!(stored["logs"], json!(["checked 201"]), "{stored}");
    assert_eq!(stored["assertions"], *report);
    assert_eq!(stored["status"], "failed");
}

#[tokio::test]
async fn log_lines_come_back_with_secrets_redacted() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    std::fs::write(server.workspace.0.join(".env"), "MY_SECRET=hunter2-secret\n").unwrap();
    let http = client();
    let variables = json!({ "base": upstream.base_url(), "apiToken": "t0k3n-value" });
    let ses = session(&http, &server.base, None, variables).await;
    let (_, flow) = post(&http, format!("{}/flows", server.base), json!({ "sessionId": ses })).await;
    let flow = flow["flowId"].as_str().unwrap().to_owned();
    let content = concat!(
        "GET {{base}}/echo\n",
        "X-S: {{$secret(MY_SECRET)}}\n\n",
        "> {%\n",
        "  const sent = response.body.headers.find((header) => header[0] === \"x-s\")[1];\n",
        "  client.log(\"secret:\", sent);\n",
        "  client.log(\"token:\", client.global.get(\"apiToken\"));\n",
        "  client.global.set(\"sessionPassword\", \"pa55-from-handler\");\n",
        "  client.log(\"password:\", client.global.get(\"sessionPassword\"));\n",
        "%}\n",
    );
    let (status, answer) = execute(&http, &server.base, None, content, json!({ "flowId": flow })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["logs"], json!(["secret: [REDACTED]", "token: [REDACTED]", "password: [REDACTED]"]));
    let exec = answer["reqExecId"].as_str().unwrap();
    let (_, stored) = send(http.get(format!("{}/flows/{flow}/executions/{exec}", server.base)), None, None).await;
    assert_eq!(stored["logs"], answer["logs"]);
    let stored = stored.to_string();
    for secret in ["hunter2-secret", "t0k3n-value", "pa55-from-handler"] {
        assert!(!stored.contains(secret), "{secret} in {stored}");
    }
}

#[tokio::test]
async fn a_pre_request_script_that_throws_is_a_script_error_at_its_line() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let ses = session(&http, &server.base, None, json!({ "base": upstream.base_url() })).await;
    let (_, flow) = post(&http, format!("{}/flows", server.base), json!({ "sessionId": ses })).await;
    let flow = flow["flowId"].as_str().unwrap().to_owned();
    let mut observer = Observer::open(&http, format!("{}/event?flowId={flow}", server.base)).await;
    let content = concat!(
        "### Broken\n",
        "< {%\n",
        "  client.global.set(\"before\", 1);\n",
        "  throw new Error(\"no user\");\n",
        "%}\n",
        "GET {{base}}/echo\n",
    );
    let (status, answer) = execute(&http, &server.base, None, content, json!({ "flowId": flow })).await;
    assert_eq!(status, 400, "{answer}");
    let error = &answer["error"];
    assert_eq!(error["code"], "VALIDATION_ERROR", "{answer}");
    assert_eq!(error["details"]["code"], "script-error", "{answer}");
    assert_eq!((&error["details"]["line"], &error["details"]["column"]), (&json!(4), &json!(3)), "{answer}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("pre-request script failed: no user"), "{message}");
    assert!(error["details"]["hint"].as_str().is_some_and(|hint| hint.contains("script:3:13")), "{answer}");
    // Nothing was sent; what the script set before it threw stays set, as in `volley run`.
    let (_, counts) = send(http.get(upstream.url("/stats")), None, None).await;
    assert!(counts["requests"].get("/echo").is_none(), "{counts}");
    let (_, shown) = send(http.get(format!("{}/session/{ses}", server.base)), None, None).await;
    assert_eq!((&shown["variables"]["before"], &shown["snapshotVersion"]), (&json!(1), &json!(2)), "{shown}");

    let events = observer.until("executionFailed").await;
    let failed: Value = serde_json::from_str(&events.last().unwrap().data).unwrap();
    assert_eq!(failed["payload"]["stage"], "interpolate");
    assert_eq!(failed["payload"]["code"], "VALIDATION_ERROR");
}

#[tokio::test]
async fn the_remote_client_reads_tests_handler_failures_and_logs_back() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let remote = RemoteClient::new(RemoteConfig::new(&server.base)).unwrap();
    remote.set_variable("base", upstream.base_url()).await.unwrap();
    let login = remote.run_string(LOGIN, RunOptions::default()).await.unwrap();
    assert_eq!(login.logs(), ["logged in as ada"]);
    // The global lives in the server's session: the next run of this client has it.
    let call = remote.run_string(WHO_AM_I, RunOptions::default()).await.unwrap();
    assert_eq!(call.status(), 200);
    assert_eq!(call.assertions()[0].outcome, Outcome::Passed);
    assert_eq!(call.assertions()[0].expression, "authorised");

    let content = concat!(
        "GET {{base}}/status/404\n\n",
        "> {%\n",
        "  client.test(\"found\", () => client.assert(response.status === 200, \"status \" + response.status));\n",
        "  client.log(\"status\", response.status);\n",
        "  missing();\n",
        "%}\n",
    );
    let response = remote.run_string(content, RunOptions::default()).await.unwrap();
    let checks = response.assertions();
    assert_eq!(checks.len(), 2, "{checks:?}");
    assert_eq!(checks[0].outcome, Outcome::ScriptFailed { message: "AssertionError: status 404".to_owned() });
    assert_eq!(
        checks[0].span.text(content),
        "client.test(\"found\", () => client.assert(response.status === 200, \"status \" + response.status));"
    );
    let Outcome::HandlerFailed { message, stack } = &checks[1].outcome else { panic!("{:?}", checks[1]) };
    assert!(message.contains("missing is not defined"), "{message}");
    assert!(stack.contains("script:4:3"), "{stack}");
    assert_eq!(checks[1].span.text(content), "missing();");
    assert_eq!(response.logs(), ["status 404"]);
}

#[tokio::test]
async fn a_websocket_answer_has_the_pre_request_scripts_lines() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let ws = upstream.base_url().replacen("http", "ws", 1);
    let content = "< {%\n  client.log(\"opening\", request.url.getRaw());\n%}\nGET {{ws}}/ws/echo\n";
    let body = json!({ "content": content, "variables": { "ws": ws } });
    let (status, answer) = post(&http, format!("{}/execute/ws", server.base), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["logs"], json!(["opening {{ws}}/ws/echo"]));
    let id = answer["ws"]["wsSessionId"].as_str().unwrap();
    let (status, _) = send(http.delete(format!("{}/ws/session/{id}", server.base)), None, None).await;
    assert_eq!(status, 204);
}

#[tokio::test]
async fn through_the_remote_client_a_pre_request_script_error_is_the_engines_own() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let remote = RemoteClient::new(RemoteConfig::new(&server.base)).unwrap();
    remote.set_variable("base", upstream.base_url()).await.unwrap();
    let content = "< {%\n  client.log(\"about to fail\");\n  throw new Error(\"no user\");\n%}\nGET {{base}}/echo\n";
    let error = remote.run_string(content, RunOptions::default()).await.expect_err("the script throws");
    let volley_engine::Error::Build(build) = &error else { panic!("{error:?}") };
    assert_eq!(build.code(), "script-error");
    let volley_engine::BuildError::Script { message, stack, span } = build else { panic!("{build:?}") };
    assert_eq!(message, "pre-request script failed: no user");
    assert!(stack.contains("script:3"), "{stack}");
    assert_eq!(span.text(content), "throw new Error(\"no user\");");
}
