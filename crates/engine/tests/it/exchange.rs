//! The exchange: redirects, cookies, timeouts, cancellation, transport failures, TLS,
//! HTTP/2, and statuses that are responses, not errors.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use std::time::Duration;

use serde_json::Value;
use support::{client, config, echo, echoed_header};
use volley_echo_server::TestServer;
use volley_engine::resolvers::Environment;
use volley_engine::{
    CancellationToken, Client, ClientConfig, CookieJar, Error, RequestDefaults, RunOptions, TransportError,
};

fn with_jar() -> Client {
    Client::new(ClientConfig { cookie_jar: Some(CookieJar::new()), ..config() })
}

#[tokio::test]
async fn error_statuses_are_normal_responses() {
    let server = TestServer::start().await;
    let response =
        client().run_string(&format!("GET {}\n", server.url("/status/404")), RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(response.status_text(), "Not Found");
    assert!(!response.ok());
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], 404);
    let response =
        client().run_string(&format!("DELETE {}\n", server.url("/status/503")), RunOptions::default()).await.unwrap();
    assert_eq!(response.status(), 503);
}

#[tokio::test]
async fn redirects_are_followed_unless_told_not_to() {
    let server = TestServer::start().await;
    let client = client();
    let followed =
        client.run_string(&format!("GET {}\n", server.url("/redirect/3")), RunOptions::default()).await.unwrap();
    assert_eq!(followed.status(), 200);
    assert!(followed.redirected());
    assert_eq!(followed.url().path(), "/redirect/0");

    let text = format!("# @no-redirect\nGET {}\n", server.url("/redirect/3"));
    let stopped = client.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(stopped.status(), 302);
    assert!(!stopped.redirected());
    assert_eq!(stopped.headers()["location"], "/redirect/2");

    let no_follow = Client::new(ClientConfig {
        defaults: RequestDefaults { follow_redirects: Some(false), ..RequestDefaults::default() },
        ..config()
    });
    let stopped =
        no_follow.run_string(&format!("GET {}\n", server.url("/redirect/1")), RunOptions::default()).await.unwrap();
    assert_eq!(stopped.status(), 302);

    let too_many = client.run_string(&format!("GET {}\n", server.url("/redirect/11")), RunOptions::default()).await;
    assert!(matches!(too_many, Err(Error::Transport(TransportError::TooManyRedirects { limit: 10 }))), "{too_many:?}");
}

#[tokio::test]
async fn redirects_change_the_method_as_browsers_do() {
    let server = TestServer::start().await;
    let client = client();
    let see_other = format!(
        "POST {}?status=303&url=/echo/after\nContent-Type: text/plain\n\npayload\n",
        server.url("/redirect-to")
    );
    let echo_303 = echo(&client.run_string(&see_other, RunOptions::default()).await.unwrap()).await;
    assert_eq!(echo_303["method"], "GET");
    assert_eq!(echo_303["body_len"], 0);
    assert_eq!(echoed_header(&echo_303, "content-type"), None);

    let temporary = format!("PUT {}?status=307&url=/echo/after\n\npayload\n", server.url("/redirect-to"));
    let echo_307 = echo(&client.run_string(&temporary, RunOptions::default()).await.unwrap()).await;
    assert_eq!(echo_307["method"], "PUT");
    assert_eq!(echo_307["body"], "payload");
}

#[tokio::test]
async fn cookies_are_stored_from_every_hop_and_sent_back() {
    let server = TestServer::start().await;
    let client = with_jar();
    let set = format!("GET {}?session=abc&theme=dark\n", server.url("/cookies/set-and-redirect"));
    let response = client.run_string(&set, RunOptions::default()).await.unwrap();
    assert!(response.redirected(), "the cookies were set on a redirect hop");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["cookies"]["session"], "abc", "sent on the next hop already");
    assert_eq!(client.cookie_jar().unwrap().len(), 2);

    let later = client.run_string(&format!("GET {}\n", server.url("/cookies")), RunOptions::default()).await.unwrap();
    let body: Value = later.json().await.unwrap();
    assert_eq!(body["cookies"]["theme"], "dark");

    let without = format!("# @no-cookie-jar\nGET {}\n", server.url("/cookies"));
    let body: Value = client.run_string(&without, RunOptions::default()).await.unwrap().json().await.unwrap();
    assert_eq!(body["cookies"], serde_json::json!({}));

    let secure =
        client.run_string(&format!("GET {}\n", server.url("/cookies/secure")), RunOptions::default()).await.unwrap();
    assert_eq!(secure.status(), 200);
    let body: Value = client
        .run_string(&format!("GET {}\n", server.url("/cookies")), RunOptions::default())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // Loopback counts as a secure context (as in browsers), so a Secure cookie comes
    // back here; the unit tests of the jar check plain HTTP to other hosts.
    assert_eq!(body["cookies"]["secure_cookie"], "1");

    let no_jar = client_without_jar_sees_nothing(&server).await;
    assert_eq!(no_jar, serde_json::json!({}));
}

