//! Streaming figures: `cargo run --release -p volley-engine --example streaming -- [events] [round trips] [rounds]`.
//!
//! 1. SSE: events per second through the library (`Client::run_string` on an `@sse`
//!    definition, `Response::events()`), from the local server's `/sse/fast` route
//!    (`data: x` events, 9 bytes each, in 64 KiB chunks over loopback); and the parser
//!    alone over the same bytes in memory.
//! 2. WebSocket: round trips (send a 32-byte text, wait for its echo) against the local
//!    server's `/ws/echo`, through the library and through a bare tokio-tungstenite
//!    client, in interleaved rounds on one connection each. Prints messages per second
//!    and the p50 and p99 round-trip latency of each, and the ratio of the p50s.

// A measuring tool: printing the figures is its purpose.
#![allow(clippy::print_stdout, clippy::cast_precision_loss)]

use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use volley_echo_server::TestServer;
use volley_engine::sse::SseParser;
use volley_engine::websocket::WsMessage;
use volley_engine::{Client, ClientConfig, ConfigSource, RunOptions};

#[global_allocator]
static GLOBAL: volley_syntax::allocator::Mimalloc = volley_syntax::allocator::Mimalloc;

/// The value at `per_mille`/1000 of a sorted sample (nearest rank).
fn percentile(sorted: &[Duration], per_mille: usize) -> Duration {
    let index = (sorted.len() - 1) * per_mille / 1000;
    sorted[index]
}

fn main() {
    let mut arguments = std::env::args().skip(1);
    let events: usize = arguments.next().and_then(|value| value.parse().ok()).unwrap_or(2_000_000);
    let round_trips: usize = arguments.next().and_then(|value| value.parse().ok()).unwrap_or(2_000);
    let rounds: usize = arguments.next().and_then(|value| value.parse().ok()).unwrap_or(10);
    measure(events, round_trips, rounds);
}

/// SSE events through the library and the parser, then WebSocket round trips, printed.
fn measure(events: usize, round_trips: usize, rounds: usize) {
    // As the `volley` binary does: the engine sends with the installed transport.
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime");
    runtime.block_on(async move {
        let server = TestServer::start().await;
        let client = Client::new(ClientConfig { config: ConfigSource::Disabled, ..ClientConfig::default() });
        sse(&client, &server, events).await;
        // Boxed: its future is larger than clippy's `large_futures` limit.
        Box::pin(websocket(&client, &server, round_trips, rounds)).await;
    });
}

async fn sse(client: &Client, server: &TestServer, events: usize) {
    let text = format!("# @sse\nGET {}\n", server.url(&format!("/sse/fast?count={events}")));
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        let response = client.run_string(&text, RunOptions::default()).await.expect("the stream opens");
        let mut stream = response.events().expect("an event stream");
        let mut count = 0usize;
        while let Some(event) = stream.next().await {
            std::hint::black_box(event.expect("an event"));
            count += 1;
        }
        assert_eq!(count, events, "every event arrived");
        best = best.min(started.elapsed());
    }
    println!(
        "SSE through the library: {events} events in {best:?} (best of 3): {:.0} events/s",
        events as f64 / best.as_secs_f64()
    );

    let bytes = "data: x\n\n".repeat(events);
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        let mut parser = SseParser::new();
        let mut count = 0usize;
        for chunk in bytes.as_bytes().chunks(65_529) {
            parser.feed(chunk);
            while let Some(event) = parser.next_event() {
                std::hint::black_box(event);
                count += 1;
            }
        }
        assert_eq!(count, events);
        best = best.min(started.elapsed());
    }
    println!(
        "SSE parser alone:        {events} events in {best:?} (best of 3): {:.0} events/s",
        events as f64 / best.as_secs_f64()
    );
}

async fn websocket(client: &Client, server: &TestServer, round_trips: usize, rounds: usize) {
    let url = server.url("/ws/echo").replacen("http", "ws", 1);
    let response = client.run_string(&format!("GET {url}\n"), RunOptions::default()).await.expect("the handshake");
    let mut engine = response.websocket().expect("a connection");
    let (mut bare, _) = tokio_tungstenite::connect_async(url.as_str()).await.expect("the bare handshake");
    let payload = "x".repeat(32);

    let mut engine_times = Vec::with_capacity(round_trips * rounds);
    let mut bare_times = Vec::with_capacity(round_trips * rounds);
    let (mut engine_total, mut bare_total) = (Duration::ZERO, Duration::ZERO);
    for round in 0..=rounds {
        let started = Instant::now();
        for _ in 0..round_trips {
            let sent = Instant::now();
            bare.send(tokio_tungstenite::tungstenite::Message::text(payload.clone())).await.expect("sent");
            let echoed = bare.next().await.expect("an echo").expect("a message");
            std::hint::black_box(echoed);
            if round > 0 {
                bare_times.push(sent.elapsed());
            }
        }
        if round > 0 {
            bare_total += started.elapsed();
        }
        let started = Instant::now();
        for _ in 0..round_trips {
            let sent = Instant::now();
            engine.send_text(payload.clone()).await.expect("sent");
            let echoed = engine.next().await.expect("an echo").expect("a message");
            assert!(matches!(echoed, WsMessage::Text(_)));
            if round > 0 {
                engine_times.push(sent.elapsed());
            }
        }
        // Round 0 warms both connections up.
        if round > 0 {
            engine_total += started.elapsed();
        }
    }
    bare_times.sort();
    engine_times.sort();
    let count = (round_trips * rounds) as f64;
    let (bare_p50, bare_p99) = (percentile(&bare_times, 500), percentile(&bare_times, 990));
    let (engine_p50, engine_p99) = (percentile(&engine_times, 500), percentile(&engine_times, 990));
    println!(
        "WebSocket bare tokio-tungstenite: {:.0} round trips/s, p50 {bare_p50:?}, p99 {bare_p99:?}",
        count / bare_total.as_secs_f64()
    );
    println!(
        "WebSocket through the library:    {:.0} round trips/s, p50 {engine_p50:?}, p99 {engine_p99:?}",
        count / engine_total.as_secs_f64()
    );
    println!(
        "latency ratio (library / bare): p50 {:.2}, p99 {:.2}  ({rounds} interleaved rounds of {round_trips})",
        engine_p50.as_secs_f64() / bare_p50.as_secs_f64(),
        engine_p99.as_secs_f64() / bare_p99.as_secs_f64()
    );
}

#[cfg(test)]
mod tests {
    /// The example runs as `bench/streaming` runs it, on a few events and round trips.
    #[test]
    fn measures_a_few_events_and_round_trips() {
        super::measure(100, 5, 1);
    }
}
