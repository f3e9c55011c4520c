//! `volley lsp` as a process: `Content-Length`-framed JSON-RPC on stdin/stdout,
//! initialize → didOpen → publishDiagnostics → codeLens → executeCommand (a request sent
//! to a real server on 127.0.0.1) → shutdown → exit with code 0.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use serde_json::{Value, json};

use crate::support::stdio::{TIMEOUT, messages, next_where, send};

/// `volley lsp` started in a directory of its own, initialized: the process, its stdin,
/// the messages it writes, the directory and the URI of `api.http` in it.
fn start(
    name: &str,
) -> (std::process::Child, std::process::ChildStdin, mpsc::Receiver<Value>, std::path::PathBuf, String) {
    let directory = std::env::temp_dir().join(format!("volley-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let uri = format!("file://{}", directory.join("api.http").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_volley"))
        .arg("lsp")
        // The response history goes to the test's directory, not the user's cache.
        .env("XDG_CACHE_HOME", directory.join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let replies = messages(child.stdout.take().unwrap());
    send(&mut stdin, &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}));
    let initialized = next_where(&replies, |message| message["id"] == 1);
    assert_eq!(initialized["result"]["serverInfo"]["name"], "volley");
    send(&mut stdin, &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    (child, stdin, replies, directory, uri)
}

#[test]
fn lsp_over_stdio_publishes_diagnostics_sends_requests_and_exits_cleanly() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(volley_echo_server::TestServer::start());
    let (mut child, mut stdin, replies, directory, uri) = start("lsp");
    let text =
        format!("# é🦀\nGET https://example.com/🦀/{{{{token}}}}\n\n###\nGET {}\n", server.url("/echo?from=lsp"));
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "http", "version": 1, "text": text},
        }}),
    );
    let published = next_where(&replies, |message| message["method"] == "textDocument/publishDiagnostics");
    let diagnostics = published["params"]["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{published}");
    assert_eq!(diagnostics[0]["code"], "undefined-variable");
    // `token` after 24 ASCII characters, 🦀 (2 UTF-16 units), `/` and `{{`.
    assert_eq!(diagnostics[0]["range"]["start"], json!({"line": 1, "character": 29}));

    // The lens of the second request runs its command: the request goes out.
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeLens", "params": {
            "textDocument": {"uri": uri},
        }}),
    );
    let lenses = next_where(&replies, |message| message["id"] == 3)["result"].clone();
    let titles: Vec<&str> =
        lenses.as_array().unwrap().iter().map(|lens| lens["command"]["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Send All (2)", "Send Request", "Send Request"]);
    assert_eq!(lenses[2]["range"]["start"], json!({"line": 4, "character": 0}));
    let command = &lenses[2]["command"];
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {
            "command": command["command"], "arguments": command["arguments"],
        }}),
    );
    let result = next_where(&replies, |message| message["id"] == 4)["result"].clone();
    assert_eq!(result["response"]["status"], 200, "{result}");
    assert!(result["response"]["body"].as_str().unwrap().contains("from=lsp"), "{result}");

    send(&mut stdin, &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    let shutdown = next_where(&replies, |message| message["id"] == 2);
    assert_eq!(shutdown["result"], Value::Null);
    send(&mut stdin, &json!({"jsonrpc": "2.0", "method": "exit"}));

    let (done, waited) = mpsc::channel();
    std::thread::spawn(move || {
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        done.send((status, stderr)).unwrap();
    });
    let (status, stderr) = waited.recv_timeout(TIMEOUT).expect("volley lsp exits after `exit`");
    assert!(status.success(), "{status}: {stderr}");
    let _ = std::fs::remove_dir_all(&directory);
}

