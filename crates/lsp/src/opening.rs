//! A large document's parse on a thread of its own when it is opened: the server
//! answers meanwhile (its first diagnostics), and what needs the model awaits it.

use std::sync::Arc;

use parking_lot::Mutex;
use volley_syntax::SyntaxTree;

use crate::model::Model;

/// What a parse made: the tree and its model, or the limit of the parse budget it went
/// over.
pub(crate) type Outcome = Result<(SyntaxTree, Model), volley_syntax::Exceeded>;

/// A parse on a thread of its own: its result once it is in, and `done` set then (also
/// when the thread could not start or panicked: there is no result then, and the text
/// is parsed where it is needed).
#[derive(Debug)]
pub(crate) struct Parse {
    result: Mutex<Option<Outcome>>,
    done: tokio::sync::watch::Sender<bool>,
}

impl Parse {
    /// Starts parsing `text` on a thread of its own.
    pub(crate) fn start(text: String) -> Arc<Parse> {
        let parse = Arc::new(Parse::new());
        let running = Arc::clone(&parse);
        let spawned = std::thread::Builder::new().name("volley-parse".to_owned()).spawn(move || {
            let finished = Finished(&running);
            let parsed = volley_syntax::within(volley_syntax::Budget::standard(), || Model::parse(&text));
            drop(text);
            *running.result.lock() = Some(parsed);
            // Parsing freed trees and documents of several times the text's size.
            volley_syntax::allocator::release_free_memory();
            drop(finished);
        });
        if spawned.is_err() {
            parse.done.send_replace(true);
        }
        parse
    }

    fn new() -> Parse {
        Parse { result: Mutex::new(None), done: tokio::sync::watch::Sender::new(false) }
    }

    /// A parse of `text` that ends when the returned function runs (tests hold it to
    /// make edits arrive before it ends).
    #[cfg(test)]
    pub(crate) fn held(text: String) -> (Arc<Parse>, impl FnOnce() + use<>) {
        let parse = Arc::new(Parse::new());
        let held = Arc::clone(&parse);
        let finish = move || {
            *held.result.lock() = Some(Ok(Model::parse(&text)));
            held.done.send_replace(true);
        };
        (parse, finish)
    }

    /// The result once the parse is done (`None` inside when it gave none, and for a
    /// parse whose result was taken), else `Err`.
    pub(crate) fn result(&self) -> Result<Option<Outcome>, ()> {
        if *self.done.borrow() { Ok(self.result.lock().take()) } else { Err(()) }
    }

    /// What tells when the parse is done (`wait_for(|done| *done)`).
    pub(crate) fn done(&self) -> tokio::sync::watch::Receiver<bool> {
        self.done.subscribe()
    }
}

/// Sets a parse's `done` when dropped, after its result or a panic.
struct Finished<'a>(&'a Parse);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.done.send_replace(true);
    }
}
