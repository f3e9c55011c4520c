//! `volley lsp` as a process: `Content-Length`-framed JSON-RPC on stdin/stdout,
//! initialize → didOpen → publishDiagnostics → codeLens → executeCommand (a request sent
//! to a real server on 127.0.0.1) → shutdown → exit with code 0.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// Only reached when the test fails.
const TIMEOUT: Duration = Duration::from_secs(30);

fn send(stdin: &mut ChildStdin, message: &Value) {
    let body = message.to_string();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    stdin.flush().unwrap();
}

/// Reads framed messages on a thread, so a silent server fails the test instead of
/// hanging it.
fn messages(stdout: impl std::io::Read + Send + 'static) -> mpsc::Receiver<Value> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut stdout = BufReader::new(stdout);
        loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap() == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length: ") {
                    length = Some(value.parse::<usize>().unwrap());
                }
            }
            let mut body = vec![0; length.unwrap()];
            stdout.read_exact(&mut body).unwrap();
            if sender.send(serde_json::from_slice(&body).unwrap()).is_err() {
                return;
            }
        }
    });
    receiver
}

fn next_where(receiver: &mpsc::Receiver<Value>, matches: impl Fn(&Value) -> bool) -> Value {
    loop {
        let message = receiver.recv_timeout(TIMEOUT).expect("a message from volley lsp in time");
        if matches(&message) {
            return message;
        }
    }
}

#[test]
fn lsp_over_stdio_publishes_diagnostics_sends_requests_and_exits_cleanly() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(volley_echo_server::TestServer::start());
    let directory = std::env::temp_dir().join(format!("volley-lsp-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let uri = format!("file://{}", directory.join("api.http").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_volley"))
        .arg("lsp")
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
