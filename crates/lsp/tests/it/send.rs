//! Code lenses and `workspace/executeCommand` through real JSON-RPC messages, sending to
//! a real HTTP server on 127.0.0.1 (`volley-echo-server`): structured results,
//! assertions, streaming responses, progress, cancellation, Send All; the active
//! profile (initialization options, `didChangeConfiguration`, `volley.selectProfile`)
//! and `volley.jsonc` changes, with the diagnostics that follow them; the hover preview
//! of a request line.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, range, uri};
use volley_echo_server::TestServer;

const TEXT: &str = concat!(
    "# Requests for the 🦀 service\n",                     // 0
    "###\n",                                               // 1
    "# @name echo\n",                                      // 2
    "# @assert status == 200\n",                           // 3
    "# @assert status == 201\n",                           // 4
    "POST {{host}}/echo?who={{who}}\n",                    // 5
    "Content-Type: application/json\n",                    // 6
    "Authorization: Bearer {{apiToken}}\n",                // 7
    "\n",                                                  // 8
    "{\"hello\": \"wörld\", \"only\": \"{{devOnly}}\"}\n", // 9
    "\n",                                                  // 10
    "### events\n",                                        // 11
    "GET {{host}}/sse/events\n",                           // 12
    "Accept: text/event-stream\n",                         // 13
);

fn config(server: &TestServer) -> String {
    format!(
        r#"{{
  "variables": {{ "host": "{}", "apiToken": "t0k3n-value" }},
  "profiles": {{
    "dev": {{ "variables": {{ "who": "dev", "devOnly": "yes" }} }},
    "other": {{ "variables": {{ "who": "other" }} }}
  }}
}}"#,
        server.base_url()
    )
}

/// A client initialized with `params`, the document open, its first diagnostics read.
async fn open(server: &TestServer, params: Value) -> (support::tempdir::Dir, String, TestClient, Vec<Value>) {
    let (dir, uri) = uri("api.http");
    std::fs::write(dir.path.join("volley.jsonc"), config(server)).expect("config file");
    let mut client = TestClient::start();
    let capabilities = client.initialize_with(params).await["capabilities"].clone();
    assert_eq!(
        capabilities["executeCommandProvider"]["commands"],
        json!([
            "volley.send",
            "volley.sendAll",
            "volley.selectProfile",
            "volley.profiles",
            "volley.clearCookies",
            "volley.copyAsCurl",
            "volley.import",
            "volley.filter",
            "volley.tests",
            "volley.history",
            "volley.historyEntry",
            "volley.historyClear",
            "volley.snippet"
        ])
    );
    assert_eq!(capabilities["codeLensProvider"]["resolveProvider"], json!(false));
    client.open(&uri, TEXT).await;
    let diagnostics = client.diagnostics(1).await;
    (dir, uri, client, diagnostics)
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics.iter().map(|diagnostic| diagnostic["code"].as_str().unwrap_or("config").to_owned()).collect()
}

/// `value` with the run-dependent parts replaced: the document's URI, the server's port.
fn stable(value: &Value, uri: &str, server: &TestServer) -> Value {
    let text = value.to_string().replace(uri, "<uri>").replace(&server.base_url(), "<server>");
    serde_json::from_str(&text).expect("JSON")
}

async fn execute(client: &mut TestClient, command: &str, argument: Value) -> Value {
    client.request("workspace/executeCommand", json!({"command": command, "arguments": [argument]})).await
}

