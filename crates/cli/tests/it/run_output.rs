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
