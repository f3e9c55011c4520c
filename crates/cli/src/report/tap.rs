//! The TAP report (Test Anything Protocol, version 14): one test point per request,
//! `not ok` with a YAML diagnostic block for a failure or an error, `# SKIP` for a
//! request that was not run.

use std::fmt::Write as _;

use super::{Entry, Report};

pub(super) fn render(report: &Report) -> String {
    let mut tap = format!("TAP version 14\n1..{}\n", report.requests.len());
    for (number, entry) in report.entries().enumerate() {
        point(&mut tap, number + 1, entry);
    }
    tap
}

fn point(tap: &mut String, number: usize, entry: &Entry) {
    let shown = description(&format!("{} ({}:{})", entry.title(), entry.file, entry.line));
    match entry.outcome.as_str() {
        "passed" => {
            let _ = writeln!(tap, "ok {number} - {shown}");
        }
        "skipped" => {
            let _ = writeln!(tap, "ok {number} - {shown} # SKIP {}", description(entry.skip_reason()));
        }
        _ => {
            let _ = writeln!(tap, "not ok {number} - {shown}");
            diagnostic(tap, entry);
        }
    }
}

/// The YAML block of a failure: the spec's `message` and `severity`, where it is, and
/// the assertions that did not pass or the error.
fn diagnostic(tap: &mut String, entry: &Entry) {
    tap.push_str("  ---\n");
    let failed: Vec<_> = entry.assertions.iter().filter(|assertion| !assertion.passed()).collect();
    let message = entry.error.as_ref().map_or_else(
        || format!("{} of {} assertions did not pass", failed.len(), entry.assertions.len()),
        |error| error.message.clone(),
    );
    let _ = writeln!(tap, "  message: {}", scalar(&message));
    tap.push_str("  severity: fail\n");
    let _ = writeln!(tap, "  at: {}", scalar(&format!("{}:{}", entry.file, entry.line)));
    if let Some(response) = &entry.response {
        let _ = writeln!(tap, "  status: {}", response.status);
    }
    if let Some(timing) = entry.timing {
        let _ = writeln!(tap, "  duration_ms: {}", timing.total_ms);
    }
    if entry.attempts > 1 {
        let _ = writeln!(tap, "  attempts: {}", entry.attempts);
    }
    if let Some(error) = &entry.error {
        tap.push_str("  error:\n");
        let _ = writeln!(tap, "    code: {}", scalar(&error.code));
        let _ = writeln!(tap, "    at: {}", scalar(&format!("{}:{}:{}", entry.file, error.line, error.column)));
        if let Some(hint) = &error.hint {
            let _ = writeln!(tap, "    hint: {}", scalar(hint));
        }
    }
    if !failed.is_empty() {
        tap.push_str("  assertions:\n");
        for assertion in failed {
            let _ = writeln!(tap, "    - expression: {}", scalar(&assertion.expression));
            let _ = writeln!(
                tap,
                "      at: {}",
                scalar(&format!("{}:{}:{}", entry.file, assertion.line, assertion.column))
            );
            let _ = writeln!(tap, "      kind: {}", assertion.failure_kind());
            for (key, value) in
                [("expected", &assertion.expected), ("actual", &assertion.actual), ("message", &assertion.message)]
            {
                if let Some(value) = value {
                    let _ = writeln!(tap, "      {key}: {}", scalar(value));
                }
            }
        }
    }
    tap.push_str("  ...\n");
}

/// A YAML double-quoted scalar: JSON's string syntax is a subset of it, and a quoted
/// value can hold any text (`: `, `#`, a leading `-`, line breaks) without ambiguity.
fn scalar(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// A test point description: on one line, with `\` and `#` escaped as TAP 14 asks, so
/// that a `#` in a title is not read as a directive.
fn description(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in description_text(text).chars() {
        if matches!(character, '\\' | '#') {
            out.push('\\');
        }
        out.push(character);
    }
    out
}

/// Text on one line: line breaks become spaces.
fn description_text(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::{description, scalar};

    #[test]
    fn escapes_descriptions_and_quotes_scalars() {
        assert_eq!(description("GET /a#b \\ c\nd"), "GET /a\\#b \\\\ c d");
        assert_eq!(scalar("a: \"b\"\n# c"), "\"a: \\\"b\\\"\\n# c\"");
    }
}
