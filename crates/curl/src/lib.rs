//! cURL command lines: a request written as one (`write.rs`, for "copy as cURL") and a
//! command read back (`parse.rs`) and written as `.http` text (`to_http.rs`), for "paste a
//! cURL command", with POSIX shell quoting (`quote.rs`). The CLI and the language server
//! share them.
//!
//! A crate of its own, below the engine (which adds the command of a built request) and
//! `volley-convert` (which imports a command as a `.http` file, and re-exports this crate
//! as `volley_convert::curl`), so that the engine does not depend on the importers.
//!
//! Invariant: what [`to_curl`] writes, [`parse_curl`] reads back into the same method,
//! URL, headers, body and HTTP version.

mod command;
mod parse;
mod quote;
mod shells;
mod snippets;
mod to_http;
mod write;

pub use command::{CurlParseError, FormField, ParsedBody, ParsedCurl};
pub use parse::parse_curl;
pub use quote::quote;
pub use snippets::{LANGUAGES, snippet};
pub use write::{CurlBody, CurlCommand, CurlRequest, to_curl};
