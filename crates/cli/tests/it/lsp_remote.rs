//! The language server sending through an execution server, as people use it: a real
//! `volley serve` on 127.0.0.1, the real `volley lsp` spoken to over stdio with the
//! `server` setting, and the test server upstream. The server's session carries cookies,
//! chained responses and scripts' globals from one send to the next; script tests and a
//! failed response handler come back as a local send gives them; an unreachable server
//! is a clear error naming it. (`server` and `lsp` never depend on each other: this crate has both.)
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::serve::Serve;
use crate::support::stdio::Editor;

/// A fresh directory for one test, removed when dropped.
struct Workspace(PathBuf);

impl Workspace {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("volley-lsp-remote-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path.canonicalize().unwrap())
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The JSON body of an outcome's response.
fn body_of(outcome: &Value) -> Value {
    serde_json::from_str(outcome["response"]["body"].as_str().unwrap()).unwrap()
}

#[test]
fn sends_go_through_volley_serve_whose_session_keeps_cookies_and_chained_responses() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let upstream = runtime.block_on(volley_echo_server::TestServer::start());
    let workspace = Workspace::new("session");
    let serve = Serve::start(&workspace.0, "t0ken");
    // The token comes from the environment, as for `volley run --server`.
    let mut editor = Editor::start(&json!({"server": {"url": serve.url}}), &workspace.0, &[("VOLLEY_TOKEN", "t0ken")]);

    let text = format!(
        "# @name login\n# @assert status == 200\n# @assert status == 201\nGET {login}\n\n\
         ###\nGET {set}\n\n###\nGET {cookies}\n\n###\nGET {echo}?seen={{{{login.response.body.$.query}}}}\n",
        login = upstream.url("/echo?token=abc123"),
        set = upstream.url("/cookies/set?a=1"),
        cookies = upstream.url("/cookies"),
        echo = upstream.url("/echo"),
    );
    // Unsaved: the server gets the text as the editor has it.
    let uri = editor.open(&workspace.0.join("api.http"), &text);
    let send = |editor: &mut Editor, index: usize| {
        let reply = editor.command("volley.send", &json!({"uri": uri, "index": index}));
        reply["result"].clone()
    };

    // The upstream's status, headers, body, timing and the assertions, through the server.
    let login = send(&mut editor, 0);
    assert_eq!(login["server"], json!(serve.url), "{login}");
    assert_eq!(login["response"]["status"], 200, "{login}");
    assert_eq!(body_of(&login)["query"], "token=abc123", "{login}");
    assert_eq!(login["response"]["contentType"], "application/json", "{login}");
    assert!(login["response"]["timing"]["totalMs"].as_f64().unwrap() > 0.0, "{login}");
    let assertions = login["response"]["assertions"].as_array().unwrap();
    assert_eq!(assertions.len(), 2, "{login}");
    assert_eq!((assertions[0]["passed"].clone(), assertions[0]["line"].clone()), (json!(true), json!(1)));
    assert_eq!(assertions[1]["passed"], false);
    assert_eq!(assertions[1]["message"], "expected status == 201, got 200", "{login}");
    // The request as sent: what the server's answer tells of it.
    assert_eq!(login["sent"]["method"], "GET");
    assert_eq!(login["sent"]["url"], upstream.url("/echo?token=abc123"));
    assert_eq!(login["sent"]["partial"], true);

    // A cookie set by one send goes with the next: the server's session keeps it.
    let set = send(&mut editor, 1);
    assert_eq!(set["response"]["status"], 200, "{set}");
    let cookies = send(&mut editor, 2);
    assert_eq!(body_of(&cookies)["cookies"], json!({"a": "1"}), "{cookies}");

    // A named request's response is chained by a later one.
    let chained = send(&mut editor, 3);
    assert_eq!(body_of(&chained)["query"], "seen=token=abc123", "{chained}");

    // Send All goes the same way.
    let all = editor.command("volley.sendAll", &json!({"uri": uri}))["result"].clone();
    let statuses: Vec<Value> =
        all["results"].as_array().unwrap().iter().map(|o| o["response"]["status"].clone()).collect();
    assert_eq!(statuses, [200, 200, 200, 200].map(|status| json!(status)), "{all}");

    // An event stream is relayed by the server and listened to as a local one is.
    let events = editor.open(
        &workspace.0.join("events.http"),
        &format!("GET {}\nAccept: text/event-stream\n", upstream.url("/sse/events")),
    );
    let streamed = editor.command("volley.send", &json!({"uri": events, "index": 0}))["result"].clone();
    assert_eq!(streamed["response"]["status"], 200, "{streamed}");
    assert_eq!(streamed["response"]["stream"]["kind"], "sse", "{streamed}");
    assert!(!streamed["response"]["stream"]["items"].as_array().unwrap().is_empty(), "{streamed}");

    // What the server's session keeps cannot be cleared from here: said, not ignored.
    let cleared = editor.command("volley.clearCookies", &json!({"uri": uri}));
    let message = cleared["error"]["message"].as_str().unwrap();
    assert!(message.contains(&serve.url) && message.contains("session"), "{cleared}");

    // Copying as curl still builds the request here, and says so.
    let copied = editor.command("volley.copyAsCurl", &json!({"uri": uri, "index": 1}))["result"].clone();
    assert!(copied["curl"].as_str().unwrap().contains("/cookies/set?a=1"), "{copied}");
    assert!(copied["warnings"].to_string().contains("not by the execution server"), "{copied}");

    // A wrong token: a new session is refused, and the editor is told why.
    editor.notify(
        "workspace/didChangeConfiguration",
        &json!({"settings": {"volley": {"server": {"url": serve.url, "token": "wrong"}}}}),
    );
    let refused = send(&mut editor, 0);
    assert_eq!(refused["error"]["kind"], "server-unauthorized", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("token"), "{refused}");

    // Without the setting, sends are local again: the local jar has no cookie yet.
    editor.notify("workspace/didChangeConfiguration", &json!({"settings": {"volley": {"server": null}}}));
    let local = send(&mut editor, 2);
    assert!(local.get("server").is_none(), "{local}");
    assert_eq!(body_of(&local)["cookies"], json!({}), "{local}");
    editor.finish();
}

/// Requests with response handlers; `LOGIN` and `BEARER` stand for the upstream's URLs.
const SCRIPTS: &str = r#"### login
POST LOGIN
Content-Type: application/json

{"user": "ada", "password": "lovelace"}

> {%
  client.global.set("token", response.body.token);
  client.log("got", response.status);
  client.test("ok", () => client.assert(response.status === 200));
%}

### me
GET BEARER
Authorization: Bearer {{token}}

> {%
  client.test("created", () => client.assert(response.status === 201, "status " + response.status));
  response.body.missing.field;
%}
"#;

/// The 0-based line of [`SCRIPTS`] that holds `needle`.
fn scripts_line(needle: &str) -> u64 {
    SCRIPTS.lines().position(|line| line.contains(needle)).unwrap() as u64
}

/// An outcome's assertions as `(expression, passed, message, line)`.
fn assertions_of(outcome: &Value) -> Vec<(String, bool, Option<String>, u64)> {
    let assertions = outcome["response"]["assertions"].as_array().unwrap();
    assertions
        .iter()
        .map(|check| {
            let message = check["message"].as_str().map(str::to_owned);
            (check["expression"].as_str().unwrap().to_owned(), check["passed"].as_bool().unwrap(), message, {
                check["line"].as_u64().unwrap()
            })
        })
        .collect()
}

#[test]
fn script_tests_and_handler_failures_come_back_through_the_server() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let upstream = runtime.block_on(volley_echo_server::TestServer::start());
    let workspace = Workspace::new("scripts");
    let serve = Serve::start(&workspace.0, "t0ken");
    let mut editor = Editor::start(&json!({"server": {"url": serve.url, "token": "t0ken"}}), &workspace.0, &[]);
    let text = SCRIPTS.replace("LOGIN", &upstream.url("/login")).replace("BEARER", &upstream.url("/bearer"));
    let uri = editor.open(&workspace.0.join("scripts.http"), &text);

