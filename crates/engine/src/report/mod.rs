//! The result model every front end maps from: the exchange of a request that got a
//! response (`exchange.rs`), assertion results with their place in the `.http` text
//! computed once (`assertion.rs`), the kind of an error named once (`kind.rs`), an error
//! with its message, hint and place computed once (`error.rs`) and the reasons a request
//! is refused, each placed once (`diagnostic.rs`). Secrets are hidden by the engine's one
//! policy ([`crate::redact`]) before anything reaches here; front ends decide neither
//! positions, kinds nor secrets.

mod assertion;
mod diagnostic;
mod error;
mod exchange;
mod kind;

pub use assertion::{PlacedAssertion, place_assertions};
pub use diagnostic::PlacedDiagnostic;
pub use error::PlacedError;
pub use exchange::{BodySummary, Exchange, GrpcSummary, ResponseSummary, SentSummary};
pub use kind::ErrorKind;
