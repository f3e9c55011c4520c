//! Exercises every route of the test server with a raw HTTP/1.1 client over `TcpStream`.

use crate::raw;

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use raw::Response;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;
use volley_echo_server::{API_KEY, CLIENT_ID, CLIENT_SECRET, PASSWORD, TestServer, USER};

async fn send(server: &TestServer, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    raw::send(server, method, target, headers, body).await
}

async fn get(server: &TestServer, target: &str) -> Response {
    send(server, "GET", target, &[], b"").await
}

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", BASE64.encode(format!("{user}:{password}")))
}

#[tokio::test]
async fn urls_point_at_the_bound_port() {
    let server = TestServer::start().await;
    assert!(server.addr().ip().is_loopback());
    assert_ne!(server.addr().port(), 0);
    assert_eq!(server.base_url(), format!("http://127.0.0.1:{}", server.addr().port()));
    assert_eq!(server.url("/echo"), format!("http://127.0.0.1:{}/echo", server.addr().port()));
}

#[tokio::test]
async fn echo_returns_exact_binary_body_and_repeated_headers_in_order() {
    let server = TestServer::start().await;
    let body: Vec<u8> = (0..=255).chain([0xff, 0xfe, 0x00, b'\r', b'\n']).collect();
    let headers = [("X-First", "1"), ("X-Repeat", "a"), ("X-Repeat", "b"), ("X-Last", "z")];
    let response = send(&server, "PUT", "/echo/some/path?x=1&y=two", &headers, &body).await;
    assert_eq!(response.status, 200);
    let echo = response.json();
    assert_eq!(echo["method"], "PUT");
    assert_eq!(echo["path"], "/echo/some/path");
    assert_eq!(echo["query"], "x=1&y=two");
    assert_eq!(echo["url"], "/echo/some/path?x=1&y=two");
    assert_eq!(echo["version"], "HTTP/1.1");
    assert_eq!(BASE64.decode(echo["body_base64"].as_str().unwrap()).unwrap(), body);
    assert_eq!(echo["body_len"], body.len());
    assert_eq!(echo["body"], String::from_utf8_lossy(&body).as_ref());
    let content_length = body.len().to_string();
    assert_eq!(
        echo["headers"],
        json!([
            ["host", "127.0.0.1"],
            ["connection", "close"],
            ["x-first", "1"],
            ["x-repeat", "a"],
            ["x-repeat", "b"],
            ["x-last", "z"],
            ["content-length", content_length],
        ])
    );
}

#[tokio::test]
async fn echo_without_query_or_body() {
    let server = TestServer::start().await;
    let echo = get(&server, "/echo").await.json();
    assert_eq!(echo["method"], "GET");
    assert_eq!(echo["path"], "/echo");
    assert_eq!(echo["query"], Value::Null);
    assert_eq!(echo["url"], "/echo");
    assert_eq!(echo["body"], "");
    assert_eq!(echo["body_len"], 0);
}

#[tokio::test]
async fn status_answers_with_the_requested_code() {
    let server = TestServer::start().await;
    let teapot = send(&server, "POST", "/status/418", &[], b"ignored").await;
    assert_eq!(teapot.status, 418);
    assert_eq!(teapot.json(), json!({"status": 418}));

    let no_content = get(&server, "/status/204").await;
    assert_eq!(no_content.status, 204);
    assert!(no_content.body.is_empty());
    assert_eq!(no_content.header("content-type"), None);

    let not_modified = get(&server, "/status/304").await;
    assert_eq!(not_modified.status, 304);
    assert!(not_modified.body.is_empty());

    for invalid in ["abc", "99", "101", "600"] {
        let response = get(&server, &format!("/status/{invalid}")).await;
        assert_eq!(response.status, 400, "{invalid}");
        assert_eq!(response.json()["status"], 400);
    }
}

#[tokio::test]
async fn redirect_chain_counts_down() {
    let server = TestServer::start().await;
    let first = get(&server, "/redirect/2").await;
    assert_eq!(first.status, 302);
    assert_eq!(first.header("location"), Some("/redirect/1"));
    let second = get(&server, "/redirect/1").await;
    assert_eq!(second.status, 302);
    assert_eq!(second.header("location"), Some("/redirect/0"));
    let last = get(&server, "/redirect/0").await;
    assert_eq!(last.status, 200);
    assert_eq!(last.json(), json!({"redirected": true}));
    assert_eq!(get(&server, "/redirect/x").await.status, 400);
}

