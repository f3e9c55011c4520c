//! OAuth 2.0 through the execution server, against the tests' real `OpenID` provider
//! (oidc-provider, `tests/oidc/`): a client-credentials token is got by the server and
//! sent, the client secret never shown; the authorization-code grant, which needs a
//! person at a browser, answers a clear error at once.

use std::time::{Duration, Instant};

use serde_json::json;
use support::{client, send, start};
use volley_echo_server::{OidcProvider, TestServer};
use volley_server::ServerConfig;

use crate::support;

#[tokio::test]
async fn the_server_gets_tokens_and_refuses_the_grant_that_needs_a_browser() {
    let provider = OidcProvider::start(None);
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let variables = json!({
        "base": upstream.base_url(),
        "oauth2_issuer": provider.issuer,
        "oauth2_clientId": "cc-basic",
        "oauth2_clientSecret": "cc-basic-secret",
    });
    let content = "GET {{base}}/echo\nAuthorization: oauth2 client_credentials\n";
    let body = json!({ "content": content, "variables": variables });
    let (status, answer) = send(http.post(format!("{}/execute", server.base)), Some(body.clone()), None).await;
    assert_eq!((status, &answer["response"]["status"]), (200, &json!(200)), "{answer}");
    let shown = answer.to_string();
    // The upstream's answer is the caller's own, unredacted (docs/protocol.md,
    // "Redaction"): the echo shows the bearer token the server got.
    assert!(shown.contains(r#"[\"authorization\",\"Bearer "#), "{shown}");
    assert!(!shown.contains("cc-basic-secret"), "{shown}");
    assert_eq!(provider.stats()["token"]["client_credentials"], 1);

    let mut code = body;
    code["content"] = json!("GET {{base}}/bearer\nAuthorization: oauth2 authorization_code\n");
    let started = Instant::now();
    let (status, answer) = send(http.post(format!("{}/execute", server.base)), Some(code), None).await;
    assert!(started.elapsed() < Duration::from_secs(5), "at once, not after the request's timeout");
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], "VALIDATION_ERROR", "{answer}");
    assert_eq!(answer["error"]["details"]["code"], "auth-failed", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("needs a person at a browser"), "{message}");
}
