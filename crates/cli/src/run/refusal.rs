//! Why a run does not send a request, as the CLI shows it: refused by the rule of every
//! front end ([`Document::refusal_of`]), or a `# @note` nobody could confirm. The reasons
//! are placed by the engine ([`PlacedDiagnostic`]); this chooses their words.

use volley_engine::report::PlacedDiagnostic;
use volley_syntax::{Document, Request, Span};

/// Why a request is not sent.
#[derive(Debug, Clone)]
pub(crate) enum Refusal {
    /// The request has errors, or uses file variables that do.
    Errors(volley_syntax::Refusal),
    /// It has a `# @note`, and nobody could confirm it: stdin is not a terminal and
    /// `--yes` was not given.
    Unconfirmed {
        /// The `# @note` line.
        note: Span,
    },
}

impl Refusal {
    /// Every reason, in the order they are shown (compiler-style, or the first as a JSON
    /// error), placed in `text`, the file's text.
    pub(crate) fn problems(&self, text: &str) -> Vec<PlacedDiagnostic> {
        match self {
            Refusal::Errors(refusal) => refusal
                .errors
                .iter()
                .map(|error| PlacedDiagnostic::of(error, text))
                .chain(refusal.broken_variables.iter().map(|variable| PlacedDiagnostic {
                    // Its error is printed before the run, with those no request owns.
                    hint: Some(format!(
                        "fix `@{}` on line {} (its error is shown before the run); the requests that do not use \
                         it still run",
                        variable.name, variable.declared_line
                    )),
                    ..PlacedDiagnostic::of(&variable.diagnostic(), text)
                }))
                .collect(),
            Refusal::Unconfirmed { note } => vec![PlacedDiagnostic::new(
                "note-not-confirmed",
                "the request has a `# @note` to confirm, and stdin is not a terminal",
                Some("run it from a terminal to be asked, or pass --yes (-y) to send it without asking".to_owned()),
                *note,
                text,
            )],
        }
    }
}

/// The refusal of `request`, or `None` when it can be sent.
pub(crate) fn of(document: &Document, request: &Request) -> Option<Refusal> {
    document.refusal_of(request).map(Refusal::Errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_variable_is_shown_with_the_hint_of_a_run() {
        let text = "@token = {{unclosed\nGET https://h/{{token}}\nbad header\n";
        let document = volley_syntax::parse(text);
        let problems = of(&document, document.request(0).unwrap()).unwrap().problems(text);
        let codes: Vec<_> = problems.iter().map(|problem| problem.code).collect();
        assert_eq!(codes, ["malformed-header", "broken-variable"]);
        assert_eq!((problems[1].place.line, problems[1].place.column), (2, 17));
        assert_eq!(
            problems[1].hint.as_deref(),
            Some(
                "fix `@token` on line 1 (its error is shown before the run); the requests that do not use it still run"
            )
        );
    }
}
