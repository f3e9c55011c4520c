//! `volley run -o body`: the body of the response byte for byte, bytes that are not
//! UTF-8 included, nothing added; the JSON body as the server wrote it, not pretty.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::process::{Command, Output};

use volley_echo_server::TestServer;

fn body_of(server: &TestServer, request: &str) -> Output {
    let dir = std::env::temp_dir().join(format!("volley-output-{}-{}", std::process::id(), request.len()));
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join("case.http"), request).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["run", "case.http", "-o", "body"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("BASE", server.base_url())
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    output
}

#[test]
fn the_body_is_printed_as_received() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    // 300 bytes counting 0..=255 and on: not UTF-8 from the 129th.
    let binary = body_of(&server, "GET {{$env(BASE)}}/bytes/300\n");
    assert_eq!(binary.status.code(), Some(0), "{binary:?}");
    let expected: Vec<u8> = (0..=255u8).chain(0..44).collect();
    assert_eq!(binary.stdout, expected);
    // JSON: the server's compact text, parsed as jq would, with no line break added.
    let json = body_of(&server, "# @assert status == 200\nGET {{$env(BASE)}}/echo?q=1\n");
    assert_eq!(json.status.code(), Some(0), "{json:?}");
    let text = String::from_utf8(json.stdout).unwrap();
    assert!(text.starts_with("{\"body\":\"\",") && text.ends_with("\"version\":\"HTTP/1.1\"}"), "{text}");
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["query"], "q=1");
    // A failed assertion: the body still alone on stdout, the failure on stderr, exit 1.
    let failed = body_of(&server, "# @assert status == 201\nGET {{$env(BASE)}}/xml\n");
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(failed.stdout).unwrap(),
        "<?xml version=\"1.0\"?>\n<order id=\"1\">\n  <item>SKU-1</item>\n</order>\n"
    );
    assert!(String::from_utf8_lossy(&failed.stderr).contains("assertion failed: status == 201"));
}

/// A plain `http://` request goes through the proxy the environment names, under each
/// name reqwest reads (`HTTP_PROXY`, `http_proxy`, `ALL_PROXY`), and straight to the
/// server when the name is set but empty or `NO_PROXY` exempts the host.
#[test]
fn plain_requests_take_the_proxy_of_the_environment() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let proxy = runtime.block_on(volley_echo_server::TestProxy::start(None));
    let dir = std::env::temp_dir().join(format!("volley-proxy-env-{}", std::process::id()));
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join("case.http"), "GET {{$env(BASE)}}/status/200\n").unwrap();
    let run = |variables: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_volley"));
        command.args(["run", "-q", "case.http"]).current_dir(&dir).env("BASE", server.base_url());
        for name in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"] {
            command.env_remove(name);
        }
        let output = command.envs(variables.iter().copied()).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{variables:?}: {output:?}");
        proxy.records().len()
    };
    let url = proxy.url();
    assert_eq!(run(&[("HTTP_PROXY", &url)]), 1);
    assert_eq!(run(&[("http_proxy", &url)]), 2);
    assert_eq!(run(&[("ALL_PROXY", &url)]), 3);
    assert_eq!(run(&[("HTTP_PROXY", "")]), 3);
    assert_eq!(run(&[("HTTP_PROXY", &url), ("NO_PROXY", "127.0.0.1")]), 3);
    assert_eq!(run(&[]), 3);
    let target = &proxy.records()[0].target;
    assert!(target.starts_with("http://127.0.0.1:") && target.ends_with("/status/200"), "{target}");
    std::fs::remove_dir_all(&dir).ok();
}
