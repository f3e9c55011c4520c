//! `--test`: one line per request (✓, ✗ or -, its title, status, assertions passed,
//! time), then each failure in full as the other modes print it, then the summary.
//! The list is printed once the run is over, in the order of the run (files run in
//! parallel would interleave their lines); the progress bar shows the run meanwhile.

use std::fmt::Write as _;
use std::time::Duration;

use anstyle::{AnsiColor, Style};

use super::Mode;
use super::outcome::{Outcome, RequestResult, Tally};
use super::record;
use super::select::File;

const DIM: Style = Style::new().dimmed();
const BOLD: Style = Style::new().bold();
const GREEN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
const RED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));

/// Prints the list, the failures and the summary. `blocked`: `--strict` sent nothing,
/// and the errors that stopped it are printed already.
pub(crate) fn finish(results: &[RequestResult], files: &[File], outside: usize, elapsed: Duration, blocked: bool) {
    let mut list = String::new();
    for result in results {
        if let Some(file) = file_of(result, files) {
            let _ = writeln!(list, "{}", line(result, file));
        }
    }
    if !list.is_empty() {
        crate::output::line(list.trim_end_matches('\n'));
    }
    let failed: Vec<&RequestResult> = results.iter().filter(|result| !result.passed()).collect();
    if !blocked && !failed.is_empty() {
        crate::output::line(&format!("\n{BOLD}failures:{BOLD:#}"));
        for result in failed {
            let Some(file) = file_of(result, files) else { continue };
            let place = format!("{}:{}", file.shown, result.line_span.start_position.line + 1);
            crate::output::line(&format!("\n{RED}✗{RED:#} {BOLD}{}{BOLD:#} {DIM}· {place}{DIM:#}", title(result)));
            // As `--quiet` prints it: the failed assertions on stdout, compiler-style,
            // and the errors and refusals on stderr.
            super::human::print(result, file, Mode::Quiet, false);
        }
        crate::output::line("");
    }
    super::human::summary(&Tally::of(results), outside, elapsed);
}

/// `✓ login · 200 · 2/2 passed · 12 ms · api.http:5`, with `(run 2)` after the name
/// for a run of `--repeat` and `after 3 attempts` before the place with `--retry`.
fn line(result: &RequestResult, file: &File) -> String {
    let mut place = format!("{DIM}· {}:{}{DIM:#}", file.shown, result.line_span.start_position.line + 1);
    if result.attempts > 1 {
        place = format!("· after {} attempts {place}", result.attempts);
    }
    let title = title(result);
    match &result.outcome {
        Outcome::Skipped(why) => {
            format!("{DIM}-{DIM:#} {title} {DIM}· skipped: {}{DIM:#} {place}", why.name())
        }
        Outcome::Response { response, .. } if !result.stream_failed() => {
            let mark = if result.passed() { format!("{GREEN}✓{GREEN:#}") } else { format!("{RED}✗{RED:#}") };
            let assertions = response.assertions();
            let checks = if assertions.is_empty() {
                "no assertions".to_owned()
            } else {
                let passed = assertions.iter().filter(|assertion| assertion.passed()).count();
                format!("{passed}/{} passed", assertions.len())
            };
            let status =
                response.grpc().map_or_else(|| response.status().to_string(), |grpc| format!("gRPC {}", grpc.code));
            format!(
                "{mark} {title} · {status} · {checks} · {} {place}",
                super::human::duration(response.timing().total)
            )
        }
        _ => {
            let code = record::error_record(result, file).map_or_else(|| "error".to_owned(), |error| error.code);
            let what = if matches!(result.outcome, Outcome::Refused(_)) { "refused" } else { "error" };
            format!("{RED}✗{RED:#} {title} · {what}: {code} {place}")
        }
    }
}

/// The name or request line, and `(run 2)` for a run of `--repeat`.
fn title(result: &RequestResult) -> String {
    match result.repetition {
        Some(run) => format!("{} {DIM}(run {run}){DIM:#}", result.title),
        None => result.title.clone(),
    }
}

fn file_of<'a>(result: &RequestResult, files: &'a [File]) -> Option<&'a File> {
    files.iter().find(|file| file.shown == result.file)
}
