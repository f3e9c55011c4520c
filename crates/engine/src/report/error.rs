//! An error with its kind, message, hint and place in the `.http` text, computed once
//! when it is made, for every front end to map.

use volley_syntax::Span;

use super::diagnostic::PlacedDiagnostic;
use crate::Error;
use crate::assert::Place;
use volley_model::error::ErrorKind;

/// What ended a request without a response, as every report shows it. Made once by
/// [`PlacedError::new`]; front ends map its fields and place nothing themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedError {
    /// The one classification ([`ErrorKind::of`]).
    pub kind: ErrorKind,
    /// The message without the location its `Display` form may start with (for a
    /// refused request, its first reason's).
    pub message: String,
    /// The error's whole `Display` text, as the editor and the server's answers say it.
    pub full_message: String,
    /// How to fix it, when there is something to say.
    pub hint: Option<String>,
    /// Where in the text it belongs: its own span, else the request line.
    pub span: Span,
    /// [`Self::span`] as people count it (1-based line, 1-based column in characters).
    pub place: Place,
    /// The span is in the `.http` text (not in a `<@` file's own text).
    pub in_text: bool,
    /// For a refused request: every reason, placed ([`PlacedDiagnostic::of`]).
    pub diagnostics: Vec<PlacedDiagnostic>,
}

impl PlacedError {
    /// `error`, placed in `text` (the `.http` text it was run from); `request_line` is
    /// where an error without a span of its own belongs.
    #[must_use]
    pub fn new(error: &Error, request_line: Span, text: &str) -> Self {
        let (message, span, hint) = match error {
            Error::Build(build) => (build.message(), build.span(), build.hint()),
            Error::Transport(transport) => (transport.to_string(), request_line, transport.hint()),
            Error::Invalid { diagnostics } => match diagnostics.first() {
                Some(first) => (first.message.clone(), first.span, first.hint.clone()),
                None => (error.to_string(), request_line, None),
            },
            _ => (error.to_string(), request_line, None),
        };
        let diagnostics = match error {
            Error::Invalid { diagnostics } => {
                diagnostics.iter().map(|diagnostic| PlacedDiagnostic::of(diagnostic, text)).collect()
            }
            _ => Vec::new(),
        };
        Self {
            kind: ErrorKind::of(error),
            message,
            full_message: error.to_string(),
            hint,
            place: Place::of(span, text),
            in_text: span.end <= text.len(),
            span,
            diagnostics,
        }
    }
}

#[cfg(test)]
mod tests {
    use volley_syntax::LineIndex;

    use super::PlacedError;
    use crate::assert::Place;
    use crate::report::ErrorKind;
    use crate::{BuildError, Error};

    #[test]
    fn a_build_error_is_placed_in_characters_on_a_non_ascii_line() {
        let text = "GET /\n# ☃ «é» {{nowhere}}\n";
        let start = text.find("{{").unwrap_or_default();
        let span = LineIndex::new(text).span(start..start + 11);
        let error = Error::Build(BuildError::UndefinedVariable { name: "nowhere".to_owned(), span });
        let placed = PlacedError::new(&error, LineIndex::new(text).span(0..5), text);
        // `# ☃ «é» ` is 8 characters but 13 bytes: the column counts characters.
        assert_eq!(placed.place, Place { line: 2, column: 9 });
        assert_eq!(span.start_position.column + 1, 14);
        assert_eq!(placed.kind, ErrorKind::Build { code: "undefined-variable" });
        assert!(placed.message.contains("nowhere") && !placed.message.starts_with("2:"), "{}", placed.message);
        assert!(placed.hint.is_some_and(|hint| hint.contains("--var nowhere=value")));
        assert!(placed.in_text);
        assert!(placed.diagnostics.is_empty());
    }

    #[test]
    fn an_error_without_a_span_belongs_to_the_request_line() {
        let text = "# «é»\nGET /\n";
        let line = LineIndex::new(text).span(text.find("GET").unwrap_or_default()..text.len() - 1);
        let placed = PlacedError::new(&Error::Cancelled, line, text);
        assert_eq!(placed.place, Place { line: 2, column: 1 });
        assert_eq!(placed.span, line);
        assert_eq!(placed.message, "the request was cancelled");
        assert_eq!(placed.full_message, placed.message);
        assert_eq!(placed.hint, None);
    }
}
