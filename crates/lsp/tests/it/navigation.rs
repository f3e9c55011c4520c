//! Go to definition, references, rename, document links and formatting through real
//! JSON-RPC messages, with non-ASCII text before the positions (UTF-16 columns) and a
//! `volley.jsonc` whose keys are definitions too.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, range, uri};

const TEXT: &str = concat!(
    "# Ünïcode 🦀 notes\n",                                     // 0
    "@host = https://example.com\n",                            // 1
    "@path = /é/{{host}}\n",                                    // 2
    "\n",                                                       // 3
    "###   login  \n",                                          // 4
    "# @name login\n",                                          // 5
    "POST   {{host}}/🦀/login   HTTP/1.1\n",                    // 6
    "Content-Type:application/json\n",                          // 7
    "X-User  :  {{user}}\n",                                    // 8
    "\n",                                                       // 9
    "{\"keep\":   \"{{host}}\"}\n",                             // 10
    "\n",                                                       // 11
    "###\n",                                                    // 12
    "GET {{host}}{{path}}?t={{login.response.body.$.token}}\n", // 13
    "\n",                                                       // 14
    "###\n",                                                    // 15
    "POST {{host}}/upload\n",                                   // 16
    "\n",                                                       // 17
    "< ./payload.json\n",                                       // 18
);

const CONFIG: &str = "{\n  // users\n  \"variables\": { \"user\": \"ana\" },\n  \"profiles\": { \"dev\": { \"variables\": { \"user\": \"dev\" } } }\n}\n";

async fn open() -> (support::tempdir::Dir, String, TestClient) {
    let (dir, uri) = uri("api.http");
    std::fs::write(dir.path.join("volley.jsonc"), CONFIG).expect("config file");
    std::fs::write(dir.path.join("payload.json"), "{}").expect("payload");
    let mut client = TestClient::start();
    let capabilities = client.initialize().await["capabilities"].clone();
    assert_eq!(capabilities["definitionProvider"], true);
    assert_eq!(capabilities["referencesProvider"], true);
    assert_eq!(capabilities["renameProvider"], json!({"prepareProvider": true}));
    assert_eq!(capabilities["documentLinkProvider"], json!({"resolveProvider": false}));
    assert_eq!(capabilities["documentFormattingProvider"], true);
    client.open(&uri, TEXT).await;
    client.diagnostics(1).await;
    (dir, uri, client)
}

fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

/// The ranges of locations, each with `*` for this document or the file name.
fn places(locations: &Value, uri: &str) -> Vec<(String, Value)> {
    let locations = locations.as_array().expect("locations");
    locations
        .iter()
        .map(|location| {
            let target = location["uri"].as_str().expect("uri");
            let name =
                if target == uri { "*".to_owned() } else { target.rsplit('/').next().unwrap_or(target).to_owned() };
            (name, location["range"].clone())
        })
        .collect()
}

#[tokio::test]
async fn definitions_of_file_variables_config_keys_and_request_names() {
    let (_dir, uri, mut client) = open().await;
    // `{{host}}` after `POST   ` and `🦀`-free text: the file's `@host`.
    let found = client.request("textDocument/definition", at(&uri, 6, 10)).await;
    assert_eq!(places(&found, &uri), [("*".to_owned(), range((1, 1), (1, 5)))]);
    // `{{user}}`: a key of volley.jsonc, under `variables` and under profile dev.
    let found = client.request("textDocument/definition", at(&uri, 8, 14)).await;
    assert_eq!(
        places(&found, &uri),
        [("volley.jsonc".to_owned(), range((2, 18), (2, 22))), ("volley.jsonc".to_owned(), range((3, 41), (3, 45)))]
    );
    // A chaining path: the request's `# @name` (which wins over the `###` text).
    let found = client.request("textDocument/definition", at(&uri, 13, 28)).await;
    assert_eq!(places(&found, &uri), [("*".to_owned(), range((5, 8), (5, 13)))]);
    // Nothing under the cursor.
    assert_eq!(client.request("textDocument/definition", at(&uri, 9, 0)).await, Value::Null);
    client.shutdown().await;
}

#[tokio::test]
async fn references_with_and_without_the_declaration() {
    let (_dir, uri, mut client) = open().await;
    let params = |include: bool| {
        let mut params = at(&uri, 13, 6);
        params["context"] = json!({"includeDeclaration": include});
        params
    };
    let found = client.request("textDocument/references", params(false)).await;
    insta::assert_json_snapshot!("references_of_host", places(&found, &uri));
    let with = client.request("textDocument/references", params(true)).await;
    assert_eq!(places(&with, &uri).len(), places(&found, &uri).len() + 1);
    assert_eq!(places(&with, &uri)[0], ("*".to_owned(), range((1, 1), (1, 5))));
    client.shutdown().await;
}

#[tokio::test]
async fn rename_file_variables_and_request_names_or_explain_why_not() {
    let (_dir, uri, mut client) = open().await;
    let prepared = client.request("textDocument/prepareRename", at(&uri, 6, 10)).await;
    assert_eq!(prepared, range((6, 9), (6, 13)));

    let mut params = at(&uri, 6, 10);
    params["newName"] = json!("baseUrl");
    let edit = client.request("textDocument/rename", params).await;
    let edits = edit["changes"][uri.as_str()].clone();
    insta::assert_json_snapshot!("rename_host", edits);

    let mut params = at(&uri, 13, 28);
    params["newName"] = json!("signIn");
    let edit = client.request("textDocument/rename", params).await;
    let edits = edit["changes"][uri.as_str()].as_array().expect("edits").clone();
    assert_eq!(edits.len(), 2, "`# @name login` and the chaining path: {edits:?}");
    assert!(edits.iter().all(|edit| edit["newText"] == "signIn"));

    // A variable of volley.jsonc is renamed there, not here.
    let error = client.request_error("textDocument/prepareRename", at(&uri, 8, 14)).await;
    assert!(error["message"].as_str().expect("message").contains("volley.jsonc"), "{error}");
    // A name the format does not accept.
    let mut params = at(&uri, 6, 10);
    params["newName"] = json!("base url");
    let error = client.request_error("textDocument/rename", params).await;
    assert!(error["message"].as_str().expect("message").contains("base url"), "{error}");
    client.shutdown().await;
}

#[tokio::test]
async fn links_to_file_bodies_and_formatting_that_leaves_bodies_alone() {
    let (dir, uri, mut client) = open().await;
    let links = client.request("textDocument/documentLink", json!({"textDocument": {"uri": uri}})).await;
    let links = links.as_array().expect("links");
    assert_eq!(links.len(), 1);
    assert_eq!(links[0]["range"], range((18, 2), (18, 16)));
    assert_eq!(links[0]["target"], format!("file://{}", dir.path.join("payload.json").display()));

    let edits = client
        .request(
            "textDocument/formatting",
            json!({"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": true}}),
        )
        .await;
    insta::assert_json_snapshot!("formatting", edits);
    client.shutdown().await;
}