#[tokio::test]
async fn code_lenses_send_requests_with_results_progress_and_streams() {
    let server = TestServer::start().await;
    let (_dir, uri, mut client, diagnostics) =
        open(&server, json!({"capabilities": {}, "initializationOptions": {"profile": "dev"}})).await;
    assert_eq!(diagnostics, Vec::<Value>::new(), "every variable is defined in profile dev");

    let lenses = client.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    insta::assert_json_snapshot!("code_lenses", stable(&lenses, &uri, &server));

    // Send Request with the client's progress token.
    let result = client
        .request(
            "workspace/executeCommand",
            json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}], "workDoneToken": "send-1"}),
        )
        .await;
    let response = &result["response"];
    assert_eq!(
        result["request"],
        json!({"index": 0, "name": "echo", "method": "POST", "url": "{{host}}/echo?who={{who}}", "line": 5})
    );
    assert_eq!(response["status"], 200);
    assert_eq!(response["statusText"], "OK");
    assert_eq!(response["bodyEncoding"], "text");
    assert_eq!(response["contentType"], "application/json");
    let echoed: Value = serde_json::from_str(response["body"].as_str().expect("body")).expect("echo JSON");
    assert_eq!(echoed["query"], "who=dev", "the active profile's variables");
    assert_eq!(echoed["body"], "{\"hello\": \"wörld\", \"only\": \"yes\"}");
    assert!(response["headers"].as_array().expect("headers").iter().any(|pair| pair[0] == "content-type"));
    assert!(response["timing"]["totalMs"].as_f64().expect("timing") > 0.0);
    assert_eq!(
        response["assertions"],
        json!([
            {"expression": "status == 200", "passed": true, "line": 3},
            {"expression": "status == 201", "passed": false, "message": "expected status == 201, got 200",
             "expected": "status == 201", "actual": "200", "line": 4},
        ])
    );
    let begin = client.notification("$/progress").await;
    assert_eq!(begin["token"], "send-1");
    assert_eq!(begin["value"]["kind"], "begin");
    assert_eq!(begin["value"]["title"], "Sending POST {{host}}/echo?who={{who}}");
    let end = client.notification("$/progress").await;
    assert_eq!(end["value"], json!({"kind": "end", "message": "done"}));

    // An event stream: its first events, within the listening window.
    let result = execute(
        &mut client,
        "volley.send",
        json!({"uri": uri, "name": "events", "maxStreamItems": 2, "streamWindowMs": 5000, "live": "live-1"}),
    )
    .await;
    let stream = &result["response"]["stream"];
    assert_eq!(stream["kind"], "sse");
    assert_eq!(stream["stopped"], "limit");
    assert_eq!(stream["items"].as_array().expect("events").len(), 2);
    assert!(stream["items"][0]["data"].is_string());
    // With a `live` id, the opening and every event also came as `volley/stream`
    // notifications while listening.
    let opened = client.notification("volley/stream").await;
    assert_eq!(opened, json!({"live": "live-1", "requestIndex": 1, "kind": "sse", "status": 200}));
    for item in stream["items"].as_array().expect("events") {
        let update = client.notification("volley/stream").await;
        assert_eq!(update["live"], "live-1");
        assert_eq!(update["requestIndex"], 1);
        assert_eq!(&update["item"], item);
    }

    // By the cursor's line (the command palette): line 13 is in the second request.
    let result = execute(&mut client, "volley.send", json!({"uri": uri, "line": 13, "streamWindowMs": 50})).await;
    assert_eq!(result["request"]["name"], "events");

    // A request that does not exist: a clear error, no panic.
    let error = client
        .request_error(
            "workspace/executeCommand",
            json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 9}]}),
        )
        .await;
    assert_eq!(error["message"], "the document has no request #10");
    client.shutdown().await;
}

