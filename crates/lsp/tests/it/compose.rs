//! Imports and `run` lines in the editor: the language server follows `# @import` /
//! `import` for diagnostics, completion and go to definition, reports a `run #name` no
//! file has, and `volley.send` on a block of `run` lines runs what they name, with the
//! variables they set.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, range, uri};
use volley_echo_server::TestServer;

#[tokio::test]
async fn imports_are_followed_and_run_blocks_are_sent() {
    let server = TestServer::start().await;
    let base = server.base_url();
    let (dir, uri) = uri("main.http");
    std::fs::write(
        dir.path.join("auth.http"),
        format!("@user = ada\n\n###\n# @name login\nGET {base}/echo?user={{{{user}}}}\n"),
    )
    .expect("imported file");
    let text = format!(
        "import ./auth.http\n\
         \n\
         ###\n\
         GET {base}/echo?who={{{{user}}}}&t={{{{login.response.status}}}}\n\
         \n\
         ### Log in as zed\n\
         run #login (@user=zed)\n\
         \n\
         ###\n\
         run #logn\n"
    );
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &text).await;
    let diagnostics = client.diagnostics(1).await;
    let found: Vec<(String, Value)> = diagnostics
        .iter()
        .map(|diagnostic| (diagnostic["code"].as_str().unwrap_or_default().to_owned(), diagnostic["range"].clone()))
        .collect();
    // `{{user}}` and `login` come from the imported file; only the misspelt name is wrong.
    assert_eq!(found, [("invalid-command".to_owned(), range((9, 5), (9, 9)))], "{diagnostics:#?}");
    assert!(diagnostics[0]["message"].as_str().unwrap_or_default().contains("`logn`"));

    // Go to definition of `{{user}}`: the imported file's line.
    let place = json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": base.len() as u32 + 16}});
    let found = client.request("textDocument/definition", place).await;
    let target = found[0]["uri"].as_str().unwrap_or_default();
    assert!(target.ends_with("/auth.http"), "{found}");
    assert_eq!(found[0]["range"], range((0, 1), (0, 5)));

    // Completion inside `{{ }}` offers the imported variable, from the imported file.
    let place = json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": base.len() as u32 + 16}});
    let items = client.request("textDocument/completion", place).await;
    let items = items.get("items").unwrap_or(&items).as_array().cloned().unwrap_or_default();
    let user =
        items.iter().find(|item| item["label"] == "user").unwrap_or_else(|| panic!("`user` is offered: {items:#?}"));
    assert!(user.to_string().contains("auth.http"), "{user}");

    // The document links include the imported file.
    let links = client.request("textDocument/documentLink", json!({"textDocument": {"uri": uri}})).await;
    assert!(links.to_string().contains("auth.http"), "{links}");

    // `volley.send` with the cursor on the `run` line: the imported request, as zed.
    let result = client
        .request("workspace/executeCommand", json!({"command": "volley.send", "arguments": [{"uri": uri, "line": 6}]}))
        .await;
    assert_eq!(result["request"]["name"], "login", "{result}");
    let echoed: Value = serde_json::from_str(result["response"]["body"].as_str().expect("body")).expect("echo JSON");
    assert_eq!(echoed["query"], "user=zed");
}

/// httpyac's prompts in the editor: an editor that answers `volley/prompt` is asked (the
/// kind, label, default and choices), and what it answers is sent; an editor that does
/// not gets a `$pick` as a message with actions, and an `$input` refuses the request,
/// naming the prompt.
#[tokio::test]
async fn prompts_are_asked_of_the_editor() {
    let server = TestServer::start().await;
    let base = server.base_url();
    let (_dir, uri) = uri("prompts.http");
    let text = format!(
        "GET {base}/echo?who={{{{$input Your name $value: ada}}}}&env={{{{$pick environment $value: dev, grace}}}}\n"
    );
    let mut client = TestClient::start();
    client.initialize_with(json!({"capabilities": {}, "initializationOptions": {"prompts": true}})).await;
    client.answers.insert("volley/prompt".to_owned(), json!({"value": "grace"}));
    client.open(&uri, &text).await;
    // A hover's preview asks no one.
    let hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}}))
        .await;
    assert!(hover.to_string().contains("cannot be resolved yet") && hover.to_string().contains("Your name"), "{hover}");
    assert!(!client.server_requests.iter().any(|request| request["method"] == "volley/prompt"), "the hover asked");
    let result = client
        .request("workspace/executeCommand", json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}]}))
        .await;
    let body = result["response"]["body"].as_str().unwrap_or_else(|| panic!("a response: {result}"));
    let echoed: Value = serde_json::from_str(body).expect("echo JSON");
    assert_eq!(echoed["query"], "who=grace&env=grace", "{result}");
    let asked: Vec<&Value> =
        client.server_requests.iter().filter(|request| request["method"] == "volley/prompt").collect();
    assert_eq!(asked[0]["params"], json!({"kind": "input", "label": "Your name", "default": "ada", "choices": []}));
    assert_eq!(asked[1]["params"]["choices"], json!(["dev", "grace"]));

    // An editor without `volley/prompt`: a pick is a message with actions, an input is refused.
    let (_plain_dir, plain_uri) = support::uri("plain.http");
    let uri = plain_uri;
    let mut plain = TestClient::start();
    plain.initialize().await;
    plain.answers.insert("window/showMessageRequest".to_owned(), json!({"title": "prod"}));
    plain.open(&uri, &format!("GET {base}/echo?env={{{{$pick environment $value: dev, prod}}}}\n\n###\nGET {base}/echo?who={{{{$input Your name}}}}\n")).await;
    let picked = plain
        .request("workspace/executeCommand", json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}]}))
        .await;
    let echoed: Value = serde_json::from_str(picked["response"]["body"].as_str().expect("body")).expect("echo JSON");
    assert_eq!(echoed["query"], "env=prod");
    let refused = plain
        .request("workspace/executeCommand", json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 1}]}))
        .await;
    assert!(refused["error"]["message"].as_str().unwrap_or_default().contains("Your name"), "{refused}");
}
