//! Sending requests with scripts from the editor, through real JSON-RPC messages to a
//! real HTTP server on 127.0.0.1: a response handler's `client.test` results among the
//! outcome's assertions (name, result, message, line), its `client.log` lines in
//! `logs` (redacted), its `client.global.set` seen by the next send of the session, a
//! handler that throws as one more failed result, a pre-request script that throws as
//! the send's error.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, uri};
use volley_echo_server::TestServer;

/// `HOST` stands for the test server's URL.
const TEXT: &str = r#"@host = HOST

### login
POST {{host}}/login
Content-Type: application/json

{"user": "ada", "password": "lovelace"}

> {%
  client.global.set("token", response.body.token);
  client.log("got", response.status);
  client.test("ok", () => client.assert(response.status === 200));
%}

### me
# @assert status == 200
GET {{host}}/bearer
Authorization: Bearer {{token}}

> {%
  client.log("token", response.body.token, {ok: response.body.authenticated});
  client.test("authenticated", () => client.assert(response.body.authenticated));
  client.test("created", () => client.assert(response.status === 201, "status " + response.status));
  response.body.missing.field;
%}

### before
< {%
  client.log("never shown");
  throw new Error("not today");
%}
GET {{host}}/echo/never
"#;

/// The 0-based line of [`TEXT`] that holds `needle`.
fn line_of(needle: &str) -> u64 {
    let line = TEXT.lines().position(|line| line.contains(needle)).unwrap_or_else(|| panic!("no {needle:?}"));
    u64::try_from(line).expect("line")
}

async fn send(client: &mut TestClient, uri: &str, index: usize) -> Value {
    client
        .request(
            "workspace/executeCommand",
            json!({"command": "volley.send", "arguments": [{"uri": uri, "index": index}]}),
        )
        .await
}

/// An outcome's assertions as `(expression, passed, message, line)`.
fn assertions(outcome: &Value) -> Vec<(String, bool, Option<String>, u64)> {
    outcome["response"]["assertions"]
        .as_array()
        .unwrap_or_else(|| panic!("no assertions: {outcome}"))
        .iter()
        .map(|assertion| {
            (
                assertion["expression"].as_str().unwrap_or_default().to_owned(),
                assertion["passed"].as_bool().unwrap_or_default(),
                assertion["message"].as_str().map(str::to_owned),
                assertion["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test]
async fn script_tests_logs_and_globals_come_with_the_outcome() {
    let server = TestServer::start().await;
    let (_dir, uri) = uri("scripts.http");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &TEXT.replace("HOST", &server.base_url())).await;

    // The handler's test is an assertion on the line of its `client.test`; its log line
    // is in `logs`.
    let login = send(&mut client, &uri, 0).await;
    assert_eq!(login["response"]["status"], 200, "{login}");
    assert_eq!(assertions(&login), [("ok".to_owned(), true, None, line_of("client.test(\"ok\""))], "{login}");
    assert_eq!(login["logs"], json!(["got 200"]), "{login}");
    let issued: Value = serde_json::from_str(login["response"]["body"].as_str().unwrap_or_default()).expect("JSON");
    // The token a sign-in answers is a credential of the response: hidden there already.
    assert_eq!(issued["token"], "[REDACTED]", "{login}");

    // The global the handler set is a variable of the next send: the token is accepted.
    // The `# @assert` comes first, then the tests in order, then the handler's failure.
    let me = send(&mut client, &uri, 1).await;
    assert_eq!(me["response"]["status"], 200, "the token was sent: {me}");
    let checks = assertions(&me);
    assert_eq!(checks.len(), 4, "{me}");
    assert_eq!(checks[0], ("status == 200".to_owned(), true, None, line_of("@assert")), "{me}");
    assert_eq!(checks[1], ("authenticated".to_owned(), true, None, line_of("\"authenticated\"")), "{me}");
    let failed = Some("AssertionError: status 200".to_owned());
    assert_eq!(checks[2], ("created".to_owned(), false, failed, line_of("\"created\"")), "{me}");
    let (expression, passed, message, line) = &checks[3];
    assert_eq!((expression.as_str(), *passed, *line), ("response handler", false, line_of("missing.field")), "{me}");
    assert_eq!(message.as_deref(), Some("TypeError: cannot read property 'field' of undefined"), "{me}");
    // What the handler logs goes through the request's redaction: the token's value is
    // a sensitive global's.
    assert_eq!(me["logs"], json!(["token [REDACTED] {\"ok\":true}"]), "{me}");
    let answered: Value = serde_json::from_str(me["response"]["body"].as_str().unwrap_or_default()).expect("JSON");
    assert_eq!(answered["token"], "[REDACTED]", "the token is hidden where it is echoed too: {me}");

    // A pre-request script that throws: nothing is sent, the error says where and why.
    let before = send(&mut client, &uri, 2).await;
    assert!(before.get("response").is_none(), "{before}");
    assert!(before.get("sent").is_none(), "{before}");
    assert!(before.get("logs").is_none(), "{before}");
    assert_eq!(before["error"]["kind"], "script-error", "{before}");
    let message = before["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not today"), "{message}");
    client.shutdown().await;
}
