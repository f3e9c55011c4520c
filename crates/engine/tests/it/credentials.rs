//! Credentials and cookies on the wire: what a request written the way REST Client,
//! httpyac, JetBrains and curl users write it actually sends, checked on the test
//! server's `/echo`, `/basic-auth` and `/digest-auth`.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use base64::Engine as _;
use support::{client, config, echo, echoed_header, echoed_headers};
use volley_echo_server::{PASSWORD, TestServer, USER};
use volley_engine::{Client, ClientConfig, CookieJar, RunOptions};

fn base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// The `Authorization` header `/echo` received for a request with `authorization` written.
async fn sent_authorization(server: &TestServer, authorization: &str) -> Option<String> {
    let text = format!("GET {}\nAuthorization: {authorization}\n", server.url("/echo"));
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    echoed_header(&echo(&response).await, "authorization").map(str::to_owned)
}

#[tokio::test]
async fn url_credentials_become_a_basic_header_and_leave_the_url() {
    let server = TestServer::start().await;
    let port = server.addr().port();
    let text = format!("GET http://{USER}:{PASSWORD}@127.0.0.1:{port}/basic-auth\n");
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 200, "the server saw the credentials");
    let sent = response.request();
    assert_eq!(sent.url.as_str(), format!("http://127.0.0.1:{port}/basic-auth"), "no userinfo on the wire");
    assert_eq!(sent.headers["authorization"], format!("Basic {}", base64("ada:lovelace")).as_str());
    for shown in [response.redact(sent.url.as_str()), response.redact(sent.headers["authorization"].to_str().unwrap())]
    {
        assert!(!shown.contains(PASSWORD) && !shown.contains(&base64("ada:lovelace")), "{shown}");
    }
}

#[tokio::test]
async fn url_credentials_are_percent_decoded() {
    let server = TestServer::start().await;
    let port = server.addr().port();
    let text = format!("GET http://a%20d%C3%A5:p%40ss%3Aw%2Frd@127.0.0.1:{port}/echo\n");
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    let echoed = echo(&response).await;
    assert_eq!(echoed_header(&echoed, "authorization"), Some(format!("Basic {}", base64("a då:p@ss:w/rd")).as_str()));
    let user_only = format!("GET http://ada@127.0.0.1:{port}/echo\n");
    let response = client().run_string(&user_only, RunOptions::default()).await.unwrap();
    assert_eq!(
        echoed_header(&echo(&response).await, "authorization"),
        Some(format!("Basic {}", base64("ada:")).as_str())
    );
}

#[tokio::test]
async fn a_written_authorization_header_wins_over_url_credentials() {
    let server = TestServer::start().await;
    let port = server.addr().port();
    let text = format!("GET http://ada:lovelace@127.0.0.1:{port}/echo\nAuthorization: Bearer abc\n");
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    let echoed = echo(&response).await;
    assert_eq!(echoed_headers(&echoed, "authorization"), ["Bearer abc"]);
    assert_eq!(echoed["url"], "/echo");
}

#[tokio::test]
async fn basic_credentials_written_in_clear_are_encoded() {
    let server = TestServer::start().await;
    let encoded = |text: &str| Some(format!("Basic {}", base64(text)));
    assert_eq!(sent_authorization(&server, "Basic ada:lovelace").await, encoded("ada:lovelace"));
    assert_eq!(sent_authorization(&server, "Basic ada lovelace").await, encoded("ada:lovelace"));
    assert_eq!(sent_authorization(&server, "basic ada lovelace").await, encoded("ada:lovelace"), "any case");
    // The password keeps its spaces and colons; the first word is the user.
    assert_eq!(sent_authorization(&server, "Basic ada:it's a: secret").await, encoded("ada:it's a: secret"));
    assert_eq!(sent_authorization(&server, "Basic ada  pass:word two").await, encoded("ada:pass:word two"));
    // One token without `:` is already encoded (or is the author's business): as written.
    let token = base64("ada:lovelace");
    assert_eq!(sent_authorization(&server, &format!("Basic {token}")).await, Some(format!("Basic {token}")));
    assert_eq!(sent_authorization(&server, "Basic c29tZXRoaW5n").await.as_deref(), Some("Basic c29tZXRoaW5n"));
    assert_eq!(sent_authorization(&server, "Bearer a b:c").await.as_deref(), Some("Bearer a b:c"));
}