#[tokio::test]
async fn send_all_reports_progress_on_a_token_the_server_creates() {
    let server = TestServer::start().await;
    let params =
        json!({"capabilities": {"window": {"workDoneProgress": true}}, "initializationOptions": {"profile": "dev"}});
    let (_dir, uri, mut client, _) = open(&server, params).await;
    let result = execute(&mut client, "volley.sendAll", json!({"uri": uri, "streamWindowMs": 100})).await;
    assert_eq!(result["cancelled"], false);
    let results = result["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["response"]["status"], 200);
    assert_eq!(results[1]["response"]["stream"]["kind"], "sse");

    let create = client.server_requests.iter().find(|request| request["method"] == "window/workDoneProgress/create");
    let token = create.expect("a progress token created")["params"]["token"].clone();
    let mut kinds = Vec::new();
    loop {
        let progress = client.notification("$/progress").await;
        assert_eq!(progress["token"], token);
        kinds.push(progress["value"]["kind"].as_str().expect("kind").to_owned());
        if progress["value"]["kind"] == "report" {
            assert!(progress["value"]["message"].as_str().expect("message").contains("/2 "), "{progress}");
        }
        if progress["value"]["kind"] == "end" {
            break;
        }
    }
    assert_eq!(kinds, ["begin", "report", "report", "end"]);
    client.shutdown().await;
}

#[tokio::test]
async fn a_long_request_is_cancelled_by_its_progress_or_by_cancel_request() {
    let server = TestServer::start().await;
    let (dir, uri) = uri("slow.http");
    let text = format!("GET {}\n", server.url("/slow?ms=20000"));
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &text).await;

    // The progress's cancel button.
    let id = client
        .start_request(
            "workspace/executeCommand",
            json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}], "workDoneToken": "slow"}),
        )
        .await;
    let begin = client.notification("$/progress").await;
    assert_eq!(begin["value"]["cancellable"], true);
    client.notify("window/workDoneProgress/cancel", json!({"token": "slow"})).await;
    let response = client.response(id).await;
    assert_eq!(response["result"]["error"]["kind"], "cancelled", "{response}");
    let end = client.notification("$/progress").await;
    assert_eq!(end["value"], json!({"kind": "end", "message": "cancelled"}));

    // `$/cancelRequest`: the request fails as cancelled and its progress still ends.
    let id = client
        .start_request(
            "workspace/executeCommand",
            json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}], "workDoneToken": "slow-2"}),
        )
        .await;
    client.notification("$/progress").await;
    client.notify("$/cancelRequest", json!({"id": id})).await;
    let response = client.response(id).await;
    assert_eq!(response["error"]["code"], -32800, "{response}");
    let end = client.notification("$/progress").await;
    assert_eq!(end["value"], json!({"kind": "end", "message": "cancelled"}));

    // A cancel pressed before the progress began (the editor's token, cancelled while
    // the command still read its document): the send begins cancelled and sends nothing.
    client.notify("window/workDoneProgress/cancel", json!({"token": "early"})).await;
    let started = std::time::Instant::now();
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}], "workDoneToken": "early"}),
        )
        .await;
    assert_eq!(response["error"]["kind"], "cancelled", "{response}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "not the 20 s of the slow answer");
    drop(dir);
    client.shutdown().await;
}

#[tokio::test]
async fn the_active_profile_decides_diagnostics_and_is_listed() {
    let server = TestServer::start().await;
    let (dir, uri, mut client, diagnostics) = open(&server, json!({"capabilities": {}})).await;
    // No profile: every profile's variables count (as `volley check`).
    assert_eq!(diagnostics, Vec::<Value>::new());

    let profiles = execute(&mut client, "volley.profiles", json!({"uri": uri})).await;
    assert_eq!(profiles["profiles"], json!(["dev", "other"]));
    assert_eq!(profiles["active"], Value::Null);
    assert_eq!(profiles["config"], json!(dir.path.join("volley.jsonc")));

    // Profile `other` has no `devOnly`.
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"volley": {"profile": "other"}}})).await;
    let diagnostics = client.diagnostics(1).await;
    assert_eq!(codes(&diagnostics), ["undefined-variable"]);
    assert_eq!(diagnostics[0]["range"], range((9, 30), (9, 37)));

    // An unknown profile: one error at the top, with the profiles there are.
    let selected = execute(&mut client, "volley.selectProfile", json!("stagin")).await;
    assert_eq!(selected["active"], "stagin");
    let diagnostics = client.diagnostics(1).await;
    assert_eq!(diagnostics[0]["range"], range((0, 0), (0, 0)));
    let message = diagnostics[0]["message"].as_str().expect("message");
    assert!(message.contains("stagin") && message.contains("volley.selectProfile"), "{message}");

    let selected = execute(&mut client, "volley.selectProfile", json!("dev")).await;
    assert_eq!(selected["active"], "dev");
    assert_eq!(client.diagnostics(1).await, Vec::<Value>::new());
    let profiles = execute(&mut client, "volley.profiles", json!({"uri": uri})).await;
    assert_eq!(profiles["active"], "dev");

    // Completion shows the active profile's values.
    let items = client
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 5, "character": 25}}),
        )
        .await;
    let who = items["items"].as_array().expect("items").iter().find(|item| item["label"] == "who").cloned();
    assert_eq!(who.expect("who")["detail"], "dev (profile dev)");
    client.shutdown().await;
}

