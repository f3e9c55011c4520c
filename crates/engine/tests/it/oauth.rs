//! OAuth 2.0 and `OpenID` Connect against a real, certified `OpenID` provider: oidc-provider
//! (npm, `tests/oidc/`), started here on 127.0.0.1 with a client per grant. Each test
//! runs httpyac's `Authorization: oauth2 …` against the echo server and checks the token
//! it received with the provider's introspection endpoint, and the provider's own count
//! of token requests. The authorization-code test signs in through `tests/oidc/browser.sh`
//! (a stand-in browser that follows the provider's redirects); the device test approves
//! the code through the provider's device pages.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use volley_echo_server::{OidcProvider as Provider, TestServer};
use volley_engine::auth::{AuthPrompt, DeviceCode};
use volley_engine::{Client, ClientConfig, RunOptions};

use crate::support;

/// A client whose OAuth prompt is `prompt`, with `variables`.
fn client_with(prompt: Option<Arc<dyn AuthPrompt>>, variables: &[(&str, &str)]) -> Client {
    let client = Client::new(ClientConfig { auth_prompt: prompt, ..support::config() });
    for (name, value) in variables {
        client.set_variable(*name, *value);
    }
    client
}

/// The bearer token `/echo` received for `authorization`.
async fn sent_token(client: &Client, server: &TestServer, authorization: &str) -> Result<String, volley_engine::Error> {
    let text = format!("GET {}\nAuthorization: {authorization}\n", server.url("/echo"));
    let response = client.run_string(&text, RunOptions::default()).await?;
    let echoed = support::echo(&response).await;
    let header = support::echoed_header(&echoed, "authorization").unwrap().to_owned();
    assert!(!response.redact(&header).contains(header.trim_start_matches("Bearer ")), "the token is a secret");
    Ok(header.strip_prefix("Bearer ").expect("a bearer token").to_owned())
}

fn build_error(error: volley_engine::Error) -> volley_engine::BuildError {
    match error {
        volley_engine::Error::Build(build) => build,
        other => panic!("expected a build error, got {other:?}"),
    }
}

#[tokio::test]
async fn client_credentials_by_discovery_basic_or_post_once_per_configuration() {
    let provider = Provider::start(None);
    let server = TestServer::start().await;
    let client = client_with(
        None,
        &[
            ("oauth2_issuer", &provider.issuer),
            ("oauth2_clientId", "cc-basic"),
            ("oauth2_clientSecret", "cc-basic-secret"),
            ("oauth2_scope", "api:read"),
            ("post_issuer", &provider.issuer),
            ("post_clientId", "cc-post"),
            ("post_clientSecret", "cc-post-secret"),
            ("post_useAuthorizationHeader", "false"),
        ],
    );
    let token = sent_token(&client, &server, "oauth2 client_credentials").await.unwrap();
    let introspected = provider.introspect(&token);
    assert_eq!((introspected["active"].as_bool(), introspected["client_id"].as_str()), (Some(true), Some("cc-basic")));
    assert_eq!(introspected["scope"], "api:read");
    // The same configuration: the same token, no second token request.
    assert_eq!(sent_token(&client, &server, "oauth2").await.unwrap(), token);
    // Another prefix, the secret in the body.
    let post = sent_token(&client, &server, "oauth2 client post").await.unwrap();
    assert_eq!(provider.introspect(&post)["client_id"], "cc-post");
    assert_eq!(provider.stats()["token"]["client_credentials"], 2);

    // The secret sent the way this client does not take it: the provider's error, at the
    // header, with a hint; nothing sent to the echo server.
    client.set_variable("post_useAuthorizationHeader", "true");
    let error = build_error(sent_token(&client, &server, "oauth2 client post").await.unwrap_err());
    assert_eq!(error.code(), "auth-failed");
    assert!(error.message().contains("answered 401 Unauthorized: invalid_client"), "{}", error.message());
    assert!(error.message().contains(&format!("{}/token", provider.issuer)), "{}", error.message());
    assert!(error.hint().unwrap().contains("post_useAuthorizationHeader"), "{:?}", error.hint());
    assert!(!error.to_string().contains("cc-post-secret"));
}

