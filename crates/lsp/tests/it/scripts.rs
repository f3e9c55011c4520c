//! Completion and hover of the script API inside `{% %}` scripts, through real JSON-RPC
//! messages: members after `client.` and the other objects, `response` in response
//! handlers only, nothing of it outside scripts, `{{ }}` variables only inside `{{`.

use crate::completion_hover::{complete, hover, item, markdown};
use crate::support;

use serde_json::{Value, json};
use support::{TestClient, range, uri};

const TEXT: &str = concat!(
    "@host = https://example.com\n",
    "\n",
    "### login\n",
    "< {%\n",
    "  request.variables.set(\"user\", \"ada\");\n",
    "  const before = 1; pre\n",
    "  request.headers.\n",
    "%}\n",
    "POST {{host}}/login\n",
    "X-Note: client.\n",
    "\n",
    "{\"user\": \"{{user}}\"}\n",
    "\n",
    "> {%\n",
    "  client.global.set(\"token\", response.body.token);\n",
    "  client.\n",
    "  client.global.\n",
    "  response.headers.\n",
    "  const contentType = response.contentType.\n",
    "  client.log(\"{{ho\");\n",
    "  const after = 2; ho\n",
    "  // client.\n",
    "  client.log(\"client.\");\n",
    "%}\n",
    "\n",
    "###\n",
    "GET {{host}}/me\n",
    "\n",
    "see client.\n",
    "\n",
    "> {%\n",
    "  const last = client.gl\n",
);

/// The line and UTF-16 column right after the first `needle` of [`TEXT`] (ASCII).
fn after(needle: &str) -> (u32, u32) {
    let end = TEXT.find(needle).unwrap_or_else(|| panic!("no {needle:?}")) + needle.len();
    let line = TEXT[..end].matches('\n').count();
    let column = end - TEXT[..end].rfind('\n').map_or(0, |index| index + 1);
    (u32::try_from(line).expect("line"), u32::try_from(column).expect("column"))
}

async fn open(capabilities: Value) -> (support::tempdir::Dir, String, TestClient) {
    let (dir, uri) = uri("scripts.http");
    let mut client = TestClient::start();
    client.initialize_with(json!({ "capabilities": capabilities })).await;
    client.open(&uri, TEXT).await;
    (dir, uri, client)
}

/// The line and UTF-16 column of the end of the first line of [`TEXT`] that ends with
/// `suffix`.
fn end_of(suffix: &str) -> (u32, u32) {
    let (line, text) =
        TEXT.lines().enumerate().find(|(_, line)| line.ends_with(suffix)).unwrap_or_else(|| panic!("no {suffix:?}"));
    (u32::try_from(line).expect("line"), u32::try_from(text.len()).expect("column"))
}

/// The completion at the end of the line that ends with `suffix`.
async fn complete_at_end(client: &mut TestClient, uri: &str, suffix: &str) -> Vec<Value> {
    let (line, character) = end_of(suffix);
    complete(client, uri, line, character).await
}

/// The completion right after `needle`.
async fn complete_after(client: &mut TestClient, uri: &str, needle: &str) -> Vec<Value> {
    let (line, character) = after(needle);
    complete(client, uri, line, character).await
}

fn labels(items: &[Value]) -> Vec<&str> {
    items.iter().map(|item| item["label"].as_str().expect("label")).collect()
}

fn snippet_support() -> Value {
    json!({"textDocument": {"completion": {"completionItem": {"snippetSupport": true}}}})
}

#[tokio::test]
async fn client_and_its_globals_complete_in_a_response_handler() {
    let (_dir, uri, mut client) = open(snippet_support()).await;

    let items = complete_at_end(&mut client, &uri, "  client.").await;
    assert_eq!(labels(&items), ["global", "test", "assert", "log", "exit"]);
    let (line, character) = end_of("  client.");
    let test = item(&items, "test");
    assert_eq!(
        test["textEdit"],
        json!({"range": range((line, character), (line, character)), "newText": "test(${1:name}, ${2:fn})"})
    );
    assert_eq!(test["insertTextFormat"], json!(2), "snippet");
    assert_eq!(test["kind"], json!(2), "method");
    assert_eq!(test["detail"], "client.test(name, fn)");
    assert!(test["documentation"]["value"].as_str().expect("doc").contains("runs after the handler"), "{test}");
    assert_eq!(item(&items, "assert")["textEdit"]["newText"], "assert(${1:condition})");
    assert_eq!(item(&items, "log")["textEdit"]["newText"], "log($1)");
    let global = item(&items, "global");
    assert_eq!((&global["textEdit"]["newText"], &global["insertTextFormat"]), (&json!("global"), &json!(1)));

    let items = complete_at_end(&mut client, &uri, "  client.global.").await;
    assert_eq!(labels(&items), ["set", "get", "isEmpty", "clear", "clearAll"]);
    assert_eq!(item(&items, "set")["textEdit"]["newText"], "set(${1:name}, ${2:value})");
    assert_eq!(item(&items, "isEmpty")["textEdit"]["newText"], "isEmpty()");

    let items = complete_at_end(&mut client, &uri, "  response.headers.").await;
    assert_eq!(labels(&items), ["valueOf", "valuesOf"]);
    let items = complete_at_end(&mut client, &uri, "response.contentType.").await;
    assert_eq!(labels(&items), ["mimeType", "charset"]);
    assert_eq!(item(&items, "charset")["kind"], json!(10), "property");

    // At the start of a name: the API's roots, `response` among them; the name typed is
    // replaced.
    let items = complete_after(&mut client, &uri, "const after = 2; h").await;
    assert_eq!(labels(&items), ["client", "request", "response"]);
    let (line, character) = after("const after = 2; h");
    assert_eq!(item(&items, "response")["textEdit"]["range"], range((line, character - 1), (line, character)));

    // In a comment or a string: nothing.
    assert_eq!(complete_at_end(&mut client, &uri, "// client.").await, Vec::<Value>::new());
    assert_eq!(complete_after(&mut client, &uri, "client.log(\"client.").await, Vec::<Value>::new());

    // A handler not closed yet (being written) runs to the end of its block.
    let items = complete_at_end(&mut client, &uri, "last = client.gl").await;
    assert_eq!(item(&items, "global")["textEdit"]["newText"], "global");
    client.shutdown().await;
}

