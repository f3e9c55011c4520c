//! Completion and hover through real JSON-RPC messages, with a `volley.jsonc` next to
//! the document and non-ASCII text before the positions (UTF-16 columns).

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, range, uri};

const TEXT: &str = concat!(
    "# café 🦀 notes\n",                                                                 // 0
    "@host = https://example.com/é\n",                                                   // 1
    "@apiToken = s3cr3t\n",                                                              // 2
    "\n",                                                                                // 3
    "# @name login\n",                                                                   // 4
    "POST {{host}}/é/{{apiToken}}\n",                                                    // 5
    "Content-Type: application/json\n",                                                  // 6
    "\n",                                                                                // 7
    "{\"user\": \"{{user}}\", \"id\": \"{{$randomInt(1, 9)}}\", \"x\": \"{{nope}}\"}\n", // 8
    "###\n",                                                                             // 9
    "# @\n",                                                                             // 10
    "GET https://example.com/🦀/{{$\n",                                                  // 11
    "X-Trace: {{}}\n",                                                                   // 12
);

const CONFIG: &str = r#"{
  // comments are allowed
  "variables": { "user": "ana", "dbPassword": "hunter2" }
}"#;

async fn open() -> (support::tempdir::Dir, String, TestClient) {
    let (dir, uri) = uri("api.http");
    std::fs::write(dir.path.join("volley.jsonc"), CONFIG).expect("config file");
    let mut client = TestClient::start();
    let capabilities = client.initialize().await["capabilities"].clone();
    assert_eq!(capabilities["completionProvider"]["triggerCharacters"], json!(["{", "$", "@", ".", ":", "/"]));
    assert_eq!(capabilities["hoverProvider"], json!(true));
    client.open(&uri, TEXT).await;
    (dir, uri, client)
}

pub(crate) async fn complete(client: &mut TestClient, uri: &str, line: u32, character: u32) -> Vec<Value> {
    let result = client
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
        .await;
    assert_eq!(result["isIncomplete"], json!(false));
    result["items"].as_array().expect("completion items").clone()
}

pub(crate) fn item<'a>(items: &'a [Value], label: &str) -> &'a Value {
    items.iter().find(|item| item["label"] == label).unwrap_or_else(|| panic!("no {label} in {items:#?}"))
}

pub(crate) async fn hover(client: &mut TestClient, uri: &str, line: u32, character: u32) -> Value {
    client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
        .await
}

pub(crate) fn markdown(hover: &Value) -> String {
    assert_eq!(hover["contents"]["kind"], "markdown", "{hover}");
    hover["contents"]["value"].as_str().expect("hover text").to_owned()
}

#[tokio::test]
async fn completion_lists_variables_resolvers_directives_headers_and_methods() {
    let (_dir, uri, mut client) = open().await;

    let items = complete(&mut client, &uri, 12, 11).await;
    insta::assert_json_snapshot!("variables_in_braces", items);
    assert_eq!(item(&items, "host")["detail"], "https://example.com/é (file)");
    assert_eq!(item(&items, "user")["detail"], "ana (volley.jsonc)");
    assert_eq!(item(&items, "apiToken")["detail"], "•••• (file)");
    assert_eq!(item(&items, "dbPassword")["detail"], "•••• (volley.jsonc)");
    assert_eq!(item(&items, "login.response.body.$")["textEdit"]["range"], range((12, 11), (12, 11)));
    // The editor closed the braces: nothing more is inserted.
    assert_eq!(item(&items, "host")["textEdit"]["newText"], "host");
    item(&items, "login.response.headers.");

    // After `🦀/{{$`: the crab is 2 UTF-16 units (4 bytes).
    let items = complete(&mut client, &uri, 11, 30).await;
    let uuid = item(&items, "$uuid");
    // The `{{` is not closed on its line: the inserted text closes it.
    assert_eq!(uuid["textEdit"], json!({"range": range((11, 29), (11, 30)), "newText": "\\$uuid\\}\\}"}));
    let random = item(&items, "$random");
    // Snippets: the literal `$` and `}` escaped, so that the editor inserts
    // `$random(min, max)}}`.
    assert_eq!(random["textEdit"]["newText"], "\\$random(${1:min}, ${2:max})\\}\\}");
    // Its arguments are optional (JetBrains' `{{$randomInt}}`): no placeholders.
    assert_eq!(item(&items, "$randomInt")["textEdit"]["newText"], "\\$randomInt\\}\\}");
    assert_eq!(random["insertTextFormat"], json!(2), "snippet");
    assert!(items.iter().all(|item| item["label"].as_str().expect("label").starts_with('$')));
    // Every snippet escapes its literal `$` (docs/lsp.md).
    for item in items.iter().filter(|item| item["insertTextFormat"] == 2) {
        assert!(item["textEdit"]["newText"].as_str().expect("text").starts_with("\\$"), "{item}");
    }

    let items = complete(&mut client, &uri, 10, 3).await;
    let name = item(&items, "name");
    assert!(name["documentation"]["value"].as_str().expect("doc").contains("Names the request"), "{name}");
    assert_eq!(name["textEdit"]["range"], range((10, 3), (10, 3)));
    item(&items, "assert");

    let items = complete(&mut client, &uri, 6, 0).await;
    assert_eq!(item(&items, "Content-Type")["textEdit"]["newText"], "Content-Type: ");
    item(&items, "Authorization");
    let items = complete(&mut client, &uri, 6, 14).await;
    assert_eq!(item(&items, "application/json")["textEdit"]["range"], range((6, 14), (6, 14)));
    item(&items, "text/plain");
    // Right after the colon, the value brings its space.
    let items = complete(&mut client, &uri, 6, 13).await;
    assert_eq!(item(&items, "text/plain")["textEdit"]["newText"], " text/plain");

    let items = complete(&mut client, &uri, 11, 0).await;
    item(&items, "GET");
    item(&items, "WEBSOCKET");

    // In a body line: nothing.
    assert_eq!(complete(&mut client, &uri, 8, 0).await, Vec::<Value>::new());
    client.shutdown().await;
}

