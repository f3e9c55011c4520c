//! `volley.copyAsCurl` over real JSON-RPC messages: the command it answers is run with
//! the real `curl` (`apt-get install curl`; `.ci/run` installs it) against a real HTTP
//! server on 127.0.0.1, and the server receives the method, URL, headers and body that
//! `volley.send` sends.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, tempdir};
use volley_echo_server::TestServer;

fn text(server: &TestServer) -> String {
    format!(
        concat!(
            "@host = {}\n",
            "@apiToken = s3cr3t\n",
            "\n",
            "### json\n",
            "POST {{{{host}}}}/echo/orders?q=a%20b&who=O'Hara HTTP/1.1\n",
            "Content-Type: application/json\n",
            "Authorization: Bearer {{{{apiToken}}}}\n",
            "X-Quote: it's \"quoted\" $HOME `ls` \\n\n",
            "\n",
            "{{\"name\": \"O'Hara\", \"price\": \"$5\", \"note\": \"café 🦀\"}}\n",
            "\n",
            "### file\n",
            "PUT {{{{host}}}}/echo/file\n",
            "Content-Type: text/plain\n",
            "\n",
            "< ./my body.txt\n",
            "\n",
            "### login\n",
            "GET {{{{host}}}}/cookies/set?session=abc\n",
            "\n",
            "### with cookie\n",
            "GET {{{{host}}}}/echo/cookie\n",
            "Cookie: written=1\n",
            "\n",
            "### broken\n",
            "GET {{{{host}}}}/echo/{{{{undefinedThing}}}}\n",
        ),
        server.base_url()
    )
}

async fn execute(client: &mut TestClient, command: &str, argument: Value) -> Value {
    client.request("workspace/executeCommand", json!({"command": command, "arguments": [argument]})).await
}

/// Runs a command line with `sh` off the test's runtime (which serves the test server);
/// its standard output.
async fn run(command: &str) -> String {
    let command = command.to_owned();
    tokio::task::spawn_blocking(move || run_blocking(&command)).await.expect("the command ran")
}

fn run_blocking(command: &str) -> String {
    let found = std::process::Command::new("curl").arg("--version").output();
    assert!(found.is_ok_and(|output| output.status.success()), "curl is not installed: apt-get install curl");
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{command} --silent --show-error --max-time 20"))
        .output()
        .expect("sh runs");
    assert!(output.status.success(), "{command}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// What `/echo` received, headers sorted (each client orders its own), without what
/// each client adds on its own (`Accept-Encoding`: the engine's transport asks for
/// compression, curl does not).
fn received(echo: &Value) -> Value {
    let mut headers: Vec<Value> = echo["headers"]
        .as_array()
        .expect("headers")
        .iter()
        .filter(|pair| pair[0] != "accept-encoding")
        .cloned()
        .collect();
    headers.sort_by_key(Value::to_string);
    json!({"method": echo["method"], "url": echo["url"], "headers": headers, "body": echo["body_base64"]})
}

#[tokio::test]
async fn the_copied_command_sends_what_send_sends() {
    let server = TestServer::start().await;
    let dir = tempdir::Dir::new();
    std::fs::write(dir.path.join("my body.txt"), "from a file: it's $1\n").expect("body file");
    let uri = format!("file://{}", dir.path.join("api.http").display());
    let mut client = TestClient::start();
    let capabilities = client.initialize().await["capabilities"].clone();
    assert!(
        capabilities["executeCommandProvider"]["commands"]
            .as_array()
            .expect("commands")
            .contains(&json!("volley.copyAsCurl"))
    );
    client.open(&uri, &text(&server)).await;

    for (name, index) in [("json", 0), ("file", 1)] {
        let copied = execute(&mut client, "volley.copyAsCurl", json!({"uri": uri, "name": name})).await;
        let command = copied["curl"].as_str().expect("a command line");
        assert!(command.starts_with("curl -X "), "{command}");
        assert_eq!(copied["warnings"], json!([]));
        // Not redacted: the user runs it.
        if name == "json" {
            assert!(command.contains("Bearer s3cr3t") && command.contains("--http1.1"), "{command}");
        } else {
            assert!(command.contains(&format!("--data-binary '@{}/my body.txt'", dir.path.display())), "{command}");
        }
        let by_curl: Value = serde_json::from_str(&run(command).await).expect("echo JSON");
        // The server's echo of `volley.send`, unredacted for the comparison: the same
        // server saw both, so compare what it received.
        let sent = execute(&mut client, "volley.send", json!({"uri": uri, "index": index})).await;
        assert_eq!(sent["response"]["status"], 200, "{sent}");
        let by_send: Value = serde_json::from_str(sent["response"]["body"].as_str().expect("body")).expect("JSON");
        let (mut curl_view, send_view) = (received(&by_curl), received(&by_send));
        // The echo shown by `volley.send` hides the token; curl's is the raw answer.
        let raw = curl_view.to_string().replace("s3cr3t", "[REDACTED]");
        curl_view = serde_json::from_str(&raw).expect("JSON");
        assert_eq!(curl_view, send_view, "{command}");
    }

    // The jar's cookies, as Send would add them to the written ones.
    execute(&mut client, "volley.send", json!({"uri": uri, "name": "login"})).await;
    let copied = execute(&mut client, "volley.copyAsCurl", json!({"uri": uri, "name": "with cookie"})).await;
    let command = copied["curl"].as_str().expect("a command line");
    assert!(command.contains("-H 'cookie: written=1; session=abc'"), "{command}");

    // A request that cannot be built: the build error's message.
    let error = client
        .request_error(
            "workspace/executeCommand",
            json!({"command": "volley.copyAsCurl", "arguments": [{"uri": uri, "name": "broken"}]}),
        )
        .await;
    assert!(error["message"].as_str().expect("message").contains("undefinedThing"), "{error}");
    client.shutdown().await;
}
