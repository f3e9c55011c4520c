//! Parser benchmarks on a generated 10 MB file of 10,000 varied requests.
//!
//! - `full parse + typed model`: `volley_syntax::parse` on the whole file (throughput in
//!   MB/s).
//! - `incremental reparse`: one character typed in the middle of the file, then the
//!   tree-sitter reparse that reuses the previous tree (`SyntaxTree::edit`).
//!
//! Run: `cargo bench -p volley-syntax --features mimalloc --bench parse` (the allocator
//! the `volley` binary uses; without the feature, glibc's). Figures go to
//! docs/benchmarks.md.

use std::hint::black_box;

// With `--features mimalloc`, measured with the allocator the `volley` binary uses.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use volley_syntax::SyntaxTree;

#[path = "support/corpus.rs"]
mod corpus;

use corpus::{REQUESTS, generate};

fn benchmarks(c: &mut Criterion) {
    #[cfg(feature = "mimalloc")]
    #[allow(unsafe_code)] // Before any tree-sitter use, as the function requires.
    // SAFETY: nothing has touched tree-sitter yet in this process.
    unsafe {
        volley_syntax::allocator::use_mimalloc_for_trees();
    }
    let text = generate();
    let document = volley_syntax::parse(&text);
    assert_eq!(document.requests().count(), REQUESTS, "every generated request parses");
    assert!(!document.has_errors(), "the generated file is valid: {:?}", document.diagnostics.first());

    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    // Dropping the result is left out of the timings (criterion's `iter_with_large_drop`):
    // the figures are the cost of building a document. The timing example reports drops.
    group.bench_function("full parse + typed model (10 MB, 10k requests)", |b| {
        b.iter_with_large_drop(|| volley_syntax::parse(black_box(&text)));
    });
    group.bench_function("syntax trees only, no typed model (10 MB)", |b| {
        b.iter_with_large_drop(|| SyntaxTree::new(black_box(text.as_str())));
    });
    group.finish();

    let mut group = c.benchmark_group("incremental");
    let middle = text.len() / 2;
    let middle = (middle..text.len()).find(|&offset| text.is_char_boundary(offset)).unwrap_or(middle);
    let chunked = SyntaxTree::new(text.clone());
    group.bench_function("reparse after a one-character edit in the middle (10 MB)", |b| {
        edit_in_the_middle(b, &chunked, middle);
    });
    // For comparison, the same edit with the whole file in one tree-sitter tree: what
    // the chunks avoid (tree-sitter reuses the unchanged blocks one by one).
    let single = SyntaxTree::with_chunk_size(text.clone(), usize::MAX);
    assert_eq!(single.chunk_count(), 1);
    group.sample_size(20);
    group.bench_function("same edit, whole file in one tree (10 MB)", |b| edit_in_the_middle(b, &single, middle));
    group.finish();
}

/// Times one character typed at `offset`; cloning the tree before each edit is not timed.
fn edit_in_the_middle(b: &mut criterion::Bencher<'_>, tree: &SyntaxTree, offset: usize) {
    b.iter_batched_ref(
        || tree.clone(),
        |tree| {
            tree.edit(offset..offset, "x").expect("the offset is on a character boundary");
            black_box(tree.chunk_count());
        },
        BatchSize::LargeInput,
    );
}

criterion_group!(benches, benchmarks);
criterion_main!(benches);