#[tokio::test]
async fn redirect_to_uses_url_and_status() {
    let server = TestServer::start().await;
    let default = get(&server, "/redirect-to?url=/echo").await;
    assert_eq!(default.status, 302);
    assert_eq!(default.header("location"), Some("/echo"));

    let temporary =
        send(&server, "POST", "/redirect-to?url=http%3A%2F%2Fexample.test%2Fx&status=307", &[], b"body").await;
    assert_eq!(temporary.status, 307);
    assert_eq!(temporary.header("location"), Some("http://example.test/x"));

    assert_eq!(get(&server, "/redirect-to").await.status, 400);
    assert_eq!(get(&server, "/redirect-to?url=/echo&status=200").await.status, 400);
}

#[tokio::test]
async fn cookies_are_set_and_echoed() {
    let server = TestServer::start().await;
    let set = get(&server, "/cookies/set?flavour=oat&count=3").await;
    assert_eq!(set.status, 200);
    assert_eq!(set.headers_named("set-cookie"), ["flavour=oat; Path=/", "count=3; Path=/"]);
    assert_eq!(set.json(), json!({"set": {"flavour": "oat", "count": "3"}}));

    let redirect = get(&server, "/cookies/set-and-redirect?a=1").await;
    assert_eq!(redirect.status, 302);
    assert_eq!(redirect.header("location"), Some("/cookies"));
    assert_eq!(redirect.headers_named("set-cookie"), ["a=1; Path=/"]);

    let shown =
        send(&server, "GET", "/cookies", &[("Cookie", "flavour=oat; count=3"), ("Cookie", "a=1")], b"").await.json();
    assert_eq!(shown, json!({"cookies": {"flavour": "oat", "count": "3", "a": "1"}}));
    assert_eq!(get(&server, "/cookies").await.json(), json!({"cookies": {}}));

    let secure = get(&server, "/cookies/secure").await;
    assert_eq!(secure.status, 200);
    assert_eq!(secure.headers_named("set-cookie"), ["secure_cookie=1; Path=/; Secure"]);
}

#[tokio::test]
async fn basic_auth_accepts_only_the_right_credentials() {
    let server = TestServer::start().await;
    let ok = send(&server, "GET", "/basic-auth", &[("Authorization", &basic(USER, PASSWORD))], b"").await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.json(), json!({"authenticated": true, "user": USER}));

    let wrong = send(&server, "GET", "/basic-auth", &[("Authorization", &basic(USER, "nope"))], b"").await;
    assert_eq!(wrong.status, 401);
    assert_eq!(wrong.header("www-authenticate"), Some("Basic realm=\"volley\""));
    assert_eq!(wrong.json(), json!({"authenticated": false}));

    assert_eq!(get(&server, "/basic-auth").await.status, 401);
}

#[tokio::test]
async fn login_issues_a_bearer_token_and_a_session() {
    let server = TestServer::start().await;
    let credentials = json!({"user": USER, "password": PASSWORD}).to_string();
    let login = send(&server, "POST", "/login", &[("Content-Type", "application/json")], credentials.as_bytes()).await;
    assert_eq!(login.status, 200);
    let body = login.json();
    let token = body["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("token-"), "{token}");
    assert_eq!(body["user"], USER);
    assert_eq!(login.header("x-token"), Some(token.as_str()));
    let set_cookie = login.header("set-cookie").unwrap();
    assert!(set_cookie.starts_with("session=") && set_cookie.ends_with("; Path=/; HttpOnly"), "{set_cookie}");
    let session_cookie = set_cookie.split(';').next().unwrap();

    let bearer = send(&server, "GET", "/bearer", &[("Authorization", &format!("Bearer {token}"))], b"").await;
    assert_eq!(bearer.status, 200);
    assert_eq!(bearer.json(), json!({"authenticated": true, "token": token}));

    let unknown = send(&server, "GET", "/bearer", &[("Authorization", "Bearer token-999")], b"").await;
    assert_eq!(unknown.status, 401);
    assert_eq!(unknown.header("www-authenticate"), Some("Bearer"));
    assert_eq!(unknown.json(), json!({"authenticated": false}));

    let session = send(&server, "GET", "/session", &[("Cookie", session_cookie)], b"").await;
    assert_eq!(session.status, 200);
    assert_eq!(session.json(), json!({"authenticated": true}));
    assert_eq!(send(&server, "GET", "/session", &[("Cookie", "session=forged")], b"").await.status, 401);
    assert_eq!(get(&server, "/session").await.status, 401);
}

#[tokio::test]
async fn login_rejects_wrong_credentials_and_bad_bodies() {
    let server = TestServer::start().await;
    let wrong = json!({"user": USER, "password": "wrong"}).to_string();
    let response = send(&server, "POST", "/login", &[], wrong.as_bytes()).await;
    assert_eq!(response.status, 401);
    assert_eq!(response.json(), json!({"error": "invalid credentials"}));
    assert!(response.header("set-cookie").is_none());

    assert_eq!(send(&server, "POST", "/login", &[], b"not json").await.status, 400);
}

#[tokio::test]
async fn api_keys_in_header_and_query() {
    let server = TestServer::start().await;
    let ok = send(&server, "GET", "/api-key", &[("X-API-Key", API_KEY)], b"").await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.json(), json!({"authenticated": true}));
    let wrong = send(&server, "GET", "/api-key", &[("X-API-Key", "nope")], b"").await;
    assert_eq!(wrong.status, 401);
    assert_eq!(wrong.json(), json!({"authenticated": false}));

    assert_eq!(get(&server, &format!("/api-key-query?api_key={API_KEY}")).await.status, 200);
    assert_eq!(get(&server, "/api-key-query?api_key=nope").await.status, 401);
    assert_eq!(get(&server, "/api-key-query").await.status, 401);
}

