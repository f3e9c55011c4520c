//! Tree-sitter grammar for `.http` request files, as used by Volley.
//!
//! The language is named `volley_http` so that it never clashes with the `http` parser
//! that nvim-treesitter ships. Load it into a [`tree_sitter::Parser`]:
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser
//!     .set_language(&tree_sitter_volley_http::LANGUAGE.into())
//!     .expect("the grammar and the runtime share an ABI");
//! let tree = parser.parse("GET https://example.com\n", None).unwrap();
//! assert!(!tree.root_node().has_error());
//! ```
//!
//! [`tree_sitter::Parser`]: https://docs.rs/tree-sitter/*/tree_sitter/struct.Parser.html

use tree_sitter_language::LanguageFn;

#[allow(unsafe_code)] // The one foreign function: the generated parser's entry point.
mod ffi {
    unsafe extern "C" {
        pub(crate) fn tree_sitter_volley_http() -> *const ();
    }
}

/// The tree-sitter [`LanguageFn`] of this grammar.
#[allow(unsafe_code)] // `from_raw` needs the generated entry point, which is sound by construction.
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(ffi::tree_sitter_volley_http) };

/// The name the language is registered under (`volley_http`).
pub const LANGUAGE_NAME: &str = "volley_http";

/// The content of the generated `node-types.json`.
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

/// Syntax highlighting queries.
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");

/// Language injections: JSON, XML and GraphQL bodies by `Content-Type`.
pub const INJECTIONS_QUERY: &str = include_str!("../../queries/injections.scm");

/// Fold ranges: blocks, bodies and scripts.
pub const FOLDS_QUERY: &str = include_str!("../../queries/folds.scm");

#[cfg(test)]
mod tests {
    #[test]
    fn loads_the_grammar() {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&super::LANGUAGE.into()).expect("the grammar and the runtime share an ABI");
    }
}
