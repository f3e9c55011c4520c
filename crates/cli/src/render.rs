//! Problems rendered for people (compiler-style, with the source line and a caret) and
//! for programs (JSON).

use std::fmt::Write as _;

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use serde::Serialize;
use volley_syntax::{Diagnostic, LineIndex, Severity, Span};

/// One problem to show at a place in a file.
#[derive(Debug)]
pub(crate) struct Report<'a> {
    pub(crate) severity: Severity,
    /// `error[code]`: the stable name of the kind of problem.
    pub(crate) code: &'a str,
    pub(crate) message: &'a str,
    pub(crate) span: Span,
    /// Written under the caret.
    pub(crate) label: Option<&'a str>,
    /// `= note: …` lines.
    pub(crate) notes: Vec<String>,
    pub(crate) hint: Option<&'a str>,
}

impl<'a> Report<'a> {
    pub(crate) fn from_diagnostic(diagnostic: &'a Diagnostic) -> Self {
        Self {
            severity: diagnostic.severity,
            code: diagnostic.code.as_str(),
            message: &diagnostic.message,
            span: diagnostic.span,
            label: None,
            notes: Vec::new(),
            hint: diagnostic.hint.as_deref(),
        }
    }
}

/// Renders one diagnostic compiler-style: `error[code]: message`, `--> path:line:col`,
/// the source lines with the span underlined, and the hint.
pub(crate) fn human(path: &str, text: &str, lines: &LineIndex, diagnostic: &Diagnostic) -> String {
    report(path, text, lines, &Report::from_diagnostic(diagnostic))
}

/// Renders an error placed by the engine (`error[code]: message`, the line, the hint).
pub(crate) fn placed_error(
    path: &str,
    text: &str,
    lines: &LineIndex,
    placed: &volley_engine::report::PlacedError,
) -> String {
    let code = placed.kind.name();
    let report = Report {
        severity: Severity::Error,
        code: &code,
        message: &placed.message,
        span: placed.span,
        label: None,
        notes: Vec::new(),
        hint: placed.hint.as_deref(),
    };
    self::report(path, text, lines, &report)
}

/// Renders a [`Report`] compiler-style.
pub(crate) fn report(path: &str, text: &str, lines: &LineIndex, report: &Report<'_>) -> String {
    let first_line = report.span.start_position.line;
    let last_line = report.span.end_position.line.min(first_line + 4);
    // Only the lines around the span go to the renderer: a large file with many
    // diagnostics is not rescanned for each one.
    let mut start = lines.line_start(first_line).unwrap_or(0).min(text.len());
    let mut end = lines.line_range(text, last_line).map_or(text.len(), |range| range.end).max(start);
    // Of a very long line, only the part around the span: rendering measures every
    // character it is given, and a megabyte line with two hundred diagnostics on it
    // would be measured two hundred times.
    if end - start > 2 * SHOWN_AROUND {
        let line_end = lines.line_range(text, first_line).map_or(text.len(), |range| range.end).max(start);
        start = char_boundary_before(text, report.span.start.saturating_sub(SHOWN_AROUND).max(start));
        end = char_boundary_before(text, (report.span.end.max(report.span.start) + SHOWN_AROUND).min(line_end))
            .max(start);
    }
    // Secrets written in clear in the file (a password, a secret key) stay out of the
    // output, as every value of the redaction policy does; masked byte for byte, so the
    // span still points where it did. From the line's start, where a header's name is.
    let line_start = lines.line_start(first_line).unwrap_or(0).min(start);
    let masked = volley_engine::redact::mask_written_secrets(&text[line_start..end]);
    let source = &masked[start - line_start..];
    let span_start = report.span.start.clamp(start, end) - start;
    let span_end = report.span.end.clamp(start, end).max(report.span.start.clamp(start, end)) - start;
    let level = match report.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::NOTE,
    };
    let mut annotation = AnnotationKind::Primary.span(span_start..span_end);
    if let Some(label) = report.label {
        annotation = annotation.label(label);
    }
    let mut group = level
        .primary_title(report.message)
        .id(report.code)
        .element(Snippet::source(source).line_start(first_line as usize + 1).path(path).annotation(annotation));
    for note in &report.notes {
        group = group.element(Level::NOTE.message(note.as_str()));
    }
    if let Some(hint) = report.hint {
        group = group.element(Level::HELP.message(hint));
    }
    renderer().render(&[group]).clone()
}

/// How many bytes of a long line are shown on each side of a span.
const SHOWN_AROUND: usize = 160;

/// `offset`, or the nearest character boundary before it.
fn char_boundary_before(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// A problem without a place in a file: `error: …`, then `help: …`.
pub(crate) fn plain(message: &str, hint: Option<&str>) -> String {
    let error = anstyle::Style::new().bold().fg_color(Some(anstyle::AnsiColor::Red.into()));
    let help = anstyle::Style::new().bold().fg_color(Some(anstyle::AnsiColor::Cyan.into()));
    let mut out = format!("{error}error{error:#}: {message}");
    if let Some(hint) = hint {
        let _ = write!(out, "\n  {help}help{help:#}: {hint}");
    }
    out
}

fn renderer() -> Renderer {
    if anstream::ColorChoice::global() == anstream::ColorChoice::Never { Renderer::plain() } else { Renderer::styled() }
}

/// A diagnostic as `volley check --json` prints it. Lines and columns are 1-based;
/// columns count characters.
#[derive(Debug, Serialize)]
pub(crate) struct JsonDiagnostic<'a> {
    code: &'static str,
    severity: Severity,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a str>,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    start_byte: usize,
    end_byte: usize,
}

impl<'a> JsonDiagnostic<'a> {
    pub(crate) fn new(text: &str, lines: &LineIndex, diagnostic: &'a Diagnostic) -> Self {
        Self {
            code: diagnostic.code.as_str(),
            severity: diagnostic.severity,
            message: &diagnostic.message,
            hint: diagnostic.hint.as_deref(),
            line: diagnostic.span.start_position.line + 1,
            column: lines.char_column(text, diagnostic.span.start) + 1,
            end_line: diagnostic.span.end_position.line + 1,
            end_column: lines.char_column(text, diagnostic.span.end) + 1,
            start_byte: diagnostic.span.start,
            end_byte: diagnostic.span.end,
        }
    }
}
