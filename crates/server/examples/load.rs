//! Load on `POST /execute`: requests per second and latency percentiles with 1, 8 and
//! 64 concurrent clients, each against the same loopback upstream, and in the same run
//! the same requests made with the engine directly (`Client::run_string`); the
//! difference of the medians is the server's overhead. Then the memory of a server
//! holding 100 sessions and 100 flows of 500 stored executions each.
//!
//! `cargo run --release -p volley-server --example load -- [requests per level] [rounds] [levels]`
//! (the `bench/server` script).
// A benchmark prints its figures; counts become float rates and percentile ranks.
#![allow(clippy::print_stdout, clippy::cast_precision_loss, clippy::cast_sign_loss)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use volley_echo_server::TestServer;
use volley_engine::{Client, ClientConfig, ConfigSource, RunOptions};
use volley_server::{Server, ServerConfig};

fn main() {
    // The server's and the engine's clients send with Volley's HTTP client, as in the binary.
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
    let mut args = std::env::args().skip(1);
    let per_level: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(4000);
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(3);
    // Optional: only these concurrency levels (`1,8`), and no memory phase (for profiling).
    let levels: Vec<usize> = args
        .next()
        .map_or_else(|| vec![1, 8, 64], |list| list.split(',').filter_map(|level| level.parse().ok()).collect());
    let only_levels = levels.len() < 3;
    let _ = rustls::crypto::ring::default_provider().install_default();
    // Upstream, server and load each on their own runtime, as separate processes would be.
    let upstream_runtime = runtime(1);
    let upstream = upstream_runtime.block_on(TestServer::start());
    let server_runtime = runtime(2);
    let workspace = std::env::temp_dir().join(format!("volley-load-{}", std::process::id()));
    std::fs::create_dir_all(&workspace).expect("workspace");
    let base = server_runtime.block_on(async {
        let config =
            ServerConfig { port: 0, workspace: workspace.clone(), max_sessions: 200, ..ServerConfig::default() };
        let server = Server::bind(config).await.expect("bind");
        let base = format!("http://{}", server.local_addr());
        tokio::spawn(server.run(std::future::pending()));
        base
    });
    let load = runtime(2);
    let content = format!("GET {}/echo?bench=1\n", upstream.base_url());
    println!(
        "POST /execute vs the engine called directly, {per_level} requests per level, {rounds} rounds (interleaved)"
    );
    println!("{:>5}  {:>22}  {:>22}  {:>10}", "conc", "server req/s p50 p99", "direct req/s p50 p99", "overhead");
    for concurrency in levels {
        let mut server_runs = Vec::new();
        let mut direct_runs = Vec::new();
        for _ in 0..rounds {
            server_runs.push(load.block_on(through_server(&base, &content, concurrency, per_level)));
            direct_runs.push(load.block_on(direct(&content, concurrency, per_level)));
        }
        let server = Stats::merge(&server_runs);
        let direct = Stats::merge(&direct_runs);
        println!(
            "{concurrency:>5}  {:>8.0} {:>6.3} {:>6.3}  {:>8.0} {:>6.3} {:>6.3}  {:>+7.3} ms",
            server.rate,
            server.p50,
            server.p99,
            direct.rate,
            direct.p50,
            direct.p99,
            server.p50 - direct.p50
        );
    }
    if !only_levels {
        load.block_on(memory(&base, &content));
    }
    let _ = std::fs::remove_dir_all(&workspace);
}

fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().expect("runtime")
}

/// Throughput and latency (ms) of one level.
#[derive(Debug, Clone)]
struct Stats {
    rate: f64,
    latencies: Vec<f64>,
    p50: f64,
    p99: f64,
}

impl Stats {
    fn new(latencies: Vec<f64>, elapsed: Duration) -> Self {
        let rate = latencies.len() as f64 / elapsed.as_secs_f64();
        let mut stats = Self { rate, latencies, p50: 0.0, p99: 0.0 };
        stats.percentiles();
        stats
    }

    fn percentiles(&mut self) {
        self.latencies.sort_by(f64::total_cmp);
        let at = |q: f64| self.latencies[((self.latencies.len() as f64 - 1.0) * q).round() as usize];
        self.p50 = at(0.50);
        self.p99 = at(0.99);
    }

