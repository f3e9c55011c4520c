//! Cookies over real JSON-RPC messages against a real HTTP server on 127.0.0.1: the sends
//! of one session in one workspace folder share a jar (`volley.send`, `volley.sendAll`),
//! `volley.clearCookies` empties it, the `cookieJar` setting persists it in the format of
//! `volley run --cookie-jar`; `examples/quickstart.http` passes every assertion.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, tempdir};
use volley_echo_server::TestServer;

async fn execute(client: &mut TestClient, command: &str, argument: Value) -> Value {
    client.request("workspace/executeCommand", json!({"command": command, "arguments": [argument]})).await
}

async fn open(client: &mut TestClient, path: &std::path::Path, text: &str) -> String {
    let uri = format!("file://{}", path.display());
    client.open(&uri, text).await;
    uri
}

fn folder(dir: &tempdir::Dir) -> Value {
    json!({"uri": format!("file://{}", dir.path.display()), "name": "folder"})
}

/// The cookies `/cookies` saw, from a send's outcome.
fn cookies_seen(outcome: &Value) -> Value {
    let body = outcome["response"]["body"].as_str().unwrap_or_else(|| panic!("a body: {outcome}"));
    serde_json::from_str::<Value>(body).expect("JSON")["cookies"].clone()
}

fn cookie_text(server: &TestServer) -> String {
    format!("GET {}\n\n###\nGET {}\n", server.url("/cookies/set?a=1"), server.url("/cookies"))
}

#[tokio::test]
async fn sends_of_one_workspace_folder_share_a_cookie_jar_that_clear_cookies_empties() {
    let server = TestServer::start().await;
    let (one, two, outside) = (tempdir::Dir::new(), tempdir::Dir::new(), tempdir::Dir::new());
    let mut client = TestClient::start();
    let capabilities = client.initialize_with(json!({"capabilities": {}, "workspaceFolders": [folder(&one)]})).await;
    assert_eq!(capabilities["capabilities"]["workspace"]["workspaceFolders"]["changeNotifications"], true);
    // A folder added later has a jar of its own too.
    client
        .notify("workspace/didChangeWorkspaceFolders", json!({"event": {"added": [folder(&two)], "removed": []}}))
        .await;
    let text = cookie_text(&server);
    let first = open(&mut client, &one.path.join("a.http"), &text).await;
    let sibling = open(&mut client, &one.path.join("nested/b.http"), &text).await;
    let other = open(&mut client, &two.path.join("c.http"), &text).await;

    let set = execute(&mut client, "volley.send", json!({"uri": first, "index": 0})).await;
    assert_eq!(set["response"]["status"], 200, "{set}");
    let seen = execute(&mut client, "volley.send", json!({"uri": first, "index": 1})).await;
    assert_eq!(cookies_seen(&seen), json!({"a": "1"}), "the cookie set by the first send");
    // `sent` lists the jar's `Cookie` header, hidden whole as a credential header.
    let went = seen["sent"]["headers"].as_array().expect("the request as sent");
    assert!(went.contains(&json!(["cookie", "[REDACTED]"])), "{went:?}");
    // Another file of the same folder: the same jar.
    let seen = execute(&mut client, "volley.send", json!({"uri": sibling, "index": 1})).await;
    assert_eq!(cookies_seen(&seen), json!({"a": "1"}));
    // Another workspace folder: a jar of its own.
    let seen = execute(&mut client, "volley.send", json!({"uri": other, "index": 1})).await;
    assert_eq!(cookies_seen(&seen), json!({}));
    // Outside every folder: one more jar, not the second folder's.
    let lone = open(&mut client, &outside.path.join("d.http"), &text).await;
    execute(&mut client, "volley.send", json!({"uri": other, "index": 0})).await;
    let seen = execute(&mut client, "volley.send", json!({"uri": lone, "index": 1})).await;
    assert_eq!(cookies_seen(&seen), json!({}));
    let seen = execute(&mut client, "volley.send", json!({"uri": other, "index": 1})).await;
    assert_eq!(cookies_seen(&seen), json!({"a": "1"}));

    let cleared = execute(&mut client, "volley.clearCookies", json!({"uri": first})).await;
    assert_eq!(cleared, json!({"cleared": 1}));
    let seen = execute(&mut client, "volley.send", json!({"uri": first, "index": 1})).await;
    assert_eq!(cookies_seen(&seen), json!({}));

    // Send All shares the jar too; no `uri` clears every jar.
    let all = execute(&mut client, "volley.sendAll", json!({"uri": first})).await;
    assert_eq!(cookies_seen(&all["results"][1]), json!({"a": "1"}), "{all}");
    let cleared = execute(&mut client, "volley.clearCookies", json!({})).await;
    assert_eq!(cleared, json!({"cleared": 2}), "folder one's and folder two's");
    client.shutdown().await;
}

