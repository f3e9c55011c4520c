//! The question before a request with a `# @note` is sent: the note on stderr, the
//! answer from the terminal.

use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _, Write as _};

use anstyle::{AnsiColor, Style};
use volley_engine::CancellationToken;
use volley_syntax::Request;

use super::select::File;

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const YELLOW: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));

/// What came of the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// `y` or `yes`.
    Yes,
    /// Anything else, an empty line or the end of input.
    No,
    /// Ctrl-C while waiting.
    Interrupted,
}

/// `true` when a question can be asked: stdin is a terminal.
pub(crate) fn can_ask() -> bool {
    std::io::stdin().is_terminal()
}

/// Shows the note of `request` (name, method, URL as written, note text) and asks
/// `send? [y/N]` on stderr; the answer is a line of stdin. Ctrl-C (`interrupt`) ends
/// the wait.
pub(crate) async fn ask(file: &File, request: &Request, title: &str, interrupt: &CancellationToken) -> Answer {
    let line = request.line_span.start_position.line + 1;
    let mut question = format!(
        "{YELLOW}note{YELLOW:#}: {BOLD}{title}{BOLD:#} {DIM}· {}:{line}{DIM:#}\n  {} {}\n",
        file.shown,
        request.method.value,
        request.url.to_source()
    );
    if let Some(note) = request.note.as_ref().filter(|note| !note.value.is_empty()) {
        let _ = writeln!(question, "  {}", note.value);
    }
    question.push_str("send? [y/N] ");
    let mut stderr = anstream::stderr();
    let _ = write!(stderr, "{question}");
    let _ = stderr.flush();
    // A thread of its own: a blocking read must not keep Ctrl-C from ending the wait,
    // and a detached thread does not keep the process from exiting.
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut answer = String::new();
        let read = std::io::stdin().lock().read_line(&mut answer);
        let _ = sender.send(read.map(|_| answer));
    });
    tokio::select! {
        answer = receiver => match answer {
            Ok(Ok(text)) if matches!(text.trim().to_ascii_lowercase().as_str(), "y" | "yes") => Answer::Yes,
            _ => Answer::No,
        },
        () = interrupt.cancelled() => {
            let _ = writeln!(stderr);
            Answer::Interrupted
        }
    }
}
