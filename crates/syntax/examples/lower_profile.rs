//! Lowers the same trees many times on one thread, for profiling the typed layer:
//! `cargo run --release -p volley-syntax --features mimalloc --example lower_profile -- FILE`.

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let path = std::env::args().nth(1).expect("usage: lower_profile FILE");
    let text = std::fs::read_to_string(path).expect("readable UTF-8 file");
    // Small enough to stay on one thread.
    let text: String = text.chars().take(400 * 1024).collect();
    let tree = volley_syntax::SyntaxTree::new(&text);
    let start = std::time::Instant::now();
    let mut requests = 0;
    for _ in 0..100 {
        requests += tree.document().requests().count();
    }
    let elapsed = start.elapsed();
    eprintln!(
        "{requests} requests lowered in {elapsed:?}: {:.1} µs per request",
        elapsed.as_secs_f64() * 1e6 / f64::from(u32::try_from(requests).unwrap_or(u32::MAX))
    );
}
