//! The language server's part in an OAuth 2.0 sign-in: Send on a request with httpyac's
//! `Authorization: oauth2 authorization_code` asks the editor to open the authorization
//! request in the user's browser (`window/showDocument`, `external: true`); the test's
//! editor starts the stand-in browser of `tests/oidc/`, which signs in at the real
//! `OpenID` provider (oidc-provider) and comes back to Volley's loopback listener.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, uri};
use volley_echo_server::{OidcProvider, TestServer};

#[tokio::test]
async fn send_opens_the_sign_in_in_the_editors_browser() {
    let provider = OidcProvider::start(None);
    let server = TestServer::start().await;
    let text = format!(
        "@oauth2_issuer = {}\n@oauth2_clientId = code-public\n@oauth2_usePkce = true\n@oauth2_scope = openid api:read\n\
         @oauth2_redirectUri = http://127.0.0.1/callback\n\n### me\nGET {}\nAuthorization: oauth2 authorization_code\n",
        provider.issuer,
        server.url("/echo")
    );
    let (_dir, uri) = uri("oauth.http");
    let mut client = TestClient::start();
    client.browser = Some(volley_echo_server::stand_in_browser());
    client.answers.insert("window/showDocument".to_owned(), json!({"success": true}));
    client.initialize_with(json!({"capabilities": {"window": {"showDocument": {"support": true}}}})).await;
    client.open(&uri, &text).await;
    let result = client
        .request("workspace/executeCommand", json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}]}))
        .await;
    assert_eq!(result["response"]["status"], 200, "{result}");
    let shown: Vec<&Value> =
        client.server_requests.iter().filter(|request| request["method"] == "window/showDocument").collect();
    assert_eq!(shown.len(), 1);
    let opened = shown[0]["params"]["uri"].as_str().unwrap();
    assert!(opened.starts_with(&format!("{}/auth?", provider.issuer)), "{opened}");
    assert!(opened.contains("code_challenge_method=S256"), "{opened}");
    assert_eq!(shown[0]["params"]["external"], true);
    assert_eq!(provider.stats()["token"]["authorization_code"], 1);
}
