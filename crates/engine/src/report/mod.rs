//! The result model every front end maps from: the exchange of a request that got a
//! response (`exchange.rs`), assertion results with their place in the `.http` text
//! computed once (`assertion.rs`), the kind of an error named once (`ErrorKind`, volley-model's), an error
//! with its message, hint and place computed once (`error.rs`) and the reasons a request
//! is refused, each placed once (`diagnostic.rs`). Secrets are hidden by the engine's one
//! policy ([`crate::redact`]) before anything reaches here; front ends decide neither
//! positions, kinds nor secrets.

mod assertion;
mod diagnostic;
mod error;
mod exchange;

pub use assertion::{PlacedAssertion, place_assertions};
pub use diagnostic::PlacedDiagnostic;
pub use error::PlacedError;
pub use exchange::{BodySummary, Exchange, GrpcSummary, ResponseSummary, SentSummary};
/// Classified beside the [`Error`](crate::Error) it classifies (volley-model), so that the
/// match stays exhaustive.
pub use volley_model::error::ErrorKind;

/// Text for HTML content and quoted attributes, as the report pages write it (the CLI's
/// run report, the load report).
#[must_use]
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
