//! What an outcome says of the request, over real JSON-RPC messages against a real HTTP
//! server on 127.0.0.1: `request.description` from `# @description`, `sent` (the request
//! as it went out, through the engine's redaction policy, also when the transport
//! failed), and the description at the top of a request line's hover.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, uri};
use volley_echo_server::TestServer;

fn text(server: &TestServer) -> String {
    format!(
        concat!(
            "@host = {}\n",                                    // 0
            "@apiToken = s3cr3t-t0ken\n",                      // 1
            "\n",                                              // 2
            "### order\n",                                     // 3
            "# @description Creates an order for the café.\n", // 4
            "POST {{{{host}}}}/echo?x=1\n",                    // 5
            "Content-Type: application/json\n",                // 6
            "Authorization: Bearer {{{{apiToken}}}}\n",        // 7
            "X-Plain: visible\n",                              // 8
            "\n",                                              // 9
            "{{\"token\": \"{{{{apiToken}}}}\", \"n\": 1}}\n", // 10
            "\n",                                              // 11
            "### unreachable\n",                               // 12
            "GET http://127.0.0.1:1/nothing\n",                // 13
        ),
        server.base_url()
    )
}

async fn open(server: &TestServer) -> (support::tempdir::Dir, String, TestClient) {
    let (dir, uri) = uri("outcome.http");
    let mut client = TestClient::start();
    client.initialize().await;
    client.open(&uri, &text(server)).await;
    (dir, uri, client)
}

async fn send(client: &mut TestClient, uri: &str, index: usize) -> Value {
    client
        .request(
            "workspace/executeCommand",
            json!({"command": "volley.send", "arguments": [{"uri": uri, "index": index}]}),
        )
        .await
}

#[tokio::test]
async fn outcomes_carry_the_description_and_the_request_as_sent_redacted() {
    let server = TestServer::start().await;
    let (_dir, uri, mut client) = open(&server).await;
    let outcome = send(&mut client, &uri, 0).await;
    assert_eq!(outcome["request"]["description"], "Creates an order for the café.");
    let sent = &outcome["sent"];
    let echoed: Value = serde_json::from_str(outcome["response"]["body"].as_str().expect("body")).expect("JSON");
    // What the server received is what `sent` says, secrets aside.
    assert_eq!(sent["method"], "POST");
    assert_eq!(echoed["method"], "POST");
    assert_eq!(sent["url"], server.url("/echo?x=1"));
    assert_eq!(echoed["url"], "/echo?x=1");
    assert_eq!(sent["body"], "{\"token\": \"[REDACTED]\", \"n\": 1}");
    assert_eq!(sent["bodyEncoding"], "text");
    assert_eq!(sent["truncated"], false);
    assert_eq!(echoed["body"], sent["body"], "the echo is redacted by the same policy");
    assert!(sent.get("httpVersion").is_none(), "the request line names no version: {sent}");
    let received = echoed["headers"].as_array().expect("headers");
    let headers = sent["headers"].as_array().expect("headers");
    assert!(headers.contains(&json!(["authorization", "[REDACTED]"])), "{headers:?}");
    assert!(headers.contains(&json!(["x-plain", "visible"])), "{headers:?}");
    // Every other header went out as listed (credential headers are hidden whole in
    // `sent`, only their secret in the echoed text).
    for header in headers.iter().filter(|header| header[0] != "authorization") {
        assert!(received.contains(header), "{header} was not received: {received:?}");
    }
    assert!(received.contains(&json!(["authorization", "Bearer [REDACTED]"])));
    assert!(!outcome.to_string().contains("s3cr3t-t0ken"), "{outcome}");

    // The transport failed: the request as built is still there.
    let outcome = send(&mut client, &uri, 1).await;
    assert_eq!(outcome["error"]["kind"], "connection_refused", "{outcome}");
    assert_eq!(outcome["sent"]["method"], "GET");
    assert_eq!(outcome["sent"]["url"], "http://127.0.0.1:1/nothing");
    assert!(outcome["sent"].get("body").is_none());
    assert!(outcome["request"].get("description").is_none());

    // The hover of the request line: the description first.
    let hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 5, "character": 2}}))
        .await;
    let markdown = hover["contents"]["value"].as_str().expect("markdown");
    assert!(markdown.starts_with("Creates an order for the café.\n\n**Request preview**"), "{markdown}");
    client.shutdown().await;
}
