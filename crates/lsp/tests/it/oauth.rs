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

#[tokio::test]
async fn send_shows_the_device_code_as_a_message() {
    let provider = std::sync::Arc::new(OidcProvider::start(None));
    let server = TestServer::start().await;
    let text = format!(
        "@oauth2_issuer = {}\n@oauth2_clientId = device\n@oauth2_scope = openid api:read\n\n### me\nGET {}\n\
         Authorization: oauth2 device_code\n",
        provider.issuer,
        server.url("/echo")
    );
    let (_dir, uri) = uri("device.http");
    let mut client = TestClient::start();
    let approver = std::sync::Arc::clone(&provider);
    client.reader = Some(Box::new(move |message: &str| {
        // `… enter the code ABCD-EFGH (valid 600 s)`: the person enters it.
        if let Some(code) = message.split("enter the code ").nth(1).and_then(|rest| rest.split(' ').next()) {
            let (approver, code) = (std::sync::Arc::clone(&approver), code.to_owned());
            std::thread::spawn(move || assert_eq!(approver.approve_device(&code, "ada")["status"], "approved"));
        }
    }));
    client.initialize().await;
    client.open(&uri, &text).await;
    let result = client
        .request("workspace/executeCommand", json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0}]}))
        .await;
    assert_eq!(result["response"]["status"], 200, "{result}");
    let shown = client.pending_notifications();
    let message = shown
        .iter()
        .filter(|notification| notification["method"] == "window/showMessage")
        .filter_map(|notification| notification["params"]["message"].as_str())
        .find(|message| message.contains("enter the code"))
        .expect("the device code shown");
    assert!(message.starts_with(&format!("Volley: to sign in, open {}/device", provider.issuer)), "{message}");
    assert_eq!(provider.stats()["deviceAuthorization"], 1);
}
