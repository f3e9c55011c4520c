//! The language server through real JSON-RPC messages: an in-memory client writes
//! `Content-Length`-framed messages into the server's input and reads its output.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, range, uri};

const TEXT: &str = "# café 🦀 notes\nGET https://example.com/café/🦀/{{missing}}\n\n### create\nPOST https://example.com/x\nContent-Type: application/json\n\n{\"a\": }\n";

fn codes_and_ranges(diagnostics: &[Value]) -> Vec<(String, Value)> {
    diagnostics
        .iter()
        .map(|diagnostic| (diagnostic["code"].as_str().expect("code").to_owned(), diagnostic["range"].clone()))
        .collect()
}

#[tokio::test]
async fn diagnostics_follow_incremental_edits_in_utf16() {
    let (_dir, uri) = uri("api.http");
    let mut client = TestClient::start();
    let capabilities = client.initialize().await["capabilities"].clone();
    assert_eq!(capabilities["textDocumentSync"]["change"], json!(2), "incremental sync");
    assert_eq!(capabilities["documentSymbolProvider"], json!(true));

    client.open(&uri, TEXT).await;
    let diagnostics = client.diagnostics(1).await;
    // `missing` starts at UTF-16 column 34 (byte column 37: `é` is 2 bytes, 🦀 is 4
    // bytes and 2 UTF-16 units).
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![
            ("undefined-variable".to_owned(), range((1, 34), (1, 41))),
            ("invalid-json-body".to_owned(), range((7, 6), (7, 7))),
        ]
    );
    assert_eq!(diagnostics[0]["source"], "volley");
    assert_eq!(diagnostics[0]["severity"], json!(1), "an error, as a run refuses the request");
    assert!(diagnostics[0]["message"].as_str().expect("message").contains("\nhint: "), "{}", diagnostics[0]);

    // Two edits in one change, applied in order: the second one's position counts the
    // line the first one inserted.
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [
                    {"range": range((1, 0), (1, 0)), "text": "@missing = café\n"},
                    {"range": range((8, 6), (8, 6)), "text": "1"},
                ],
            }),
        )
        .await;
    assert_eq!(client.diagnostics(2).await, Vec::<Value>::new());

    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}})).await;
    let symbols = symbols.as_array().expect("symbols");
    assert_eq!(symbols.len(), 2);
    assert_eq!(symbols[0]["name"], "GET https://example.com/café/🦀/{{missing}}");
    assert_eq!(symbols[0]["kind"], json!(6), "method");
    assert_eq!(symbols[0]["selectionRange"], range((2, 0), (2, 43)));
    // A request's symbol is its whole block: the lines a send from the cursor picks it.
    assert_eq!(symbols[0]["range"], range((0, 0), (4, 0)));
    assert_eq!(symbols[1]["range"], range((4, 0), (9, 0)));
    assert_eq!(symbols[1]["name"], "create");
    assert_eq!(symbols[1]["detail"], "POST https://example.com/x");
    assert_eq!(symbols[1]["kind"], json!(12), "function");
    assert_eq!(symbols[1]["selectionRange"]["start"], json!({"line": 5, "character": 0}));

    let folds = client.request("textDocument/foldingRange", json!({"textDocument": {"uri": uri}})).await;
    let folds: Vec<(u64, u64)> = folds
        .as_array()
        .expect("folding ranges")
        .iter()
        .map(|fold| (fold["startLine"].as_u64().expect("start"), fold["endLine"].as_u64().expect("end")))
        .collect();
    assert_eq!(folds.last(), Some(&(4, 8)));

    client.shutdown().await;
}

