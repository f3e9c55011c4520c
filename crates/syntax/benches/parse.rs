//! Parser benchmarks on a generated 10 MB file of 10,000 varied requests.
//!
//! - `full parse + typed model`: `volley_syntax::parse` on the whole file (throughput in
//!   MB/s).
//! - `incremental reparse`: one character typed in the middle of the file, then the
//!   tree-sitter reparse that reuses the previous tree (`SyntaxTree::edit`).
//!
//! Run: `cargo bench -p volley-syntax --bench parse`. Figures go to docs/benchmarks.md.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use volley_syntax::SyntaxTree;

#[path = "support/corpus.rs"]
mod corpus;

use corpus::{REQUESTS, generate};

fn benchmarks(c: &mut Criterion) {
    let text = generate();
    let document = volley_syntax::parse(&text);
    assert_eq!(document.requests().count(), REQUESTS, "every generated request parses");
    assert!(!document.has_errors(), "the generated file is valid: {:?}", document.diagnostics.first());

    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    group.bench_function("full parse + typed model (10 MB, 10k requests)", |b| {
        b.iter(|| black_box(volley_syntax::parse(black_box(&text))));
    });
    group.bench_function("syntax trees only, no typed model (10 MB)", |b| {
        b.iter(|| black_box(SyntaxTree::new(black_box(text.as_str()))));
    });
    group.finish();

    let mut group = c.benchmark_group("incremental");
    let middle = text.len() / 2;
    let middle = (middle..text.len()).find(|&offset| text.is_char_boundary(offset)).unwrap_or(middle);
    let tree = SyntaxTree::new(text.clone());
    group.bench_function("reparse after a one-character edit in the middle (10 MB)", |b| {
        b.iter_batched_ref(
            || tree.clone(),
            |tree| {
                tree.edit(middle..middle, "x").expect("the offset is on a character boundary");
                black_box(tree.chunk_count());
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

criterion_group!(benches, benchmarks);
criterion_main!(benches);
