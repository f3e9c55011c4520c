//! Tree-sitter's C allocations through mimalloc (feature `mimalloc`).
//!
//! Parsing allocates many small tree nodes; with glibc's allocator that is a fifth of the
//! parse time on large files. A binary that uses mimalloc as its global allocator calls
//! [`use_mimalloc_for_trees`] first thing in `main` so that the trees use it too.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The bytes tree-sitter holds at the moment (trees, parse stacks), once
/// [`use_mimalloc_for_trees`] routes its allocations here: what a memory budget on
/// parsing ([`crate::Budget::tree_bytes`]) compares with.
static TREE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// The most [`TREE_BYTES`] held at once since [`reset_tree_peak`].
static TREE_PEAK: AtomicUsize = AtomicUsize::new(0);

/// The most bytes tree-sitter held at once since the last [`reset_tree_peak`] (for
/// tests and measurements of what parsing costs).
#[must_use]
pub fn tree_peak() -> usize {
    TREE_PEAK.load(Ordering::Relaxed)
}

/// Starts a new [`tree_peak`] from what tree-sitter holds now.
pub fn reset_tree_peak() {
    TREE_PEAK.store(tree_bytes(), Ordering::Relaxed);
}

/// How many bytes tree-sitter holds now, in the whole process (0 until
/// [`use_mimalloc_for_trees`] is called).
#[must_use]
pub fn tree_bytes() -> usize {
    TREE_BYTES.load(Ordering::Relaxed)
}

/// Gives the memory mimalloc holds free back to the system now, instead of when later
/// allocations get to it: for a long-lived process after work that freed much (the
/// language server after parsing or copying a large document), whose pages would
/// otherwise stay resident. Does nothing useful unless mimalloc is the allocator.
pub fn release_free_memory() {
    #[allow(unsafe_code)] // A call into mimalloc's C API.
    // SAFETY: mi_collect may be called from any thread at any time.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

/// Routes tree-sitter's allocations to mimalloc.
///
/// # Safety
/// Call it once, before anything in the process uses tree-sitter (no parser, tree or
/// query may exist yet), and not concurrently with other threads using tree-sitter.
#[allow(unsafe_code)] // Installing C allocator functions is inherently unsafe.
pub unsafe fn use_mimalloc_for_trees() {
    let allocator = tree_sitter::Allocator { malloc, calloc, realloc, free };
    // SAFETY: the four functions are one allocator family with malloc's alignment; the
    // caller guarantees no tree-sitter object exists yet.
    unsafe { tree_sitter::set_allocator(Some(allocator)) };
}

/// Counts the block at `pointer` (null counts nothing) as taken.
#[allow(unsafe_code)] // Reads mimalloc's size of a block it gave out.
fn taken(pointer: *mut c_void) -> *mut c_void {
    if !pointer.is_null() {
        // SAFETY: `pointer` is a live block from mimalloc.
        let size = unsafe { libmimalloc_sys::mi_usable_size(pointer) };
        let now = TREE_BYTES.fetch_add(size, Ordering::Relaxed) + size;
        // Not exact under races between threads; close enough for a peak.
        if now > TREE_PEAK.load(Ordering::Relaxed) {
            TREE_PEAK.store(now, Ordering::Relaxed);
        }
    }
    pointer
}

/// Counts the block at `pointer` (null counts nothing) as given back.
#[allow(unsafe_code)] // Reads mimalloc's size of a block it gave out.
fn given_back(pointer: *mut c_void) {
    if !pointer.is_null() {
        // SAFETY: `pointer` is a live block from mimalloc, not yet freed.
        TREE_BYTES.fetch_sub(unsafe { libmimalloc_sys::mi_usable_size(pointer) }, Ordering::Relaxed);
    }
}

/// `malloc` on mimalloc, counted.
#[allow(unsafe_code)] // An allocator entry point for C.
unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    // SAFETY: mi_malloc accepts any size and returns null on failure.
    taken(unsafe { libmimalloc_sys::mi_malloc(size) })
}

/// `calloc` on mimalloc: zeroed memory, null on overflow; counted.
#[allow(unsafe_code)] // An allocator entry point for C.
unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
    match count.checked_mul(size) {
        // SAFETY: mi_zalloc accepts any size and returns null on failure.
        Some(total) => taken(unsafe { libmimalloc_sys::mi_zalloc(total) }),
        None => std::ptr::null_mut(),
    }
}

/// `realloc` on mimalloc, counted.
#[allow(unsafe_code)] // An allocator entry point for C.
unsafe extern "C" fn realloc(pointer: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: `pointer` is null or a live block from these functions.
    let before = if pointer.is_null() { 0 } else { unsafe { libmimalloc_sys::mi_usable_size(pointer) } };
    // SAFETY: as above; on failure mi_realloc leaves the block as it was.
    let moved = unsafe { libmimalloc_sys::mi_realloc(pointer, size) };
    if !moved.is_null() {
        TREE_BYTES.fetch_sub(before, Ordering::Relaxed);
        taken(moved);
    }
    moved
}

/// `free` on mimalloc, counted.
#[allow(unsafe_code)] // An allocator entry point for C.
unsafe extern "C" fn free(pointer: *mut c_void) {
    given_back(pointer);
    // SAFETY: `pointer` is null or a live block from these functions.
    unsafe { libmimalloc_sys::mi_free(pointer) }
}

/// mimalloc as Rust's global allocator: `#[global_allocator] static GLOBAL: Mimalloc =
/// Mimalloc;`. A layout that `malloc`'s own alignment already meets (at most 16 bytes,
/// and not more than its size) goes to `mi_malloc`, the rest to mimalloc's aligned
/// calls. The `mimalloc` crate's allocator sends every layout to the aligned calls,
/// whose path when a size class has no free block at hand over-allocates by the
/// alignment and looks again: 5 % of the instructions of a `volley run` of 1,000 GETs
/// (docs/benchmarks.md).
#[derive(Debug, Clone, Copy, Default)]
pub struct Mimalloc;

