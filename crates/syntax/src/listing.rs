//! How many diagnostics a document lists: at most [`MAX_LISTED`] of each code. The others
//! are counted, and one more diagnostic of the code says how many.
//!
//! Text far from the format (a binary file, ten megabytes of `{{`) has a problem on every
//! line or every few bytes: listing them all would take memory and output in proportion
//! to the garbage, and help nobody. The limit is per code, so a flood of one kind never
//! hides the first diagnostics of another.
//!
//! An error that is not listed must still stop the requests it belongs to from being
//! sent: the earliest one is kept ([`Listing::finish`]), and every request that does not
//! end before it is refused ([`crate::Document::refusal_of`]).

use std::collections::BTreeMap;

use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;

/// The most diagnostics of one code a document lists.
pub const MAX_LISTED: usize = 200;

/// Diagnostics being collected, at most [`MAX_LISTED`] of each code.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    diagnostics: Vec<Diagnostic>,
    counts: BTreeMap<Code, Count>,
    first_unlisted_error: Option<Diagnostic>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Count {
    listed: usize,
    unlisted: usize,
}

impl Listing {
    /// An empty listing.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a diagnostic: listed while its code has room, counted otherwise.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        let count = self.counts.entry(diagnostic.code).or_default();
        if count.listed < MAX_LISTED {
            count.listed += 1;
            self.diagnostics.push(diagnostic);
        } else {
            count.unlisted += 1;
            if diagnostic.is_error() {
                self.note_unlisted_error(diagnostic.span, || diagnostic);
            }
        }
    }

    /// `true` when no more diagnostics of `code` are listed: a caller can then count one
    /// with `Listing::skip` without building its message.
    #[must_use]
    pub fn is_full(&self, code: Code) -> bool {
        self.counts.get(&code).is_some_and(|count| count.listed >= MAX_LISTED)
    }

    /// Counts a diagnostic of a full code at `span`; `make` builds it only when it is
    /// the earliest error not listed.
    pub(crate) fn skip(&mut self, code: Code, span: Span, make: impl FnOnce() -> Diagnostic) {
        self.counts.entry(code).or_default().unlisted += 1;
        if code.severity() == crate::Severity::Error {
            self.note_unlisted_error(span, make);
        }
    }

    fn note_unlisted_error(&mut self, span: Span, make: impl FnOnce() -> Diagnostic) {
        if self.first_unlisted_error.as_ref().is_none_or(|first| span.start < first.span.start) {
            self.first_unlisted_error = Some(make());
        }
    }

    /// Keeps the listed diagnostics for which `keep` is true.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&Diagnostic) -> bool) {
        let counts = &mut self.counts;
        self.diagnostics.retain(|diagnostic| {
            let kept = keep(diagnostic);
            if !kept && let Some(count) = counts.get_mut(&diagnostic.code) {
                count.listed -= 1;
            }
            kept
        });
    }

    /// Adds the diagnostics of `other` (listed while there is room) and its counts.
    pub fn extend(&mut self, other: Listing) {
        for diagnostic in other.diagnostics {
            self.push(diagnostic);
        }
        for (code, count) in other.counts {
            self.counts.entry(code).or_default().unlisted += count.unlisted;
        }
        if let Some(first) = other.first_unlisted_error {
            self.note_unlisted_error(first.span, || first);
        }
    }

    /// The listed diagnostics as they are: unsorted, without the counts.
    pub(crate) fn into_listed(self) -> Vec<Diagnostic> {
        self.diagnostics
    }

    /// The diagnostics in source order, each code's count of the unlisted ones after its
    /// last listed one, and the earliest error that is not listed.
    #[must_use]
    pub fn finish(self) -> (Vec<Diagnostic>, Option<Diagnostic>) {
        let Self { mut diagnostics, counts, first_unlisted_error } = self;
        let order = |diagnostic: &Diagnostic| (diagnostic.span.start, diagnostic.span.end);
        diagnostics.sort_by_key(order);
        let mut summaries = Vec::new();
        for (code, count) in counts.into_iter().filter(|(_, count)| count.unlisted > 0) {
            let Some(last) = diagnostics.iter().rev().find(|diagnostic| diagnostic.code == code) else { continue };
            summaries.push(summary(code, count.unlisted, last.span));
        }
        if !summaries.is_empty() {
            // Stable: each summary lands after the diagnostics at its place.
            diagnostics.extend(summaries);
            diagnostics.sort_by_key(order);
        }
        (diagnostics, first_unlisted_error)
    }
}

fn summary(code: Code, unlisted: usize, at: Span) -> Diagnostic {
    if code == Code::SyntaxError {
        return Diagnostic::new(code, at, format!("{unlisted} more syntax errors are not listed"))
            .with_hint("fix the errors above first; text with this many is probably not a .http file");
    }
    Diagnostic::new(code, at, format!("{unlisted} more `{}` diagnostics are not listed", code.as_str()))
        .with_hint(format!("only the first {MAX_LISTED} of each kind are listed; fix those first"))
}

/// Why a request at or after the earliest unlisted error is refused: its own errors may
/// be among those not listed.
pub(crate) fn unlisted_reason(first: &Diagnostic) -> Diagnostic {
    let line = first.span.start_position.line + 1;
    Diagnostic::new(
        first.code,
        first.span,
        format!("the file has more errors than are listed, from line {line} on: requests from there on are not sent"),
    )
    .with_hint(format!("line {line}: {}; fix the listed errors first", first.message))
}
