//! The remote client against a real server: the authentication patterns of the local
//! client's tests (`crates/engine/tests/it/auth_patterns.rs`) run through `volley serve`, the
//! server's own token, scoped tokens, flows, event streams and errors.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use support::{client, post, send, start};
use volley_echo_server::{API_KEY, CLIENT_ID, CLIENT_SECRET, PASSWORD, TestServer, USER};
use volley_engine::auth::TokenRefresh;
use volley_engine::resolvers::Environment;
use volley_engine::{Error, RemoteClient, RemoteConfig, RunOptions};
use volley_server::ServerConfig;

fn remote(base: &str) -> RemoteClient {
    RemoteClient::new(RemoteConfig::new(base)).unwrap()
}

fn login_text(server: &TestServer) -> String {
    format!(
        "# @name login\nPOST {}\nContent-Type: application/json\n\n{{\"user\": \"{USER}\", \"password\": \"{PASSWORD}\"}}\n",
        server.url("/login")
    )
}

async fn json_of(client: &RemoteClient, text: &str) -> (u16, Value) {
    let response = client.run_string(text, RunOptions::default()).await.unwrap();
    (response.status(), response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn bearer_token_stored_with_set_variable() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let bearer = format!("GET {}\nAuthorization: Bearer {{{{token}}}}\n", upstream.url("/bearer"));
    client.set_variable("token", "not-issued").await.unwrap();
    assert_eq!(json_of(&client, &bearer).await.0, 401);
    let (status, login) = json_of(&client, &login_text(&upstream)).await;
    assert_eq!(status, 200);
    client.set_variable("token", login["token"].clone()).await.unwrap();
    let (status, body) = json_of(&client, &bearer).await;
    assert_eq!(status, 200);
    assert_eq!(body["token"], login["token"]);
}

#[tokio::test]
async fn bearer_token_by_request_chaining() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let file = format!(
        "{}\n###\nGET {}\nAuthorization: Bearer {{{{login.response.body.$.token}}}}\n",
        login_text(&upstream),
        upstream.url("/bearer")
    );
    client.run_string(&file, RunOptions::default().name("login")).await.unwrap();
    let response = client.run_string(&file, RunOptions::default().index(1)).await.unwrap();
    assert_eq!(response.status(), 200, "the session keeps named responses for chaining");
}

#[tokio::test]
async fn basic_auth_by_resolver_with_variables_in_its_arguments() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    client.set_variables([("user".to_owned(), json!(USER)), ("password".to_owned(), json!(PASSWORD))]).await.unwrap();
    let text = format!(
        "GET {}\nAuthorization: {{{{$basicAuth({{{{user}}}}, {{{{password}}}})}}}}\n",
        upstream.url("/basic-auth")
    );
    let (status, body) = json_of(&client, &text).await;
    assert_eq!(status, 200);
    assert_eq!(body["user"], USER);
    client.set_variable("password", "wrong").await.unwrap();
    assert_eq!(json_of(&client, &text).await.0, 401);
}

#[tokio::test]
async fn basic_auth_by_pre_encoded_variable_and_api_keys() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    client.set_variable("basic", "YWRhOmxvdmVsYWNl").await.unwrap();
    let basic = format!("GET {}\nAuthorization: Basic {{{{basic}}}}\n", upstream.url("/basic-auth"));
    assert_eq!(json_of(&client, &basic).await.0, 200);
    client.set_variable("apiKey", API_KEY).await.unwrap();
    let header = format!("GET {}\nX-API-Key: {{{{apiKey}}}}\n", upstream.url("/api-key"));
    assert_eq!(json_of(&client, &header).await, (200, json!({"authenticated": true})));
    let query = format!("GET {}?api_key={{{{apiKey}}}}\n", upstream.url("/api-key-query"));
    assert_eq!(json_of(&client, &query).await.0, 200);
    client.set_variable("apiKey", "wrong").await.unwrap();
    assert_eq!(json_of(&client, &query).await.0, 401);
}

#[tokio::test]
async fn the_sensitive_variables_the_client_sent_are_redacted_from_what_it_shows() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    client.set_variable("apiToken", "t0ken-of-the-client").await.unwrap();
    let text = format!("GET {}?t={{{{apiToken}}}}&k={{{{runKey}}}}\n", upstream.url("/echo"));
    let response = client.run_string(&text, RunOptions::default().variable("runKey", "k3y-of-the-run")).await.unwrap();
    let echoed = response.text().await.unwrap();
    assert!(echoed.contains("t0ken-of-the-client"), "the upstream's own answer: {echoed}");
    assert_eq!(response.redact("t0ken-of-the-client k3y-of-the-run"), "[REDACTED] [REDACTED]");
    // The server echoes the request redacted.
    assert_eq!(response.request().url.query(), Some("t=[REDACTED]&k=[REDACTED]"));
}

