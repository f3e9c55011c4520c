//! Tree-sitter's C allocations through mimalloc (feature `mimalloc`).
//!
//! Parsing allocates many small tree nodes; with glibc's allocator that is a fifth of the
//! parse time on large files. A binary that uses mimalloc as its global allocator calls
//! [`use_mimalloc_for_trees`] first thing in `main` so that the trees use it too.

use std::ffi::c_void;

/// Routes tree-sitter's allocations to mimalloc.
///
/// # Safety
/// Call it once, before anything in the process uses tree-sitter (no parser, tree or
/// query may exist yet), and not concurrently with other threads using tree-sitter.
#[allow(unsafe_code)] // Installing C allocator functions is inherently unsafe.
pub unsafe fn use_mimalloc_for_trees() {
    let allocator = tree_sitter::Allocator {
        malloc: libmimalloc_sys::mi_malloc,
        calloc,
        realloc: libmimalloc_sys::mi_realloc,
        free: libmimalloc_sys::mi_free,
    };
    // SAFETY: the four functions are one allocator family with malloc's alignment; the
    // caller guarantees no tree-sitter object exists yet.
    unsafe { tree_sitter::set_allocator(Some(allocator)) };
}

/// `calloc` on mimalloc: zeroed memory, null on overflow.
#[allow(unsafe_code)] // An allocator entry point for C.
unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
    match count.checked_mul(size) {
        // SAFETY: mi_zalloc accepts any size and returns null on failure.
        Some(total) => unsafe { libmimalloc_sys::mi_zalloc(total) },
        None => std::ptr::null_mut(),
    }
}
