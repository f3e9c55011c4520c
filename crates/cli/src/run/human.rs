//! The text output of `volley run`: each exchange on stdout (status, headers, body,
//! assertions), problems compiler-style on stderr, and the summary line.

use std::fmt::Write as _;
use std::time::Duration;

use anstyle::{AnsiColor, Style};
use volley_engine::Response;
use volley_engine::assert::{AssertionResult, Outcome as Check};
use volley_syntax::Severity;

use super::Mode;
use super::outcome::{Outcome, RequestResult, Skip, Tally};
use super::refusal::Refusal;
use super::select::File;
use crate::render::{self, Report};

const DIM: Style = Style::new().dimmed();
const BOLD: Style = Style::new().bold();
const GREEN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
const RED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
const YELLOW: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
const CYAN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));

/// Prints what came of one request. `several`: more than one request runs, so each
/// gets a title line.
pub(crate) fn print(result: &RequestResult, file: &File, mode: Mode, several: bool) {
    // These modes print once the run is over.
    if matches!(mode, Mode::Json | Mode::Test | Mode::Part(_)) {
        return;
    }
    match &result.outcome {
        Outcome::Skipped(Skip::Stopped | Skip::NotSent) => {}
        Outcome::Skipped(why @ (Skip::Disabled | Skip::Declined)) => {
            if mode != Mode::Quiet {
                let reason = if *why == Skip::Disabled { "it is disabled (`# @disabled`)" } else { "not confirmed" };
                crate::output::error_line(&format!("{DIM}skipped{DIM:#} {}: {reason}", place(result, file)));
            }
        }
        Outcome::Refused(refusal) => refused(result, refusal, file),
        Outcome::Error(error) => {
            let placed = result.error_parts(error, &file.text);
            crate::output::error_line(&format!(
                "{}\n",
                render::placed_error(&file.shown, &file.text, &file.lines, &placed)
            ));
            if result.attempts > 1 {
                crate::output::error_line(&format!("{}{}\n", place(result, file), attempts(result)));
            }
        }
        Outcome::Response { response, text } => {
            let mut out = String::new();
            if mode != Mode::Quiet {
                // A gRPC stream printed its title with its first message.
                if several && !result.live {
                    let line = result.line_span.start_position.line;
                    let title = title_line(&result.title, result.description.as_deref(), file, line, result.repetition);
                    let _ = writeln!(out, "{title}{}", attempts(result));
                } else if result.attempts > 1 {
                    let _ = writeln!(out, "{}", attempts(result).trim_start());
                }
                if mode == Mode::Verbose {
                    sent(&mut out, response);
                }
                exchange(&mut out, response, text, result.live);
                if !response.logs().is_empty() {
                    out.push('\n');
                }
                for line in response.logs() {
                    let _ = writeln!(out, "{DIM}log{DIM:#} {line}");
                }
            }
            if mode != Mode::Quiet && !response.assertions().is_empty() {
                out.push('\n');
            }
            for assertion in response.assertions() {
                check(&mut out, assertion, file, mode);
            }
            if !out.is_empty() {
                let text = out.trim_end_matches('\n');
                crate::output::line(if mode == Mode::Quiet { text } else { &out });
            }
        }
    }
}

/// A failed attempt of `--retry`, before the next: which request, what went wrong.
pub(crate) fn retrying(result: &RequestResult, file: &File, attempt: u32, attempts: u32, interval: u64) {
    let why = match &result.outcome {
        Outcome::Response { response, .. } => {
            let failed = response.assertions().iter().filter(|assertion| !assertion.passed()).count();
            let total = response.assertions().len();
            format!("{} · {failed} of {total} assertions failed", response.status())
        }
        Outcome::Error(error) => result.error_parts(error, &file.text).message,
        Outcome::Refused(_) | Outcome::Skipped(_) => "not sent".to_owned(),
    };
    crate::output::error_line(&format!(
        "{YELLOW}retry {attempt}/{}{YELLOW:#} {} in {interval} ms: {why}",
        attempts - 1,
        place(result, file)
    ));
}