#[tokio::test]
async fn oauth_client_credentials() {
    let server = TestServer::start().await;
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let good = format!("grant_type=client_credentials&client_id={CLIENT_ID}&client_secret={CLIENT_SECRET}");
    let response = send(&server, "POST", "/oauth/token", &form, good.as_bytes()).await;
    assert_eq!(response.status, 200);
    let body = response.json();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    let token = body["access_token"].as_str().unwrap();
    let bearer = send(&server, "GET", "/bearer", &[("Authorization", &format!("Bearer {token}"))], b"").await;
    assert_eq!(bearer.status, 200);

    let with_basic = [form[0], ("Authorization", &basic(CLIENT_ID, CLIENT_SECRET))];
    let response = send(&server, "POST", "/oauth/token", &with_basic, b"grant_type=client_credentials").await;
    assert_eq!(response.status, 200);

    let wrong = format!("grant_type=client_credentials&client_id={CLIENT_ID}&client_secret=wrong");
    let response = send(&server, "POST", "/oauth/token", &form, wrong.as_bytes()).await;
    assert_eq!(response.status, 401);
    assert_eq!(response.json(), json!({"error": "invalid_client"}));

    let password_grant = format!("grant_type=password&client_id={CLIENT_ID}&client_secret={CLIENT_SECRET}");
    let response = send(&server, "POST", "/oauth/token", &form, password_grant.as_bytes()).await;
    assert_eq!(response.status, 400);
    assert_eq!(response.json(), json!({"error": "unsupported_grant_type"}));

    let json_body = send(&server, "POST", "/oauth/token", &[("Content-Type", "application/json")], b"{}").await;
    assert_eq!(json_body.status, 400);
    assert_eq!(json_body.json(), json!({"error": "invalid_request"}));
}

#[tokio::test]
async fn expiring_token_is_refreshed() {
    let server = TestServer::start().await;
    let stale = send(&server, "GET", "/expiring", &[("Authorization", "Bearer stale-token")], b"").await;
    assert_eq!(stale.status, 401);
    assert_eq!(stale.json(), json!({"error": "token expired"}));

    let refresh = send(&server, "POST", "/refresh", &[], b"").await;
    assert_eq!(refresh.status, 200);
    let body = refresh.json();
    assert_eq!(body["expires_in"], 3600);
    let token = body["access_token"].as_str().unwrap();
    assert!(token.starts_with("fresh-"), "{token}");

    let fresh = send(&server, "GET", "/expiring", &[("Authorization", &format!("Bearer {token}"))], b"").await;
    assert_eq!(fresh.status, 200);
    assert_eq!(fresh.json(), json!({"authenticated": true}));

    let requests = get(&server, "/stats").await.json();
    assert_eq!(requests["requests"]["/expiring"], 2);
    assert_eq!(requests["requests"]["/refresh"], 1);
}

#[tokio::test]
async fn slow_answers_after_the_delay() {
    let server = TestServer::start().await;
    let started = Instant::now();
    let response = get(&server, "/slow?ms=50").await;
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!(response.status, 200);
    assert_eq!(response.json(), json!({"slept_ms": 50}));
    assert_eq!(get(&server, "/slow?ms=soon").await.status, 400);
}

#[tokio::test]
async fn slow_body_sends_the_head_before_the_body() {
    const DELAY: Duration = Duration::from_millis(300);
    let server = TestServer::start().await;
    let mut stream = raw::open(&server, "GET", "/slow-body?ms=300", &[], b"").await;
    let started = Instant::now();

    let mut bytes = raw::read_head(&mut stream).await;
    let head_arrived = started.elapsed();
    assert_eq!(Some(bytes.len()), raw::head_end(&bytes), "no body bytes arrive with the head");

    stream.read_to_end(&mut bytes).await.unwrap();
    let body_arrived = started.elapsed();
    assert!(body_arrived >= DELAY, "the body comes after the delay: {body_arrived:?}");
    assert!(head_arrived < body_arrived, "head {head_arrived:?}, body {body_arrived:?}");

    let response = raw::parse_response(&bytes);
    assert_eq!(response.status, 200);
    assert_eq!(response.json(), json!({"slow": true}));
}

