//! Writing to stdout when the reader may go away (`volley run … | head`): a closed
//! pipe ends the output quietly instead of a panic, and the run goes on to its reports
//! and exit code.
//!
//! Within [`captured`] (a file of `volley run --jobs N` running beside others) lines
//! are kept instead, stdout's and stderr's in their order, and [`replay`] writes them
//! later: each file's output stays together and files keep their order.

use std::cell::RefCell;
use std::future::Future;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// A line kept by [`captured`], with its line break.
#[derive(Debug)]
pub(crate) enum Captured {
    Out(String),
    Err(String),
}

tokio::task_local! {
    static CAPTURE: RefCell<Vec<Captured>>;
}

/// Runs `future` keeping what it writes through [`line()`] and [`error_line()`].
pub(crate) async fn captured<F: Future>(future: F) -> (F::Output, Vec<Captured>) {
    CAPTURE
        .scope(RefCell::new(Vec::new()), async {
            let output = future.await;
            let lines = CAPTURE.with(RefCell::take);
            (output, lines)
        })
        .await
}

/// Writes what [`captured`] kept, each line to the stream it was written to; within
/// another [`captured`] scope (a file of `--jobs`), keeps them there.
pub(crate) fn replay(lines: Vec<Captured>) {
    for line in lines {
        let mut line = Some(line);
        let _ = CAPTURE.try_with(|kept| kept.borrow_mut().extend(line.take()));
        let Some(line) = line else { continue };
        match line {
            Captured::Out(text) => out(&text),
            Captured::Err(text) => {
                let mut stderr = anstream::stderr().lock();
                let _ = stderr.write_all(text.as_bytes()).and_then(|()| stderr.flush());
            }
        }
    }
}

/// Keeps `text` when a [`captured`] scope is open; `false` when there is none.
fn keep(line: impl FnOnce() -> Captured) -> bool {
    CAPTURE.try_with(|kept| kept.borrow_mut().push(line())).is_ok()
}

/// Writes `text` and a line break to stdout (styles stripped when colour is off).
pub(crate) fn line(text: &str) {
    if keep(|| Captured::Out(format!("{text}\n"))) {
        return;
    }
    out(&format!("{text}\n"));
}

/// Writes `text` and a line break to stderr (styles stripped when colour is off).
pub(crate) fn error_line(text: &str) {
    if keep(|| Captured::Err(format!("{text}\n"))) {
        return;
    }
    anstream::eprintln!("{text}");
}

fn out(text: &str) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = anstream::stdout().lock();
    if stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).is_err() {
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
