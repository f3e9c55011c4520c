//! A problem with a stable code and its place in the `.http` text, computed when it is
//! made: why a request is refused, as every front end shows it.

use volley_syntax::{Diagnostic, Span};

use crate::assert::Place;

/// One problem with a request, placed in the text: a reason it is refused (a diagnostic
/// of [`Document::refusal_of`](volley_syntax::Document::refusal_of), in
/// [`PlacedError::diagnostics`](super::PlacedError::diagnostics)), or a problem a front
/// end reports at a place of its own choosing (the CLI's unconfirmed `# @note`, a
/// stream that broke; the execution server's `# @disabled`). Front ends map its fields
/// and place nothing themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedDiagnostic {
    /// The stable code (docs/diagnostics.md, or the front end's own).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
    /// Where it is.
    pub span: Span,
    /// [`Self::span`] as people count it (1-based line, 1-based column in characters).
    pub place: Place,
}

impl PlacedDiagnostic {
    /// `diagnostic`, placed in `text` (the `.http` text its span points into).
    #[must_use]
    pub fn of(diagnostic: &Diagnostic, text: &str) -> Self {
        Self::new(diagnostic.code.as_str(), diagnostic.message.clone(), diagnostic.hint.clone(), diagnostic.span, text)
    }

    /// A problem with the code `code` at `span`, placed in `text`.
    #[must_use]
    pub fn new(code: &'static str, message: impl Into<String>, hint: Option<String>, span: Span, text: &str) -> Self {
        Self { code, message: message.into(), hint, span, place: Place::of(span, text) }
    }
}

#[cfg(test)]
mod tests {
    use volley_syntax::LineIndex;

    use super::PlacedDiagnostic;
    use crate::assert::Place;

    #[test]
    fn a_refusal_reason_is_placed_in_characters_on_a_non_ascii_line() {
        let text = "GET /\nX-Name: «é» ☃ {{unclosed\n";
        let document = volley_syntax::parse(text);
        let refusal = document.refusal_of(document.request(0).expect("a request")).expect("refused");
        let first = refusal.diagnostics().next().expect("a reason");
        let placed = PlacedDiagnostic::of(&first, text);
        // `X-Name: «é» ☃ ` is 14 characters but 19 bytes: the column counts characters.
        assert_eq!(placed.place, Place { line: 2, column: 15 });
        assert_eq!(first.span.start_position.column + 1, 20);
        assert_eq!((placed.code, placed.span), ("unclosed-variable", first.span));
        assert_eq!((placed.message, placed.hint), (first.message, first.hint));
    }

    #[test]
    fn a_front_end_problem_is_placed_at_its_span() {
        let text = "# «é»\n# @note wipes it\nDELETE /\n";
        let start = text.find("# @note").unwrap_or_default();
        let span = LineIndex::new(text).span(start..start + 15);
        let placed = PlacedDiagnostic::new("note-not-confirmed", "not confirmed", None, span, text);
        assert_eq!(placed.place, Place { line: 2, column: 1 });
        assert_eq!((placed.code, placed.message.as_str(), placed.hint), ("note-not-confirmed", "not confirmed", None));
    }
}
