//! A large document (over 1 MiB) through real JSON-RPC messages: its diagnostics come
//! in two steps (those of its first chunks while the whole is parsed, then all of them),
//! and the edits sent while it is parsed are applied in order.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, range, uri};

/// A document of about 1.2 MB: an unknown variable and one declared at the end in the
/// first block, and JSON bodies that do not parse in the first block and the last.
fn large_text() -> String {
    let mut text = String::from(
        "### first\nPOST https://example.com/{{late}}/{{nowhere}}\nContent-Type: application/json\n\n{\"a\": }\n",
    );
    let items: Vec<String> = (0..100).map(|index| format!("{{\"id\": {index}, \"name\": \"item {index}\"}}")).collect();
    let filler =
        format!("\n###\nPOST https://example.com/items\nContent-Type: application/json\n\n[{}]\n", items.join(", "));
    while text.len() < 1_200_000 {
        text.push_str(&filler);
    }
    text.push_str("\n###\n@late = here\n\n### last\nPOST https://example.com/{{missing}}\nContent-Type: application/json\n\n{\"b\": }\n");
    text
}

/// The next diagnostics published for `uri`, with their version.
async fn published(client: &mut TestClient, uri: &str) -> (i64, Vec<Value>) {
    loop {
        let params = client.notification("textDocument/publishDiagnostics").await;
        if params["uri"] == uri {
            let version = params["version"].as_i64().expect("version");
            return (version, params["diagnostics"].as_array().expect("diagnostics").clone());
        }
    }
}

fn codes(diagnostics: &[Value]) -> Vec<&str> {
    diagnostics.iter().map(|diagnostic| diagnostic["code"].as_str().expect("code")).collect()
}

#[tokio::test]
async fn a_large_document_gets_the_diagnostics_of_its_first_chunks_first() {
    let (_dir, uri) = uri("large.http");
    let mut client = TestClient::start();
    client.initialize().await;
    let text = large_text();
    client.open(&uri, &text).await;
    let (version, first) = published(&mut client, &uri).await;
    assert_eq!(version, 1);
    // The JSON body of the first block; not `nowhere` and `late`: whether the rest of the
    // file declares them is not known yet.
    assert_eq!(codes(&first), ["invalid-json-body"], "{first:?}");
    let (version, whole) = published(&mut client, &uri).await;
    assert_eq!(version, 1);
    assert_eq!(codes(&whole), ["undefined-variable", "invalid-json-body", "undefined-variable", "invalid-json-body"]);
    assert!(whole[0]["message"].as_str().expect("message").contains("nowhere"), "{}", whole[0]);
    assert_eq!(first[0], whole[1], "the first diagnostics are some of the whole set");
    client.shutdown().await;
}

#[tokio::test]
async fn edits_sent_while_a_large_document_is_parsed_are_applied_in_order() {
    let (dir, uri) = uri("large.http");
    let mut client = TestClient::start();
    client.initialize().await;
    let text = large_text();
    let last_line = text.lines().count() as u32 - 1;
    // Opened and edited at once: `nowhere` declared at the top, then the last body fixed.
    let open = json!({"uri": uri, "languageId": "http", "version": 1, "text": text});
    let change = |version: i64, at: Value, new_text: &str| {
        json!({
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": at, "text": new_text}],
            },
        })
    };
    client
        .send_all(&[
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": open}}),
            change(2, range((0, 0), (0, 0)), "@nowhere = here\n"),
            change(3, range((last_line + 1, 6), (last_line + 1, 6)), "1"),
        ])
        .await;
    let edited = loop {
        let (version, diagnostics) = published(&mut client, &uri).await;
        if version == 3 {
            break diagnostics;
        }
    };
    // The same text opened afresh, its whole set of diagnostics (the second publication).
    let fresh = format!("file://{}", dir.path.join("fresh.http").display());
    let mut expected = text.clone();
    expected.insert_str(0, "@nowhere = here\n");
    let at = expected.rfind("{\"b\": }").expect("the last body") + "{\"b\": ".len();
    expected.insert(at, '1');
    client.open(&fresh, &expected).await;
    published(&mut client, &fresh).await;
    let (_, whole) = published(&mut client, &fresh).await;
    assert_eq!(codes(&edited), ["invalid-json-body", "undefined-variable"], "{edited:?}");
    assert_eq!(edited, whole);
    client.shutdown().await;
}

/// A change of one range of `uri`'s text, stamped `version`.
async fn change(client: &mut TestClient, uri: &str, version: i64, at: Value, text: &str) {
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": at, "text": text}],
            }),
        )
        .await;
}

/// Text made to be slow to parse (millions of header lines: seconds per MiB in a debug
/// build), pasted or opened, is not parsed for as long as it takes on every keystroke:
/// past the parse budget the server says so at the top of the file, and reads the text
/// again once the junk is deleted.
#[tokio::test]
async fn text_over_the_parse_budget_is_not_read_until_the_junk_is_deleted() {
    // 8 MiB: over the budget however fast the machine (it stops the parse after 5 s).
    let lines: u32 = 4 * 1024 * 1024;
    let junk = "a\n".repeat(lines as usize);
    let not_read = |diagnostics: &[Value]| {
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        let message = diagnostics[0]["message"].as_str().expect("message");
        // The time, or the trees' memory where tree-sitter's allocations are counted.
        assert!(message.starts_with("this file was not read: parsing it "), "{message}");
        assert!(message.contains("the parse budget; it is read again once at most half of it is left"), "{message}");
        assert!(message.contains("hint: a real `.http` file parses in milliseconds"), "{message}");
        assert_eq!(diagnostics[0]["range"], range((0, 0), (0, 0)));
    };

    // Pasted into an open document: the edit's reparse stops at the budget.
    let (_dir, uri) = uri("junk.http");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, "GET https://example.com/{{nowhere}}\n").await;
    assert_eq!(codes(&published(&mut client, &uri).await.1), ["undefined-variable"]);
    change(&mut client, &uri, 2, range((1, 0), (1, 0)), &junk).await;
    let (version, diagnostics) = published(&mut client, &uri).await;
    assert_eq!(version, 2);
    not_read(&diagnostics);
    // A keystroke does not parse again; deleting the junk does.
    change(&mut client, &uri, 3, range((1, 0), (1, 0)), "\n").await;
    not_read(&published(&mut client, &uri).await.1);
    change(&mut client, &uri, 4, range((1, 0), (lines + 2, 0)), "").await;
    let (version, diagnostics) = published(&mut client, &uri).await;
    assert_eq!(version, 4);
    assert_eq!(codes(&diagnostics), ["undefined-variable"]);

    // Opened large: the parse on a thread of its own stops at the budget too.
    let (_other_dir, other) = support::uri("opened.http");
    client.open(&other, &format!("GET https://example.com/{{{{nowhere}}}}\n{junk}")).await;
    let (version, diagnostics) = published(&mut client, &other).await;
    assert_eq!(version, 1);
    not_read(&diagnostics);
    client.shutdown().await;
}