#[tokio::test]
async fn volley_jsonc_is_watched_and_its_changes_republish() {
    let server = TestServer::start().await;
    let params = json!({"capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}});
    let (dir, uri, mut client, _) = open(&server, params).await;
    // Edit the document so it uses a variable nobody defines yet.
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"range": range((13, 0), (13, 0)), "text": "X-Later: {{later}}\n"}]}),
        )
        .await;
    let diagnostics = client.diagnostics(2).await;
    assert!(codes(&diagnostics).contains(&"undefined-variable".to_owned()), "{diagnostics:?}");

    let registration = client.server_requests.iter().find(|request| request["method"] == "client/registerCapability");
    let registration = &registration.expect("the server watches files")["params"]["registrations"][0];
    assert_eq!(registration["method"], "workspace/didChangeWatchedFiles");
    assert_eq!(registration["registerOptions"]["watchers"][0]["globPattern"], "**/volley.jsonc");

    let with_later = config(&server).replacen("\"variables\": {", "\"variables\": { \"later\": 1,", 1);
    std::fs::write(dir.path.join("volley.jsonc"), with_later).expect("config file");
    let changed = format!("{}/volley.jsonc", uri.trim_end_matches("/api.http"));
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": changed, "type": 2}]})).await;
    assert_eq!(client.diagnostics(2).await, Vec::<Value>::new());

    // The configuration open in the editor: its unsaved text is what counts.
    let original = config(&server);
    client
        .notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": changed, "languageId": "jsonc", "version": 1, "text": original}}),
        )
        .await;
    let diagnostics = client.diagnostics(2).await;
    assert!(codes(&diagnostics).contains(&"undefined-variable".to_owned()), "`later` is gone: {diagnostics:?}");
    let edited = original.replacen("\"variables\": {", "\"variables\": { \"later\": 2,", 1);
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": changed, "version": 2}, "contentChanges": [{"text": edited}]}),
        )
        .await;
    assert_eq!(client.diagnostics(2).await, Vec::<Value>::new());
    client.shutdown().await;
}

#[tokio::test]
async fn dot_env_files_are_watched_and_their_changes_republish() {
    let server = TestServer::start().await;
    let params = json!({"capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}});
    let (dir, uri, mut client, _) = open(&server, params).await;
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"range": range((13, 0), (13, 0)), "text": "X-Env: {{from_dotenv}}\n"}]}),
        )
        .await;
    let diagnostics = client.diagnostics(2).await;
    assert!(codes(&diagnostics).contains(&"undefined-variable".to_owned()), "{diagnostics:?}");
    let registration = client.server_requests.iter().find(|request| request["method"] == "client/registerCapability");
    let watchers =
        &registration.expect("the server watches files")["params"]["registrations"][0]["registerOptions"]["watchers"];
    assert!(watchers.as_array().expect("watchers").iter().any(|watcher| watcher["globPattern"] == "**/.env"));

    std::fs::write(dir.path.join(".env"), "from_dotenv=1\n").expect(".env file");
    let changed = format!("{}/.env", uri.trim_end_matches("/api.http"));
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": changed, "type": 1}]})).await;
    assert_eq!(client.diagnostics(2).await, Vec::<Value>::new());
    client.shutdown().await;
}

#[tokio::test]
async fn hovering_a_request_line_previews_the_resolved_request() {
    let server = TestServer::start().await;
    let (_dir, uri, mut client, _) =
        open(&server, json!({"capabilities": {}, "initializationOptions": {"profile": "dev"}})).await;
    let hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 5, "character": 1}}))
        .await;
    assert_eq!(hover["range"], range((5, 0), (5, 30)));
    let text = hover["contents"]["value"].as_str().expect("markdown");
    let text = text.replace(&server.base_url(), "<server>");
    assert!(!text.contains("t0k3n-value"), "the token is masked: {text}");
    insta::assert_snapshot!(
        "request_preview",
        text.lines().filter(|line| !line.starts_with("user-agent")).collect::<Vec<_>>().join("\n")
    );
    client.shutdown().await;
}