#[tokio::test]
async fn password_grant_then_refresh_when_the_token_expires() {
    // Tokens of 2 s: expired for Volley as soon as got (it renews 30 s early), so the
    // second request refreshes.
    let provider = Provider::start(Some(2));
    let server = TestServer::start().await;
    let token_endpoint = format!("{}/token", provider.issuer);
    let client = client_with(
        None,
        &[
            ("auth_tokenEndpoint", &token_endpoint),
            ("auth_clientId", "pw"),
            ("auth_clientSecret", "pw-secret"),
            ("auth_username", "ada"),
            ("auth_password", "lovelace"),
        ],
    );
    let first = sent_token(&client, &server, "oauth2 password auth").await.unwrap();
    assert_eq!(provider.introspect(&first)["sub"], "ada");
    let second = sent_token(&client, &server, "oauth2 password auth").await.unwrap();
    assert_ne!(second, first, "a new token");
    assert_eq!(provider.introspect(&second)["sub"], "ada");
    let stats = provider.stats();
    assert_eq!((stats["token"]["password"].as_u64(), stats["token"]["refresh_token"].as_u64()), (Some(1), Some(1)));

    // A wrong password: the provider's `invalid_grant`, never the password.
    client.set_variable("auth_password", "not-lovelace-7");
    let error = build_error(sent_token(&client, &server, "oauth2 password auth").await.unwrap_err());
    assert!(error.message().contains("invalid_grant (invalid resource owner credentials)"), "{}", error.message());
    assert!(error.hint().unwrap().contains("auth_password"));
    assert!(!format!("{error} {:?}", error.hint()).contains("not-lovelace-7"));
}

/// The stand-in browser: `tests/oidc/browser.sh`, as `$VOLLEY_BROWSER` would start it.
struct Browser;

impl AuthPrompt for Browser {
    fn open_browser(&self, url: &str) -> bool {
        let Ok(mut child) = Command::new(volley_echo_server::stand_in_browser()).arg(url).stdout(Stdio::null()).spawn()
        else {
            return false;
        };
        std::thread::spawn(move || child.wait());
        true
    }

    fn show_device_code(&self, _: &DeviceCode) {
        panic!("no device code in the authorization-code grant");
    }
}

#[tokio::test]
async fn authorization_code_with_pkce_through_the_browser_and_the_loopback() {
    let provider = Provider::start(None);
    let server = TestServer::start().await;
    let client = client_with(
        Some(Arc::new(Browser)),
        &[
            ("oauth2_issuer", &provider.issuer),
            ("oauth2_clientId", "code-public"),
            ("oauth2_usePkce", "true"),
            ("oauth2_scope", "openid api:read"),
            ("oauth2_redirectUri", "http://127.0.0.1/callback"),
        ],
    );
    let token = sent_token(&client, &server, "oauth2 authorization_code").await.unwrap();
    let introspected = provider.introspect(&token);
    assert_eq!((introspected["sub"].as_str(), introspected["client_id"].as_str()), (Some("ada"), Some("code-public")));
    assert_eq!(sent_token(&client, &server, "oauth2 code").await.unwrap(), token, "kept for the process");
    assert_eq!(provider.stats()["token"]["authorization_code"], 1);

    // The confidential client, without PKCE, as `openid`.
    let confidential = client_with(
        Some(Arc::new(Browser)),
        &[
            ("oauth2_issuer", &provider.issuer),
            ("oauth2_clientId", "code-secret"),
            ("oauth2_clientSecret", "code-secret-secret"),
            ("oauth2_scope", "openid api:write"),
            ("oauth2_redirectUri", "http://127.0.0.1/callback"),
        ],
    );
    let token = sent_token(&confidential, &server, "openid code").await.unwrap();
    assert_eq!(provider.introspect(&token)["client_id"], "code-secret");
}

