//! The "Convert cURL command to request" code action over real JSON-RPC messages: the
//! action's edit applied to the document gives a request that `volley.send` sends to a
//! real HTTP server on 127.0.0.1 as curl would have; options not converted are named.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, uri};
use volley_echo_server::TestServer;

/// `text` with one LSP edit applied (line and character positions; ASCII text).
fn apply(text: &str, edit: &Value) -> String {
    let offset = |position: &Value| {
        let line = position["line"].as_u64().expect("line") as usize;
        let character = position["character"].as_u64().expect("character") as usize;
        text.split_inclusive('\n').take(line).map(str::len).sum::<usize>() + character
    };
    let (start, end) = (offset(&edit["range"]["start"]), offset(&edit["range"]["end"]));
    format!("{}{}{}", &text[..start], edit["newText"].as_str().expect("new text"), &text[end..])
}

#[tokio::test]
async fn a_curl_command_becomes_a_request_that_sends_the_same() {
    let server = TestServer::start().await;
    let (_dir, uri) = uri("pasted.http");
    let text = format!(
        "### pasted\ncurl -X PUT '{}' \\\n  -H 'X-Test: it'\\''s' \\\n  --data-raw 'hello world' -sS --retry 3\n",
        server.url("/echo/pasted?x=1")
    );
    let mut client = TestClient::start();
    let capabilities = client.initialize().await["capabilities"].clone();
    assert_eq!(capabilities["codeActionProvider"]["codeActionKinds"], json!(["refactor.rewrite"]));
    client.open(&uri, &text).await;
    let actions_at = |line: u32| {
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
            "context": {"diagnostics": []},
        })
    };
    assert_eq!(client.request("textDocument/codeAction", actions_at(0)).await, json!([]));
    let actions = client.request("textDocument/codeAction", actions_at(1)).await;
    let action = &actions[0];
    assert_eq!(action["title"], "Convert cURL command to request");
    assert_eq!(action["kind"], "refactor.rewrite");
    let edits = &action["edit"]["changes"][&uri];
    assert_eq!(edits.as_array().expect("edits").len(), 1);
    let converted = apply(&text, &edits[0]);
    assert_eq!(
        converted,
        format!(
            "### pasted\n# curl: `--retry 3`\n# @no-redirect\nPUT {}\nX-Test: it's\n\
             Content-Type: application/x-www-form-urlencoded\n\nhello world\n",
            server.url("/echo/pasted?x=1")
        )
    );

    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": converted}]}),
        )
        .await;
    let outcome = client
        .request("workspace/executeCommand", json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}]}))
        .await;
    let echoed: Value = serde_json::from_str(outcome["response"]["body"].as_str().expect("body")).expect("JSON");
    assert_eq!(echoed["method"], "PUT");
    assert_eq!(echoed["url"], "/echo/pasted?x=1");
    assert_eq!(echoed["body"], "hello world");
    let headers = echoed["headers"].as_array().expect("headers");
    assert!(headers.contains(&json!(["x-test", "it's"])), "{headers:?}");
    assert!(headers.contains(&json!(["content-type", "application/x-www-form-urlencoded"])), "{headers:?}");
    client.shutdown().await;
}