#[tokio::test]
async fn a_websocket_send_answers_its_first_messages() {
    let server = TestServer::start().await;
    let (_dir, uri) = uri("ws.http");
    let socket = server.url("/ws/count?n=3").replace("http://", "ws://");
    let echo = server.url("/ws/echo").replace("http://", "ws://");
    let text = format!(
        "### counts\nWEBSOCKET {socket}\n\n### endless\nWEBSOCKET {echo}\n\n\
         ### talks\nWEBSOCKET {echo}\n\nhi\n=== wait-for-server\nclose-me\n"
    );
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &text).await;
    let result = execute(&mut client, "volley.send", json!({"uri": uri, "index": 0, "streamWindowMs": 5000})).await;
    let response = &result["response"];
    assert_eq!(response["status"], 101, "{result}");
    let stream = &response["stream"];
    assert_eq!(stream["kind"], "websocket");
    assert_eq!(stream["stopped"], "ended");
    let items: Vec<(String, String)> = stream["items"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|item| {
            (item["event"].as_str().expect("event").to_owned(), item["data"].as_str().expect("data").to_owned())
        })
        .collect();
    let expected = [("text", "1"), ("text", "2"), ("text", "3"), ("close", "1000 done")];
    assert_eq!(items, expected.map(|(event, data)| (event.to_owned(), data.to_owned())));

    // A socket that stays open: listened to for the window, then closed by the server.
    let result = execute(&mut client, "volley.send", json!({"uri": uri, "index": 1, "streamWindowMs": 100})).await;
    assert_eq!(result["response"]["stream"]["stopped"], "window", "{result}");
    assert_eq!(result["response"]["stream"]["items"], json!([]));

    // A definition with messages: they are sent in their turn, shown among the server's.
    let result = execute(&mut client, "volley.send", json!({"uri": uri, "index": 2, "streamWindowMs": 5000})).await;
    let items: Vec<(&str, &str)> = result["response"]["stream"]["items"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|item| (item["event"].as_str().expect("event"), item["data"].as_str().expect("data")))
        .collect();
    assert_eq!(items, [("sent", "hi"), ("text", "hi"), ("sent", "close-me"), ("close", "4000 asked to")], "{result}");
    client.shutdown().await;
}

#[tokio::test]
async fn send_all_runs_every_request_without_errors_and_refuses_the_others() {
    let server = TestServer::start().await;
    let (dir, uri) = uri("partial.http");
    let base = server.base_url();
    let text = format!(
        "# @name first\nGET {base}/status/200\n\n\
         ###\n# @name broken\nGET {base}/echo\nX-Header without a colon\n\n\
         ###\n# @name off\n# @disabled\nDELETE {base}/echo\n\n\
         ###\n# @name careful\n# @note wipes the cache\nDELETE {base}/echo\n\n\
         ###\n# @name last\nGET {base}/status/201\n"
    );
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &text).await;

    // The question of `# @note` is dismissed: not sent.
    let result = execute(&mut client, "volley.sendAll", json!({"uri": uri})).await;
    let results = result["results"].as_array().expect("results");
    assert_eq!(results.len(), 5);
    assert_eq!(results[0]["response"]["status"], 200);
    assert_eq!(results[1]["error"]["kind"], "invalid", "{}", results[1]);
    assert_eq!(
        results[1]["error"]["diagnostics"],
        json!([{
            "code": "malformed-header",
            "message": "header line without `:`: `X-Header without a colon`",
            "hint": "write headers as `Name: value`; a blank line starts the body",
            "line": 6
        }])
    );
    assert!(results[1].get("response").is_none());
    assert_eq!(results[2]["error"]["kind"], "disabled");
    assert_eq!(results[3]["error"]["kind"], "not-confirmed");
    assert_eq!(results[4]["response"]["status"], 201, "the requests after a refused one still run");
    let question = client
        .server_requests
        .iter()
        .find(|request| request["method"] == "window/showMessageRequest")
        .expect("the note was asked about");
    assert_eq!(question["params"]["message"], format!("Send `careful` (DELETE {base}/echo)? wipes the cache"));
    assert_eq!(question["params"]["actions"], json!([{"title": "Send"}, {"title": "Cancel"}]));

    // Confirmed: sent. A disabled request is not sent even when asked for by name.
    client.answers.insert("window/showMessageRequest".to_owned(), json!({"title": "Send"}));
    let result = execute(&mut client, "volley.send", json!({"uri": uri, "name": "careful"})).await;
    assert_eq!(result["response"]["status"], 200, "{result}");
    let result = execute(&mut client, "volley.send", json!({"uri": uri, "name": "off"})).await;
    assert_eq!(
        result["error"],
        json!({
            "kind": "disabled",
            "message": "not sent: the request is disabled (`# @disabled`); remove the directive to send it"
        })
    );
    drop(dir);
    client.shutdown().await;
}