#[tokio::test]
async fn versions_are_published_in_order_and_close_clears() {
    let (_dir, uri) = uri("typing.http");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, "GET https://example.com/\n").await;
    assert_eq!(client.diagnostics(1).await, Vec::<Value>::new());
    // Typing `{{a}}` one keystroke at a time, all sent at once: the changes that arrive
    // while a computation runs are coalesced, and no version is published after a newer.
    let keystrokes: Vec<Value> = (2..)
        .zip("{{a}}".chars())
        .map(|(version, character)| {
            let column = version - 2 + 24;
            json!({
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": range((0, column), (0, column)), "text": character.to_string()}],
                },
            })
        })
        .collect();
    client.send_all(&keystrokes).await;
    let mut published = Vec::new();
    let params = loop {
        let params = client.notification("textDocument/publishDiagnostics").await;
        published.push(params["version"].as_i64().expect("version"));
        if params["version"] == json!(6) {
            break params;
        }
    };
    assert!(published.windows(2).all(|pair| pair[0] < pair[1]), "in order: {published:?}");
    assert_eq!(
        codes_and_ranges(params["diagnostics"].as_array().expect("diagnostics")),
        vec![("undefined-variable".to_owned(), range((0, 26), (0, 27)))]
    );

    client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}})).await;
    let params = client.notification("textDocument/publishDiagnostics").await;
    assert_eq!(params["diagnostics"], json!([]));
    client.shutdown().await;
}

#[tokio::test]
async fn a_broken_config_is_one_error_at_the_top() {
    let (dir, uri) = uri("api.http");
    std::fs::write(dir.path.join("volley.jsonc"), "{ \"variables\": ").expect("config file");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, "GET https://example.com/\n").await;
    let diagnostics = client.diagnostics(1).await;
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["range"], range((0, 0), (0, 0)));
    assert_eq!(diagnostics[0]["severity"], json!(1));
    assert!(diagnostics[0]["message"].as_str().expect("message").contains("volley.jsonc"), "{}", diagnostics[0]);

    // A whole-text change (no range) replaces the document.
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "GET https://example.com/{{x}}\n"}]}),
        )
        .await;
    let diagnostics = client.diagnostics(2).await;
    assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    assert_eq!(diagnostics[1]["code"], "undefined-variable");
    client.shutdown().await;
}

/// Every kind of semantic check the issue names, in one document, with non-ASCII text
/// before the ranges: codes, severities, ranges (UTF-16) and messages, as `volley check`
/// gives them.
const CHECKS: &str = concat!(
    "# Prüfungen 🦀\n",                                                                            // 0
    "@base = https://example.com/ü\n",                                                             // 1
    "\n",                                                                                          // 2
    "### first\n",                                                                                 // 3
    "# @name twice\n",                                                                             // 4
    "# @nmae oops\n",                                                                              // 5
    "# @timeout soon\n",                                                                           // 6
    "# @assert status ==\n",                                                                       // 7
    "GET {{base}}/{{undefinedThing}}/{{twice.response.body.$.id}}/{{other.response.body.$.id}}\n", // 8
    "# @name late\n",                                                                              // 9
    "X-Id: {{$uuidd}}\n",                                                                          // 10
    "X-Int: {{$randomInt(1)}}\n",                                                                  // 11
    "Content-Type: application/json\n",                                                            // 12
    "\n",                                                                                          // 13
    "{\"ü\": }\n",                                                                                 // 14
    "\n",                                                                                          // 15
    "### second\n",                                                                                // 16
    "# @name twice\n",                                                                             // 17
    "POST {{base}}/upload\n",                                                                      // 18
    "\n",                                                                                          // 19
    "< ./missing-payload.json\n",                                                                  // 20
    "\n",                                                                                          // 21
    "### socket\n",                                                                                // 22
    "WEBSOCKET wss://example.com/ws\n",                                                            // 23
    "\n",                                                                                          // 24
    "name = value\n", // 25 (form fields: no messages)
);

#[tokio::test]
async fn every_semantic_check_with_codes_ranges_and_messages() {
    let (_dir, uri) = uri("checks.http");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, CHECKS).await;
    let diagnostics = client.diagnostics(1).await;
    let summary: Vec<Value> = diagnostics
        .iter()
        .map(|diagnostic| {
            let range = &diagnostic["range"];
            json!(format!(
                "{}:{}-{}:{} {} [{}] {}",
                range["start"]["line"],
                range["start"]["character"],
                range["end"]["line"],
                range["end"]["character"],
                diagnostic["severity"],
                diagnostic["code"].as_str().unwrap_or_default(),
                diagnostic["message"]
                    .as_str()
                    .unwrap_or_default()
                    .replace(&uri, "<uri>")
                    .replace(uri.trim_start_matches("file://").trim_end_matches("checks.http"), "<dir>/"),
            ))
        })
        .collect();
    insta::assert_json_snapshot!("every_semantic_check", summary);
    client.shutdown().await;
}
