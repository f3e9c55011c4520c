//! Why a run does not send a request, as the CLI shows it: refused by the rule of every
//! front end ([`Document::refusal_of`]), or a `# @note` nobody could confirm.

use volley_syntax::{Diagnostic, Document, Request, Span};

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

/// One reason of a refusal, as it is shown: compiler-style, or as a JSON error.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    pub(crate) code: String,
    pub(crate) message: String,
    pub(crate) span: Span,
    pub(crate) hint: Option<String>,
}

impl Refusal {
    /// Every reason, in the order they are shown.
    pub(crate) fn problems(&self) -> Vec<Problem> {
        match self {
            Refusal::Errors(refusal) => refusal
                .errors
                .iter()
                .map(Problem::of)
                .chain(refusal.broken_variables.iter().map(|variable| Problem {
                    // Its error is printed before the run, with those no request owns.
                    hint: Some(format!(
                        "fix `@{}` on line {} (its error is shown before the run); the requests that do not use \
                         it still run",
                        variable.name, variable.declared_line
                    )),
                    ..Problem::of(&variable.diagnostic())
                }))
                .collect(),
            Refusal::Unconfirmed { note } => vec![Problem {
                code: "note-not-confirmed".to_owned(),
                message: "the request has a `# @note` to confirm, and stdin is not a terminal".to_owned(),
                span: *note,
                hint: Some(
                    "run it from a terminal to be asked, or pass --yes (-y) to send it without asking".to_owned(),
                ),
            }],
        }
    }
}

impl Problem {
    fn of(diagnostic: &Diagnostic) -> Self {
        Problem {
            code: diagnostic.code.as_str().to_owned(),
            message: diagnostic.message.clone(),
            span: diagnostic.span,
            hint: diagnostic.hint.clone(),
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
        let document = volley_syntax::parse("@token = {{unclosed\nGET https://h/{{token}}\nbad header\n");
        let problems = of(&document, document.request(0).unwrap()).unwrap().problems();
        let codes: Vec<_> = problems.iter().map(|problem| problem.code.as_str()).collect();
        assert_eq!(codes, ["malformed-header", "broken-variable"]);
        assert_eq!(
            problems[1].hint.as_deref(),
            Some(
                "fix `@token` on line 1 (its error is shown before the run); the requests that do not use it still run"
            )
        );
    }
}
