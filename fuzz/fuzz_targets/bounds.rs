//! No input of n bytes costs more than k·n bytes of memory to parse:
//! `cargo +nightly fuzz run bounds`. Rust's allocations and tree-sitter's are counted
//! by `volley_syntax::allocator`; the input is repeated
//! to a few hundred kilobytes, so a shape that is cheap once but costly in bulk shows.
#![no_main]
#![allow(unsafe_code)] // Installing the counting allocator for trees.

use std::sync::Once;

use libfuzzer_sys::fuzz_target;
use volley_syntax::allocator;

#[global_allocator]
static GLOBAL: allocator::Counting = allocator::Counting;

static TREES: Once = Once::new();

/// Memory per byte of text no input may exceed (the worst shapes known take about 330;
/// see crates/syntax/tests/bounds.rs), above a fixed allowance.
const BYTES_PER_BYTE: usize = 600;
const ALLOWANCE: usize = 16 * 1024 * 1024;

fuzz_target!(|data: &[u8]| {
    // SAFETY: before the first parse of the process; `Once` keeps it to one call.
    TREES.call_once(|| unsafe { allocator::use_mimalloc_for_trees() });
    if data.is_empty() {
        return;
    }
    let unit = String::from_utf8_lossy(data);
    let text = unit.repeat((256 * 1024 / unit.len()).max(1));
    let (rust_before, trees_before) = (allocator::rust_bytes(), allocator::tree_bytes());
    allocator::reset_rust_peak();
    allocator::reset_tree_peak();
    let document = volley_syntax::parse(&text);
    drop(document);
    let used = allocator::rust_peak() - rust_before + allocator::tree_peak() - trees_before;
    assert!(
        used <= BYTES_PER_BYTE * text.len() + ALLOWANCE,
        "{used} bytes to parse {} bytes ({:?} repeated)",
        text.len(),
        unit
    );
});
