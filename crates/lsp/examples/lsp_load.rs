//! Language server figures on a 10,000-request file (issues 8, 25 and 41), against the
//! real `volley lsp` binary over stdio: the time from `didOpen` to the first
//! `publishDiagnostics` and to the whole set (a large document gets its diagnostics in
//! two steps, docs/lsp.md), from a one-keystroke `didChange` to the `publishDiagnostics`
//! of that version, completion and hover latency, and the memory one open document
//! costs (RSS of the server before opening it and once its whole set of diagnostics is
//! in), ending with the issue-25 row: that memory as a ratio to the text, and the two
//! p95s.
//!
//! `bench/lsp` builds the binary and runs this; by hand:
//! `VOLLEY_BIN=target/release/volley cargo run --release -p volley-lsp --example lsp_load -- [keystrokes]`

// A report on stdout; figures as f64 are exact far beyond what is measured here.
#![allow(
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap
)]

#[path = "../../syntax/benches/support/corpus.rs"]
mod corpus;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Server {
    child: Child,
    input: ChildStdin,
    /// The bodies of the server's messages, read on a thread of their own (so that a
    /// wait can end after a time).
    output: Receiver<Vec<u8>>,
    next_id: i64,
}

impl Server {
    fn start(binary: &str) -> Server {
        let mut child = Command::new(binary)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("volley lsp starts (set VOLLEY_BIN)");
        let input = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (sender, output) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            while let Some(body) = read_message(&mut stdout) {
                if sender.send(body).is_err() {
                    return;
                }
            }
        });
        Server { child, input, output, next_id: 1 }
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.input, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("server input");
        self.input.flush().expect("server input");
    }

    fn receive(&mut self) -> Value {
        serde_json::from_slice(&self.receive_bytes()).expect("JSON")
    }

    /// One message's body, unparsed.
    fn receive_bytes(&mut self) -> Vec<u8> {
        self.output.recv().expect("server output")
    }

    fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.receive();
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
        }
    }

    fn notify(&mut self, method: &str, params: &Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Waits for the diagnostics of `version`; returns how many there are. Only what
    /// is needed is read of each message (not a `Value` of every diagnostic): the time
    /// measured is the server's, not this client's.
    fn diagnostics(&mut self, version: i64) -> usize {
        self.diagnostics_within(version, None).expect("no time limit")
    }

    /// As [`Server::diagnostics`], `None` when they do not come within `limit`.
    fn diagnostics_within(&mut self, version: i64, limit: Option<Duration>) -> Option<usize> {
        #[derive(serde::Deserialize)]
        struct Message {
            method: Option<String>,
            params: Option<Params>,
        }
        #[derive(serde::Deserialize)]
        struct Params {
            version: Option<i64>,
            #[serde(default)]
            diagnostics: Vec<serde::de::IgnoredAny>,
        }
        let deadline = limit.map(|limit| Instant::now() + limit);
        loop {
            let body = match deadline {
                None => self.receive_bytes(),
                Some(deadline) => match self.output.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(body) => body,
                    Err(RecvTimeoutError::Timeout) => return None,
                    Err(RecvTimeoutError::Disconnected) => panic!("the server's output ended"),
                },
            };
            let Ok(message) = serde_json::from_slice::<Message>(&body) else { continue };
            if message.method.as_deref() == Some("textDocument/publishDiagnostics")
                && let Some(params) = message.params
                && params.version == Some(version)
            {
                return Some(params.diagnostics.len());
            }
        }
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

/// One message's body read from the server's output, `None` at its end.
fn read_message(output: &mut BufReader<ChildStdout>) -> Option<Vec<u8>> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if output.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse().expect("length");
        }
    }
    let mut body = vec![0; length];
    output.read_exact(&mut body).ok()?;
    Some(body)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

/// Prints the percentiles of `samples`; returns the p95 in milliseconds.
fn summary(name: &str, mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    println!(
        "{name:<44} p50 {:>7.2} ms   p95 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms   (n = {})",
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        percentile(&samples, 0.99),
        percentile(&samples, 1.0),
        samples.len()
    );
    percentile(&samples, 0.95)
}

/// A workspace where the generated file is clean: its variables defined in
/// volley.jsonc and every file it refers to present.
fn workspace(directory: &Path, text: &str) {
    std::fs::create_dir_all(directory.join("payloads")).expect("workspace");
    std::fs::create_dir_all(directory.join("fixtures")).expect("workspace");
    std::fs::write(
        directory.join("volley.jsonc"),
        r#"{ "variables": { "userName": "ada", "clientId": "volley" }, "profiles": { "dev": { "variables": { "host": "http://127.0.0.1:1" } } } }"#,
    )
    .expect("config");
    for line in text.lines() {
        let path = line
            .strip_prefix("< ./")
            .or_else(|| line.split("@./").nth(1).map(|rest| rest.split(" |").next().unwrap_or(rest)));
        if let Some(path) = path {
            std::fs::write(directory.join(path.trim()), "{}").expect("referenced file");
        }
    }
}