#[tokio::test]
async fn calls_are_plain_text_when_the_editor_has_no_snippets() {
    let (_dir, uri, mut client) = open(json!({})).await;
    let items = complete_at_end(&mut client, &uri, "  client.global.").await;
    let set = item(&items, "set");
    assert_eq!((&set["textEdit"]["newText"], &set["insertTextFormat"]), (&json!("set("), &json!(1)));
    assert_eq!(item(&items, "clearAll")["textEdit"]["newText"], "clearAll()");
    assert!(items.iter().all(|item| item["insertTextFormat"] == 1), "{items:#?}");
    client.shutdown().await;
}

#[tokio::test]
async fn response_is_not_offered_in_a_pre_request_script() {
    let (_dir, uri, mut client) = open(snippet_support()).await;
    let items = complete_at_end(&mut client, &uri, "const before = 1; pre").await;
    assert_eq!(labels(&items), ["client", "request"]);
    let items = complete_at_end(&mut client, &uri, "  request.headers.").await;
    assert_eq!(labels(&items), ["all", "findByName"]);
    assert_eq!(item(&items, "findByName")["textEdit"]["newText"], "findByName(${1:name})");

    // Hovering `response` there says why it does not exist.
    let text = "< {% client.log(response.status) %}\nGET https://example.com\n";
    let (_other_dir, other) = support::uri("pre.http");
    client.open(&other, text).await;
    let status = markdown(&hover(&mut client, &other, 0, 27).await);
    assert!(status.contains("`response.status`") && status.contains("before there is a response"), "{status}");
    client.shutdown().await;
}

#[tokio::test]
async fn scripts_offer_variables_only_inside_braces() {
    let (_dir, uri, mut client) = open(snippet_support()).await;
    let items = complete_at_end(&mut client, &uri, "const after = 2; ho").await;
    assert_eq!(labels(&items), ["client", "request", "response"]);
    let items = complete_after(&mut client, &uri, "client.log(\"{{ho").await;
    assert_eq!(item(&items, "host")["detail"], "https://example.com (file)");
    assert!(!labels(&items).contains(&"client"), "{items:#?}");
    client.shutdown().await;
}

#[tokio::test]
async fn nothing_of_the_script_api_is_offered_outside_scripts() {
    let (_dir, uri, mut client) = open(snippet_support()).await;
    let script_names = ["client", "request", "response", "global", "test", "log", "set", "valueOf"];
    // A header value, a body line, a request line's start, inside `{{`.
    let header = complete_at_end(&mut client, &uri, "X-Note: client.").await;
    let body = complete_at_end(&mut client, &uri, "see client.").await;
    let (line, _) = after("GET {{host}}/me");
    let request_line = complete(&mut client, &uri, line, 0).await;
    let braces = complete_after(&mut client, &uri, "POST {{h").await;
    for items in [&header, &body, &request_line, &braces] {
        assert!(labels(items).iter().all(|label| !script_names.contains(label)), "{items:#?}");
    }
    assert_eq!(body, Vec::<Value>::new());
    item(&request_line, "GET");
    item(&braces, "host");
    client.shutdown().await;
}

#[tokio::test]
async fn hover_shows_the_signature_and_doc_of_a_member() {
    let (_dir, uri, mut client) = open(snippet_support()).await;
    let (line, character) = after("  client.global.se");
    let set = hover(&mut client, &uri, line, character).await;
    let text = markdown(&set);
    assert!(text.starts_with("`client.global.set(name, value)`"), "{text}");
    assert!(text.contains("every later request"), "{text}");
    assert_eq!(set["range"], range((line, character - 2), (line, character + 1)));

    let (line, character) = after("  client.glob");
    let text = markdown(&hover(&mut client, &uri, line, character).await);
    assert!(text.starts_with("`client.global`"), "{text}");
    let (line, character) = after("response.body.tok");
    let text = markdown(&hover(&mut client, &uri, line, character - 6).await);
    assert!(text.starts_with("`response.body`") && text.contains("In response handlers only."), "{text}");

    // Unknown members, strings and what is outside scripts: no hover.
    let (line, character) = after("response.body.tok");
    assert_eq!(hover(&mut client, &uri, line, character).await, Value::Null);
    let (line, character) = after("client.log(\"clie");
    assert_eq!(hover(&mut client, &uri, line, character).await, Value::Null);
    let (line, character) = after("X-Note: clie");
    assert_eq!(hover(&mut client, &uri, line, character).await, Value::Null);
    client.shutdown().await;
}
