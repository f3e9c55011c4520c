//! One end-to-end test per row of the specification's authentication table, against the
//! test server's protected routes.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use serde_json::{Value, json};
use support::{client, config};
use volley_echo_server::{API_KEY, CLIENT_ID, CLIENT_SECRET, PASSWORD, TestServer, USER};
use volley_engine::auth::TokenRefresh;
use volley_engine::resolvers::Environment;
use volley_engine::{Client, ClientConfig, CookieJar, RunOptions};

fn login_text(server: &TestServer) -> String {
    format!(
        "# @name login\nPOST {}\nContent-Type: application/json\n\n{{\"user\": \"{USER}\", \"password\": \"{PASSWORD}\"}}\n",
        server.url("/login")
    )
}

async fn json_of(client: &Client, text: &str) -> (u16, Value) {
    let response = client.run_string(text, RunOptions::default()).await.unwrap();
    (response.status(), response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn bearer_token_stored_with_set_variable() {
    let server = TestServer::start().await;
    let client = client();
    let bearer = format!("GET {}\nAuthorization: Bearer {{{{token}}}}\n", server.url("/bearer"));
    client.set_variable("token", "not-issued");
    assert_eq!(json_of(&client, &bearer).await.0, 401);
    let (status, login) = json_of(&client, &login_text(&server)).await;
    assert_eq!(status, 200);
    client.set_variable("token", login["token"].clone());
    let (status, body) = json_of(&client, &bearer).await;
    assert_eq!(status, 200);
    assert_eq!(body["token"], login["token"]);
}

#[tokio::test]
async fn bearer_token_by_request_chaining() {
    let server = TestServer::start().await;
    let client = client();
    let file = format!(
        "{}\n###\nGET {}\nAuthorization: Bearer {{{{login.response.body.$.token}}}}\n",
        login_text(&server),
        server.url("/bearer")
    );
    client.run_string(&file, RunOptions::default().name("login")).await.unwrap();
    let response = client.run_string(&file, RunOptions::default().index(1)).await.unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn basic_auth_by_resolver_with_variables_in_its_arguments() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variables([("user".to_owned(), json!(USER)), ("password".to_owned(), json!(PASSWORD))]);
    let text = format!(
        "GET {}\nAuthorization: {{{{$basicAuth({{{{user}}}}, {{{{password}}}})}}}}\n",
        server.url("/basic-auth")
    );
    let (status, body) = json_of(&client, &text).await;
    assert_eq!(status, 200);
    assert_eq!(body["user"], USER);
    client.set_variable("password", "wrong");
    assert_eq!(json_of(&client, &text).await.0, 401);
}

#[tokio::test]
async fn basic_auth_by_pre_encoded_variable() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("basic", "YWRhOmxvdmVsYWNl");
    let text = format!("GET {}\nAuthorization: Basic {{{{basic}}}}\n", server.url("/basic-auth"));
    assert_eq!(json_of(&client, &text).await.0, 200);
}

#[tokio::test]
async fn api_key_in_a_header() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("apiKey", API_KEY);
    let text = format!("GET {}\nX-API-Key: {{{{apiKey}}}}\n", server.url("/api-key"));
    assert_eq!(json_of(&client, &text).await, (200, json!({"authenticated": true})));
}

#[tokio::test]
async fn api_key_in_the_query() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("apiKey", API_KEY);
    let text = format!("GET {}?api_key={{{{apiKey}}}}\n", server.url("/api-key-query"));
    assert_eq!(json_of(&client, &text).await.0, 200);
    client.set_variable("apiKey", "wrong");
    assert_eq!(json_of(&client, &text).await.0, 401);
}

#[tokio::test]
async fn key_from_the_environment() {
    let server = TestServer::start().await;
    let text = format!("GET {}\nX-API-Key: {{{{$env(API_KEY)}}}}\n", server.url("/api-key"));
    let with_key = Client::new(ClientConfig {
        environment: Environment::fixed([("API_KEY".to_owned(), API_KEY.to_owned())]),
        ..config()
    });
    assert_eq!(json_of(&with_key, &text).await.0, 200);
    let without = Client::new(ClientConfig { environment: Environment::fixed([]), ..config() });
    assert_eq!(json_of(&without, &text).await.0, 401, "an unset variable is an empty string");
}

