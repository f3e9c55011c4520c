//! Server-owned WebSocket sessions under load, against the local test server's
//! `/ws/echo`, in one process (upstream, server and load generator on their own
//! runtimes):
//!
//! - messages per second through one session (pipelined `session.send`, counted when
//!   the `session.inbound` echo arrives) and through a direct connection to the
//!   upstream in the same run;
//! - round-trip latency through a session against a direct connection, p50 and p99,
//!   in interleaved rounds;
//! - memory of 1,000 open sessions (each with its control socket attached);
//! - with `soak MINUTES`: 100 sessions kept busy, a tenth of them closed and reopened
//!   every 10 s, the resident memory printed every 30 s.
//!
//! `cargo run --release -p volley-server --example ws_load -- [messages] [rounds]`,
//! `… --example ws_load -- soak 10` (the `bench/ws-sessions` and `bench/ws-soak` scripts).
// A benchmark prints its figures; counts become float rates and percentile ranks.
#![allow(clippy::print_stdout, clippy::cast_precision_loss, clippy::cast_sign_loss)]

use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use volley_echo_server::TestServer;
use volley_server::{Server, ServerConfig};

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn main() {
    // The server's and the engine's clients send with Volley's HTTP client, as in the binary.
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let upstream_runtime = runtime(1);
    let upstream = upstream_runtime.block_on(TestServer::start());
    let server_runtime = runtime(2);
    let workspace = std::env::temp_dir().join(format!("volley-ws-load-{}", std::process::id()));
    std::fs::create_dir_all(&workspace).expect("workspace");
    let base = server_runtime.block_on(async {
        let config =
            ServerConfig { port: 0, workspace: workspace.clone(), max_ws_sessions: 2000, ..ServerConfig::default() };
        let server = Server::bind(config).await.expect("bind");
        let base = format!("http://{}", server.local_addr());
        tokio::spawn(server.run(std::future::pending()));
        base
    });
    let echo = format!("{}/ws/echo", upstream.base_url().replacen("http", "ws", 1));
    let load = runtime(2);
    if args.first().map(String::as_str) == Some("soak") {
        let minutes: u64 = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10);
        load.block_on(soak(&base, &echo, Duration::from_secs(minutes * 60)));
    } else {
        let messages: usize = args.first().and_then(|n| n.parse().ok()).unwrap_or(100_000);
        let rounds: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(5);
        load.block_on(figures(&base, &echo, messages, rounds));
    }
    let _ = std::fs::remove_dir_all(&workspace);
}

fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().expect("runtime")
}

