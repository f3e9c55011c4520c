//! A script's deadline: the clock a runtime's interrupt handler reads, so that a script
//! (an endless loop, a catastrophic regular expression) stops at its time limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rquickjs::Runtime;

/// A script's deadline, read by a runtime's interrupt handler.
pub(super) struct Clock {
    start: Instant,
    /// Nanoseconds from `start`.
    deadline: AtomicU64,
    /// Set when the handler stopped a script.
    pub(super) interrupted: AtomicBool,
}

impl Clock {
    /// A clock for `runtime`, its interrupt handler installed, the deadline passed.
    pub(super) fn install(runtime: &Runtime) -> Arc<Self> {
        let clock =
            Arc::new(Self { start: Instant::now(), deadline: AtomicU64::new(0), interrupted: AtomicBool::new(false) });
        let shared = Arc::clone(&clock);
        runtime.set_interrupt_handler(Some(Box::new(move || {
            let late = shared.nanos(Instant::now()) >= shared.deadline.load(Ordering::Relaxed);
            if late {
                shared.interrupted.store(true, Ordering::Relaxed);
            }
            late
        })));
        clock
    }

    /// Starts the time of the next script.
    pub(super) fn start(&self, timeout: Duration) {
        self.deadline.store(self.nanos(Instant::now() + timeout), Ordering::Relaxed);
        self.interrupted.store(false, Ordering::Relaxed);
    }

    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.start).as_nanos()).unwrap_or(u64::MAX)
    }
}