#[tokio::test]
async fn send_refuses_the_requests_the_cli_and_the_server_refuse() {
    let server = TestServer::start().await;
    let (_dir, uri) = uri("broken.http");
    let base = server.base_url();
    // The broken `@token` is in the block of `plain`, which does not use it: the error
    // refuses `uses-token`, which uses it through `auth`, and nothing else.
    let text = format!(
        "@auth = Bearer {{{{token}}}}\n\n\
         ###\n# @name plain\n@token = {{{{unclosed\nGET {base}/status/200\n\n\
         ###\n# @name uses-token\nGET {base}/echo\nAuthorization: {{{{auth}}}}\n"
    );
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &text).await;

    let broken_variable = json!({
        "kind": "invalid",
        "message": "the request has 1 error(s); the first: 11:18: error[broken-variable]: `auth` uses `token`, \
                    declared on line 5, which has errors (hint: fix `@token` on line 5; the requests that do not use \
                    it can still be sent)",
        "diagnostics": [{
            "code": "broken-variable",
            "message": "`auth` uses `token`, declared on line 5, which has errors",
            "hint": "fix `@token` on line 5; the requests that do not use it can still be sent",
            "line": 10
        }]
    });
    let result = execute(&mut client, "volley.sendAll", json!({"uri": uri})).await;
    let results = result["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["response"]["status"], 200, "{}", results[0]);
    assert_eq!(results[1]["error"], broken_variable);
    assert!(results[1].get("response").is_none());

    let result = execute(&mut client, "volley.send", json!({"uri": uri, "name": "plain"})).await;
    assert_eq!(result["response"]["status"], 200, "{result}");
    let result = execute(&mut client, "volley.send", json!({"uri": uri, "name": "uses-token"})).await;
    assert_eq!(result["error"], broken_variable);
    client.shutdown().await;
}