#[tokio::test]
async fn key_from_the_server_environment() {
    let upstream = TestServer::start().await;
    let text = format!("GET {}\nX-API-Key: {{{{$env(API_KEY)}}}}\n", upstream.url("/api-key"));
    let environment = Environment::fixed([("API_KEY".to_owned(), API_KEY.to_owned())]);
    let with_key = start(ServerConfig { environment, ..ServerConfig::default() }).await;
    assert_eq!(json_of(&remote(&with_key.base), &text).await.0, 200);
    let without = start(ServerConfig { environment: Environment::fixed([]), ..ServerConfig::default() }).await;
    assert_eq!(json_of(&remote(&without.base), &text).await.0, 401);
}

#[tokio::test]
async fn oauth2_client_credentials() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    client
        .set_variables([("clientId".to_owned(), json!(CLIENT_ID)), ("clientSecret".to_owned(), json!(CLIENT_SECRET))])
        .await
        .unwrap();
    let token_request = format!(
        "POST {}\nContent-Type: application/x-www-form-urlencoded\n\ngrant_type = client_credentials\nclient_id = {{{{clientId}}}}\nclient_secret = {{{{clientSecret}}}}\n",
        upstream.url("/oauth/token")
    );
    let (status, token) = json_of(&client, &token_request).await;
    assert_eq!(status, 200);
    assert_eq!(token["token_type"], "Bearer");
    client.set_variable("token", token["access_token"].clone()).await.unwrap();
    let protected = format!("GET {}\nAuthorization: Bearer {{{{token}}}}\n", upstream.url("/bearer"));
    assert_eq!(json_of(&client, &protected).await.0, 200);
    client.set_variable("clientSecret", "wrong").await.unwrap();
    assert_eq!(json_of(&client, &token_request).await, (401, json!({"error": "invalid_client"})));
}

#[tokio::test]
async fn token_refresh_on_401_then_one_retry() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    client.set_variable("token", "stale-token").await.unwrap();
    let refresh = TokenRefresh {
        definition: format!("POST {}\n", upstream.url("/refresh")),
        token_path: "$.access_token".to_owned(),
        variable: "token".to_owned(),
    };
    let protected = format!("GET {}\nAuthorization: Bearer {{{{token}}}}\n", upstream.url("/expiring"));
    let response = refresh.run_string_remote(&client, &protected, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(client.get_variables()["token"].as_str().unwrap().starts_with("fresh-"));
    let (_, stats) = json_of(&client, &format!("GET {}\n", upstream.url("/stats"))).await;
    assert_eq!(stats["requests"]["/expiring"], 2, "the request was retried exactly once");
    assert_eq!(stats["requests"]["/refresh"], 1);
}

#[tokio::test]
async fn session_cookies_live_in_the_server_session() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let session = format!("GET {}\n", upstream.url("/session"));
    let first = remote(&server.base);
    assert_eq!(json_of(&first, &session).await.0, 401);
    assert_eq!(json_of(&first, &login_text(&upstream)).await.0, 200);
    assert_eq!(json_of(&first, &session).await.0, 200);
    // Another client has another session, so another jar.
    let second = remote(&server.base);
    assert_eq!(json_of(&second, &session).await.0, 401);
    assert_ne!(first.session_id(), second.session_id());
}

#[tokio::test]
async fn several_contexts_with_separate_clients_or_switched_variables() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let first = remote(&server.base);
    let second = remote(&server.base);
    for client in [&first, &second] {
        let (_, login) = json_of(client, &login_text(&upstream)).await;
        client.set_variable("token", login["token"].clone()).await.unwrap();
    }
    let who = format!("GET {}\nAuthorization: Bearer {{{{token}}}}\n", upstream.url("/bearer"));
    let (_, first_body) = json_of(&first, &who).await;
    let (_, second_body) = json_of(&second, &who).await;
    assert_ne!(first_body["token"], second_body["token"]);
    first.set_variable("token", second.get_variables()["token"].clone()).await.unwrap();
    let (_, switched) = json_of(&first, &who).await;
    assert_eq!(switched["token"], second_body["token"]);
}