/// `# @jq` and `volley.filter` through `volley lsp`: the filter runs in a `volley jq`
/// process of its own, so a filter that never ends, recurses without end or grows
/// without bound costs a bounded time and leaves the language server answering.
#[test]
fn jq_filters_run_in_a_process_of_their_own_with_bounded_cost() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(volley_echo_server::TestServer::start());
    let (mut child, mut stdin, replies, directory, uri) = start("lsp-jq");
    let text = format!(
        "# @jq .headers | map(select(.[0] == \"x-pick\")) | .[0][1]\nGET {}\nX-Pick: picked\n\n###\n# @jq .nosuch[\nGET {}\n",
        server.url("/echo"),
        server.url("/echo")
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "http", "version": 1, "text": text},
        }}),
    );
    let mut id = 10;
    let mut command = |stdin: &mut std::process::ChildStdin, name: &str, argument: Value| {
        id += 1;
        send(
            stdin,
            &json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand", "params": {
                "command": name, "arguments": [argument],
            }}),
        );
        let wanted = id;
        next_where(&replies, |message| message["id"] == wanted)["result"].clone()
    };

    let sent = command(&mut stdin, "volley.send", json!({"uri": uri, "index": 0}));
    let filtered = &sent["response"]["filtered"];
    assert_eq!(filtered["output"], "\"picked\"\n", "{sent}");
    assert_eq!(filtered["expression"], ".headers | map(select(.[0] == \"x-pick\")) | .[0][1]");
    assert!(sent["response"]["body"].as_str().unwrap().contains("x-pick"), "the body itself is kept: {sent}");
    let broken = command(&mut stdin, "volley.send", json!({"uri": uri, "index": 1}));
    let error = broken["response"]["filtered"]["error"].as_str().unwrap();
    assert!(error.starts_with("the filter does not parse: expected"), "{broken}");

    let body = r#"{"items": [{"id": 1}, {"id": 2}]}"#;
    let picked = command(&mut stdin, "volley.filter", json!({"body": body, "expression": "[.items[].id]"}));
    assert_eq!(picked["output"], "[\n  1,\n  2\n]\n");
    let started = std::time::Instant::now();
    let endless = command(&mut stdin, "volley.filter", json!({"body": body, "expression": "last(range(1e15))"}));
    assert_eq!(endless["error"], "the filter did not finish in 5 s", "{endless}");
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    // 3 GB at once: more than the filter's process may map, far less than this machine has.
    for expression in ["def f: 1 + f; f", "\"x\" * 3000000000 | length"] {
        let crashed = command(&mut stdin, "volley.filter", json!({"body": body, "expression": expression}));
        let error = crashed["error"].as_str().unwrap_or_default();
        assert!(error.starts_with("the filter stopped: it needed more than 2 GiB"), "{expression}: {crashed}");
    }
    let flood =
        command(&mut stdin, "volley.filter", json!({"body": body, "expression": "(\"x\" * 1000000) | repeat(.)"}));
    assert_eq!(flood["error"], "the filter's output passed 16 MiB", "{flood}");
    // The language server still answers.
    let again = command(&mut stdin, "volley.filter", json!({"body": "[1]", "expression": ".[0]"}));
    assert_eq!(again["output"], "1\n");

    send(&mut stdin, &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    next_where(&replies, |message| message["id"] == 2);
    send(&mut stdin, &json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&directory);
}

/// A body larger than an outcome keeps: the language server streams it to a file as it
/// arrives and answers a 4 MiB preview with the file and the whole size, so its memory
/// grows by far less than the body (the body is 5 times the process's peak growth at
/// least), and the file holds every byte.
#[test]
fn a_large_body_goes_to_a_file_and_the_server_stays_small() {
    const SIZE: u64 = 300 * 1024 * 1024;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(volley_echo_server::TestServer::start());
    let (mut child, mut stdin, replies, directory, uri) = start("lsp-large");
    let text =
        format!("GET {}\n\n###\nGET {}\n", server.url(&format!("/stream/json/{SIZE}")), server.url("/json/1000"));
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "http", "version": 1, "text": text},
        }}),
    );
    let peak = || -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let line = status.lines().find(|line| line.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    };
    // A small send first: the peak before is that of a server that has sent.
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {
            "command": "volley.send", "arguments": [{"uri": uri, "index": 1}],
        }}),
    );
    let small = next_where(&replies, |message| message["id"] == 5)["result"].clone();
    assert_eq!(small["response"]["truncated"], false, "{small}");
    assert!(small["response"].get("bodyFile").is_none(), "a small body is whole in the outcome");
    let before = peak();
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 6, "method": "workspace/executeCommand", "params": {
            "command": "volley.send", "arguments": [{"uri": uri, "index": 0}],
        }}),
    );
    let large = next_where(&replies, |message| message["id"] == 6)["result"].clone();
    let growth = peak().saturating_sub(before);
    let response = &large["response"];
    assert_eq!(response["status"], 200);
    assert_eq!(response["truncated"], true);
    assert_eq!(response["bodySize"], SIZE);
    assert_eq!(response["body"].as_str().unwrap().len(), 4 * 1024 * 1024);
    let file = std::path::PathBuf::from(response["bodyFile"].as_str().unwrap());
    assert_eq!(std::fs::metadata(&file).unwrap().len(), SIZE);
    let mut head = [0u8; 10];
    std::fs::File::open(&file).unwrap().read_exact(&mut head).unwrap();
    assert_eq!(&head, b"{\"items\":[");
    assert!(growth * 5 < SIZE, "the server grew by {} MiB for a {} MiB body", growth >> 20, SIZE >> 20);
    eprintln!("peak growth for a {} MiB body: {} MiB", SIZE >> 20, growth >> 20);

    send(&mut stdin, &json!({"jsonrpc": "2.0", "id": 7, "method": "shutdown"}));
    next_where(&replies, |message| message["id"] == 7);
    assert!(!file.exists(), "the body files go at shutdown");
    send(&mut stdin, &json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&directory);
}