/// A prompt that never opens anything.
struct NoBrowser;

impl AuthPrompt for NoBrowser {
    fn open_browser(&self, _: &str) -> bool {
        false
    }

    fn show_device_code(&self, _: &DeviceCode) {}
}

#[tokio::test]
async fn a_sign_in_that_never_comes_back_ends_with_the_requests_timeout() {
    let provider = Provider::start(None);
    let client = client_with(
        Some(Arc::new(NoBrowser)),
        &[
            ("oauth2_issuer", &provider.issuer),
            ("oauth2_clientId", "code-public"),
            ("oauth2_usePkce", "true"),
            // A free port: httpyac's default (3000) may be taken on the machine.
            ("oauth2_redirectUri", "http://127.0.0.1/callback"),
        ],
    );
    let text = "# @timeout 1s\nGET http://127.0.0.1:9/never\nAuthorization: oauth2 code\n";
    let started = std::time::Instant::now();
    let error = build_error(client.run_string(text, RunOptions::default()).await.unwrap_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(error.code(), "auth-failed");
    assert!(error.message().contains("no redirect came back from the browser in time (1 s"), "{}", error.message());
    assert_eq!(error.span().start_position.line, 2);
}

/// Approves each device code it is shown through the provider's device pages, as ada.
struct Approver {
    provider: Arc<Provider>,
    shown: Mutex<Vec<DeviceCode>>,
}

impl AuthPrompt for Approver {
    fn open_browser(&self, _: &str) -> bool {
        panic!("no browser in the device grant");
    }

    fn show_device_code(&self, code: &DeviceCode) {
        self.shown.lock().unwrap().push(code.clone());
        let (provider, user_code) = (Arc::clone(&self.provider), code.user_code.clone());
        // A moment later, as a person would.
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            assert_eq!(provider.approve_device(&user_code, "grace")["status"], "approved");
        });
    }
}

#[tokio::test]
async fn device_code_shown_polled_until_approved() {
    let provider = Arc::new(Provider::start(None));
    let server = TestServer::start().await;
    let approver = Arc::new(Approver { provider: Arc::clone(&provider), shown: Mutex::default() });
    let client = client_with(
        Some(Arc::clone(&approver) as Arc<dyn AuthPrompt>),
        &[("oauth2_issuer", &provider.issuer), ("oauth2_clientId", "device"), ("oauth2_scope", "openid api:read")],
    );
    let token = sent_token(&client, &server, "oauth2 device_code").await.unwrap();
    assert_eq!(provider.introspect(&token)["sub"], "grace");
    let shown = approver.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 1);
    assert!(shown[0].verification_uri.starts_with(&provider.issuer), "{:?}", shown[0]);
    let stats = provider.stats();
    assert_eq!(stats["deviceAuthorization"], 1);
    // Polled at the provider's interval (5 s): once, after the approval.
    assert_eq!(stats["token"]["urn:ietf:params:oauth:grant-type:device_code"].as_u64().unwrap(), 1);
}

/// A client reading the project's files (volley.jsonc, http-client.env.json) from
/// `files`, with `profile` active.
fn project_client(
    files: &volley_engine::io::MemoryFs,
    profile: Option<&str>,
    prompt: Option<Arc<dyn AuthPrompt>>,
) -> Client {
    Client::new(ClientConfig {
        io: Arc::new(files.clone()),
        config: volley_engine::ConfigSource::Discover,
        profile: profile.map(str::to_owned),
        auth_prompt: prompt,
        ..support::config()
    })
}

/// The bearer token `/echo` received for `text` (with `{{echo}}` its URL), run in the
/// project.
async fn token_in_project(client: &Client, server: &TestServer, text: &str) -> Result<String, volley_engine::Error> {
    let text = text.replace("{{echo}}", &server.url("/echo"));
    let response = client.run_string(&text, support::in_project()).await?;
    let echoed = support::echo(&response).await;
    let header = support::echoed_header(&echoed, "authorization").unwrap().to_owned();
    Ok(header.strip_prefix("Bearer ").expect("a bearer token").to_owned())
}