#[tokio::test]
async fn the_servers_own_token_and_scoped_tokens() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig { token: Some("main-secret".to_owned()), ..ServerConfig::default() }).await;
    let text = format!("# @assert status == 200\nGET {}\n", upstream.url("/echo"));

    let anonymous = remote(&server.base);
    match anonymous.run_string(&text, RunOptions::default()).await {
        Err(Error::Server { status: 401, code, .. }) => assert_eq!(code, "UNAUTHORIZED"),
        other => panic!("expected 401, got {other:?}"),
    }

    let main = RemoteClient::new(RemoteConfig {
        token: Some("main-secret".to_owned()),
        flow_label: Some("nightly".to_owned()),
        ..RemoteConfig::new(&server.base)
    })
    .unwrap();
    let response = main.run_string(&text, RunOptions::default()).await.unwrap();
    assert!(response.assertions_passed());
    let flow = main.flow_id().expect("a flow was created");
    let session = main.session_id().expect("a session was created");

    // A script gets a token scoped to the flow and runs inside it.
    let http = client();
    let (status, issued) = send(
        http.post(format!("{}/tokens", server.base)),
        Some(json!({ "flowId": flow, "sessionId": session })),
        Some("main-secret"),
    )
    .await;
    assert_eq!(status, 201, "{issued}");
    let scoped = RemoteClient::new(RemoteConfig {
        token: issued["token"].as_str().map(str::to_owned),
        flow_id: Some(flow.clone()),
        session_id: Some(session.clone()),
        ..RemoteConfig::new(&server.base)
    })
    .unwrap();
    let response = scoped.run_string(&text, RunOptions::default().variable("x", 1)).await.unwrap();
    assert_eq!(response.status(), 200);
    scoped.set_variable("shared", "yes").await.unwrap();
    // A scoped token cannot create sessions or flows of its own.
    let unscoped = RemoteClient::new(RemoteConfig {
        token: issued["token"].as_str().map(str::to_owned),
        ..RemoteConfig::new(&server.base)
    })
    .unwrap();
    match unscoped.run_string(&text, RunOptions::default()).await {
        Err(Error::Server { status: 403, code, .. }) => assert_eq!(code, "FORBIDDEN"),
        other => panic!("expected 403, got {other:?}"),
    }

    main.close().await.unwrap();
    let (status, finished) = post(&http, format!("{}/flows/{flow}/finish", server.base), json!({})).await;
    assert_eq!(status, 401, "{finished}");
    let (status, finished) =
        send(http.post(format!("{}/flows/{flow}/finish", server.base)), None, Some("main-secret")).await;
    assert_eq!(status, 200);
    assert_eq!(finished["summary"]["total"], 2, "both clients' executions are in the flow");
}

#[tokio::test]
async fn responses_carry_bodies_assertions_and_streams_like_local_ones() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let client = remote(&server.base);
    let text = format!(
        "# @name echo\n# @assert status == 200\n# @assert header content-type contains xml\nPOST {}\nContent-Type: text/plain\n\nhello\n",
        upstream.url("/echo")
    );
    let response = client.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["body"], "hello");
    let checks = response.assertions();
    assert_eq!(checks.len(), 2);
    assert!(checks[0].passed());
    assert!(!checks[1].passed());
    assert_eq!(&text[checks[1].span.start..checks[1].span.end], "header content-type contains xml");
    assert_eq!(response.url().as_str(), upstream.url("/echo"));

    let stream = format!("# @sse\nGET {}\n", upstream.url("/sse/events"));
    let response = client.run_string(&stream, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.is_streaming());
    let mut events = response.events().unwrap();
    let first = events.next().await.unwrap().unwrap();
    assert_eq!((first.id.as_deref(), first.data.as_str()), (Some("1"), "first"));
    let second = events.next().await.unwrap().unwrap();
    assert_eq!(second.event, "update");

    match client.run_string(&text, RunOptions::default().name("ehco")).await {
        Err(Error::Server { status: 404, code, message, .. }) => {
            assert_eq!(code, "REQUEST_NOT_FOUND");
            assert!(message.contains("echo"), "{message}");
        }
        other => panic!("expected REQUEST_NOT_FOUND, got {other:?}"),
    }
    let refused = "GET http://127.0.0.1:9/\n";
    match client.run_string(refused, RunOptions::default()).await {
        Err(Error::Server { code, kind, .. }) => {
            assert_eq!(code, "EXECUTE_ERROR");
            assert_eq!(kind.as_deref(), Some("connection_refused"));
        }
        other => panic!("expected EXECUTE_ERROR, got {other:?}"),
    }
}