/// One response history for the editor and the terminal: a response the language
/// server's send recorded is listed, shown and compared by `volley history`, and one
/// `volley run --history` recorded is listed by the language server's `volley.history`.
#[test]
fn the_editor_and_the_terminal_share_one_history() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(volley_echo_server::TestServer::start());
    let (mut child, mut stdin, replies, directory, uri) = start("lsp-history");
    let text = format!("### counted\n# @name counted\nGET {}\n", server.url("/echo/{{$uuid}}"));
    let file = directory.join("api.http");
    std::fs::write(&file, &text).unwrap();
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "http", "version": 1, "text": text},
        }}),
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {
            "command": "volley.send", "arguments": [{"uri": uri, "name": "counted"}],
        }}),
    );
    let sent = next_where(&replies, |message| message["id"] == 5)["result"].clone();
    let editor_id = sent["historyId"].as_str().unwrap().to_owned();
    let volley = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_volley"))
            .args(args)
            .current_dir(&directory)
            .env("XDG_CACHE_HOME", directory.join("cache"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (output.status.code(), String::from_utf8(output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap())
    };
    let (code, _, stderr) = volley(&["run", "--history", "api.http"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (_, listed, _) = volley(&["history", "list", "--json"]);
    let entries: Vec<Value> = listed.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(entries.len(), 2, "{listed}");
    assert_eq!((entries[0]["source"].as_str(), entries[1]["source"].as_str()), (Some("cli"), Some("editor")));
    assert_eq!(entries[1]["id"], editor_id.as_str());
    let (_, shown, _) = volley(&["history", "show", &editor_id]);
    assert!(shown.starts_with("HTTP/1.1 200 OK\n"), "{shown}");
    // The two differ in the random path (of one length) and perhaps the date; a diff
    // exits 1, as diff(1) does.
    let (code, diff, _) = volley(&["history", "diff", "api.http", "--name", "counted"]);
    assert_eq!(code, Some(1), "{diff}");
    let changed: Vec<&str> = diff
        .lines()
        .filter(|line| line.starts_with(['+', '-']) && !line.starts_with("+++") && !line.starts_with("---"))
        .collect();
    assert!(changed.iter().any(|line| line.contains("/echo/")), "{diff}");
    assert!(changed.iter().all(|line| line.contains("/echo/") || line[1..].starts_with("date:")), "{diff}");

    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 6, "method": "workspace/executeCommand", "params": {
            "command": "volley.history", "arguments": [{"uri": uri}],
        }}),
    );
    let listed = next_where(&replies, |message| message["id"] == 6)["result"].clone();
    assert_eq!(listed["entries"][0]["source"], "cli", "{listed}");
    let (_, cleared, _) = volley(&["history", "clear", "api.http"]);
    assert!(cleared.starts_with("removed 2 stored responses"), "{cleared}");
    send(&mut stdin, &json!({"jsonrpc": "2.0", "id": 7, "method": "shutdown"}));
    next_where(&replies, |message| message["id"] == 7);
    send(&mut stdin, &json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&directory);
}
