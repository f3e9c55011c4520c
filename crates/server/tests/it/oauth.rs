//! OAuth 2.0 through the execution server, against the tests' real `OpenID` provider
//! (oidc-provider, `tests/oidc/`): a client-credentials token is got by the server and
//! sent, the client secret never shown; the authorization-code grant, which needs a
//! person at a browser, answers a clear error at once; a device code reaches the
//! remote caller.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::json;
use support::{client, send, start};
use volley_echo_server::{OidcProvider, TestServer};
use volley_engine::auth::{AuthPrompt, DeviceCode};
use volley_engine::{RemoteClient, RemoteConfig, RunOptions};
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

/// Approves, as grace, each device code shown to it, a moment later (as a person would).
struct Approver {
    provider: Arc<OidcProvider>,
    shown: Mutex<Vec<DeviceCode>>,
}

impl AuthPrompt for Approver {
    fn open_browser(&self, _: &str) -> bool {
        panic!("no browser in the device grant");
    }

    fn show_device_code(&self, code: &DeviceCode) {
        self.shown.lock().expect("not poisoned").push(code.clone());
        let (provider, user_code) = (Arc::clone(&self.provider), code.user_code.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            assert_eq!(provider.approve_device(&user_code, "grace")["status"], "approved");
        });
    }
}

/// The person who must enter a device code sits at the caller, not at the server: the
/// code goes to the execution's observers as `authDeviceCode`, and the remote client
/// shows it through its own prompt; the approval there lets the server's poll succeed.
#[tokio::test]
async fn a_device_code_reaches_the_remote_caller() {
    let provider = Arc::new(OidcProvider::start(None));
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let approver = Arc::new(Approver { provider: Arc::clone(&provider), shown: Mutex::default() });
    let variables = json!({
        "base": upstream.base_url(),
        "oauth2_issuer": provider.issuer,
        "oauth2_clientId": "device",
        "oauth2_scope": "openid api:read",
    });
    let remote = RemoteClient::new(RemoteConfig {
        variables: variables.as_object().unwrap().clone(),
        auth_prompt: Some(Arc::clone(&approver) as Arc<dyn AuthPrompt>),
        ..RemoteConfig::new(server.base.clone())
    })
    .unwrap();
    let content = "GET {{base}}/echo\nAuthorization: oauth2 device_code\n";
    let response = remote.run_string(content, RunOptions::default().timeout(Duration::from_secs(30))).await.unwrap();
    assert_eq!(response.status(), 200);
    let shown = approver.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].verification_uri.starts_with(&provider.issuer), "{:?}", shown[0]);
    let echoed: serde_json::Value = response.json().await.unwrap();
    let headers = echoed["headers"].as_array().unwrap();
    let header = headers.iter().find(|pair| pair[0] == "authorization").unwrap()[1].as_str().unwrap();
    let token = header.strip_prefix("Bearer ").unwrap();
    assert_eq!(provider.introspect(token)["sub"], "grace");

    // The same code is in the flow's events, for every other observer.
    let flow = remote.flow_id().unwrap();
    let events = client().get(format!("{}/event?flowId={flow}", server.base)).send().await.unwrap();
    let mut stream = events.bytes_stream();
    let mut seen = String::new();
    while !seen.contains("event: fetchFinished") {
        let chunk = tokio::time::timeout(Duration::from_secs(5), stream.next()).await.unwrap().unwrap().unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("event: authDeviceCode"), "{seen}");
    assert!(seen.contains(&format!("\"userCode\":\"{}\"", shown[0].user_code)), "{seen}");
    remote.close().await.unwrap();
}