async fn client_without_jar_sees_nothing(server: &TestServer) -> Value {
    let plain = client();
    plain.run_string(&format!("GET {}?a=1\n", server.url("/cookies/set")), RunOptions::default()).await.expect("set");
    let response =
        plain.run_string(&format!("GET {}\n", server.url("/cookies")), RunOptions::default()).await.expect("get");
    let body: Value = response.json().await.expect("JSON");
    body["cookies"].clone()
}

#[tokio::test]
async fn a_persistent_jar_survives_the_client() {
    let server = TestServer::start().await;
    let path = std::env::temp_dir().join(format!("volley-jar-{}/cookies.json", std::process::id()));
    let first = Client::new(ClientConfig { cookie_jar: Some(CookieJar::persistent(&path).unwrap()), ..config() });
    first.run_string(&format!("GET {}?kept=yes\n", server.url("/cookies/set")), RunOptions::default()).await.unwrap();
    drop(first);
    let second = Client::new(ClientConfig { cookie_jar: Some(CookieJar::persistent(&path).unwrap()), ..config() });
    let body: Value = second
        .run_string(&format!("GET {}\n", server.url("/cookies")), RunOptions::default())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["cookies"]["kept"], "yes");
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[tokio::test]
async fn timeouts_come_from_the_directive_the_run_or_the_client() {
    let server = TestServer::start().await;
    let slow = server.url("/slow?ms=2000");
    let directive = client().run_string(&format!("# @timeout 100\nGET {slow}\n"), RunOptions::default()).await;
    assert!(
        matches!(directive, Err(Error::Transport(TransportError::Timeout { after })) if after == Duration::from_millis(100)),
        "{directive:?}"
    );
    let run =
        client().run_string(&format!("GET {slow}\n"), RunOptions::default().timeout(Duration::from_millis(150))).await;
    assert!(matches!(run, Err(Error::Transport(TransportError::Timeout { .. }))), "{run:?}");
    let client_timeout = Client::new(ClientConfig { timeout: Some(Duration::from_millis(120)), ..config() });
    let error = client_timeout.run_string(&format!("GET {slow}\n"), RunOptions::default()).await.unwrap_err();
    assert_eq!(error.to_string(), "timed out after 120 ms");
    // The directive wins over a shorter run timeout.
    let fast = server.url("/slow?ms=200");
    let wins = client()
        .run_string(&format!("# @timeout 5 s\nGET {fast}\n"), RunOptions::default().timeout(Duration::from_millis(50)))
        .await;
    assert_eq!(wins.unwrap().status(), 200);
    // The timeout covers the body too.
    let body = client()
        .run_string(&format!("# @timeout 150\nGET {}\n", server.url("/slow-body?ms=2000")), RunOptions::default())
        .await;
    assert!(matches!(body, Err(Error::Transport(TransportError::Timeout { .. }))), "{body:?}");
}

#[tokio::test]
async fn a_timeout_directive_may_take_its_value_from_variables() {
    let server = TestServer::start().await;
    let slow = server.url("/slow?ms=2000");
    // A file variable, with its unit.
    let text = format!("@patience = 150 ms\n# @timeout {{{{patience}}}}\nGET {slow}\n");
    let error = client().run_string(&text, RunOptions::default()).await.unwrap_err();
    assert!(
        matches!(error, Error::Transport(TransportError::Timeout { after }) if after == Duration::from_millis(150)),
        "{error:?}"
    );
    // A run variable with the unit written after it; the directive wins over the run.
    let text = format!("# @timeout {{{{seconds}}}} s\nGET {}\n", server.url("/slow?ms=200"));
    let options = RunOptions::default().variable("seconds", 5).timeout(Duration::from_millis(50));
    assert_eq!(client().run_string(&text, options).await.unwrap().status(), 200);
    // Not a duration once substituted: refused before anything is sent, with the place.
    let text = format!("# @timeout {{{{patience}}}}\nGET {slow}\n");
    let error = client().run_string(&text, RunOptions::default().variable("patience", "soon")).await.unwrap_err();
    let Error::Build(build) = &error else { panic!("{error:?}") };
    assert_eq!(build.code(), "invalid-timeout");
    assert_eq!(build.message(), "invalid `@timeout` value `soon` after substitution");
    assert_eq!((build.span().start_position.line, build.span().start_position.column), (0, 11));
    assert!(build.hint().unwrap().contains("milliseconds"), "{:?}", build.hint());
    let error = client().run_string(&text, RunOptions::default()).await.unwrap_err();
    let Error::Build(build) = &error else { panic!("{error:?}") };
    assert_eq!(build.code(), "undefined-variable");
}