    /// The rounds together: median rate, percentiles over every request.
    fn merge(runs: &[Stats]) -> Stats {
        let mut rates: Vec<f64> = runs.iter().map(|run| run.rate).collect();
        rates.sort_by(f64::total_cmp);
        let mut merged = Stats {
            rate: rates[rates.len() / 2],
            latencies: runs.iter().flat_map(|run| run.latencies.iter().copied()).collect(),
            p50: 0.0,
            p99: 0.0,
        };
        merged.percentiles();
        merged
    }
}

/// `total` requests through `/execute` from `concurrency` clients with keep-alive.
async fn through_server(base: &str, content: &str, concurrency: usize, total: usize) -> Stats {
    let http = reqwest::Client::builder().pool_max_idle_per_host(concurrency).build().expect("client");
    let body = json!({ "content": content }).to_string();
    let url = format!("{base}/execute");
    drive(concurrency, total, move || {
        let (http, body, url) = (http.clone(), body.clone(), url.clone());
        async move {
            let response =
                http.post(&url).header("content-type", "application/json").body(body).send().await.expect("send");
            assert_eq!(response.status(), 200);
            let answer: Value = serde_json::from_slice(&response.bytes().await.expect("body")).expect("json");
            assert_eq!(answer["response"]["status"], 200);
        }
    })
    .await
}

/// The same requests with the engine directly: parse, resolve, send, read the body.
async fn direct(content: &str, concurrency: usize, total: usize) -> Stats {
    let client = Client::new(ClientConfig { config: ConfigSource::Disabled, ..ClientConfig::default() });
    let content = content.to_owned();
    drive(concurrency, total, move || {
        let (client, content) = (client.clone(), content.clone());
        async move {
            let response = client.run_string(&content, RunOptions::default()).await.expect("run");
            assert_eq!(response.status(), 200);
            let _ = response.text().await.expect("body");
        }
    })
    .await
}

/// Runs `total` requests made by `request` from `concurrency` tasks, timing each.
async fn drive<F, R>(concurrency: usize, total: usize, request: F) -> Stats
where
    F: Fn() -> R + Clone + Send + 'static,
    R: std::future::Future<Output = ()> + Send,
{
    let work = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (request, work) = (request.clone(), Arc::clone(&work));
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while work.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < total {
                    let sent = Instant::now();
                    request().await;
                    latencies.push(sent.elapsed().as_secs_f64() * 1000.0);
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(total);
    for task in tasks {
        latencies.extend(task.await.expect("task"));
    }
    Stats::new(latencies, started.elapsed())
}

/// Resident memory of the process, in KiB (Linux).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// 100 sessions, 100 flows, 500 executions stored in each flow.
async fn memory(base: &str, content: &str) {
    let http = reqwest::Client::builder().pool_max_idle_per_host(16).build().expect("client");
    let before = rss_kib();
    let mut flows = Vec::new();
    for index in 0..100 {
        let session = post(&http, format!("{base}/session"), json!({ "variables": { "n": index } })).await;
        let session = session["sessionId"].as_str().expect("session").to_owned();
        let flow =
            post(&http, format!("{base}/flows"), json!({ "sessionId": session, "label": format!("flow {index}") }))
                .await;
        flows.push(flow["flowId"].as_str().expect("flow").to_owned());
    }
    let started = Instant::now();
    let tasks: Vec<_> = flows
        .chunks(100 / 16 + 1)
        .map(|chunk| {
            let (http, chunk, base, content) = (http.clone(), chunk.to_vec(), base.to_owned(), content.to_owned());
            tokio::spawn(async move {
                for flow in &chunk {
                    for _ in 0..500 {
                        let answer =
                            post(&http, format!("{base}/execute"), json!({ "content": content, "flowId": flow })).await;
                        assert_eq!(answer["response"]["status"], 200);
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    let after = rss_kib();
    println!(
        "memory: 100 sessions + 100 flows x 500 executions (50,000 stored, {:.1} s to fill): RSS {} -> {} MiB (+{} MiB, the load generator and the engine-direct client included)",
        started.elapsed().as_secs_f64(),
        before.map_or(0, |kib| kib / 1024),
        after.map_or(0, |kib| kib / 1024),
        after.zip(before).map_or(0, |(after, before)| after.saturating_sub(before) / 1024),
    );
}

async fn post(http: &reqwest::Client, url: String, body: Value) -> Value {
    let response =
        http.post(url).header("content-type", "application/json").body(body.to_string()).send().await.expect("send");
    serde_json::from_slice(&response.bytes().await.expect("body")).expect("json")
}
