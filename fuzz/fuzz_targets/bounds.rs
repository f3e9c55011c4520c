//! No input of n bytes costs more than k·n bytes of memory to parse:
//! `cargo +nightly fuzz run bounds`. Rust's allocations are counted by this binary's
//! global allocator, tree-sitter's by `volley_syntax::allocator`; the input is repeated
//! to a few hundred kilobytes, so a shape that is cheap once but costly in bulk shows.
#![no_main]
#![allow(unsafe_code)] // A counting global allocator.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

use libfuzzer_sys::fuzz_target;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn note(size: usize) {
    let now = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed on to mimalloc unchanged; only sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's layout, passed on.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }
    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's block and layout, passed on.
        unsafe { mimalloc::MiMalloc.dealloc(pointer, layout) }
    }
    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        note(new_size);
        // SAFETY: the caller's block, layout and size, passed on.
        unsafe { mimalloc::MiMalloc.realloc(pointer, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

static TREES: Once = Once::new();

/// Memory per byte of text no input may exceed (the worst shapes known take about 330;
/// see crates/syntax/tests/bounds.rs), above a fixed allowance.
const BYTES_PER_BYTE: usize = 600;
const ALLOWANCE: usize = 16 * 1024 * 1024;

fuzz_target!(|data: &[u8]| {
    // SAFETY: before the first parse of the process; `Once` keeps it to one call.
    TREES.call_once(|| unsafe { volley_syntax::allocator::use_mimalloc_for_trees() });
    if data.is_empty() {
        return;
    }
    let unit = String::from_utf8_lossy(data);
    let text = unit.repeat((256 * 1024 / unit.len()).max(1));
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    volley_syntax::allocator::reset_tree_peak();
    let trees_before = volley_syntax::allocator::tree_bytes();
    let document = volley_syntax::parse(&text);
    drop(document);
    let used = PEAK.load(Ordering::Relaxed) - before + volley_syntax::allocator::tree_peak() - trees_before;
    assert!(
        used <= BYTES_PER_BYTE * text.len() + ALLOWANCE,
        "{used} bytes to parse {} bytes ({:?} repeated)",
        text.len(),
        unit
    );
});