#[tokio::test]
async fn chaining_paths_are_offered_for_earlier_requests_whose_names_fit_in_braces() {
    let text = concat!(
        "### Basic authentication\n",       // 0
        "GET https://example.com/basic\n",  // 1
        "\n",                               // 2
        "### login\n",                      // 3
        "POST https://example.com/login\n", // 4
        "X-First: {{\n",                    // 5
        "\n",                               // 6
        "### me\n",                         // 7
        "GET https://example.com/me\n",     // 8
        "X-Token: {{\n",                    // 9
        "\n",                               // 10
        "### later\n",                      // 11
        "GET https://example.com/later\n",  // 12
    );
    let (_dir, uri) = uri("chain.http");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, text).await;
    let paths = |items: &[Value]| -> Vec<String> {
        items
            .iter()
            .filter(|item| item["detail"].as_str().is_some_and(|detail| detail.starts_with("request ")))
            .map(|item| item["label"].as_str().expect("label").to_owned())
            .collect()
    };
    // In `me`: only `login` (the request titled with a space cannot be written in `{{ }}`,
    // `later` has not run yet, `me` is the request itself).
    let items = complete(&mut client, &uri, 9, 11).await;
    assert_eq!(paths(&items), ["login.response.body.$", "login.response.headers."]);
    // In `login`: nothing before it can be chained to.
    assert_eq!(paths(&complete(&mut client, &uri, 5, 11).await), Vec::<String>::new());
    client.shutdown().await;
}

#[tokio::test]
async fn hover_shows_values_sources_and_docs() {
    let (_dir, uri, mut client) = open().await;

    let host = hover(&mut client, &uri, 5, 8).await;
    let text = markdown(&host);
    assert!(text.contains("https://example.com/é") && text.contains("file"), "{text}");
    assert_eq!(host["range"], range((5, 5), (5, 13)));

    // `é` before it: UTF-16 column 16, byte column 17.
    let token = hover(&mut client, &uri, 5, 20).await;
    let text = markdown(&token);
    assert!(text.contains("••••") && !text.contains("s3cr3t"), "{text}");
    assert_eq!(token["range"], range((5, 16), (5, 28)));

    let text = markdown(&hover(&mut client, &uri, 8, 12).await);
    assert!(text.contains("ana") && text.contains("volley.jsonc"), "{text}");
    let text = markdown(&hover(&mut client, &uri, 8, 30).await);
    assert!(text.contains("$randomInt(min, max)") && text.contains("random integer"), "{text}");
    let text = markdown(&hover(&mut client, &uri, 8, 60).await);
    assert!(text.contains("undefined") && text.contains("hint:"), "{text}");

    let text = markdown(&hover(&mut client, &uri, 4, 4).await);
    assert!(text.contains("Names the request"), "{text}");

    assert_eq!(hover(&mut client, &uri, 6, 3).await, Value::Null);
    client.shutdown().await;
}

#[tokio::test]
async fn hover_explains_environment_and_refused_resolvers_of_other_tools() {
    let (_dir, uri, mut client) = open().await;
    let other = uri.replace("api.http", "other.http");
    let text = "GET https://example.com/{{$env.HOME}}\nAuthorization: Bearer {{$aadToken}}\n";
    client.open(&other, text).await;
    let env = markdown(&hover(&mut client, &other, 0, 28).await);
    assert!(env.contains("environment variable `HOME`") && env.contains("JetBrains"), "{env}");
    let refused = markdown(&hover(&mut client, &other, 1, 28).await);
    assert!(
        refused.contains("REST Client") && refused.contains("not supported") && refused.contains("hint:"),
        "{refused}"
    );
    client.shutdown().await;
}
