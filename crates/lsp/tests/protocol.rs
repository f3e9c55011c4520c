//! The language server through real JSON-RPC messages: an in-memory client writes
//! `Content-Length`-framed messages into the server's input and reads its output.

mod support;

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

    client
        .notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "http", "version": 1, "text": TEXT}}),
        )
        .await;
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
    assert_eq!(diagnostics[0]["severity"], json!(2));
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
async fn only_the_latest_version_is_published_and_close_clears() {
    let (_dir, uri) = uri("typing.http");
    let mut client = TestClient::start();
    client.initialize().await;
    client
        .notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "http", "version": 1, "text": "GET https://example.com/\n"}}),
        )
        .await;
    assert_eq!(client.diagnostics(1).await, Vec::<Value>::new());
    // Typing `{{a}}` one keystroke at a time: versions 2 to 6 arrive within the debounce.
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
    let params = client.notification("textDocument/publishDiagnostics").await;
    assert_eq!(params["version"], json!(6), "the intermediate versions are never published");
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
    client
        .notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "http", "version": 1, "text": "GET https://example.com/\n"}}),
        )
        .await;
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
