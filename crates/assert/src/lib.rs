//! Checks on a response, `# @assert` and httpyac's `??` lines: parsing the expression
//! language (`parse.rs`, `httpyac.rs`, the shared `check.rs` and `lex.rs`) and evaluating it
//! (`evaluate.rs`, `predicate.rs`), with one result model.

mod check;
mod evaluate;
mod httpyac;
mod jsonpath;
mod lex;
mod parse;
mod predicate;

pub use check::{Check, Field, Predicate, TimingPart};
pub use evaluate::{JavaScript, ResponseParts, evaluate, evaluate_parts};
pub use jsonpath::{MAX_JSONPATH_NESTING, parse_json_path};
pub use parse::{Assertion, AssertionSyntaxError, Comparison, Flavour, TextCheck, parse, parse_as};

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use volley_syntax::Span;

/// What hides secrets in the values a failure message shows (the engine's `Redactor`):
/// a value is redacted whole before a message cuts it to an excerpt, since a cut would
/// leave part of a secret the redaction of the whole message no longer recognises.
pub trait Redact: fmt::Debug + Sync {
    /// `text` with the secrets it holds hidden.
    fn redact<'t>(&self, text: &'t str) -> Cow<'t, str>;
}

/// How long the exchange took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timing {
    /// From sending the first request to the head of the final response (redirect hops
    /// included): time to first byte.
    pub ttfb: Duration,
    /// From sending to the end of the final response's body (for a streamed body or a
    /// WebSocket: to the head of the response, as [`ttfb`](Timing::ttfb)).
    pub total: Duration,
}

/// The result of one assertion (`# @assert` or `??`) on a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertionResult {
    /// The expression as evaluated (variables substituted).
    pub expression: String,
    /// Where the expression is written in the `.http` text.
    pub span: Span,
    /// What came of it.
    pub outcome: Outcome,
}

impl AssertionResult {
    /// `true` when the check passed.
    #[must_use]
    pub fn passed(&self) -> bool {
        matches!(self.outcome, Outcome::Passed)
    }

    /// Where the assertion is written in `text`, the `.http` text it was run from: the
    /// position every report shows (the CLI's and the execution server's alike).
    #[must_use]
    pub fn place(&self, text: &str) -> Place {
        Place::of(self.span, text)
    }
}

/// A position as people count it: 1-based line, 1-based column in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters from the start of the line.
    pub column: u32,
}

impl Place {
    /// Where `span` starts in `text`. A span that does not fit the text (not on a
    /// character boundary) keeps its byte column.
    #[must_use]
    pub fn of(span: Span, text: &str) -> Self {
        let line_start = span.start.saturating_sub(span.start_position.column as usize);
        let column =
            text.get(line_start..span.start).map_or(span.start_position.column, |prefix| prefix.chars().count() as u32);
        Self { line: span.start_position.line + 1, column: column + 1 }
    }
}

/// What came of an assertion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The check holds.
    Passed,
    /// The check does not hold.
    Failed {
        /// What was expected.
        expected: String,
        /// What the response had.
        actual: String,
    },
    /// A script's `client.test` failed: what it threw.
    ScriptFailed {
        /// The message of what the test threw (`AssertionError: status is 200`).
        message: String,
    },
    /// A response handler threw, or ran past its time or memory limit, before its end.
    HandlerFailed {
        /// What happened, with the place in a script file.
        message: String,
        /// The script's frames of the JavaScript stack, one per line (may be empty).
        stack: String,
    },
    /// The expression cannot be evaluated (a syntax error, an undefined variable in it).
    Invalid {
        /// What is wrong.
        message: String,
        /// How to write it.
        hint: Option<String>,
    },
}

/// An assertion of a prepared request (`# @assert` or `??`): rendered and parsed,
/// evaluated once the response is in.
#[derive(Debug, Clone)]
pub struct PendingAssertion {
    /// The expression with its variables substituted (as written when substitution failed).
    pub expression: String,
    /// Where the expression is written (the part at fault when it does not parse).
    pub span: Span,
    check: Result<Assertion, Outcome>,
}

impl PendingAssertion {
    /// The substituted `expression`, parsed here in `flavour`. `span` is
    /// the directive's value; a syntax error narrows it to the part at fault when the
    /// expression was written without variables (offsets then match the text).
    #[must_use]
    pub fn new(expression: String, span: Span, literal: bool, flavour: Flavour) -> Self {
        match parse_as(&expression, flavour) {
            Ok(assertion) => Self { expression, span, check: Ok(assertion) },
            Err(error) => {
                let span = if literal { narrow(span, error.range.clone()) } else { span };
                let check = Err(Outcome::Invalid { message: error.message, hint: Some(error.hint) });
                Self { expression, span, check }
            }
        }
    }

    /// An assertion that cannot even be rendered (an undefined variable in it).
    #[must_use]
    pub fn invalid(expression: String, span: Span, message: String, hint: Option<String>) -> Self {
        Self { expression, span, check: Err(Outcome::Invalid { message, hint }) }
    }

    /// The parsed check; `None` when the expression is invalid.
    #[must_use]
    pub fn assertion(&self) -> Option<&Assertion> {
        self.check.as_ref().ok()
    }

    /// Evaluates the check against a response's parts (body checks are invalid on a
    /// body that streams, `duration` checks when the timing is unknown).
    #[must_use]
    pub fn evaluate(&self, parts: &ResponseParts<'_>) -> AssertionResult {
        let outcome = match &self.check {
            Ok(assertion) => evaluate_parts(assertion, parts),
            Err(invalid) => invalid.clone(),
        };
        AssertionResult { expression: self.expression.clone(), span: self.span, outcome }
    }
}

/// The part `range` (byte offsets in the expression) of a one-line span.
#[must_use]
pub fn narrow(span: Span, range: std::ops::Range<usize>) -> Span {
    let length = span.len();
    let (start, end) = (range.start.min(length), range.end.min(length));
    let column = |offset: usize| span.start_position.column + u32::try_from(offset).unwrap_or(0);
    Span {
        start: span.start + start,
        end: span.start + end,
        start_position: volley_syntax::Position::new(span.start_position.line, column(start)),
        end_position: volley_syntax::Position::new(span.start_position.line, column(end)),
    }
}

#[cfg(test)]
mod place_tests {
    use volley_syntax::LineIndex;

    use super::Place;

    #[test]
    fn columns_count_characters_and_start_at_one() {
        let text = "GET /\n# @assert «é» == 1\n";
        let lines = LineIndex::new(text);
        let start = text.find("==").unwrap_or_default();
        let place = Place::of(lines.span(start..start + 2), text);
        assert_eq!(place, Place { line: 2, column: 15 });
    }
}
