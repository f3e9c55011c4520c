//! Times the phases of parsing a file: `cargo run --release -p volley-syntax --example timing -- FILE`.

// Throughput figures: a file size as f64 is exact far beyond any text we parse.
#![allow(clippy::cast_precision_loss)]

use std::time::Instant;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    #[cfg(feature = "mimalloc")]
    #[allow(unsafe_code)] // Before any tree-sitter use, as the function requires.
    // SAFETY: nothing has touched tree-sitter yet in this process.
    unsafe {
        volley_syntax::allocator::use_mimalloc_for_trees();
    }
    let path = std::env::args().nth(1).expect("usage: timing FILE");
    let text = std::fs::read_to_string(path).expect("readable UTF-8 file");
    // `parse()` first: its first round is what a fresh process (`volley check`) pays,
    // with every page of memory new to it; the later rounds reuse freed memory.
    for round in 0..3 {
        let start = Instant::now();
        let document = volley_syntax::parse(&text);
        let elapsed = start.elapsed();
        let when = if round == 0 { "first in the process" } else { "again" };
        eprintln!(
            "parse() {when}: {elapsed:?} ({:.1} MB/s), {} requests",
            text.len() as f64 / 1e6 / elapsed.as_secs_f64(),
            document.requests().count()
        );
    }
    for _ in 0..3 {
        let start = Instant::now();
        let tree = volley_syntax::SyntaxTree::new(text.as_str());
        let parsed = start.elapsed();
        let start = Instant::now();
        let document = tree.document();
        let lowered = start.elapsed();
        let start = Instant::now();
        drop(document);
        let dropped_document = start.elapsed();
        let start = Instant::now();
        drop(tree);
        let dropped_tree = start.elapsed();
        let mb = text.len() as f64 / 1e6;
        eprintln!(
            "tree-sitter {parsed:?} ({:.1} MB/s), lowering {lowered:?}, drop document {dropped_document:?}, drop tree {dropped_tree:?}",
            mb / parsed.as_secs_f64()
        );
    }
    let mut tree = volley_syntax::SyntaxTree::new(text.as_str());
    let middle = (text.len() / 2..text.len()).find(|&offset| text.is_char_boundary(offset)).unwrap_or(0);
    for round in 0..5 {
        let start = Instant::now();
        tree.edit(middle..middle, "x").expect("valid edit");
        let edited = start.elapsed();
        eprintln!("edit {round}: {edited:?}");
    }
}