#[tokio::test]
async fn basic_credentials_are_encoded_after_substitution() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("user", USER);
    client.set_variable("password", PASSWORD);
    for written in ["Basic {{user}}:{{password}}", "Basic {{user}} {{password}}"] {
        let text = format!("GET {}\nAuthorization: {written}\n", server.url("/basic-auth"));
        let response = client.run_string(&text, RunOptions::default()).await.unwrap();
        assert_eq!(response.status(), 200, "{written}");
    }
    client.set_variable("credentials", "ada:lovelace");
    let text = format!("GET {}\nAuthorization: Basic {{{{credentials}}}}\n", server.url("/basic-auth"));
    assert_eq!(client.run_string(&text, RunOptions::default()).await.unwrap().status(), 200);
}

#[tokio::test]
async fn basic_credentials_from_a_secret_are_redacted_encoded_too() {
    let server = TestServer::start().await;
    let client = Client::new(ClientConfig {
        environment: volley_engine::resolvers::Environment::fixed([("PASSWORD".to_owned(), PASSWORD.to_owned())]),
        ..config()
    });
    let text = format!("GET {}\nAuthorization: Basic ada {{{{$secret(PASSWORD)}}}}\n", server.url("/basic-auth"));
    let response = client.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 200);
    let shown = response.redact(response.request().headers["authorization"].to_str().unwrap());
    assert_eq!(shown, "Basic [REDACTED]");
}

#[tokio::test]
async fn cookie_lines_go_out_as_one_header() {
    let server = TestServer::start().await;
    let text = format!("GET {}\nCookie: a=1\nCookie: b=2; c=3\n", server.url("/echo"));
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(echoed_headers(&echo(&response).await, "cookie"), ["a=1; b=2; c=3"]);
}

#[tokio::test]
async fn cookie_lines_are_merged_with_the_jar() {
    let server = TestServer::start().await;
    let jar = CookieJar::new();
    let client = Client::new(ClientConfig { cookie_jar: Some(jar.clone()), ..config() });
    let set = format!("GET {}?jar=3\n", server.url("/cookies/set"));
    client.run_string(&set, RunOptions::default()).await.unwrap();
    let text = format!("GET {}\nCookie: a=1\nCookie: b=2\n", server.url("/echo"));
    let response = client.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(echoed_headers(&echo(&response).await, "cookie"), ["a=1; b=2; jar=3"]);
    assert_eq!(response.request().headers.get_all("cookie").iter().count(), 1);
}

#[tokio::test]
async fn prepared_requests_show_one_cookie_header() {
    let prepared = volley_engine::stages::prepare(
        &client(),
        "GET http://127.0.0.1:9/x\nCookie: a=1\ncookie: b=2\n",
        &RunOptions::default(),
    )
    .await
    .unwrap();
    let values: Vec<&str> = prepared.headers.get_all("cookie").iter().map(|value| value.to_str().unwrap()).collect();
    assert_eq!(values, ["a=1; b=2"]);
}

/// How many requests the test server received on `path`.
async fn requests_to(server: &TestServer, path: &str) -> u64 {
    let stats = client().run_string(&format!("GET {}\n", server.url("/stats")), RunOptions::default()).await.unwrap();
    let stats: serde_json::Value = stats.json().await.unwrap();
    stats["requests"][path].as_u64().unwrap_or(0)
}

/// Runs `GET /digest-auth?{query}` with `Authorization: Digest {credentials}`.
async fn digest(server: &TestServer, query: &str, credentials: &str) -> volley_engine::Response {
    let text = format!("GET {}?{query}\nAuthorization: Digest {credentials}\n", server.url("/digest-auth"));
    client().run_string(&text, RunOptions::default()).await.unwrap()
}

#[tokio::test]
async fn digest_answers_the_challenge_once() {
    let server = TestServer::start().await;
    let response = digest(&server, "algorithm=MD5", "ada lovelace").await;
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["algorithm"], "MD5");
    assert_eq!(body["qop"], "auth");
    let sent = response.request().headers["authorization"].to_str().unwrap().to_owned();
    assert!(
        sent.starts_with("Digest username=\"ada\", realm=\"volley@127.0.0.1\", uri=\"/digest-auth?algorithm=MD5\""),
        "{sent}"
    );
    assert!(!sent.contains(PASSWORD), "{sent}");
    assert_eq!(requests_to(&server, "/digest-auth").await, 2, "the challenge, then the answer");
}

