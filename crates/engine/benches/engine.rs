//! Engine overhead per request, against the local echo server with keep-alive, compared
//! in the same run with a bare reqwest loop doing the same request; and the cost of
//! interpolating a request with 50 variables (no network).
//!
//! Both loops run with mimalloc, the allocator the `volley` binary uses.
//!
//! Run: `cargo bench -p volley-engine --bench engine`. Figures go to docs/benchmarks.md.

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use volley_engine::{Client, ClientConfig, ConfigSource, RunOptions};

use volley_echo_server::TestServer;

#[global_allocator]
static GLOBAL: volley_syntax::allocator::Mimalloc = volley_syntax::allocator::Mimalloc;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime")
}

fn benchmarks(c: &mut Criterion) {
    let runtime = runtime();
    let server = runtime.block_on(TestServer::start());
    let url = server.url("/echo/users/42?page=1");

    // The same request both ways: GET with two headers, the whole body read.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let bare = reqwest::Client::builder().build().expect("a reqwest client");
    let engine = Client::new(ClientConfig { config: ConfigSource::Disabled, ..ClientConfig::default() });
    engine.set_variable("host", server.base_url());
    let definition = "GET {{host}}/echo/users/42?page=1\nAccept: application/json\nX-Request: bench\n";

    let mut group = c.benchmark_group("request");
    group.bench_function("bare reqwest loop", |b| {
        b.to_async(&runtime).iter(|| async {
            let response = bare
                .get(&url)
                .header("Accept", "application/json")
                .header("X-Request", "bench")
                .send()
                .await
                .expect("the echo server answers");
            black_box(response.bytes().await.expect("a body"))
        });
    });
    // A file is parsed once and its requests run (what `volley run` does).
    let document = volley_syntax::parse(definition);
    let request = document.request(0).expect("one request");
    group.bench_function("volley engine run_request (parsed once)", |b| {
        b.to_async(&runtime).iter(|| async {
            let response = volley_engine::stages::run_request(&engine, &document, request, None, RunOptions::default())
                .await
                .expect("the echo server answers");
            black_box(response.bytes().await.expect("a body"))
        });
    });
    // The same with the text parsed on every call.
    group.bench_function("volley engine run_string (parsed every time)", |b| {
        b.to_async(&runtime).iter(|| async {
            let response = engine.run_string(definition, RunOptions::default()).await.expect("the echo server answers");
            black_box(response.bytes().await.expect("a body"))
        });
    });
    group.finish();

    // 50 variables in the URL, headers and a JSON body; built, not sent.
    let mut text = String::from("POST {{host}}/items?");
    for index in 0..10 {
        let _ = write!(text, "q{index}={{{{v{index}}}}}&");
    }
    text.push('\n');
    for index in 10..30 {
        let _ = writeln!(text, "X-Header-{index}: {{{{v{index}}}}}");
    }
    text.push_str("Content-Type: application/json\n\n{\n");
    for index in 30..50 {
        let _ = writeln!(text, "  \"field{index}\": \"{{{{v{index}}}}}\",");
    }
    text.push_str("  \"end\": true\n}\n");
    let interpolating = Client::new(ClientConfig { config: ConfigSource::Disabled, ..ClientConfig::default() });
    interpolating.set_variable("host", "http://127.0.0.1:1");
    for index in 0..50 {
        interpolating.set_variable(format!("v{index}"), format!("value-{index}"));
    }
    let options = RunOptions::default();
    let document = volley_syntax::parse(&text);
    let request = document.request(0).expect("one request");
    c.bench_function("interpolation/build a request with 50 variables", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(
                volley_engine::stages::prepare_request(&interpolating, &document, request, None, &options)
                    .await
                    .expect("the request builds"),
            )
        });
    });
    c.bench_function("interpolation/parse and build a request with 50 variables", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(
                volley_engine::stages::prepare(&interpolating, &text, &options).await.expect("the request builds"),
            )
        });
    });
    drop(server);
}

criterion_group!(benches, benchmarks);
criterion_main!(benches);
