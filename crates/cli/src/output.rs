//! Writing to stdout when the reader may go away (`volley run … | head`): a closed
//! pipe ends the output quietly instead of a panic, and the run goes on to its reports
//! and exit code.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` and a line break to stdout (styles stripped when colour is off).
pub(crate) fn line(text: &str) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = anstream::stdout().lock();
    if writeln!(stdout, "{text}").and_then(|()| stdout.flush()).is_err() {
        CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Writes bytes to stdout as they are.
pub(crate) fn raw(bytes: &[u8]) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(bytes).and_then(|()| stdout.flush()).is_err() {
        CLOSED.store(true, Ordering::Relaxed);
    }
}