#[tokio::test]
async fn digest_with_every_algorithm_and_protection() {
    let server = TestServer::start().await;
    for (query, algorithm, qop) in [
        ("algorithm=SHA-256", "SHA-256", Some("auth")),
        ("algorithm=SHA-512-256", "SHA-512-256", Some("auth")),
        ("algorithm=MD5-sess", "MD5-sess", Some("auth")),
        ("algorithm=SHA-256-sess&qop=auth-int", "SHA-256-sess", Some("auth-int")),
        ("algorithm=SHA-256&qop=none", "SHA-256", None),
        ("algorithm=SHA-256&userhash=true", "SHA-256", Some("auth")),
        // Two challenges: the stronger one is answered.
        ("algorithm=MD5,SHA-256", "SHA-256", Some("auth")),
    ] {
        let response = digest(&server, query, "ada:lovelace").await;
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["authenticated"], true, "{query}: {body}");
        assert_eq!(body["algorithm"], algorithm, "{query}");
        assert_eq!(body["qop"].as_str(), qop, "{query}");
    }
}

#[tokio::test]
async fn digest_protects_the_body_with_auth_int() {
    let server = TestServer::start().await;
    let text = format!(
        "POST {}?qop=auth-int\nAuthorization: Digest ada lovelace\nContent-Type: application/json\n\n{{\"a\": 1}}\n",
        server.url("/digest-auth")
    );
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
}

#[tokio::test]
async fn a_wrong_digest_password_is_a_401_response() {
    let server = TestServer::start().await;
    let response = digest(&server, "algorithm=SHA-256", "ada wrong").await;
    assert_eq!(response.status(), 401);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["reason"], "wrong response (user or password)");
    assert_eq!(requests_to(&server, "/digest-auth").await, 2, "answered once, not again");
}

#[tokio::test]
async fn digest_credentials_are_never_sent_without_a_challenge() {
    let server = TestServer::start().await;
    let text = format!("GET {}\nAuthorization: Digest ada lovelace\n", server.url("/echo"));
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(echoed_header(&echo(&response).await, "authorization"), None);
}

#[tokio::test]
async fn digest_is_answered_after_a_redirect() {
    let server = TestServer::start().await;
    let text = format!(
        "GET {}?url=/digest-auth%3Falgorithm%3DSHA-256\nAuthorization: Digest ada lovelace\n",
        server.url("/redirect-to")
    );
    let response = client().run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.redirected());
}

#[tokio::test]
async fn digest_without_a_password_is_refused_before_sending() {
    let text = "GET http://127.0.0.1:9/x\nAuthorization: Digest {{user}}\n";
    let client = client();
    client.set_variable("user", "ada");
    let error = client.run_string(text, RunOptions::default()).await.unwrap_err();
    let volley_engine::Error::Build(build) = error else { panic!("{error:?}") };
    assert_eq!(build.code(), "invalid-credentials");
    assert_eq!(build.message(), "invalid credentials: `Digest` needs a user and a password");
    assert_eq!(build.span().start_position.line, 1);
    assert!(build.hint().unwrap().contains("Digest user password"));
    let websocket = "WEBSOCKET ws://127.0.0.1:9/ws\nAuthorization: Digest ada lovelace\n";
    let error = client.run_string(websocket, RunOptions::default()).await.unwrap_err();
    let volley_engine::Error::Build(build) = error else { panic!("{error:?}") };
    assert_eq!(build.code(), "invalid-credentials");
}

/// A server on 127.0.0.1 that keeps every byte it is sent and answers each connection
/// `200` with no body: what a request that should never leave would reach.
async fn capture_server() -> (std::net::SocketAddr, std::sync::Arc<std::sync::Mutex<Vec<u8>>>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = std::sync::Arc::clone(&received);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let kept = std::sync::Arc::clone(&kept);
            tokio::spawn(async move {
                let mut buffer = [0_u8; 4096];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|window| window == b"\r\n\r\n") {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(read) => seen.extend_from_slice(&buffer[..read]),
                    }
                }
                kept.lock().unwrap().extend_from_slice(&seen);
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
            });
        }
    });
    (addr, received)
}

