//! The workspace's lock-poisoning policy (docs/ARCHITECTURE.md), as in the engine: a
//! poisoned lock only means that another thread panicked while holding it; the state it
//! guards stays valid (every update leaves it whole), so the value is recovered and
//! used, never skipped.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, recovering the value after a poison.
pub(crate) fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