/// A marker in each secret source the language server reads: a `$secret` (from a `.env`
/// file), a sensitive variable of `volley.jsonc`, of the active profile and of a `.env`
/// file, a literal `Authorization` header. None may show in a hover preview, a Send
/// Request result (URLs, headers, assertions, errors; the upstream's body is the user's
/// own, but secrets in it are hidden too) or a notification.
#[tokio::test]
async fn no_result_of_the_language_server_shows_a_secret() {
    const MARKERS: [&str; 5] =
        ["m4rk-lsp-secret", "m4rk-lsp-config", "m4rk-lsp-profile", "m4rk-lsp-dotenv", "m4rk-lsp-bearer"];
    let server = TestServer::start().await;
    let (dir, uri) = uri("secrets.http");
    std::fs::write(
        dir.path.join("volley.jsonc"),
        format!(
            r#"{{ "variables": {{ "host": "{}", "apiKey": "m4rk-lsp-config" }},
                 "profiles": {{ "dev": {{ "variables": {{ "dbPassword": "m4rk-lsp-profile" }} }} }} }}"#,
            server.base_url()
        ),
    )
    .expect("config file");
    std::fs::write(dir.path.join(".env"), "VAULT=m4rk-lsp-secret\nAPI_TOKEN=m4rk-lsp-dotenv\n").expect(".env file");
    let all = "{{$secret(VAULT)}}.{{apiKey}}.{{dbPassword}}.{{API_TOKEN}}";
    let text = format!(
        "### everywhere\n# @assert header x-missing == {all}\n# @assert jsonpath $.url == \"nope\"\n\
         POST {{{{host}}}}/echo?all={all}\nAuthorization: Bearer m4rk-lsp-bearer\nX-All: {all}\n\n{all}\n\n\
         ### unparsable\nGET http://[{all}/x\n"
    );
    let mut client = TestClient::start();
    client.initialize_with(json!({"capabilities": {}, "initializationOptions": {"profile": "dev"}})).await;
    client.open(&uri, &text).await;
    let mut outputs = Vec::new();
    for line in [3, 10] {
        let hover = client
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": 1}}),
            )
            .await;
        assert!(hover["contents"]["value"].as_str().is_some_and(|text| text.contains("preview")), "{hover}");
        outputs.push(("a hover preview".to_owned(), hover.to_string()));
    }
    let sent = execute(&mut client, "volley.send", json!({"uri": uri, "index": 0})).await;
    let echoed = sent["response"]["body"].as_str().expect("the echo").to_owned();
    assert!(echoed.contains("[REDACTED]"), "the request reached the upstream: {sent}");
    assert_eq!(sent["response"]["assertions"].as_array().map(Vec::len), Some(2), "{sent}");
    outputs.push(("the Send Request result".to_owned(), sent.to_string()));
    let failed = execute(&mut client, "volley.send", json!({"uri": uri, "index": 1})).await;
    assert_eq!(failed["error"]["kind"], "invalid-url", "{failed}");
    outputs.push(("the Send Request error".to_owned(), failed.to_string()));
    for notification in client.pending_notifications() {
        outputs.push((format!("the notification {}", notification["method"]), notification.to_string()));
    }
    let leaks: Vec<String> = outputs
        .iter()
        .filter(|(_, text)| MARKERS.iter().any(|marker| text.contains(marker)))
        .map(|(name, text)| format!("{name}: {text}"))
        .collect();
    assert!(leaks.is_empty(), "{}", leaks.join("\n\n"));
    client.shutdown().await;
}