#[tokio::test]
async fn other_tools_auth_syntax_never_reaches_the_server() {
    let (addr, received) = capture_server().await;
    let client = client();
    client.set_variable("flow", "oauth2 client_credentials job");
    // httpyac's OAuth 2.0 forms run a flow; without a configured client they fail
    // before anything is sent (`auth-failed`), and the grants Volley does not run are
    // refused by name (`unsupported-auth`).
    let cases = [
        ("Authorization: oauth2 client_credentials job", "`job_clientId` is not set"),
        ("Authorization: OAuth2", "`oauth2_clientId` is not set"),
        ("Authorization: openid password keycloak", "`keycloak_clientId` is not set"),
        ("Authorization: oauth2 authorization_code", "`oauth2_clientId` is not set"),
        ("Authorization: oauth2 implicit", "`oauth2 implicit`"),
        ("Authorization: oauth2 client token_exchange other", "token exchange"),
        ("Authorization: {{flow}}", "`job_clientId` is not set"),
        ("Authorization: COGNITO ada lovelace eu-west-1 eu-west-1_pool client", "`COGNITO` authorization"),
    ];
    for (header, named) in cases {
        for method in ["GET", "DELETE", "WEBSOCKET"] {
            let scheme = if method == "WEBSOCKET" { "ws" } else { "http" };
            let text = format!("{method} {scheme}://{addr}/x\n{header}\n");
            let error = client.run_string(&text, RunOptions::default()).await.unwrap_err();
            let volley_engine::Error::Build(build) = error else { panic!("{header}: {error:?}") };
            assert!(matches!(build.code(), "unsupported-auth" | "auth-failed"), "{header}: {}", build.code());
            assert!(build.message().contains(named), "{header}: {}", build.message());
            assert_eq!(build.span().start_position.line, 1, "{header}");
            assert!(build.hint().is_some(), "{header}");
        }
    }
    assert!(received.lock().unwrap().is_empty(), "{}", String::from_utf8_lossy(&received.lock().unwrap()));
    // httpyac's client certificate header is the connection's certificate (none on
    // plain HTTP), never a header.
    for header in ["X-ClientCert: pfx: ./client.p12 passphrase: hunter2", "clientcert: cert: ./c.pem key: ./c.key"] {
        client.run_string(&format!("GET http://{addr}/x\n{header}\n"), RunOptions::default()).await.unwrap();
        let seen = String::from_utf8_lossy(&received.lock().unwrap()).to_ascii_lowercase();
        assert!(!seen.contains("clientcert") && !seen.contains("hunter2"), "{seen}");
    }
    // AWS keys written in clear are signed with, never sent: the header on the wire is
    // the signature.
    let text = format!(
        "POST http://{addr}/x\nAuthorization: AWS AKIDEXAMPLE wJalrXUtnFEMI/K7MDENG token:SESSION region:eu-west-1 \
         service:execute-api\n\n{{}}\n"
    );
    client.run_string(&text, RunOptions::default()).await.unwrap();
    let seen = String::from_utf8_lossy(&received.lock().unwrap()).to_ascii_lowercase();
    assert!(seen.contains("authorization: aws4-hmac-sha256 credential=akidexample/"), "{seen}");
    assert!(seen.contains("/eu-west-1/execute-api/aws4_request, signedheaders="), "{seen}");
    assert!(seen.contains("x-amz-security-token: session"), "{seen}");
    assert!(!seen.contains("wjalrxutnfemi"), "the secret key never leaves: {seen}");
    received.lock().unwrap().clear();
    // What is not another tool's syntax still goes as written: a SigV2 answer, a token.
    for header in ["Authorization: AWS AKIDEXAMPLE:c2lnbmF0dXJl", "Authorization: Bearer oauth2", "X-ClientCert: abc"] {
        let text = format!("GET http://{addr}/x\n{header}\n");
        client.run_string(&text, RunOptions::default()).await.unwrap();
        let seen = String::from_utf8_lossy(&received.lock().unwrap()).into_owned();
        assert!(seen.to_ascii_lowercase().contains(&header.to_ascii_lowercase()), "{header}: {seen}");
    }
}

