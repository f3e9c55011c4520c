//! Limits on one parse ([`crate::parse_within`]): a deadline, and the bytes tree-sitter
//! may hold. The parse gives up as soon as either is exceeded.
//!
//! The budget is kept per thread while a parse runs on it (every thread that parses
//! chunks of the text enters it), so tree-sitter's progress callback and the lowering
//! loop can look at it without a parameter threaded through every function.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

/// What one parse may cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// When the parse must be done.
    pub deadline: Option<Instant>,
    /// The most bytes tree-sitter may hold while it runs, counted in the whole process
    /// (so two parses at once share it). Only counted in a process whose tree-sitter
    /// allocations go through [`crate::allocator::use_mimalloc_for_trees`] (feature
    /// `mimalloc`); elsewhere it is not checked.
    pub tree_bytes: Option<usize>,
}

/// How long parsing one text may take, by default, in every front end (the execution
/// server, `volley check`): real files parse at tens of megabytes a second, so only text
/// made to be slow comes near it.
pub const DEFAULT_PARSE_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// How many bytes of syntax trees the texts being parsed may take at once, by default: a
/// real file of 10 MiB needs about 100 MiB.
pub const DEFAULT_PARSE_MEMORY: usize = 512 * 1024 * 1024;

impl Budget {
    /// The default budget, its deadline counted from now.
    #[must_use]
    pub fn standard() -> Self {
        Self { deadline: Some(Instant::now() + DEFAULT_PARSE_TIME), tree_bytes: Some(DEFAULT_PARSE_MEMORY) }
    }
}

/// Which limit a parse went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    /// The deadline passed.
    Time,
    /// Tree-sitter held more than [`Budget::tree_bytes`].
    Memory,
}

/// What to look for in a text over the parse budget, for every front end that says so.
pub const PARSE_BUDGET_HINT: &str =
    "a real `.http` file parses in milliseconds: look for pasted binary or generated text (megabytes of short lines)";

impl Exceeded {
    /// Why a text was not read, for [`Budget::standard`]: "parsing it took longer than
    /// 5 s, the parse budget".
    #[must_use]
    pub fn standard_reason(self) -> String {
        match self {
            Exceeded::Time => {
                format!("parsing it took longer than {} s, the parse budget", DEFAULT_PARSE_TIME.as_secs())
            }
            Exceeded::Memory => format!(
                "parsing it needed more than {} MiB of syntax trees, the parse budget",
                DEFAULT_PARSE_MEMORY / (1024 * 1024)
            ),
        }
    }
}

thread_local! {
    static ACTIVE: RefCell<Option<Active>> = const { RefCell::new(None) };
}

/// The budget of a running parse, shared by the threads it runs on: once one of them
/// finds a limit exceeded, the parse stays over budget (memory goes down again as the
/// cut-short trees are dropped, but the document is incomplete).
#[derive(Debug, Clone)]
pub(crate) struct Active {
    budget: Budget,
    tripped: Arc<AtomicU8>,
}

const NOT_TRIPPED: u8 = 0;
const TIME: u8 = 1;
const MEMORY: u8 = 2;

/// The budget of the parse on this thread, until dropped.
pub(crate) struct Entered {
    previous: Option<Active>,
}

/// Starts a parse within `budget` on this thread.
pub(crate) fn start(budget: Budget) -> Entered {
    enter(Some(Active { budget, tripped: Arc::new(AtomicU8::new(NOT_TRIPPED)) }))
}

/// Makes `active` the budget of the parse on this thread until the guard is dropped.
pub(crate) fn enter(active: Option<Active>) -> Entered {
    Entered { previous: ACTIVE.with(|cell| cell.replace(active)) }
}

impl Drop for Entered {
    fn drop(&mut self) {
        ACTIVE.with(|cell| *cell.borrow_mut() = self.previous.take());
    }
}

/// The budget of this thread's parse, for the threads it starts.
pub(crate) fn current() -> Option<Active> {
    ACTIVE.with(|cell| cell.borrow().clone())
}

/// `true` when this thread parses within a budget.
pub(crate) fn is_active() -> bool {
    ACTIVE.with(|cell| cell.borrow().is_some())
}

/// Which limit of this thread's parse is exceeded, if any (for good, once found).
pub(crate) fn exceeded() -> Option<Exceeded> {
    ACTIVE.with(|cell| {
        let active = cell.borrow();
        let active = active.as_ref()?;
        match active.tripped.load(Ordering::Relaxed) {
            TIME => return Some(Exceeded::Time),
            MEMORY => return Some(Exceeded::Memory),
            _ => {}
        }
        let found = if active.budget.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            Some(Exceeded::Time)
        } else if over_memory(active.budget) {
            Some(Exceeded::Memory)
        } else {
            None
        };
        if let Some(found) = found {
            let code = if found == Exceeded::Time { TIME } else { MEMORY };
            let _ = active.tripped.compare_exchange(NOT_TRIPPED, code, Ordering::Relaxed, Ordering::Relaxed);
        }
        found
    })
}

#[cfg(feature = "mimalloc")]
fn over_memory(budget: Budget) -> bool {
    budget.tree_bytes.is_some_and(|limit| crate::allocator::tree_bytes() > limit)
}

#[cfg(not(feature = "mimalloc"))]
fn over_memory(_: Budget) -> bool {
    false
}

/// For tree-sitter's progress callback: stop once a limit is exceeded.
pub(crate) fn progress() -> ControlFlow<()> {
    if exceeded().is_some() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
}
