//! Engine overhead against a bare reqwest loop, measured in interleaved rounds so that
//! a busy neighbour on a shared machine slows both sides alike:
//! `cargo run --release -p volley-engine --example overhead -- [rounds] [requests per round]`.
//!
//! Each round sends the same request (GET with two headers, body read) N times with a
//! bare reqwest client, then N times through `stages::run_request`, against the local
//! echo server with keep-alive. Prints the median per-request time of each side over the
//! rounds and their ratio.

// A measuring tool: printing the figures is its purpose.
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use volley_echo_server::TestServer;
use volley_engine::{Client, ClientConfig, ConfigSource, RunOptions};

#[global_allocator]
static GLOBAL: volley_syntax::allocator::Mimalloc = volley_syntax::allocator::Mimalloc;

fn median(values: &mut [Duration]) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn main() {
    let mut arguments = std::env::args().skip(1);
    let rounds: usize = arguments.next().and_then(|value| value.parse().ok()).unwrap_or(30);
    let per_round: u32 = arguments.next().and_then(|value| value.parse().ok()).unwrap_or(300);
    measure(rounds, per_round);
}

/// `rounds` rounds of `per_round` requests each way, then the medians printed.
fn measure(rounds: usize, per_round: u32) {
    // As the `volley` binary does: the engine sends with the installed transport.
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime");
    runtime.block_on(async move {
        let server = TestServer::start().await;
        let url = server.url("/echo/users/42?page=1");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let bare = reqwest::Client::builder().build().expect("a reqwest client");
        let engine = Client::new(ClientConfig { config: ConfigSource::Disabled, ..ClientConfig::default() });
        engine.set_variable("host", server.base_url());
        let document =
            volley_syntax::parse("GET {{host}}/echo/users/42?page=1\nAccept: application/json\nX-Request: bench\n");
        let request = document.request(0).expect("one request");

        let mut bare_times = Vec::with_capacity(rounds);
        let mut engine_times = Vec::with_capacity(rounds);
        for round in 0..=rounds {
            let started = Instant::now();
            for _ in 0..per_round {
                let response = bare
                    .get(&url)
                    .header("Accept", "application/json")
                    .header("X-Request", "bench")
                    .send()
                    .await
                    .expect("the echo server answers");
                std::hint::black_box(response.bytes().await.expect("a body"));
            }
            let bare_elapsed = started.elapsed() / per_round;
            let started = Instant::now();
            for _ in 0..per_round {
                let response =
                    volley_engine::stages::run_request(&engine, &document, request, None, RunOptions::default())
                        .await
                        .expect("the echo server answers");
                std::hint::black_box(response.bytes().await.expect("a body"));
            }
            let engine_elapsed = started.elapsed() / per_round;
            // Round 0 warms connections and caches up.
            if round > 0 {
                bare_times.push(bare_elapsed);
                engine_times.push(engine_elapsed);
            }
        }
        let bare = median(&mut bare_times);
        let engine = median(&mut engine_times);
        println!("bare reqwest:       {bare:?} per request (median of {rounds} rounds of {per_round})");
        println!("volley run_request: {engine:?} per request");
        println!("ratio:              {:.2}", engine.as_secs_f64() / bare.as_secs_f64());
    });
}

#[cfg(test)]
mod tests {
    /// The example runs as `bench/engine-overhead` runs it, on a few requests.
    #[test]
    fn measures_a_few_requests() {
        super::measure(1, 3);
    }
}
