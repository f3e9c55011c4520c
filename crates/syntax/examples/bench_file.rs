//! Writes the benchmark file (10,000 requests, about 10 MB) to the path given, or to
//! stdout: `cargo run --release -p volley-syntax --example bench_file -- /tmp/bench.http`.

#[path = "../benches/support/corpus.rs"]
mod corpus;

fn main() -> std::io::Result<()> {
    let text = corpus::generate();
    match std::env::args().nth(1) {
        Some(path) => std::fs::write(path, text),
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()),
    }
}
