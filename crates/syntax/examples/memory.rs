//! What a [`volley_syntax::SyntaxTree`] of the 10,000-request benchmark file holds, and
//! what the typed documents of its chunks hold, as bytes per byte of text (the language
//! server keeps both for an open document):
//! `cargo run --release -p volley-syntax --features mimalloc --example memory`.

// A report on stdout; byte counts as f64 are exact far beyond what is measured here.
#![allow(clippy::print_stdout, clippy::cast_precision_loss)]

#[path = "../benches/support/corpus.rs"]
mod corpus;

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

/// mimalloc, counting the bytes held by Rust allocations.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)] // A global allocator is unsafe by nature; it only forwards to mimalloc.
// SAFETY: every call forwards to mimalloc with the same arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HELD.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { mimalloc::MiMalloc.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        HELD.fetch_add(new_size, Ordering::Relaxed);
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as is.
        unsafe { mimalloc::MiMalloc.realloc(pointer, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn held() -> usize {
    HELD.load(Ordering::Relaxed)
}

fn main() {
    // SAFETY: first thing in main, before any tree-sitter object exists.
    #[allow(unsafe_code)]
    unsafe {
        volley_syntax::allocator::use_mimalloc_for_trees();
    };
    let text = corpus::generate();
    let size = text.len() as f64;
    let report = |name: &str, bytes: usize| {
        println!("{name:<52} {:>8.1} MiB  {:>5.2}x the text", bytes as f64 / 1_048_576.0, bytes as f64 / size);
    };
    println!("text: {} bytes", text.len());
    let (rust, trees) = (held(), volley_syntax::allocator::tree_bytes());
    let tree = volley_syntax::SyntaxTree::new(&text);
    report("SyntaxTree: chunk texts, line indexes (Rust)", held() - rust);
    report("SyntaxTree: tree-sitter trees (C)", volley_syntax::allocator::tree_bytes() - trees);
    let rust = held();
    let documents: Vec<_> = (0..tree.chunk_count()).filter_map(|index| tree.chunk_document(index)).collect();
    report("typed documents of the chunks", held() - rust);
    let diagnostics: usize = documents.iter().map(|document| document.diagnostics.len()).sum();
    println!("{} chunks, {diagnostics} diagnostics", documents.len());
    let rust = held();
    let whole = volley_syntax::parse(&text);
    report("typed document of the whole text (parse)", held() - rust);
    drop(whole);
}