#[tokio::test]
async fn oauth2_client_credentials() {
    let server = TestServer::start().await;
    let client = client();
    client
        .set_variables([("clientId".to_owned(), json!(CLIENT_ID)), ("clientSecret".to_owned(), json!(CLIENT_SECRET))]);
    let token_request = format!(
        "POST {}\nContent-Type: application/x-www-form-urlencoded\n\ngrant_type = client_credentials\nclient_id = {{{{clientId}}}}\nclient_secret = {{{{clientSecret}}}}\n",
        server.url("/oauth/token")
    );
    let (status, token) = json_of(&client, &token_request).await;
    assert_eq!(status, 200);
    assert_eq!(token["token_type"], "Bearer");
    assert_eq!(token["expires_in"], 3600);
    client.set_variables([
        ("token".to_owned(), token["access_token"].clone()),
        ("expiresIn".to_owned(), token["expires_in"].clone()),
    ]);
    let protected = format!("GET {}\nAuthorization: Bearer {{{{token}}}}\n", server.url("/bearer"));
    assert_eq!(json_of(&client, &protected).await.0, 200);
    client.set_variable("clientSecret", "wrong");
    assert_eq!(json_of(&client, &token_request).await, (401, json!({"error": "invalid_client"})));
}

#[tokio::test]
async fn token_refresh_on_401_then_one_retry() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("token", "stale-token");
    let refresh = TokenRefresh {
        definition: format!("POST {}\n", server.url("/refresh")),
        token_path: "$.access_token".to_owned(),
        variable: "token".to_owned(),
    };
    let protected = format!("GET {}\nAuthorization: Bearer {{{{token}}}}\n", server.url("/expiring"));
    let response = refresh.run_string(&client, &protected, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(client.get_variables()["token"].as_str().unwrap().starts_with("fresh-"));
    let stats: Value = client
        .run_string(&format!("GET {}\n", server.url("/stats")), RunOptions::default())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["requests"]["/expiring"], 2, "the request was retried exactly once");
    assert_eq!(stats["requests"]["/refresh"], 1);

    // With a fresh token there is no refresh.
    let again = refresh.run_string(&client, &protected, RunOptions::default()).await.unwrap();
    assert_eq!(again.status(), 200);
    let stats: Value = client
        .run_string(&format!("GET {}\n", server.url("/stats")), RunOptions::default())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["requests"]["/refresh"], 1);
}

#[tokio::test]
async fn session_cookies_through_the_jar() {
    let server = TestServer::start().await;
    let with_jar = Client::new(ClientConfig { cookie_jar: Some(CookieJar::new()), ..config() });
    let session = format!("GET {}\n", server.url("/session"));
    assert_eq!(json_of(&with_jar, &session).await.0, 401);
    assert_eq!(json_of(&with_jar, &login_text(&server)).await.0, 200);
    assert_eq!(json_of(&with_jar, &session).await.0, 200);
    let without_jar = client();
    assert_eq!(json_of(&without_jar, &login_text(&server)).await.0, 200);
    assert_eq!(json_of(&without_jar, &session).await.0, 401);
}

#[tokio::test]
async fn several_contexts_with_separate_clients_or_switched_variables() {
    let server = TestServer::start().await;
    let first = client();
    let second = client();
    for client in [&first, &second] {
        let (_, login) = json_of(client, &login_text(&server)).await;
        client.set_variable("token", login["token"].clone());
    }
    let who = format!("GET {}\nAuthorization: Bearer {{{{token}}}}\n", server.url("/bearer"));
    let (_, first_body) = json_of(&first, &who).await;
    let (_, second_body) = json_of(&second, &who).await;
    assert_ne!(first_body["token"], second_body["token"]);
    assert_eq!(first_body["token"], first.get_variables()["token"]);
    first.set_variable("token", second.get_variables()["token"].clone());
    let (_, switched) = json_of(&first, &who).await;
    assert_eq!(switched["token"], second_body["token"]);
}