    // The test's name, result and line, as a local send gives them.
    let login = editor.command("volley.send", &json!({"uri": uri, "index": 0}))["result"].clone();
    assert_eq!(login["server"], json!(serve.url), "{login}");
    assert_eq!(assertions_of(&login), [("ok".to_owned(), true, None, scripts_line("client.test(\"ok\""))], "{login}");
    // What the handler logged, from the server's answer.
    assert_eq!(login["logs"], json!(["got 200"]), "{login}");

    // The global the handler set is the server session's: the next send uses it. A
    // failed test has what it threw; a handler that throws is one more failed result,
    // on the line it threw from, with the same message as a local send.
    let me = editor.command("volley.send", &json!({"uri": uri, "index": 1}))["result"].clone();
    assert_eq!(me["response"]["status"], 200, "the token was sent: {me}");
    assert_eq!(
        assertions_of(&me),
        [
            ("created".to_owned(), false, Some("AssertionError: status 200".to_owned()), scripts_line("\"created\"")),
            (
                "response handler".to_owned(),
                false,
                Some("TypeError: cannot read property 'field' of undefined".to_owned()),
                scripts_line("missing.field")
            ),
        ],
        "{me}"
    );
    editor.finish();
}

#[test]
fn an_unreachable_server_is_a_clear_error_that_names_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let upstream = runtime.block_on(volley_echo_server::TestServer::start());
    let workspace = Workspace::new("unreachable");
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let mut editor = Editor::start(&json!({"volley": {"server": {"url": url}}}), &workspace.0, &[]);
    let uri = editor.open(&workspace.0.join("api.http"), &format!("GET {}\n", upstream.url("/echo")));

    let outcome = editor.command("volley.send", &json!({"uri": uri, "index": 0}))["result"].clone();
    assert_eq!(outcome["error"]["kind"], "server-unreachable", "{outcome}");
    let message = outcome["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(message.contains("volley serve") && message.contains("`server` setting"), "{message}");
    assert!(outcome.get("response").is_none(), "{outcome}");

    // A cookie jar file that remote sends would not use is said so.
    let settings = json!({"settings": {"volley": {"server": {"url": url}, "cookieJar": "cookies.json"}}});
    editor.notify("workspace/didChangeConfiguration", &settings);
    let warning = editor.notification("window/showMessage");
    let message = warning["params"]["message"].as_str().unwrap();
    assert!(message.contains("`cookieJar`") && message.contains(&url), "{warning}");
    editor.finish();
}