/// What `mi_malloc` guarantees for a block of at least this size (`MI_MAX_ALIGN_SIZE`).
const MALLOC_ALIGNMENT: usize = 16;

/// Whether `mi_malloc` of `size` bytes is aligned enough for `align`.
const fn malloc_aligns(align: usize, size: usize) -> bool {
    align <= MALLOC_ALIGNMENT && align <= size
}

// SAFETY: every block comes from mimalloc with at least the layout's alignment: either
// the aligned calls, or `mi_malloc`/`mi_zalloc`/`mi_realloc` for layouts whose alignment
// `malloc` guarantees (`malloc_aligns`); all are freed by `mi_free`.
#[allow(unsafe_code)] // A global allocator.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        // SAFETY: any size; the alignment is a power of two (a `Layout`'s is).
        unsafe {
            if malloc_aligns(align, size) {
                libmimalloc_sys::mi_malloc(size).cast()
            } else {
                libmimalloc_sys::mi_malloc_aligned(size, align).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        // SAFETY: as in `alloc`.
        unsafe {
            if malloc_aligns(align, size) {
                libmimalloc_sys::mi_zalloc(size).cast()
            } else {
                libmimalloc_sys::mi_zalloc_aligned(size, align).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, pointer: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: the caller's block, from this allocator.
        unsafe { libmimalloc_sys::mi_free(pointer.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, pointer: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        // SAFETY: the caller's block, from this allocator; mimalloc keeps the alignment
        // it is given (`mi_realloc`: malloc's, enough for `align` at `new_size`).
        unsafe {
            if malloc_aligns(align, new_size) {
                libmimalloc_sys::mi_realloc(pointer.cast(), new_size).cast()
            } else {
                libmimalloc_sys::mi_realloc_aligned(pointer.cast(), new_size, align).cast()
            }
        }
    }
}

/// A global allocator that passes everything on to [`Mimalloc`] and counts the bytes Rust
/// holds, for tests and measurements of what parsing costs (with [`tree_peak`], the
/// whole of it): `#[global_allocator] static GLOBAL: Counting = Counting;`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

static RUST_BYTES: AtomicUsize = AtomicUsize::new(0);
static RUST_PEAK: AtomicUsize = AtomicUsize::new(0);

/// How many bytes Rust holds now, counted by [`Counting`].
#[must_use]
pub fn rust_bytes() -> usize {
    RUST_BYTES.load(Ordering::Relaxed)
}

/// The most bytes Rust held at once since the last [`reset_rust_peak`].
#[must_use]
pub fn rust_peak() -> usize {
    RUST_PEAK.load(Ordering::Relaxed)
}

/// Starts a new [`rust_peak`] from what Rust holds now.
pub fn reset_rust_peak() {
    RUST_PEAK.store(rust_bytes(), Ordering::Relaxed);
}

fn rust_taken(size: usize) {
    let now = RUST_BYTES.fetch_add(size, Ordering::Relaxed) + size;
    RUST_PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed on to [`Mimalloc`] unchanged; only sizes are counted.
#[allow(unsafe_code)] // A global allocator.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        rust_taken(layout.size());
        // SAFETY: the caller's layout, passed on.
        unsafe { Mimalloc.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: std::alloc::Layout) {
        RUST_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's block, from `alloc`.
        unsafe { Mimalloc.dealloc(pointer, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        rust_taken(layout.size());
        // SAFETY: the caller's layout, passed on.
        unsafe { Mimalloc.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        RUST_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        rust_taken(new_size);
        // SAFETY: the caller's block, from `alloc`, with its layout.
        unsafe { Mimalloc.realloc(pointer, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::{GlobalAlloc as _, Layout};

    /// Every block [`super::Mimalloc`] gives has its layout's alignment, on the plain
    /// path (alignments up to 16 at sizes from the alignment up) and the aligned one
    /// (larger alignments, sizes below the alignment), through `realloc` to larger and
    /// smaller sizes too, with the bytes kept; `alloc_zeroed` gives zeros.
    #[test]
    #[allow(unsafe_code)] // Calls of a global allocator.
    fn blocks_have_their_layouts_alignment() {
        let allocator = super::Mimalloc;
        let aligned = |pointer: *mut u8, align: usize| {
            assert!(!pointer.is_null());
            assert_eq!(pointer as usize % align, 0, "alignment {align}");
        };
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 3, 7, 8, 12, 15, 16, 24, 33, 100, 1000, 70_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; each block is written within its size and freed once.
                unsafe {
                    let zeroed = allocator.alloc_zeroed(layout);
                    aligned(zeroed, align);
                    assert!(std::slice::from_raw_parts(zeroed, size).iter().all(|byte| *byte == 0));
                    allocator.dealloc(zeroed, layout);
                    let block = allocator.alloc(layout);
                    aligned(block, align);
                    for index in 0..size {
                        block.add(index).write(index as u8);
                    }
                    let grown = allocator.realloc(block, layout, size * 3);
                    aligned(grown, align);
                    let kept = |pointer: *mut u8, length: usize| {
                        (0..length).all(|index| pointer.add(index).read() == index as u8)
                    };
                    assert!(kept(grown, size));
                    let smaller = size.div_ceil(2);
                    let shrunk = allocator.realloc(grown, Layout::from_size_align(size * 3, align).unwrap(), smaller);
                    aligned(shrunk, align);
                    assert!(kept(shrunk, smaller));
                    allocator.dealloc(shrunk, Layout::from_size_align(smaller, align).unwrap());
                }
            }
        }
    }
}