/// `(after 3 attempts)` for a request sent more than once (`--retry`), else nothing.
fn attempts(result: &RequestResult) -> String {
    if result.attempts > 1 { format!(" {DIM}(after {} attempts){DIM:#}", result.attempts) } else { String::new() }
}

/// `` `login` (api.http:12) ``: which request, and where.
fn place(result: &RequestResult, file: &File) -> String {
    format!("`{}` ({}:{})", result.title, file.shown, result.line_span.start_position.line + 1)
}

/// Why a request was not sent, compiler-style, then which request it was.
fn refused(result: &RequestResult, refusal: &Refusal, file: &File) {
    let problems = refusal.problems(&file.text);
    for problem in &problems {
        let report = Report {
            severity: Severity::Error,
            code: problem.code,
            message: &problem.message,
            span: problem.span,
            label: None,
            notes: Vec::new(),
            hint: problem.hint.as_deref(),
        };
        crate::output::error_line(&format!("{}\n", render::report(&file.shown, &file.text, &file.lines, &report)));
    }
    let why = match refusal {
        Refusal::Errors(_) => {
            let count = problems.len();
            format!("{count} {} above", if count == 1 { "error" } else { "errors" })
        }
        Refusal::Unconfirmed { .. } => "its `# @note` was not confirmed".to_owned(),
    };
    crate::output::error_line(&format!(
        "{}\n",
        render::plain(&format!("request {} was not sent: {why}", place(result, file)), None)
    ));
}

/// `> POST url`, the headers and the body as sent.
fn sent(out: &mut String, response: &Response) {
    let request = response.request();
    let _ = writeln!(out, "{DIM}>{DIM:#} {BOLD}{} {}{BOLD:#}", request.method, response.redact(request.url.as_str()));
    for (name, value) in response.redactor().headers(&request.headers) {
        let _ = writeln!(out, "{DIM}>{DIM:#} {DIM}{name}:{DIM:#} {value}");
    }
    if !request.body.is_empty() {
        let _ = writeln!(out, "{DIM}>{DIM:#}");
        let content_type = request.headers.get(http::header::CONTENT_TYPE).and_then(|value| value.to_str().ok());
        if crate::pretty::is_text(content_type, &request.body) {
            let body = response.redact(&String::from_utf8_lossy(&request.body));
            for line in body.lines() {
                let _ = writeln!(out, "{DIM}>{DIM:#} {line}");
            }
        } else {
            let _ = writeln!(out, "{DIM}>{DIM:#} [binary body: {} bytes]", request.body.len());
        }
    }
    out.push('\n');
}

/// `### title (run 2) — description · file:line`: the line above a request's output.
pub(crate) fn title_line(title: &str, description: Option<&str>, file: &File, line: u32, run: Option<u32>) -> String {
    let mut out = format!("{BOLD}### {title}{BOLD:#}");
    if let Some(run) = run {
        let _ = write!(out, " {DIM}(run {run}){DIM:#}");
    }
    if let Some(description) = description {
        let _ = write!(out, " {DIM}—{DIM:#} {description}");
    }
    let _ = write!(out, " {DIM}· {}:{}{DIM:#}", file.shown, line + 1);
    out
}

/// A message of a gRPC stream as it arrives (after the request's title line, for the
/// first one of a run of several): `[+12 ms] message 2` and the message as pretty JSON.
pub(crate) fn live_message(title: Option<&str>, number: usize, message: &serde_json::Value, after: Duration) {
    let mut out = String::new();
    if let Some(title) = title {
        let _ = writeln!(out, "{title}");
    }
    let pretty = serde_json::to_string_pretty(message).unwrap_or_default();
    let _ = write!(out, "{DIM}[+{} ms] message {number}{DIM:#}\n{pretty}\n", after.as_millis());
    crate::output::line(&out);
}