#[tokio::test]
async fn named_configurations_of_volley_jsonc_with_auth_token() {
    let provider = Provider::start(None);
    let server = TestServer::start().await;
    let files = volley_engine::io::MemoryFs::new();
    let config = format!(
        r#"{{
  "variables": {{ "apiClient": "cc-basic" }},
  "auth": {{
    "api": {{ "grant": "client_credentials", "issuer": "{issuer}", "clientId": "{{{{apiClient}}}}",
             "clientSecret": "{{{{$secret API_SECRET}}}}", "scope": "api:read" }}
  }},
  "profiles": {{
    "post": {{ "auth": {{ "api": {{ "grant": "client_credentials", "tokenEndpoint": "{issuer}/token",
                                  "clientId": "cc-post", "clientSecret": "cc-post-secret",
                                  "useAuthorizationHeader": false }} }} }}
  }}
}}"#,
        issuer = provider.issuer
    );
    files.insert("/project/volley.jsonc", config);
    files.insert("/project/.env", "API_SECRET=cc-basic-secret\n");
    let text = "GET {{echo}}\nAuthorization: Bearer {{$auth.token(\"api\")}}\n";
    let token = token_in_project(&project_client(&files, None, None), &server, text).await.unwrap();
    assert_eq!(provider.introspect(&token)["client_id"], "cc-basic");
    // The profile's configuration of the same name wins.
    let token = token_in_project(&project_client(&files, Some("post"), None), &server, text).await.unwrap();
    assert_eq!(provider.introspect(&token)["client_id"], "cc-post");
    // A name no configuration has: refused before anything is sent, with the names there are.
    let error =
        token_in_project(&project_client(&files, None, None), &server, "GET {{echo}}\nX-T: {{$auth.token(\"apj\")}}\n")
            .await
            .unwrap_err();
    let error = build_error(error);
    assert!(error.message().contains("no auth configuration named `apj` (did you mean `api`?)"), "{}", error.message());
}

#[tokio::test]
async fn jetbrains_security_auth_with_auth_token_and_id_token() {
    let provider = Provider::start(None);
    let server = TestServer::start().await;
    let files = volley_engine::io::MemoryFs::new();
    let public = format!(
        r#"{{
  "dev": {{
    "Security": {{ "Auth": {{
      "password": {{ "Type": "OAuth2", "Grant Type": "Password", "Token URL": "{issuer}/token",
                    "Client ID": "pw", "Client Credentials": "basic", "Username": "ada", "Scope": "api:read" }},
      "sign-in": {{ "Type": "OAuth2", "Grant Type": "Authorization Code", "Auth URL": "{issuer}/auth",
                   "Token URL": "{issuer}/token", "Client ID": "code-public", "PKCE": true,
                   "Redirect URL": "http://127.0.0.1/callback", "Scope": "openid api:read" }}
    }} }}
  }}
}}"#,
        issuer = provider.issuer
    );
    files.insert("/project/http-client.env.json", public);
    // The secrets in the private file, as JetBrains keeps them.
    files.insert(
        "/project/http-client.private.env.json",
        r#"{"dev": {"Security": {"Auth": {"password": {"Client Secret": "pw-secret", "Password": "lovelace"}}}}}"#,
    );
    let client = project_client(&files, Some("dev"), Some(Arc::new(Browser)));
    let token =
        token_in_project(&client, &server, "GET {{echo}}\nAuthorization: Bearer {{$auth.token(\"password\")}}\n")
            .await
            .unwrap();
    assert_eq!(provider.introspect(&token)["sub"], "ada");
    let id_token =
        token_in_project(&client, &server, "GET {{echo}}\nAuthorization: Bearer {{$auth.idToken(\"sign-in\")}}\n")
            .await
            .unwrap();
    assert_eq!(id_token.matches('.').count(), 2, "an ID token is a JWT: {id_token}");
    assert_eq!(provider.stats()["authorization"], 1);
}
