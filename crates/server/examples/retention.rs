//! What the server's memory does over the life of its flows: resident memory of a server
//! idle, holding 100 sessions and 100 flows of 500 stored executions each, after the
//! flows' idle TTL has passed and the sweep removed them, after the sessions are deleted,
//! and after the same load again (freed memory is reused: the second fill must not grow
//! the process like the first).
//!
//! It runs with mimalloc, the allocator of the `volley` binary. Neither it nor glibc's
//! malloc gives freed memory back to the system at once (mimalloc purges freed pages
//! only when the thread that owns them allocates again; idle workers never do), so RSS
//! after the sweep shows what the process keeps for reuse: the second fill must not grow
//! it. `MIMALLOC_PURGE_DELAY=0` purges at once, and then RSS falls back after the sweep
//! (at a cost in throughput). The flows' TTL is short
//! (3 s, swept every 250 ms) so that the run takes seconds, not the default 5 minutes;
//! executions go round-robin over each client's flows, so no flow idles while it fills.
//!
//! `cargo run --release -p volley-server --example retention -- [executions per flow]`
//! (the `bench/server-retention` script).
// A benchmark prints its figures.
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use volley_echo_server::TestServer;
use volley_server::{Server, ServerConfig};

#[global_allocator]
static GLOBAL: volley_syntax::allocator::Mimalloc = volley_syntax::allocator::Mimalloc;

const FLOWS: usize = 100;
/// Concurrent clients filling the flows.
const CLIENTS: usize = 16;
const FLOW_TTL: Duration = Duration::from_secs(3);

fn main() {
    let per_flow: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(500);
    let _ = rustls::crypto::ring::default_provider().install_default();
    // As the `volley` binary does: the server's executions send with the installed transport.
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
    // Upstream, server and load each on their own runtime, as separate processes would be.
    let upstream_runtime = runtime(1);
    let upstream = upstream_runtime.block_on(TestServer::start());
    let server_runtime = runtime(2);
    let workspace = std::env::temp_dir().join(format!("volley-retention-{}", std::process::id()));
    std::fs::create_dir_all(&workspace).expect("workspace");
    let base = server_runtime.block_on(async {
        let config = ServerConfig {
            port: 0,
            workspace: workspace.clone(),
            max_sessions: 2 * FLOWS,
            flow_ttl: FLOW_TTL,
            sweep_interval: Duration::from_millis(250),
            ..ServerConfig::default()
        };
        let server = Server::bind(config).await.expect("bind");
        let base = format!("http://{}", server.local_addr());
        tokio::spawn(server.run(std::future::pending()));
        base
    });
    let load = runtime(2);
    let http = reqwest::Client::builder().pool_max_idle_per_host(CLIENTS).build().expect("client");
    let content = format!("GET {}/echo?bench=1\n", upstream.base_url());
    load.block_on(async {
        // Warm: connections, the engine's caches, the runtimes' first allocations.
        for _ in 0..CLIENTS {
            post(&http, format!("{base}/execute"), json!({ "content": content })).await;
        }
        let idle = rss_mib();
        println!("RSS (MiB, the whole process: server, upstream and load generator)");
        println!("{:<58} {idle:>6}", "idle");
        let mut sessions = Vec::new();
        for round in 1..=2 {
            let started = Instant::now();
            let (round_sessions, flows) = fill(&http, &base, &content, per_flow).await;
            println!(
                "{:<58} {:>6}",
                format!(
                    "round {round}: {FLOWS} sessions + {FLOWS} flows x {per_flow} executions ({:.1} s)",
                    started.elapsed().as_secs_f64()
                ),
                rss_mib()
            );
            let swept = Instant::now();
            for flow in &flows {
                until_flow_gone(&http, &base, flow).await;
            }
            // The allocator returns freed pages after a short delay.
            tokio::time::sleep(Duration::from_millis(500)).await;
            println!(
                "{:<58} {:>6}",
                format!("round {round}: flows swept after their TTL ({:.1} s)", swept.elapsed().as_secs_f64()),
                rss_mib()
            );
            sessions.extend(round_sessions);
        }
        for session in &sessions {
            let answer = http.delete(format!("{base}/session/{session}")).send().await.expect("delete");
            assert_eq!(answer.status(), 204);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        println!("{:<58} {:>6}", "sessions deleted", rss_mib());
    });
    let _ = std::fs::remove_dir_all(&workspace);
}

fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().expect("runtime")
}

/// `FLOWS` sessions with a flow each, then `per_flow` executions in every flow; the ids.
async fn fill(http: &reqwest::Client, base: &str, content: &str, per_flow: usize) -> (Vec<String>, Vec<String>) {
    let mut sessions = Vec::new();
    let mut flows = Vec::new();
    for index in 0..FLOWS {
        let session = post(http, format!("{base}/session"), json!({ "variables": { "n": index } })).await;
        let session = session["sessionId"].as_str().expect("session").to_owned();
        let flow =
            post(http, format!("{base}/flows"), json!({ "sessionId": session, "label": format!("flow {index}") }))
                .await;
        flows.push(flow["flowId"].as_str().expect("flow").to_owned());
        sessions.push(session);
    }
    let tasks: Vec<_> = flows
        .chunks(FLOWS.div_ceil(CLIENTS))
        .map(|chunk| {
            let (http, chunk, base, content) = (http.clone(), chunk.to_vec(), base.to_owned(), content.to_owned());
            tokio::spawn(async move {
                for _ in 0..per_flow {
                    for flow in &chunk {
                        let body = json!({ "content": content, "flowId": flow });
                        let answer = post(&http, format!("{base}/execute"), body).await;
                        assert_eq!(answer["response"]["status"], 200, "{answer}");
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    (sessions, flows)
}

/// Waits until the server knows no flow `id` (`FLOW_NOT_FOUND` from its execution store).
async fn until_flow_gone(http: &reqwest::Client, base: &str, id: &str) {
    let deadline = Instant::now() + FLOW_TTL * 10;
    loop {
        let answer = http.get(format!("{base}/flows/{id}/executions/exec_none")).send().await.expect("send");
        let body: Value = serde_json::from_slice(&answer.bytes().await.expect("body")).expect("json");
        if body["error"]["code"] == "FLOW_NOT_FOUND" {
            return;
        }
        assert!(Instant::now() < deadline, "flow {id} was never swept");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Resident memory of the process, in MiB (Linux).
fn rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap_or_default();
    line.split_whitespace().nth(1).and_then(|kib| kib.parse::<u64>().ok()).unwrap_or(0) / 1024
}

async fn post(http: &reqwest::Client, url: String, body: Value) -> Value {
    let response =
        http.post(url).header("content-type", "application/json").body(body.to_string()).send().await.expect("send");
    let answer: Value = serde_json::from_slice(&response.bytes().await.expect("body")).expect("json");
    // Stored failures would be smaller than stored responses: measure responses only.
    assert!(answer.get("error").is_none(), "the server could not run the request: {answer}");
    answer
}
