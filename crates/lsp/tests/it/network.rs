//! Sends from the editor use the certificates of the workspace's `volley.jsonc`: a
//! private CA and a client certificate (mutual TLS) against a real HTTPS server.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, tempdir};
use volley_echo_server::{TestPki, TestServer};

async fn send(client: &mut TestClient, uri: &str) -> Value {
    client
        .request("workspace/executeCommand", json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}]}))
        .await
}

#[tokio::test]
async fn a_send_presents_the_client_certificate_of_the_workspace_configuration() {
    let pki = TestPki::generate("Volley LSP Test CA");
    let server = TestServer::start_tls_with(&pki, true).await;
    let (with, without) = (tempdir::Dir::new(), tempdir::Dir::new());
    for dir in [&with, &without] {
        std::fs::write(dir.path.join("ca.pem"), pki.ca_pem()).expect("write ca.pem");
    }
    std::fs::write(with.path.join("client.pem"), pki.client_pem()).expect("write client.pem");
    std::fs::write(with.path.join("client.key"), pki.client_key_pem()).expect("write client.key");
    std::fs::write(
        with.path.join("volley.jsonc"),
        r#"{"tls": {"ca": "ca.pem", "hosts": {"127.0.0.1": {"cert": "client.pem", "key": "client.key"}}}}"#,
    )
    .expect("write volley.jsonc");
    std::fs::write(without.path.join("volley.jsonc"), r#"{"tls": {"ca": "ca.pem"}}"#).expect("write volley.jsonc");

    let mut client = TestClient::start();
    client.initialize_with(json!({"capabilities": {}})).await;
    let text = format!("GET {}\n", server.url("/status/200"));
    let accepted = format!("file://{}", with.path.join("a.http").display());
    client.open(&accepted, &text).await;
    let outcome = send(&mut client, &accepted).await;
    assert_eq!(outcome["response"]["status"], 200, "{outcome}");

    let refused = format!("file://{}", without.path.join("a.http").display());
    client.open(&refused, &text).await;
    let outcome = send(&mut client, &refused).await;
    assert!(outcome["response"].is_null(), "no client certificate, no response: {outcome}");
    assert_eq!(outcome["error"]["kind"], "tls", "{outcome}");
    let message = outcome["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("CertificateRequired") || message.contains("no client certificate"), "{message}");
    client.shutdown().await;
}