/// httpyac's `Authorization: oauth2` with the client credentials grant, on the test
/// server's `/oauth/token`: the token is got once and reused, the secret goes as HTTP
/// Basic or in the body, and an error answer is the request's error, placed at the
/// header, with the server's `error`.
#[tokio::test]
async fn oauth2_client_credentials_are_got_once_and_sent_as_bearer() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("oauth2_tokenEndpoint", server.url("/oauth/token"));
    client.set_variable("oauth2_clientId", volley_echo_server::CLIENT_ID);
    client.set_variable("oauth2_clientSecret", volley_echo_server::CLIENT_SECRET);
    let text = format!("GET {}\nAuthorization: oauth2 client_credentials\n", server.url("/echo"));
    let first = client.run_string(&text, RunOptions::default()).await.unwrap();
    let token = echoed_header(&echo(&first).await, "authorization").unwrap().to_owned();
    assert!(token.starts_with("Bearer "), "{token}");
    assert!(!first.redact(&token).contains(token.trim_start_matches("Bearer ")), "the token is a secret");
    let second = client.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(echoed_header(&echo(&second).await, "authorization"), Some(token.as_str()), "the cached token");
    let bearer = format!("GET {}\nAuthorization: oauth2\n", server.url("/bearer"));
    assert_eq!(client.run_string(&bearer, RunOptions::default()).await.unwrap().status(), 200);

    // The secret in the body (httpyac's `useAuthorizationHeader: false`), another prefix.
    let other = super::support::client();
    other.set_variable("api_tokenEndpoint", server.url("/oauth/token"));
    other.set_variable("api_clientId", volley_echo_server::CLIENT_ID);
    other.set_variable("api_clientSecret", volley_echo_server::CLIENT_SECRET);
    other.set_variable("api_useAuthorizationHeader", "false");
    let text = format!("GET {}\nAuthorization: oauth2 client api\n", server.url("/bearer"));
    assert_eq!(other.run_string(&text, RunOptions::default()).await.unwrap().status(), 200);

    // A wrong secret: the server's answer, at the header; the secret never shown.
    other.set_variable("api_clientSecret", "wrong-secret-4d1");
    let error = other.run_string(&text, RunOptions::default()).await.unwrap_err();
    let volley_engine::Error::Build(build) = error else { panic!("{error:?}") };
    assert_eq!(build.code(), "auth-failed");
    assert!(build.message().contains("/oauth/token answered 401 Unauthorized: invalid_client"), "{}", build.message());
    assert!(build.hint().unwrap().contains("api_clientSecret"));
    assert_eq!(build.span().start_position.line, 1);
    assert!(!format!("{build} {:?}", build.hint()).contains("wrong-secret-4d1"));
}

/// AWS keys in volley.jsonc (`"type": "aws"` under `auth`), used as
/// `Authorization: {{$auth.aws("id")}}`: the request is signed, the keys never sent.
#[tokio::test]
async fn aws_keys_of_volley_jsonc_sign_the_request() {
    let (addr, received) = capture_server().await;
    let files = volley_engine::io::MemoryFs::new();
    files.insert(
        "/project/volley.jsonc",
        r#"{"variables": {"region": "eu-west-1"},
            "auth": {"prod": {"type": "aws", "accessKey": "AKIDEXAMPLE", "secretKey": "m4rk-config-secret",
                              "region": "{{region}}", "service": "execute-api"},
                     "oauth": {"grant": "client_credentials", "clientId": "c", "tokenEndpoint": "http://127.0.0.1:9/t"}}}"#,
    );
    let client = Client::new(ClientConfig {
        io: std::sync::Arc::new(files.clone()),
        config: volley_engine::ConfigSource::Discover,
        ..config()
    });
    let text = format!("GET http://{addr}/x\nAuthorization: {{{{$auth.aws(\"prod\")}}}}\n");
    client.run_string(&text, support::in_project()).await.unwrap();
    let seen = String::from_utf8_lossy(&received.lock().unwrap()).to_ascii_lowercase();
    assert!(seen.contains("credential=akidexample/") && seen.contains("/eu-west-1/execute-api/aws4_request"), "{seen}");
    assert!(!seen.contains("m4rk-config-secret"), "{seen}");
    // The wrong kind of configuration for the resolver: said, nothing sent.
    let wrong = format!("GET http://{addr}/x\nAuthorization: Bearer {{{{$auth.token(\"prod\")}}}}\n");
    let error = client.run_string(&wrong, support::in_project()).await.unwrap_err();
    assert!(error.to_string().contains("`prod` is AWS keys: use `{{$auth.aws(\"id\")}}`"), "{error}");
}