#[tokio::test]
async fn upload_describes_each_part() {
    let server = TestServer::start().await;
    let mut body = Vec::new();
    body.extend_from_slice(b"--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhello\r\n");
    body.extend_from_slice(
        b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"data.bin\"\r\n\
          Content-Type: application/octet-stream\r\n\r\n",
    );
    body.extend_from_slice(&[0, 159, 146, 150]);
    body.extend_from_slice(b"\r\n--XyZ--\r\n");
    let response =
        send(&server, "POST", "/upload", &[("Content-Type", "multipart/form-data; boundary=XyZ")], &body).await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.json(),
        json!({"parts": [
            {"name": "title", "filename": null, "content_type": null, "size": 5, "text": "hello",
             "base64": BASE64.encode("hello")},
            {"name": "file", "filename": "data.bin", "content_type": "application/octet-stream", "size": 4,
             "text": null, "base64": BASE64.encode([0, 159, 146, 150])},
        ]})
    );

    let no_boundary = send(&server, "POST", "/upload", &[("Content-Type", "multipart/form-data")], b"x").await;
    assert_eq!(no_boundary.status, 400);
    assert!(no_boundary.json()["error"].is_string());
    let truncated = send(
        &server,
        "POST",
        "/upload",
        &[("Content-Type", "multipart/form-data; boundary=XyZ")],
        b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated",
    )
    .await;
    assert_eq!(truncated.status, 400);
    assert!(truncated.json()["error"].is_string());
}

#[tokio::test]
async fn stats_count_requests_per_path() {
    let server = TestServer::start().await;
    get(&server, "/echo?a=1").await;
    get(&server, "/echo?a=2").await;
    get(&server, "/echo/deeper").await;
    get(&server, "/status/500").await;
    let missing = get(&server, "/no-such-route").await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json(), json!({"error": "not found"}));
    let stats = get(&server, "/stats").await.json();
    assert_eq!(
        stats,
        json!({
            "requests": {"/echo": 2, "/echo/deeper": 1, "/status/500": 1, "/no-such-route": 1, "/stats": 1},
            "open_event_streams": 0
        })
    );
}

#[tokio::test]
async fn servers_do_not_share_state() {
    let first = TestServer::start().await;
    let second = TestServer::start().await;
    assert_ne!(first.addr(), second.addr());
    let login = json!({"user": USER, "password": PASSWORD}).to_string();
    let token =
        send(&first, "POST", "/login", &[], login.as_bytes()).await.json()["token"].as_str().unwrap().to_owned();
    let other = send(&second, "GET", "/bearer", &[("Authorization", &format!("Bearer {token}"))], b"").await;
    assert_eq!(other.status, 401);
}

#[tokio::test]
async fn dropping_the_server_closes_the_port() {
    let server = TestServer::start().await;
    let addr = server.addr();
    assert_eq!(get(&server, "/echo").await.status, 200);
    drop(server);
    // The accept loop is aborted asynchronously; give the runtime a bounded number of turns.
    let deadline = Instant::now() + Duration::from_secs(2);
    while TcpStream::connect(addr).await.is_ok() {
        assert!(Instant::now() < deadline, "port {addr} still accepts connections after drop");
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn bodies_have_the_size_and_type_asked_for() {
    let server = TestServer::start().await;
    let binary = send(&server, "GET", "/bytes/300", &[], b"").await;
    assert_eq!(binary.status, 200);
    assert_eq!(binary.body.len(), 300);
    assert_eq!((binary.body[0], binary.body[255], binary.body[256]), (0, 255, 0));
    assert!(std::str::from_utf8(&binary.body).is_err(), "not UTF-8");
    let text = send(&server, "GET", "/text/5", &[], b"").await;
    assert_eq!(text.body, b"aaaaa");
    assert_eq!(send(&server, "GET", "/bytes/67108865", &[], b"").await.status, 400);
    let json = send(&server, "GET", "/json/1000000", &[], b"").await;
    assert_eq!(json.header("content-type"), Some("application/json"));
    assert!(json.body.len() >= 1_000_000 && json.body.len() < 1_000_200, "{}", json.body.len());
    let document: serde_json::Value = serde_json::from_slice(&json.body).expect("JSON");
    let items = document["items"].as_array().expect("items");
    assert_eq!(document["count"], items.len());
    assert_eq!(items[1], serde_json::json!({"id": 1, "name": "item 1", "tags": ["a", "b"], "active": false}));
    assert!(!json.body.contains(&b'\n'), "one line");
    for (path, kind) in [("/html", "text/html"), ("/xml", "application/xml")] {
        let response = send(&server, "GET", path, &[], b"").await;
        let content_type = response.header("content-type").expect("a content type");
        assert!(content_type.starts_with(kind), "{path}: {content_type}");
    }
}