#[tokio::test]
async fn cancellation_stops_a_run() {
    let server = TestServer::start().await;
    let token = CancellationToken::new();
    let trigger = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let result = client()
        .run_string(&format!("GET {}\n", server.url("/slow?ms=5000")), RunOptions::default().cancel(token))
        .await;
    assert!(matches!(result, Err(Error::Cancelled)), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn timing_separates_the_first_byte_from_the_end_of_the_body() {
    let server = TestServer::start().await;
    let response = client()
        .run_string(&format!("GET {}\n", server.url("/slow-body?ms=300")), RunOptions::default())
        .await
        .unwrap();
    let timing = response.timing();
    assert!(timing.total >= Duration::from_millis(300), "{timing:?}");
    assert!(timing.ttfb < timing.total, "{timing:?}");
    assert_eq!(response.text().await.unwrap(), r#"{"slow":true}"#);
}

#[tokio::test]
async fn connection_refused_and_dns_failures_are_named() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let refused = client().run_string(&format!("GET http://127.0.0.1:{port}/\n"), RunOptions::default()).await;
    let Err(Error::Transport(error)) = refused else { panic!("{refused:?}") };
    assert_eq!(error.kind(), "connection_refused", "{error}");
    assert_eq!(error.to_string(), format!("connection refused by 127.0.0.1:{port}"));

    let dns = client()
        .run_string("GET http://volley-test.invalid/\n", RunOptions::default().timeout(Duration::from_secs(10)))
        .await;
    let Err(Error::Transport(error)) = dns else { panic!("{dns:?}") };
    assert_eq!(error.kind(), "dns", "{error}");
    assert!(error.to_string().starts_with("cannot resolve host `volley-test.invalid`"), "{error}");
}

#[tokio::test]
async fn tls_certificates_are_checked_unless_validation_is_off() {
    let server = TestServer::start_tls().await;
    let strict = client().run_string(&format!("GET {}\n", server.url("/echo")), RunOptions::default()).await;
    let Err(Error::Transport(error)) = strict else { panic!("{strict:?}") };
    assert_eq!(error.kind(), "tls", "{error}");

    let insecure = Client::new(ClientConfig {
        defaults: RequestDefaults { validate_ssl: Some(false), ..RequestDefaults::default() },
        ..config()
    });
    let response = insecure.run_string(&format!("GET {}\n", server.url("/echo")), RunOptions::default()).await.unwrap();
    let echo = echo(&response).await;
    assert_eq!(echo["version"], "HTTP/2.0", "HTTP/2 negotiated by ALPN");
    assert_eq!(response.version(), http::Version::HTTP_2);
}

#[tokio::test]
async fn http2_prior_knowledge_on_plain_http_when_the_request_line_asks() {
    let server = TestServer::start().await;
    let h2 =
        client().run_string(&format!("GET {} HTTP/2\n", server.url("/echo")), RunOptions::default()).await.unwrap();
    assert_eq!(echo(&h2).await["version"], "HTTP/2.0");
    let h1 =
        client().run_string(&format!("GET {} HTTP/1.1\n", server.url("/echo")), RunOptions::default()).await.unwrap();
    assert_eq!(echo(&h1).await["version"], "HTTP/1.1");
}

#[tokio::test]
async fn files_on_disk_run_with_their_relative_references() {
    let server = TestServer::start().await;
    let directory = std::env::temp_dir().join(format!("volley-run-{}", std::process::id()));
    std::fs::create_dir_all(directory.join("data")).unwrap();
    std::fs::write(directory.join("data/body.txt"), "from disk").unwrap();
    let path = directory.join("api.http");
    std::fs::write(
        &path,
        format!("### First\nGET {0}/first\n\n### Second\nPOST {0}/second\n\n< ./data/body.txt\n", server.url("/echo")),
    )
    .unwrap();
    let response = client().run(&path, RunOptions::default().name("Second")).await.unwrap();
    let echo = echo(&response).await;
    assert_eq!(echo["path"], "/echo/second");
    assert_eq!(echo["body"], "from disk");
    let missing = client().run(directory.join("missing.http"), RunOptions::default()).await.unwrap_err();
    assert!(missing.to_string().starts_with("cannot read `"), "{missing}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[tokio::test]
async fn transport_errors_keep_secrets_and_url_passwords_out_of_their_messages() {
    // A server that accepts connections and closes them at once: reqwest's error then
    // quotes the whole URL.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(2) {
            drop(stream);
        }
    });
    let client = Client::new(ClientConfig {
        environment: Environment::fixed([("API_KEY".to_owned(), "k3y/with spaces".to_owned())]),
        ..config()
    });
    let text = format!("GET http://user:pa55word@127.0.0.1:{port}/items?key={{{{$secret(API_KEY)}}}}\n");
    let result = client.run_string(&text, RunOptions::default()).await;
    let Err(Error::Transport(error)) = result else { panic!("{result:?}") };
    let message = error.to_string();
    assert_eq!(error.kind(), "other", "{message}");
    assert!(message.contains("[REDACTED]"), "the URL is quoted, redacted: {message}");
    for hidden in ["k3y", "pa55word"] {
        assert!(!message.contains(hidden), "`{hidden}` shows in: {message}");
    }
}
