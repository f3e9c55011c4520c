//! The state of an open document's parse: its tree and model, a parse running on a
//! thread of its own, or a text over the parse budget; every parse within that budget.

use std::ops::Range;
use std::sync::Arc;

use volley_syntax::SyntaxTree;

use crate::model::Model;
use crate::opening::Parse;

/// A document's syntax tree and typed model, or the parse that makes them.
#[derive(Debug)]
pub(crate) enum Parsed {
    Ready {
        tree: SyntaxTree,
        model: Arc<Model>,
    },
    /// A large document just opened: parsed on a thread of its own, so that the server
    /// answers meanwhile (its first diagnostics: `diagnostics::first`); the edits that
    /// arrive meanwhile wait here, byte ranges of the text as each found it.
    Running {
        parse: Arc<Parse>,
        edits: Vec<(Range<usize>, String)>,
    },
    /// A text over the parse budget ([`volley_syntax::Budget::standard`]): no tree, a
    /// model without parts that says why. Parsed again once the text is at most half as
    /// long as it was then (the junk deleted), or replaced whole.
    Unread {
        model: Arc<Model>,
        len: usize,
    },
}

impl Parsed {
    /// `text` parsed within the parse budget.
    pub(crate) fn within_budget(text: &str) -> Parsed {
        match volley_syntax::within(volley_syntax::Budget::standard(), || Model::parse(text)) {
            Ok((tree, model)) => Parsed::Ready { tree, model: Arc::new(model) },
            Err(exceeded) => Parsed::unread(exceeded, text.len()),
        }
    }

    pub(crate) fn unread(exceeded: volley_syntax::Exceeded, len: usize) -> Parsed {
        // What the cut-short parse made is freed: give it back.
        volley_syntax::allocator::release_free_memory();
        Parsed::Unread { model: Arc::new(Model::unread(exceeded)), len }
    }
}
