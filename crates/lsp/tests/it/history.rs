//! The editor features of issue 41 over real JSON-RPC messages, against a real HTTP
//! server on 127.0.0.1: test discovery (`volley.tests`), the response history
//! (`volley.history`, `volley.historyEntry`, `volley.historyClear`, the outcome's
//! `historyId`) and code snippets (`volley.snippet`), whose JavaScript is run by the real
//! Node and whose Python by the real Python with requests.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, tempdir};
use volley_echo_server::TestServer;

async fn execute(client: &mut TestClient, command: &str, argument: Value) -> Value {
    client.request("workspace/executeCommand", json!({"command": command, "arguments": [argument]})).await
}

fn text(server: &TestServer) -> String {
    format!(
        "@host = {}\n\n### counted\n# @name counted\n# @assert status == 200\nGET {{{{host}}}}/echo/{{{{$uuid}}}}\n\n> {{%\nclient.test('is json', () => {{}});\n%}}\n\n### gone\nGET http://127.0.0.1:9/nothing\n",
        server.base_url()
    )
}

#[tokio::test]
async fn sends_are_kept_listed_opened_and_cleared() {
    let server = TestServer::start().await;
    let dir = tempdir::Dir::new();
    let store = dir.path.join("history");
    let file = dir.path.join("api.http");
    let uri = format!("file://{}", file.display());
    let mut client = TestClient::start();
    client
        .initialize_with(
            json!({"capabilities": {}, "initializationOptions": {"history": {"dir": store, "perRequest": 2}}}),
        )
        .await;
    client.open(&uri, &text(&server)).await;

    let mut ids = Vec::new();
    for _ in 0..3 {
        let outcome = execute(&mut client, "volley.send", json!({"uri": uri, "name": "counted"})).await;
        assert_eq!(outcome["response"]["status"], 200, "{outcome}");
        ids.push(outcome["historyId"].as_str().expect("a history id").to_owned());
    }
    let failed = execute(&mut client, "volley.send", json!({"uri": uri, "index": 1})).await;
    assert_eq!(failed["error"]["kind"], "connection_refused", "{failed}");
    assert!(failed["historyId"].is_string(), "a transport error is kept too: {failed}");

    // The last two of `counted` (perRequest 2), newest first, and the failure.
    let listed = execute(&mut client, "volley.history", json!({"uri": uri})).await;
    let entries = listed["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 3, "{listed}");
    assert_eq!(entries[0]["error"]["kind"], "connection_refused");
    assert_eq!(entries[1]["id"], ids[2].as_str());
    assert_eq!(entries[2]["id"], ids[1].as_str());
    assert_eq!(
        entries[1]["request"],
        json!({"index": 0, "name": "counted", "method": "GET", "url": "{{host}}/echo/{{$uuid}}", "line": 5})
    );
    assert_eq!(entries[1]["source"], "editor");
    let of_request = execute(&mut client, "volley.history", json!({"uri": uri, "name": "counted", "limit": 1})).await;
    assert_eq!(of_request["entries"].as_array().expect("entries").len(), 1);

    // The two texts differ in the echoed URL only: what a diff shows.
    let newer = execute(&mut client, "volley.historyEntry", json!({"id": ids[2]})).await;
    let older = execute(&mut client, "volley.historyEntry", json!({"id": ids[1]})).await;
    let (newer, older) = (read(&newer["path"]), read(&older["path"]));
    assert!(newer.starts_with("HTTP/1.1 200 OK\n"), "{newer}");
    assert!(newer.contains("\n\n{\n  \""), "the JSON body indented: {newer}");
    // A path of one length (a UUID), so only it differs, and the date at a second's turn.
    let differing: Vec<_> = newer.lines().zip(older.lines()).filter(|(a, b)| a != b).collect();
    assert!(differing.iter().any(|(a, _)| a.contains("/echo/")), "{differing:?}");
    assert!(differing.iter().all(|(a, _)| a.contains("/echo/") || a.starts_with("date:")), "{differing:?}");
    let error = client
        .request_error(
            "workspace/executeCommand",
            json!({"command": "volley.historyEntry", "arguments": [{"id": ids[0]}]}),
        )
        .await;
    assert!(error["message"].as_str().expect("message").contains("no entry"), "{error}");

    // A new server process reads the same store: the history outlives the session.
    client.shutdown().await;
    let mut client = TestClient::start();
    client.initialize_with(json!({"capabilities": {}, "initializationOptions": {"history": {"dir": store}}})).await;
    let listed = execute(&mut client, "volley.history", json!({"uri": uri})).await;
    assert_eq!(listed["entries"].as_array().expect("entries").len(), 3);
    let cleared = execute(&mut client, "volley.historyClear", json!({"uri": uri})).await;
    assert_eq!(cleared["cleared"], 3);
    let listed = execute(&mut client, "volley.history", json!({})).await;
    assert_eq!(listed["entries"], json!([]));
    client.shutdown().await;
}

fn read(path: &Value) -> String {
    std::fs::read_to_string(path.as_str().expect("a path")).expect("the text view")
}

#[tokio::test]
async fn tests_of_a_file_that_is_not_open_are_listed_from_disk() {
    let server = TestServer::start().await;
    let dir = tempdir::Dir::new();
    let file = dir.path.join("api.http");
    std::fs::write(&file, text(&server)).expect("the file");
    let uri = format!("file://{}", file.display());
    let mut client = TestClient::start();
    client.initialize().await;
    let answer = execute(&mut client, "volley.tests", json!({"uri": uri})).await;
    assert_eq!(
        answer["requests"][0],
        json!({"index": 0, "name": "counted", "method": "GET", "url": "{{host}}/echo/{{$uuid}}", "line": 5,
               "endLine": 9, "disabled": false,
               "checks": [{"kind": "assert", "label": "status == 200", "line": 4},
                          {"kind": "test", "label": "is json", "line": 8}]})
    );
    // The open document's unsaved text wins.
    client.open(&uri, "GET http://x/only\n").await;
    let answer = execute(&mut client, "volley.tests", json!({"uri": uri})).await;
    assert_eq!(answer["requests"].as_array().expect("requests").len(), 1);
    assert_eq!(answer["requests"][0]["url"], "http://x/only");
    let missing = format!("file://{}", dir.path.join("missing.http").display());
    let error = client
        .request_error("workspace/executeCommand", json!({"command": "volley.tests", "arguments": [{"uri": missing}]}))
        .await;
    assert!(error["message"].as_str().expect("message").contains("cannot read"), "{error}");
    client.shutdown().await;
}

#[tokio::test]
async fn snippets_send_what_send_sends() {
    let server = TestServer::start().await;
    let dir = tempdir::Dir::new();
    let uri = format!("file://{}", dir.path.join("api.http").display());
    let text = format!(
        "### json\nPOST {}/echo/orders?who=O'Hara\nContent-Type: application/json\nX-Quote: it's \"q\" $HOME\n\n{{\"name\": \"café 🦀\", \"n\": \"a\\nb\"}}\n",
        server.base_url()
    );
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &text).await;
    let languages = execute(&mut client, "volley.snippet", json!({})).await;
    let ids: Vec<&str> =
        languages["languages"].as_array().expect("languages").iter().filter_map(|l| l["id"].as_str()).collect();
    assert_eq!(ids, ["curl", "fetch", "python", "go"]);

    let sent = execute(&mut client, "volley.send", json!({"uri": uri, "index": 0})).await;
    let by_send = received(&serde_json::from_str(sent["response"]["body"].as_str().expect("body")).expect("JSON"));
    for (language, program, extension) in [("fetch", "node", "mjs"), ("python", "python3", "py")] {
        let snippet =
            execute(&mut client, "volley.snippet", json!({"uri": uri, "index": 0, "language": language})).await;
        assert_eq!(snippet["warnings"], json!([]), "{snippet}");
        let code = snippet["code"].as_str().expect("code").to_owned();
        let path = dir.path.join(format!("snippet.{extension}"));
        std::fs::write(&path, &code).expect("the snippet");
        let output = tokio::task::spawn_blocking(move || std::process::Command::new(program).arg(&path).output())
            .await
            .expect("ran")
            .unwrap_or_else(|error| panic!("{program} runs: {error}"));
        assert!(output.status.success(), "{language}: {}\n{code}", String::from_utf8_lossy(&output.stderr));
        // Both print the status, a space and the body.
        let stdout = String::from_utf8(output.stdout).expect("UTF-8");
        let body = stdout.strip_prefix("200 ").unwrap_or_else(|| panic!("{language}: {stdout}"));
        assert_eq!(
            received(&serde_json::from_str(body.trim_end()).expect("echo JSON")),
            by_send,
            "{language}:\n{code}"
        );
    }
    let error = client
        .request_error(
            "workspace/executeCommand",
            json!({"command": "volley.snippet", "arguments": [{"uri": uri, "index": 0, "language": "cobol"}]}),
        )
        .await;
    assert!(error["message"].as_str().expect("message").contains("cobol"), "{error}");
    client.shutdown().await;
}

/// What `/echo` received that the request decides: the method, the URL, the body and
/// the headers the request wrote (each client adds its own others).
fn received(echo: &Value) -> Value {
    let headers: Vec<Value> = echo["headers"]
        .as_array()
        .expect("headers")
        .iter()
        .filter(|pair| pair[0] == "content-type" || pair[0] == "x-quote")
        .cloned()
        .collect();
    json!({"method": echo["method"], "url": echo["url"], "headers": headers, "body": echo["body_base64"]})
}