/// Signature V4 as an independent implementation checks it (aws4, `tests/sigv4`): the
/// query sorted, a body hashed, a session token, S3's own rules, and a request whose
/// other header takes an OAuth 2.0 token, which is signed once the token is in place.
#[tokio::test]
async fn signatures_hold_for_an_independent_verifier() {
    let verifier = volley_echo_server::SigV4Verifier::start(&[
        ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        ("AKIDCONFIG", "m4rk-config-secret"),
    ]);
    let base = &verifier.base;
    let client = client();
    let key = "AKIDEXAMPLE wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    let requests = [
        format!(
            "GET {base}/items/a%20b?z=1&a=2&a=1&q=x y\nAuthorization: AWS {key} region:eu-west-1 service:execute-api\n"
        ),
        format!(
            "POST {base}/orders\nContent-Type: application/json\nX-Custom:  spaced   value \nAuthorization: AWS {key} \
             token:SESSION/TOKEN+1 region:us-east-1 service:lambda\n\n{{\"id\": 1}}\n"
        ),
        format!("PUT {base}/bucket/some key.txt\nAuthorization: AWS {key} region:eu-central-1 service:s3\n\nhello\n"),
    ];
    for text in &requests {
        let response = client.run_string(text, RunOptions::default()).await.unwrap();
        let verdict: serde_json::Value = response.json().await.unwrap();
        assert_eq!(response.status(), 200, "{text}\n{verdict:#}");
    }

    let server = TestServer::start().await;
    let files = volley_engine::io::MemoryFs::new();
    files.insert(
        "/project/volley.jsonc",
        format!(
            r#"{{"auth": {{"prod": {{"type": "aws", "accessKey": "AKIDCONFIG", "secretKey": "m4rk-config-secret",
                                     "region": "eu-west-1", "service": "execute-api"}},
                         "svc": {{"grant": "client_credentials", "clientId": "{}", "clientSecret": "{}",
                                  "tokenEndpoint": "{}"}}}}}}"#,
            volley_echo_server::CLIENT_ID,
            volley_echo_server::CLIENT_SECRET,
            server.url("/oauth/token")
        ),
    );
    let client = Client::new(ClientConfig {
        io: std::sync::Arc::new(files),
        config: volley_engine::ConfigSource::Discover,
        ..config()
    });
    let text = format!(
        "POST {base}/tokens\nAuthorization: {{{{$auth.aws(\"prod\")}}}}\nX-Api-Token: {{{{$auth.token(\"svc\")}}}}\n\
         Content-Type: application/json\n\n{{\"token\": \"{{{{$auth.token(\"svc\")}}}}\"}}\n"
    );
    let response = client.run_string(&text, support::in_project()).await.unwrap();
    let verdict: serde_json::Value = response.json().await.unwrap();
    assert_eq!(response.status(), 200, "{verdict:#}");
    let signed = verdict["signedHeaders"].as_array().unwrap();
    assert!(signed.iter().any(|name| name == "x-api-token"), "{verdict:#}");
}

/// A body file outside the project (the configuration's directory, else the checkout's,
/// else the `.http` file's) is refused by name before anything is sent, unless the
/// client allows such files.
#[tokio::test]
async fn files_outside_the_project_are_refused_unless_allowed() {
    let (addr, received) = capture_server().await;
    let files = volley_engine::io::MemoryFs::new();
    files.insert("/home/ada/project/volley.jsonc", "{}");
    files.insert("/home/ada/project/api/body.json", "{\"inside\": true}");
    files.insert("/home/ada/.ssh/id_ed25519", "m4rk-private-key");
    let client = |allow: bool| {
        Client::new(ClientConfig {
            io: std::sync::Arc::new(files.clone()),
            config: volley_engine::ConfigSource::Discover,
            allow_external_files: allow,
            ..config()
        })
    };
    let options = || RunOptions::default().source_path("/home/ada/project/api/api.http");
    let outside = format!("POST http://{addr}/x\n\n< ../../.ssh/id_ed25519\n");
    let error = client(false).run_string(&outside, options()).await.unwrap_err();
    let volley_engine::Error::Build(build) = error else { panic!("{error:?}") };
    assert_eq!(build.code(), "external-file");
    assert!(build.message().contains("is outside the project (/home/ada/project)"), "{}", build.message());
    assert!(build.hint().unwrap().contains("--allow-external-files"));
    assert!(received.lock().unwrap().is_empty(), "nothing is sent");
    let inside = format!("POST http://{addr}/x\n\n< ./body.json\n");
    client(false).run_string(&inside, options()).await.unwrap();
    client(true).run_string(&outside, options()).await.unwrap();
    assert!(String::from_utf8_lossy(&received.lock().unwrap()).contains("m4rk-private-key"), "allowed, it is sent");
}
