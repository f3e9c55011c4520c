//! Volley's syntax layer: `.http` text → tree-sitter tree → typed [`Document`] with
//! [`Diagnostic`]s.
//!
//! There is one parser in the project, the tree-sitter grammar in `tree-sitter-http/`;
//! this crate walks its tree into a typed model. It does no IO and has no async.
//! Parsing never fails: any text gives a document, and what is wrong with it is in
//! [`Document::diagnostics`].
//!
//! ```
//! let document = volley_syntax::parse(
//!     "### Login\n# @timeout 5 s\nPOST https://example.com/login\nContent-Type: application/json\n\n{\"user\": \"{{user}}\"}\n",
//! );
//! let request = document.request(0).unwrap();
//! assert_eq!(request.name.as_ref().unwrap().value, "Login");
//! assert_eq!(request.method.value, volley_syntax::Method::Post);
//! assert_eq!(request.timeout.as_ref().unwrap().millis(), Some(5000));
//! assert!(document.diagnostics.is_empty());
//! ```

#[cfg(feature = "mimalloc")]
pub mod allocator;
mod budget;
mod chunk;
mod command;
mod composition;
mod diagnostic;
pub mod directive;
mod document;
mod grammar;
mod known;
pub mod line_break;
mod listing;
mod lower;
mod messages;
mod method;
mod refusal;
mod request_body;
mod span;
mod suggest;
mod template;
pub mod threshold;
mod tree;

pub use budget::{Budget, DEFAULT_PARSE_MEMORY, DEFAULT_PARSE_TIME, Exceeded, PARSE_BUDGET_HINT};
pub use command::{Command, CommandKind, Loop, RunTarget, RunVariable};
pub use diagnostic::{Code, Diagnostic, Severity};
pub use directive::{DirectiveInfo, DirectiveKind, ValueRule};
pub use document::{
    Block, Body, BodyPart, Directive, Document, FileBody, FormBody, FormField, FormValue, GraphQlBody, GraphQlFragment,
    GrpcOptions, Header, PartsBody, ProtoImport, Protocol, Request, Script, ScriptKind, Separator, SseOptions, Timeout,
    VariableDeclaration, WebSocketOptions,
};
pub use grammar::language;
pub use known::Known;
pub use listing::{Listing, MAX_LISTED};
pub use lower::duplicate_names;
pub use messages::{StreamMessage, split_messages, without_separator};
pub use method::Method;
pub use refusal::{BrokenVariable, Refusal};
pub use span::{LineIndex, Position, Span, Spanned};
pub use suggest::{closest, edit_distance};
pub use template::{
    Arguments, Expression, Interpolation, Part, ResolverCall, Template, is_variable_name, variable_path_segments,
};
pub use tree::{ChunkInfo, EditError, SyntaxTree};

/// Parses `text` into a typed document. Never fails and never panics.
#[must_use]
pub fn parse(text: &str) -> Document {
    // Each chunk is lowered on the thread that parsed it and its tree dropped there.
    let parts = chunk::parse_chunks(text, chunk::TARGET_CHUNK_BYTES, |chunk| lower::lower_chunk(&chunk));
    lower::merge(parts)
}

/// The typed document of a chunk's text alone, as [`SyntaxTree::chunk_document`] gives
/// it for a chunk with this text: for front ends that keep a chunk's text
/// ([`ChunkInfo::text`]) and make its document again when they need it.
#[must_use]
pub fn parse_chunk(text: &str) -> Document {
    lower::lower_chunk_relative(&chunk::Chunk::parse(text))
}

/// The end of the first chunks a [`SyntaxTree`] of `text` is cut into that hold at least
/// `at_least` bytes (the length of the text when that is all of them), found without
/// reading the text after it. The text before it is whole blocks, cut where the whole
/// text is cut: it parses alone into the same chunks, with the same diagnostics, as at
/// the start of the whole text. A front end can so show what comes first of a large
/// file before the rest is parsed.
///
/// ```
/// let text = "GET https://example.com/a\n###\nGET https://example.com/b\n";
/// assert_eq!(volley_syntax::first_chunks_end(text, 0), text.len(), "one chunk of a small text");
/// ```
#[must_use]
pub fn first_chunks_end(text: &str, at_least: usize) -> usize {
    chunk::first_ranges_end(text, chunk::TARGET_CHUNK_BYTES, at_least)
}

/// [`parse`] within a [`Budget`] of time and tree memory: the limit exceeded when the
/// document could not be made within it. The parse stops soon after (tree-sitter checks
/// the budget as it goes, the typed layer between blocks), so a caller that must stay
/// responsive (the execution server) bounds what any text costs it.
pub fn parse_within(text: &str, budget: Budget) -> Result<Document, Exceeded> {
    let _budget = budget::start(budget);
    let document = parse(text);
    match budget::exceeded() {
        Some(exceeded) => Err(exceeded),
        None => Ok(document),
    }
}

/// Runs `work` within a [`Budget`]: every parse and edit of a [`SyntaxTree`] it makes
/// (on this thread, and on the threads those start) stops soon after a limit is
/// exceeded, and the limit comes back instead of what `work` made, which is then
/// incomplete. For front ends that keep trees through edits (the language server).
///
/// ```
/// let budget = volley_syntax::Budget { deadline: Some(std::time::Instant::now()), tree_bytes: None };
/// let over = volley_syntax::within(budget, || volley_syntax::SyntaxTree::new("GET http://a/\n"));
/// assert_eq!(over.err(), Some(volley_syntax::Exceeded::Time));
/// ```
pub fn within<T>(budget: Budget, work: impl FnOnce() -> T) -> Result<T, Exceeded> {
    let _budget = budget::start(budget);
    let made = work();
    match budget::exceeded() {
        Some(exceeded) => Err(exceeded),
        None => Ok(made),
    }
}

/// Reads text that is only a template, such as the content of a `<@ ./file` body:
/// `{{ }}` interpolations are found exactly as in a `.http` body, and nothing else in
/// the text is special. Problems (unclosed or empty `{{`) come back as diagnostics with
/// spans in `text`.
///
/// ```
/// let (template, diagnostics) = volley_syntax::parse_template("{\"id\": \"{{id}}\"}\n### not a separator\n");
/// assert!(diagnostics.is_empty());
/// assert_eq!(template.interpolations().count(), 1);
/// assert_eq!(template.to_source(), "{\"id\": \"{{id}}\"}\n### not a separator\n");
/// ```
#[must_use]
pub fn parse_template(text: &str) -> (Template, Vec<Diagnostic>) {
    lower::template_text(text)
}

/// Parses `text` as one tree, without cutting it into chunks (what an editor that runs
/// the grammar on the whole buffer sees), unless it has syntax errors: then, as
/// everywhere, one tree per block. Tests use it to check that chunking never changes a
/// document; [`parse`] is faster on large texts.
#[doc(hidden)]
#[must_use]
pub fn parse_unchunked(text: &str) -> Document {
    let parts = chunk::parse_chunks(text, usize::MAX, |chunk| lower::lower_chunk(&chunk));
    lower::merge(parts)
}