#[tokio::test]
async fn the_cookie_jar_setting_persists_cookies_like_volley_run() {
    let server = TestServer::start().await;
    let dir = tempdir::Dir::new();
    let jar = dir.path.join("jar/cookies.json");
    let mut client = TestClient::start();
    let options = json!({"cookieJar": jar});
    client
        .initialize_with(
            json!({"capabilities": {}, "workspaceFolders": [folder(&dir)], "initializationOptions": options}),
        )
        .await;
    let uri = open(&mut client, &dir.path.join("a.http"), &cookie_text(&server)).await;
    execute(&mut client, "volley.send", json!({"uri": uri, "index": 0})).await;
    // The engine's persistent jar reads it back: the format of `volley run --cookie-jar`.
    let reloaded = volley_engine::CookieJar::persistent(&jar).expect("a jar file");
    let url = url::Url::parse(&server.url("/cookies")).expect("URL");
    assert_eq!(reloaded.header_for(&url).as_deref(), Some("a=1"));
    client.shutdown().await;

    // A new session finds the cookies of the file; a setting changed later takes effect.
    let mut client = TestClient::start();
    client
        .initialize_with(
            json!({"capabilities": {}, "workspaceFolders": [folder(&dir)], "initializationOptions": options}),
        )
        .await;
    let uri = open(&mut client, &dir.path.join("a.http"), &cookie_text(&server)).await;
    let seen = execute(&mut client, "volley.send", json!({"uri": uri, "index": 1})).await;
    assert_eq!(cookies_seen(&seen), json!({"a": "1"}));
    let elsewhere = dir.path.join("elsewhere.json");
    client.notify("workspace/didChangeConfiguration", json!({"settings": {"volley": {"cookieJar": elsewhere}}})).await;
    let seen = execute(&mut client, "volley.send", json!({"uri": uri, "index": 1})).await;
    assert_eq!(cookies_seen(&seen), json!({}), "a new, empty jar file");
    execute(&mut client, "volley.send", json!({"uri": uri, "index": 0})).await;
    assert!(elsewhere.exists());
    client.shutdown().await;
}

#[tokio::test]
async fn send_all_of_the_quickstart_passes_every_assertion() {
    let server = TestServer::start().await;
    let dir = tempdir::Dir::new();
    let original = include_str!("../../../../examples/quickstart.http");
    // The example reads the echo server's URL from the environment: give it the test's.
    let text = original.replace("@host = {{$env(VOLLEY_ECHO_URL)}}", &format!("@host = {}", server.base_url()));
    assert_ne!(text, original, "the example still declares `@host`");
    let mut client = TestClient::start();
    client.initialize_with(json!({"capabilities": {}, "workspaceFolders": [folder(&dir)]})).await;
    let uri = open(&mut client, &dir.path.join("quickstart.http"), &text).await;
    let all = execute(&mut client, "volley.sendAll", json!({"uri": uri})).await;
    let results = all["results"].as_array().expect("results");
    assert_eq!(results.len(), 6);
    for result in results {
        let assertions = result["response"]["assertions"].as_array().unwrap_or_else(|| panic!("a response: {result}"));
        assert!(!assertions.is_empty());
        for assertion in assertions {
            assert_eq!(assertion["passed"], true, "{}: {assertion}", result["request"]);
        }
    }
    client.shutdown().await;
}
