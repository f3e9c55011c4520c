//! What parsing costs on text made to be costly: for each shape, the memory (Rust's
//! allocations and tree-sitter's, at their peak) and the time grow linearly with the
//! size of the text, with a small constant.
//!
//! Memory is counted, not sampled: this binary's global allocator
//! (`volley_syntax::allocator::Counting`) counts every Rust allocation, and tree-sitter's
//! go through `volley_syntax::allocator`, which counts them too. Time bounds are generous (ten times what was measured), so they only catch a
//! cost that grows faster than the text.

#![allow(unsafe_code)] // Installing the counting allocator for trees.

use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use volley_syntax::allocator;

#[global_allocator]
static GLOBAL: allocator::Counting = allocator::Counting;

static TREES: Once = Once::new();

/// The counts are of the whole process: one test measures at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Tree-sitter's allocations through the counting functions, before any parse of this
/// process (every test calls it first).
fn count_trees() {
    // SAFETY: no tree-sitter object exists before the first call, and `Once` makes the
    // other callers wait until it is done.
    TREES.call_once(|| unsafe { allocator::use_mimalloc_for_trees() });
}

/// The peak memory (Rust and trees) and the time of parsing `text`, and the document's
/// number of diagnostics.
fn cost(text: &str) -> (usize, Duration, usize) {
    count_trees();
    let (rust_before, trees_before) = (allocator::rust_bytes(), allocator::tree_bytes());
    allocator::reset_rust_peak();
    allocator::reset_tree_peak();
    let started = Instant::now();
    let document = volley_syntax::parse(text);
    let elapsed = started.elapsed();
    let diagnostics = document.diagnostics.len();
    drop(document);
    let rust = allocator::rust_peak() - rust_before;
    let trees = allocator::tree_peak() - trees_before;
    (rust + trees, elapsed, diagnostics)
}

/// The shapes of text that cost the most per byte, each `size` bytes long or about.
fn shapes(size: usize) -> Vec<(&'static str, String)> {
    let fill = |prefix: &str, unit: &str| format!("{prefix}{}", unit.repeat(size / unit.len()));
    vec![
        ("`{{` in a URL", fill("GET http://127.0.0.1:1/", "{{")),
        ("`{{ ` in a URL", fill("GET http://127.0.0.1:1/", "{{ ")),
        ("`> {%` lines", fill("GET http://127.0.0.1:1/\n\n", "> {%\n")),
        ("`###` lines", fill("", "###\n")),
        ("form-feed lines", fill("", "\u{c}\n")),
        ("lone `@` lines", fill("", "@\n")),
        ("header lines", fill("GET http://127.0.0.1:1/\n", "X-A: y\n")),
        ("unclosed `{{` lines", fill("GET http://127.0.0.1:1/\n\n", "{{a\n")),
        ("a realistic file", realistic(size)),
    ]
}

fn realistic(size: usize) -> String {
    let request = "### Create {{name}}\n# @name create\nPOST {{host}}/users?page=1\nContent-Type: application/json\nAuthorization: Bearer {{token}}\n\n{\"name\": \"{{name}}\", \"id\": \"{{$uuid}}\", \"tags\": [1, 2, 3]}\n\n";
    request.repeat(size / request.len())
}

/// Bytes of memory per byte of text that no shape may exceed, above a fixed allowance.
/// The worst shapes measured take about a third of it (tree-sitter's nodes for text
/// that is one token every byte or two, and the typed model's parts).
const BYTES_PER_BYTE: usize = 600;
const ALLOWANCE: usize = 16 * 1024 * 1024;

#[test]
fn every_shape_costs_memory_and_time_linear_in_its_size() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let small = 64 * 1024;
    let large = 4 * small;
    for ((name, small_text), (_, large_text)) in shapes(small).into_iter().zip(shapes(large)) {
        let (small_bytes, small_time, _) = cost(&small_text);
        let (large_bytes, large_time, diagnostics) = cost(&large_text);
        eprintln!(
            "{name}: {} bytes: {small_bytes} bytes, {small_time:?}; {} bytes: {large_bytes} bytes, {large_time:?}",
            small_text.len(),
            large_text.len()
        );
        assert!(
            large_bytes <= BYTES_PER_BYTE * large_text.len() + ALLOWANCE,
            "{name}: {large_bytes} bytes of memory for {} bytes of text",
            large_text.len()
        );
        // Four times the text costs about four times as much: a quadratic path would
        // cost sixteen.
        assert!(large_bytes <= 6 * small_bytes + ALLOWANCE, "{name}: memory grew from {small_bytes} to {large_bytes}");
        assert!(
            large_time <= 8 * small_time + Duration::from_millis(250),
            "{name}: time grew from {small_time:?} to {large_time:?}"
        );
        // Two hundred of each code at most, and a count: a handful of codes apply.
        assert!(diagnostics <= 5 * (volley_syntax::MAX_LISTED + 1), "{name}: {diagnostics} diagnostics");
    }
}

#[test]
fn a_parse_over_its_budget_stops_early() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    count_trees();
    let text = "{{".repeat(2 * 1024 * 1024);
    let text = format!("GET http://127.0.0.1:1/{text}");
    // Memory: far less than the text's trees need.
    let budget = volley_syntax::Budget { deadline: None, tree_bytes: Some(8 * 1024 * 1024) };
    let started = Instant::now();
    assert_eq!(volley_syntax::parse_within(&text, budget), Err(volley_syntax::Exceeded::Memory));
    let memory_stop = started.elapsed();
    // Time: a deadline already passed.
    let budget = volley_syntax::Budget { deadline: Some(Instant::now()), tree_bytes: None };
    assert_eq!(volley_syntax::parse_within(&text, budget), Err(volley_syntax::Exceeded::Time));
    // Within its budget, the same text parses.
    let started = Instant::now();
    let whole = volley_syntax::parse_within(&text, volley_syntax::Budget::default()).expect("no limit");
    let full = started.elapsed();
    assert_eq!(whole.requests().count(), 1);
    assert!(memory_stop < full, "stopping at the memory limit ({memory_stop:?}) is no faster than parsing ({full:?})");
}