/// The status line, headers and body of the response; a gRPC stream's messages are
/// left out when they were printed as they came (`live`).
fn exchange(out: &mut String, response: &Response, text: &str, live: bool) {
    if let Some(grpc) = response.grpc() {
        return grpc_exchange(out, response, grpc, live);
    }
    let status = match response.status() {
        200..=299 => GREEN,
        300..=399 => CYAN,
        400..=499 => YELLOW,
        _ => RED,
    };
    let _ = writeln!(
        out,
        "{DIM}{:?}{DIM:#} {}{}{}{}{status:#} {DIM}{} · {}{DIM:#}",
        response.version(),
        status.bold(),
        response.status(),
        if response.status_text().is_empty() { "" } else { " " },
        response.status_text(),
        duration(response.timing().total),
        if response.is_streaming() {
            "event stream".to_owned()
        } else if response.is_websocket() {
            "WebSocket".to_owned()
        } else {
            size(response.body_bytes().len())
        },
    );
    for (name, value) in response.redactor().headers(response.headers()) {
        let _ = writeln!(out, "{DIM}{name}:{DIM:#} {value}");
    }
    let content_type = response.headers().get(http::header::CONTENT_TYPE).and_then(|value| value.to_str().ok());
    if response.body_bytes().is_empty() {
        return;
    }
    out.push('\n');
    let body = response.redact(text);
    if crate::pretty::is_json(content_type)
        && let Some(pretty) = crate::pretty::json(&body)
    {
        out.push_str(&pretty);
        out.push('\n');
    } else if crate::pretty::is_text(content_type, response.body_bytes()) {
        out.push_str(&body);
        if !body.ends_with('\n') {
            out.push('\n');
        }
    } else {
        let _ = writeln!(
            out,
            "{DIM}[binary body: {} bytes, {}]{DIM:#}",
            response.body_bytes().len(),
            content_type.unwrap_or("no type")
        );
    }
}

/// The status of a gRPC call, its headers and trailers, and each message as pretty JSON.
fn grpc_exchange(out: &mut String, response: &Response, grpc: &volley_engine::GrpcResult, live: bool) {
    let status = if grpc.is_ok() { GREEN } else { RED };
    let count = grpc.messages.len();
    // grpc-js sends `grpc-message: OK` with every OK: said once is enough.
    let message = Some(grpc.message.as_str()).filter(|message| !message.is_empty() && *message != grpc.code);
    let _ = writeln!(
        out,
        "{DIM}gRPC{DIM:#} {}{} ({}){status:#}{} {DIM}· {} · {count} {}{DIM:#}",
        status.bold(),
        grpc.code,
        grpc.number,
        message.map_or_else(String::new, |message| format!(" {}", response.redact(message))),
        duration(response.timing().total),
        if count == 1 { "message" } else { "messages" },
    );
    for detail in &grpc.details {
        let text = response.redact(&serde_json::to_string(detail).unwrap_or_default());
        let _ = writeln!(out, "{DIM}detail:{DIM:#} {text}");
    }
    for (name, value) in response.redactor().headers(response.headers()) {
        let _ = writeln!(out, "{DIM}{name}:{DIM:#} {value}");
    }
    for message in grpc.messages.iter().filter(|_| !live) {
        out.push('\n');
        let text = response.redact(&serde_json::to_string_pretty(message).unwrap_or_default());
        out.push_str(&text);
        out.push('\n');
    }
}

/// The assertions of `response` that did not pass, compiler-style (empty when all
/// passed).
pub(crate) fn failed_checks(response: &Response, file: &File) -> String {
    let mut out = String::new();
    for assertion in response.assertions() {
        check(&mut out, assertion, file, Mode::Quiet);
    }
    out
}