fn main() {
    let keystrokes: usize = std::env::args().nth(1).and_then(|value| value.parse().ok()).unwrap_or(200);
    let binary = std::env::var("VOLLEY_BIN").unwrap_or_else(|_| "target/release/volley".to_owned());
    let directory = std::env::temp_dir().join(format!("volley-lsp-bench-{}", std::process::id()));
    let text = corpus::generate();
    workspace(&directory, &text);
    let path = directory.join("bench.http");
    std::fs::write(&path, &text).expect("bench file");
    let uri = format!("file://{}", path.display());
    println!("file: {} requests, {} bytes; {keystrokes} keystrokes", text.matches("\n###").count(), text.len());

    let mut server = Server::start(&binary);
    server.request("initialize", &json!({ "capabilities": {}, "processId": null, "rootUri": null }));
    server.notify("initialized", &json!({}));
    std::thread::sleep(Duration::from_millis(300));
    let before = server.rss_kib();
    let opened = Instant::now();
    server.notify(
        "textDocument/didOpen",
        &json!({ "textDocument": { "uri": uri, "languageId": "http", "version": 1, "text": text } }),
    );
    let count = server.diagnostics(1);
    let first = opened.elapsed();
    println!("didOpen → first diagnostics: {:.0} ms ({count} diagnostics)", first.as_secs_f64() * 1000.0);
    // The whole set is the next publication of version 1; a server that publishes them in
    // one step sends none (waited for ten times as long as the first took, at least 10 s).
    match server.diagnostics_within(1, Some((first * 10).max(Duration::from_secs(10)))) {
        Some(count) => println!(
            "didOpen → every diagnostic: {:.0} ms ({count} diagnostics)",
            opened.elapsed().as_secs_f64() * 1000.0
        ),
        None => println!("didOpen → every diagnostic: with the first (no second publication)"),
    }
    let after = server.rss_kib();
    let ratio = (after - before) as f64 * 1024.0 / text.len() as f64;
    println!(
        "memory: RSS {:.1} MiB before didOpen, {:.1} MiB after its diagnostics: {:.1} MiB for the open document ({:.1}x its size)",
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after - before) as f64 / 1024.0,
        ratio
    );

    // Keystrokes in the middle of the file: typing into a header value of a request.
    let middle = text.len() / 2;
    let anchor = middle + text[middle..].find("\nAuthorization: Bearer ").expect("a header in the middle");
    let line = text[..anchor].matches('\n').count() + 1;
    let column = "Authorization: Bearer ".len();
    let mut samples = Vec::with_capacity(keystrokes);
    for index in 0..keystrokes {
        let version = 2 + index as i64;
        let character = column + index;
        let started = Instant::now();
        server.notify(
            "textDocument/didChange",
            &json!({
                "textDocument": { "uri": uri, "version": version },
                "contentChanges": [{ "range": { "start": { "line": line, "character": character },
                                                "end": { "line": line, "character": character } }, "text": "x" }]
            }),
        );
        server.diagnostics(version);
        samples.push(started.elapsed());
    }
    let keystroke_p95 = summary("didChange (one keystroke) → diagnostics", samples);
    let edited = server.rss_kib();
    println!(
        "memory after the keystrokes: RSS {:.1} MiB: {:.1} MiB over the RSS before didOpen ({:.1}x the text)",
        edited as f64 / 1024.0,
        edited.saturating_sub(before) as f64 / 1024.0,
        edited.saturating_sub(before) as f64 * 1024.0 / text.len() as f64
    );

    // Completion inside `{{` on a line in the middle, and hover on a variable.
    let version = 2 + keystrokes as i64;
    server.notify(
        "textDocument/didChange",
        &json!({
            "textDocument": { "uri": uri, "version": version },
            "contentChanges": [{ "range": { "start": { "line": line + 1, "character": 0 },
                                            "end": { "line": line + 1, "character": 0 } }, "text": "X-Trace: {{\n" }]
        }),
    );
    server.diagnostics(version);
    let mut completions = Vec::new();
    let mut items = 0;
    for _ in 0..200 {
        let started = Instant::now();
        let answer = server.request(
            "textDocument/completion",
            &json!({ "textDocument": { "uri": uri }, "position": { "line": line + 1, "character": 11 } }),
        );
        completions.push(started.elapsed());
        items = answer["result"]["items"].as_array().map_or(0, Vec::len);
    }
    let completion_p95 = summary(&format!("completion in {{{{ ({items} items)"), completions);
    let host_line = text[..anchor].rfind("{{host}}").map(|at| text[..at].matches('\n').count()).expect("a {{host}}");
    let host_column =
        text[..text[..anchor].rfind("{{host}}").expect("host")].rsplit('\n').next().map_or(0, str::len) + 3;
    let mut hovers = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        server.request(
            "textDocument/hover",
            &json!({ "textDocument": { "uri": uri }, "position": { "line": host_line, "character": host_column } }),
        );
        hovers.push(started.elapsed());
    }
    summary("hover on {{host}}", hovers);
    println!(
        "issue 25: memory per open document {ratio:.1}x the text (goal <= 8x), keystroke → diagnostics p95 \
         {keystroke_p95:.2} ms (goal < 30 ms), completion p95 {completion_p95:.2} ms (goal < 5 ms)"
    );

    server.request("shutdown", &Value::Null);
    server.notify("exit", &Value::Null);
    let _ = server.child.wait();
    let _ = std::fs::remove_dir_all(&directory);
}
