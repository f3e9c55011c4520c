//! An assertion result with its place in the `.http` text, computed when it is made.

use crate::assert::{AssertionResult, Place};

/// One assertion's result and where it is written: the position every report shows
/// (1-based line, 1-based column in characters), computed once from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedAssertion {
    /// What came of the assertion (its secrets already hidden by the engine).
    pub result: AssertionResult,
    /// Where it is written in the `.http` text it was run from.
    pub place: Place,
}

impl PlacedAssertion {
    /// `result`, placed in `text`, the `.http` text it was run from.
    #[must_use]
    pub fn new(result: &AssertionResult, text: &str) -> Self {
        Self { place: result.place(text), result: result.clone() }
    }

    /// `true` when the check passed.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.result.passed()
    }
}

/// The results of a response's assertions, each placed in `text`.
#[must_use]
pub fn place_assertions(results: &[AssertionResult], text: &str) -> Vec<PlacedAssertion> {
    results.iter().map(|result| PlacedAssertion::new(result, text)).collect()
}

#[cfg(test)]
mod tests {
    use volley_syntax::LineIndex;

    use super::{PlacedAssertion, place_assertions};
    use crate::assert::{AssertionResult, Outcome, Place};

    fn result_at(text: &str, needle: &str) -> AssertionResult {
        let start = text.find(needle).unwrap_or_default();
        let span = LineIndex::new(text).span(start..start + needle.len());
        AssertionResult { expression: needle.to_owned(), span, outcome: Outcome::Passed }
    }

    #[test]
    fn the_place_counts_characters_on_non_ascii_lines() {
        let text = "GET /\n# @assert «ünïcode» == 1\n";
        let placed = PlacedAssertion::new(&result_at(text, "=="), text);
        // `«ünïcode» ` is 10 characters but 14 bytes: the column counts characters.
        assert_eq!(placed.place, Place { line: 2, column: 21 });
        assert_eq!(placed.place.column as usize - 1, "# @assert «ünïcode» ".chars().count());
    }

    #[test]
    fn the_place_is_stored_with_the_result() {
        let text = "GET /\n# @assert «é» == 1\n# @assert status == 200\n";
        let results = [result_at(text, "«é»"), result_at(text, "status")];
        let placed = place_assertions(&results, text);
        // Stored: it stays what it was made with, whatever text is at hand later.
        let moved = placed.clone();
        assert_eq!(moved[0].place, Place { line: 2, column: 11 });
        assert_eq!(moved[1].place, Place { line: 3, column: 11 });
        assert!(moved.iter().all(PlacedAssertion::passed));
        assert_eq!(moved[1].result, results[1]);
    }
}
