//! Diagnostics for people (compiler-style, with the source line and a caret) and for
//! programs (JSON).

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use serde::Serialize;
use volley_syntax::{Diagnostic, LineIndex, Severity};

/// Renders one diagnostic compiler-style: `error[code]: message`, `--> path:line:col`,
/// the source lines with the span underlined, and the hint.
pub(crate) fn human(path: &str, text: &str, lines: &LineIndex, diagnostic: &Diagnostic) -> String {
    let first_line = diagnostic.span.start_position.line;
    let last_line = diagnostic.span.end_position.line.min(first_line + 4);
    // Only the lines around the span go to the renderer: a large file with many
    // diagnostics is not rescanned for each one.
    let start = lines.line_start(first_line).unwrap_or(0);
    let end = lines.line_range(text, last_line).map_or(text.len(), |range| range.end);
    let source = &text[start..end.max(start)];
    let span_start = diagnostic.span.start.clamp(start, end) - start;
    let span_end = diagnostic.span.end.clamp(start, end).max(diagnostic.span.start.clamp(start, end)) - start;
    let level = match diagnostic.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::NOTE,
    };
    let mut group = level.primary_title(diagnostic.message.as_str()).id(diagnostic.code.as_str()).element(
        Snippet::source(source)
            .line_start(first_line as usize + 1)
            .path(path)
            .annotation(AnnotationKind::Primary.span(span_start..span_end)),
    );
    if let Some(hint) = &diagnostic.hint {
        group = group.element(Level::HELP.message(hint.as_str()));
    }
    let renderer = if anstream::ColorChoice::global() == anstream::ColorChoice::Never {
        Renderer::plain()
    } else {
        Renderer::styled()
    };
    renderer.render(&[group]).clone()
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
