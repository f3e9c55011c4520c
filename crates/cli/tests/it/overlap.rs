//! `volley run` sends a request as soon as the response before it is read, prepared
//! while that one was under way, and checks and shows that response meanwhile. What a
//! response leaves for the requests after it (variables its handlers set, files its
//! `>>` lines write, its named response) is there when they are sent; what preparing a
//! request does (a command resolver's process) happens once per request.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use volley_echo_server::TestServer;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("volley-overlap-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    dir
}

/// What `volley run --json` sent of `dir`'s `case.http`, in order: each URL from its
/// `/echo`, and body.
fn sent(dir: &Path, server: &TestServer, extra: &[&str]) -> Vec<(String, String)> {
    let output = Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["run", "--json", "case.http"])
        .args(extra)
        .current_dir(dir)
        .env("BASE", server.base_url())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout
        .lines()
        .map(|line| {
            let record: Value = serde_json::from_str(line).unwrap();
            let url = record["request"]["url"].as_str().unwrap_or_else(|| panic!("no request in {record}"));
            let url = url.split_once("/echo").map_or(url, |(_, rest)| rest).to_owned();
            (url, record["request"]["body"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

/// A handler's variable beats the file's, and a request prepared ahead of the handler
/// would have sent the file's; a file written by `>>` is read by the next body.
#[test]
fn what_a_response_leaves_is_there_for_the_next_request() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let dir = scratch("leaves");
    let file = "@mode = written\n\
        GET {{$env(BASE)}}/echo?first\n\n\
        > {% client.global.set(\"mode\", \"handled\"); %}\n\n\
        ###\n\
        GET {{$env(BASE)}}/echo?mode={{mode}}\n\n\
        ###\n\
        POST {{$env(BASE)}}/echo?save\n\
        Content-Type: text/plain\n\n\
        saved-text\n\n\
        >>! ./saved.txt\n\n\
        ###\n\
        POST {{$env(BASE)}}/echo?read\n\
        Content-Type: text/plain\n\n\
        < ./saved.txt\n";
    std::fs::write(dir.join("case.http"), file).unwrap();
    // What a request prepared ahead of the save would read.
    std::fs::write(dir.join("saved.txt"), "stale").unwrap();
    let sent = sent(&dir, &server, &[]);
    let urls: Vec<&str> = sent.iter().map(|(url, _)| url.as_str()).collect();
    assert_eq!(urls, ["?first", "?mode=handled", "?save", "?read"]);
    // The echo server answers with what it got: the saved response holds the sent body.
    assert!(sent[3].1.contains("saved-text"), "{sent:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// With `--repeat`, the named response of the round before is in the client when a
/// request reading it could be prepared: each round must read its own.
#[test]
fn a_named_response_is_read_after_it_arrives() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let dir = scratch("named");
    let file = "# @name first\n\
        GET {{$env(BASE)}}/echo?id={{$uuid}}\n\n\
        ###\n\
        GET {{$env(BASE)}}/echo?seen={{first.response.body.$.query}}\n";
    std::fs::write(dir.join("case.http"), file).unwrap();
    let urls: Vec<String> = sent(&dir, &server, &["--repeat", "3"]).into_iter().map(|(url, _)| url).collect();
    assert_eq!(urls.len(), 6, "{urls:?}");
    for round in urls.chunks(2) {
        let id = round[0].strip_prefix('?').unwrap();
        assert_eq!(round[1], format!("?seen={id}"), "{urls:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A command resolver runs once per request that uses it, also when the request after
/// one that writes a file is prepared again in its turn.
#[test]
fn a_command_resolver_runs_once_per_request() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let dir = scratch("command");
    let count = dir.join("count.txt");
    let config = serde_json::json!({
        "resolvers": {
            "count": {"type": "command", "command": format!("printf x >> '{}'; printf n", count.display())}
        }
    });
    std::fs::write(dir.join("volley.jsonc"), config.to_string()).unwrap();
    let file = "GET {{$env(BASE)}}/echo?a={{$count}}\n\n\
        ###\n\
        GET {{$env(BASE)}}/echo?b={{$count}}\n\n\
        >>! ./out.json\n\n\
        ###\n\
        GET {{$env(BASE)}}/echo?c={{$count}}\n";
    std::fs::write(dir.join("case.http"), file).unwrap();
    let urls: Vec<String> = sent(&dir, &server, &[]).into_iter().map(|(url, _)| url).collect();
    assert_eq!(urls, ["?a=n", "?b=n", "?c=n"]);
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "xxx");
    std::fs::remove_dir_all(&dir).ok();
}