/// `✓ status == 200`, or the failure compiler-style (the engine has hidden the
/// secrets of its texts).
fn check(out: &mut String, assertion: &AssertionResult, file: &File, mode: Mode) {
    let expression = &assertion.expression;
    match &assertion.outcome {
        Check::Passed => {
            if mode != Mode::Quiet {
                let _ = writeln!(out, "{GREEN}✓{GREEN:#} {expression}");
            }
        }
        Check::Failed { expected, actual } => {
            let notes = vec![format!("expected: {expected}"), format!("  actual: {actual}")];
            failed(out, assertion, file, "assertion-failed", &format!("assertion failed: {expression}"), notes, None);
        }
        Check::ScriptFailed { message } => {
            let title = format!("test failed: {expression}");
            failed(out, assertion, file, "test-failed", &title, vec![message.clone()], None);
        }
        Check::HandlerFailed { message, stack } => {
            let hint = (!stack.is_empty()).then(|| format!("JavaScript stack:\n{stack}"));
            let title = format!("response handler failed: {message}");
            failed(out, assertion, file, "handler-failed", &title, Vec::new(), hint.as_deref());
        }
        Check::Invalid { message, hint } => {
            let title = format!("invalid assertion: {message}");
            failed(out, assertion, file, "invalid-assertion", &title, Vec::new(), hint.as_deref());
        }
    }
}

/// `✗ expression` and the report of why, compiler-style, at the assertion's place.
fn failed(
    out: &mut String,
    assertion: &AssertionResult,
    file: &File,
    code: &str,
    title: &str,
    notes: Vec<String>,
    hint: Option<&str>,
) {
    let report =
        Report { severity: Severity::Error, code, message: title, span: assertion.span, label: None, notes, hint };
    let _ = writeln!(out, "{RED}✗{RED:#} {}", assertion.expression);
    let _ = writeln!(out, "{}", render::report(&file.shown, &file.text, &file.lines, &report));
}

/// The line that ends a stream: `── 3 events in 1.2 s, the server ended the stream`.
pub(crate) fn stream_end(summary: &super::stream::StreamSummary, mode: Mode) {
    match mode {
        Mode::Json => {}
        Mode::Quiet | Mode::Test | Mode::Part(_) => {
            for error in &summary.errors {
                crate::output::error_line(&crate::render::plain(error, None));
            }
        }
        Mode::Normal | Mode::Verbose => {
            let style = if summary.ended == "error" { RED } else { DIM };
            crate::output::line(&format!("{style}── {}{style:#}\n", summary.describe()));
        }
    }
}

/// `4 requests: 2 passed, 1 failed, 1 error in 12 ms` on stderr: failed are requests
/// whose assertions failed, errors those without a response (as in the reports).
/// `outside`: errors outside any request, counted after the requests.
pub(crate) fn summary(tally: &Tally, outside: usize, elapsed: Duration) {
    let Tally { requests, passed, failed, errors, skipped, retries, .. } = *tally;
    let noun = if requests == 1 { "request" } else { "requests" };
    let passed_style = if passed > 0 { GREEN } else { Style::new() };
    let failed_style = if failed > 0 { RED.bold() } else { Style::new() };
    let mut line = format!(
        "{requests} {noun}: {passed_style}{passed} passed{passed_style:#}, {failed_style}{failed} failed{failed_style:#}"
    );
    if errors > 0 {
        let _ =
            write!(line, ", {}{errors} {}{:#}", RED.bold(), if errors == 1 { "error" } else { "errors" }, RED.bold());
    }
    if skipped > 0 {
        let _ = write!(line, ", {skipped} skipped");
    }
    if retries > 0 {
        let _ = write!(line, ", {retries} {}", if retries == 1 { "retry" } else { "retries" });
    }
    if outside > 0 {
        let noun = if outside == 1 { "error" } else { "errors" };
        let _ = write!(line, "; {}{outside} {noun} outside any request{:#}", RED.bold(), RED.bold());
    }
    let _ = write!(line, " {DIM}in {}{DIM:#}", duration(elapsed));
    crate::output::error_line(&line);
}

/// `12 ms`, `1.25 s`.
pub(crate) fn duration(duration: Duration) -> String {
    let millis = duration.as_secs_f64() * 1000.0;
    if millis < 1000.0 { format!("{} ms", millis.round()) } else { format!("{:.2} s", millis / 1000.0) }
}

/// `512 B`, `1.5 KB`, `2.0 MB`.
fn size(bytes: usize) -> String {
    #[allow(clippy::cast_precision_loss)] // Shown with one decimal.
    let value = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", value / 1024.0)
    } else {
        format!("{:.1} MB", value / (1024.0 * 1024.0))
    }
}
