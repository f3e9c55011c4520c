//! What the features answer before it is made into LSP's types (`convert.rs`, the one
//! place that does): completion candidates, a hover, the conversion of a pasted curl
//! command.

use std::ops::Range;

/// What a candidate is, for its icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Variable,
    Reference,
    Function,
    Method,
    Keyword,
    Property,
    Value,
    /// A gRPC service.
    Module,
    /// A field of a gRPC message.
    Field,
}

/// One completion candidate: `text` replaces the bytes `replace` of the document.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) label: String,
    pub(crate) kind: Kind,
    pub(crate) detail: Option<String>,
    /// Markdown.
    pub(crate) documentation: Option<String>,
    pub(crate) text: String,
    /// `text` is an LSP snippet (`${1:min}`).
    pub(crate) snippet: bool,
    pub(crate) replace: Range<usize>,
}

/// What a hover shows: Markdown over the bytes `range`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hover {
    pub(crate) markdown: String,
    pub(crate) range: Range<usize>,
}

/// The title of the action.
pub(crate) const TITLE: &str = "Convert cURL command to request";

/// An edit that replaces a curl command with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conversion {
    /// The bytes of the command's lines, their last line break included.
    pub(crate) replace: Range<usize>,
    /// The request.
    pub(crate) text: String,
}