/// A request owns its whole block: a cursor on any line from its `###` line to the next
/// (the separator, `# @name`, a directive, a comment, the request line, a header, the
/// body, a blank line) sends it, never the request before. Checked on the echo server:
/// each request's path says which one was sent.
#[tokio::test]
async fn a_cursor_anywhere_in_a_block_sends_that_blocks_request() {
    let server = TestServer::start().await;
    let host = server.base_url();
    let lines = [
        ("@base = x", None),          // 0: before the first `###`, no request there
        ("### first", Some("first")), // 1
        ("DELETE {{host}}/echo/one", Some("first")),
        ("", Some("first")),
        ("### second", Some("second")), // 4
        ("# @name second", Some("second")),
        ("# @timeout 10s", Some("second")),
        ("# a comment", Some("second")),
        ("// another", Some("second")),
        ("POST {{host}}/echo/two", Some("second")),
        ("Content-Type: text/plain", Some("second")),
        ("", Some("second")),
        ("body", Some("second")),
        ("", Some("second")),
        ("###", Some("third")), // 14
        ("# @name third", Some("third")),
        ("GET {{host}}/echo/three", Some("third")),
    ];
    let text: String = lines.iter().flat_map(|(line, _)| [*line, "\n"]).collect();
    let (dir, uri) = uri("cursor.http");
    std::fs::write(dir.path.join("volley.jsonc"), format!(r#"{{"variables": {{"host": "{host}"}}}}"#)).expect("config");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &text).await;
    client.diagnostics(1).await;
    let paths = [("first", "/echo/one"), ("second", "/echo/two"), ("third", "/echo/three")];
    for (line, (written, owner)) in lines.iter().enumerate() {
        let argument = json!({"uri": uri, "line": line});
        let Some(owner) = owner else {
            let error = client
                .request_error("workspace/executeCommand", json!({"command": "volley.send", "arguments": [argument]}))
                .await;
            let message = error["message"].as_str().expect("message");
            assert!(message.contains("line 1 is in a block without a request"), "{message}");
            continue;
        };
        let result = execute(&mut client, "volley.send", argument).await;
        assert_eq!(result["request"]["name"], *owner, "line {line} `{written}`: {result}");
        let echoed: Value = serde_json::from_str(result["response"]["body"].as_str().expect("body")).expect("echo");
        let path = paths.iter().find(|(name, _)| name == owner).expect("path").1;
        assert_eq!(echoed["path"], path, "line {line} `{written}` was sent to the server as its own request");
    }
}

#[tokio::test]
async fn a_send_runs_first_the_requests_whose_responses_it_reads_once_per_session() {
    let server = TestServer::start().await;
    let host = server.base_url();
    let text = format!(
        "@token = {{{{login.response.body.$.body_len}}}}\n\n### login\nPOST {host}/echo/login\nContent-Type: application/json\n\n{{\"token\": \"t-1\"}}\n\n### profile\nGET {host}/echo/profile?user={{{{profile_id}}}}\n\n### me\n# @name me\nGET {host}/echo/me?token={{{{token}}}}&seen={{{{login.response.status}}}}\n"
    );
    let (dir, uri) = uri("chain.http");
    std::fs::write(dir.path.join("volley.jsonc"), "{}").expect("config");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &text).await;
    client.diagnostics(1).await;

    let me = execute(&mut client, "volley.send", json!({"uri": uri, "index": 2})).await;
    assert_eq!(me["request"]["name"], "me", "{me}");
    let first: Vec<&str> = me["ranFirst"]
        .as_array()
        .expect("ranFirst")
        .iter()
        .map(|outcome| outcome["request"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(first, ["login"], "only the request it reads: {me}");
    let echoed: Value =
        serde_json::from_str(me["response"]["body"].as_str().unwrap_or_else(|| panic!("a body: {me}"))).expect("echo");
    assert_eq!(echoed["query"], "token=16&seen=200", "{echoed}");

    // Once answered in this session, it is not sent again.
    let again = execute(&mut client, "volley.send", json!({"uri": uri, "index": 2})).await;
    assert!(again.get("ranFirst").is_none(), "{again}");
}

/// An httpyac project: its environments and its `env/` files are the profiles the
/// editor lists and selects, and a request sent with one uses its values.
#[tokio::test]
async fn another_tools_environments_are_profiles_in_the_editor() {
    let server = TestServer::start().await;
    let (dir, uri) = uri("api.http");
    std::fs::write(
        dir.path.join(".httpyac.json"),
        json!({"environments": {"$shared": {"host": server.base_url()}, "dev": {"who": "dev"}}}).to_string(),
    )
    .expect("httpyac config");
    std::fs::create_dir_all(dir.path.join("env")).expect("env folder");
    std::fs::write(dir.path.join("env/qa.env"), "who=qa\n").expect("env file");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, "GET {{host}}/echo?who={{who}}\n").await;
    // No profile: every environment's variables count.
    assert_eq!(client.diagnostics(1).await, Vec::<Value>::new());
    let profiles = execute(&mut client, "volley.profiles", json!({"uri": uri})).await;
    assert_eq!(profiles["profiles"], json!(["dev", "qa"]));
    assert_eq!(profiles["config"], json!(dir.path.join(".httpyac.json")));
    execute(&mut client, "volley.selectProfile", json!("qa")).await;
    assert_eq!(client.diagnostics(1).await, Vec::<Value>::new());
    let sent = execute(&mut client, "volley.send", json!({"uri": uri, "index": 0})).await;
    let body: Value = serde_json::from_str(sent["response"]["body"].as_str().expect("body")).expect("JSON");
    assert_eq!(body["query"], "who=qa", "{sent}");
    client.shutdown().await;
}