async fn figures(base: &str, echo: &str, messages: usize, rounds: usize) {
    let http = reqwest::Client::new();
    // Throughput.
    let mut through_session = Vec::new();
    let mut direct = Vec::new();
    for _ in 0..rounds {
        let (control, _) = open(&http, base, echo).await;
        through_session.push(pipelined_session(control, messages).await);
        let (socket, _) = tokio_tungstenite::connect_async(echo).await.expect("upstream");
        direct.push(pipelined_direct(socket, messages).await);
    }
    println!("messages/s over one connection, {messages} pipelined messages, median of {rounds} rounds");
    println!("  through a session: {:>9.0}", median(&mut through_session));
    println!("  direct to upstream: {:>8.0}", median(&mut direct));
    // Latency.
    let (mut control, _) = open(&http, base, echo).await;
    let (mut socket, _) = tokio_tungstenite::connect_async(echo).await.expect("upstream");
    let mut session_latency = Vec::new();
    let mut direct_latency = Vec::new();
    for _ in 0..rounds {
        for _ in 0..2000 {
            let sent = Instant::now();
            send(&mut control, "ping-pong").await;
            until_inbound(&mut control).await;
            session_latency.push(sent.elapsed().as_secs_f64() * 1000.0);
        }
        for _ in 0..2000 {
            let sent = Instant::now();
            socket.send(Message::text("ping-pong")).await.expect("send");
            socket.next().await.expect("echo").expect("echo");
            direct_latency.push(sent.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let (session_p50, session_p99) = percentiles(&mut session_latency);
    let (direct_p50, direct_p99) = percentiles(&mut direct_latency);
    println!("round trip, {} each, interleaved", session_latency.len());
    println!("  through a session: p50 {session_p50:.3} ms, p99 {session_p99:.3} ms");
    println!("  direct to upstream: p50 {direct_p50:.3} ms, p99 {direct_p99:.3} ms");
    println!("  added: p50 {:+.3} ms, p99 {:+.3} ms", session_p50 - direct_p50, session_p99 - direct_p99);
    drop(control);
    drop(socket);
    // Memory of 1,000 sessions: of a `volley serve` process of its own when the bench
    // script gives one (`VOLLEY_BIN`), else of this whole process.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (base, child, pid) = measured_server(base);
    let before = rss_kib(&pid);
    let started = Instant::now();
    let mut sessions = Vec::with_capacity(1000);
    for _ in 0..1000 {
        let (mut control, _) = open(&http, &base, echo).await;
        send(&mut control, "hello").await;
        until_inbound(&mut control).await;
        sessions.push(control);
    }
    let after = rss_kib(&pid);
    let whose = if child.is_some() {
        "the `volley serve` process"
    } else {
        "this whole process, with the upstream server's and the clients' 1,000 connections"
    };
    println!(
        "1,000 open sessions (upstream connected, control socket attached, one message each; opened in {:.1} s): RSS of {whose} {} -> {} MiB (+{} MiB)",
        started.elapsed().as_secs_f64(),
        before / 1024,
        after / 1024,
        after.saturating_sub(before) / 1024
    );
    drop(sessions);
    if let Some(mut child) = child {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The server whose memory is measured: a `volley serve` process of its own when the
/// bench script gives one (`VOLLEY_BIN`), else the in-process one; and the pid to read.
fn measured_server(base: &str) -> (String, Option<std::process::Child>, String) {
    match std::env::var("VOLLEY_BIN") {
        Ok(binary) => {
            let (base, child) = spawn_server(&binary);
            let pid = child.id().to_string();
            (base, Some(child), pid)
        }
        Err(_) => (base.to_owned(), None, "self".to_owned()),
    }
}

/// Starts `binary serve --port 0` and reads the address it prints.
fn spawn_server(binary: &str) -> (String, std::process::Child) {
    use std::io::BufRead as _;
    let workspace = std::env::temp_dir();
    let mut child = std::process::Command::new(binary)
        .args(["serve", "--port", "0", "--max-ws-sessions", "2000", "--workspace"])
        .arg(&workspace)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("volley serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    std::io::BufReader::new(stdout).read_line(&mut first).expect("the address line");
    let base = first.trim().strip_prefix("volley serve: listening on ").expect("the address line").to_owned();
    (base, child)
}

/// Opens a session on `echo` and connects its control socket (replay read).
async fn open(http: &reqwest::Client, base: &str, echo: &str) -> (Socket, String) {
    let body = json!({ "content": format!("GET {echo}\n") }).to_string();
    let answer = http
        .post(format!("{base}/execute/ws"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("execute/ws");
    let answer: Value = serde_json::from_slice(&answer.bytes().await.expect("body")).expect("json");
    let path = answer["ws"]["downstreamPath"].as_str().unwrap_or_else(|| panic!("no session: {answer}")).to_owned();
    let url = format!("{}{path}", base.replacen("http", "ws", 1));
    let (mut control, _) = tokio_tungstenite::connect_async(url).await.expect("control socket");
    loop {
        let envelope = next_envelope(&mut control).await;
        if envelope["type"] == "session.replay.end" {
            break;
        }
    }
    (control, answer["ws"]["wsSessionId"].as_str().unwrap_or_default().to_owned())
}

async fn send(control: &mut Socket, text: &str) {
    let message = json!({ "type": "session.send", "payload": text }).to_string();
    control.send(Message::text(message)).await.expect("send");
}

async fn next_envelope(control: &mut Socket) -> Value {
    loop {
        match control.next().await.expect("open").expect("frame") {
            Message::Text(text) => return serde_json::from_str(text.as_str()).expect("json"),
            Message::Close(frame) => panic!("closed: {frame:?}"),
            _ => {}
        }
    }
}

async fn until_inbound(control: &mut Socket) {
    loop {
        if next_envelope(control).await["type"] == "session.inbound" {
            return;
        }
    }
}

async fn pipelined_session(control: Socket, messages: usize) -> f64 {
    let started = Instant::now();
    let (mut sink, mut stream) = control.split();
    // The reader runs on its own task, so it reads while the writer writes.
    let receiving = async move {
        let mut inbound = 0;
        while inbound < messages {
            let text = match stream.next().await {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(frame))) => {
                    panic!("the control socket closed: {frame:?} after {inbound} echoes")
                }
                Some(Ok(_)) => continue,
                other => panic!("the control socket ended: {other:?} after {inbound} echoes"),
            };
            // Envelopes are compact JSON: the type is near the start.
            if text.as_str().contains(r#""type":"session.inbound""#) {
                inbound += 1;
            }
        }
        stream
    };
    let receiving = tokio::spawn(receiving);
    for index in 0..messages {
        let message = json!({ "type": "session.send", "payload": format!("message {index}") }).to_string();
        sink.feed(Message::text(message)).await.expect("send");
    }
    sink.flush().await.expect("flush");
    let _ = receiving.await.expect("reader");
    messages as f64 / started.elapsed().as_secs_f64()
}

async fn pipelined_direct(socket: Socket, messages: usize) -> f64 {
    let started = Instant::now();
    let (mut sink, mut stream) = socket.split();
    let receiving = tokio::spawn(async move {
        for _ in 0..messages {
            stream.next().await.expect("echo").expect("echo");
        }
        stream
    });
    for index in 0..messages {
        sink.feed(Message::text(format!("message {index}"))).await.expect("send");
    }
    sink.flush().await.expect("flush");
    let _ = receiving.await.expect("reader");
    messages as f64 / started.elapsed().as_secs_f64()
}

/// 100 sessions kept busy for `length`; every 10 s a tenth of them is closed and
/// replaced; the resident memory every 30 s.
async fn soak(base: &str, echo: &str, length: Duration) {
    let http = reqwest::Client::new();
    let (base, child, pid) = measured_server(base);
    let base = base.as_str();
    let mut sessions = Vec::new();
    for _ in 0..100 {
        sessions.push(open(&http, base, echo).await.0);
    }
    let started = Instant::now();
    let mut next_report = Duration::ZERO;
    let mut next_churn = Duration::from_secs(10);
    let mut messages = 0u64;
    let mut samples = Vec::new();
    let whose = if pid == "self" { "this process" } else { "the `volley serve` process" };
    println!("soak: 100 sessions for {} s; RSS of {whose} every 30 s", length.as_secs());
    while started.elapsed() < length {
        for control in &mut sessions {
            send(control, "soak message with a little text in it").await;
            until_inbound(control).await;
            messages += 1;
        }
        let elapsed = started.elapsed();
        if elapsed >= next_churn {
            next_churn += Duration::from_secs(10);
            for slot in sessions.iter_mut().take(10) {
                let close = json!({ "type": "session.close", "code": 1000, "reason": "churn" }).to_string();
                let _ = slot.send(Message::text(close)).await;
                *slot = open(&http, base, echo).await.0;
            }
        }
        if elapsed >= next_report {
            next_report += Duration::from_secs(30);
            let rss = rss_kib(&pid);
            samples.push(rss);
            println!("  {:>4} s  {:>9} messages  RSS {:>6.1} MiB", elapsed.as_secs(), messages, rss as f64 / 1024.0);
        }
    }
    // Flat: after the first minute of warm-up, the spread of the samples.
    let steady: Vec<u64> = samples.iter().copied().skip(2).collect();
    if let (Some(low), Some(high)) = (steady.iter().min(), steady.iter().max()) {
        println!(
            "soak done: {messages} messages; RSS after warm-up between {:.1} and {:.1} MiB (spread {:.1} MiB)",
            *low as f64 / 1024.0,
            *high as f64 / 1024.0,
            (high - low) as f64 / 1024.0
        );
    }
    if let Some(mut child) = child {
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn percentiles(values: &mut [f64]) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.99))
}

/// Resident memory of process `pid` (`self`), in KiB (Linux).
fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("VmRSS:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}
