//! The documents of the texts executed last, so that a text run again (an editor
//! re-running a request, a client polling, a load test) is not parsed again: parsing a
//! one-request text was a seventh of the server's instructions per execution.
//!
//! Parsing depends on the text alone, so a kept document is the one a parse would give.
//! Only small texts are kept (those parsed in place, `PARSED_IN_PLACE_BYTES` of `execute/parse.rs`),
//! and at most [`KEPT_DOCUMENTS`] of them, the least recently used dropped first: the
//! cache holds a few hundred KiB at most, however many texts are executed.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use volley_syntax::Document;

/// How many documents are kept.
pub(crate) const KEPT_DOCUMENTS: usize = 32;

/// The kept documents, by their text.
#[derive(Debug, Default)]
pub(crate) struct Documents {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Text → (document, when it was last used).
    map: HashMap<Box<str>, (Arc<Document>, u64)>,
    clock: u64,
}

impl Documents {
    /// The document of `text`, if it is kept.
    pub(crate) fn get(&self, text: &str) -> Option<Arc<Document>> {
        let mut inner = self.inner.lock();
        inner.clock += 1;
        let now = inner.clock;
        let (document, used) = inner.map.get_mut(text)?;
        *used = now;
        Some(Arc::clone(document))
    }

    /// Keeps the document of `text`, dropping the least recently used one at the cap.
    pub(crate) fn keep(&self, text: &str, document: Arc<Document>) {
        let mut inner = self.inner.lock();
        inner.clock += 1;
        let now = inner.clock;
        if inner.map.len() >= KEPT_DOCUMENTS && !inner.map.contains_key(text) {
            let oldest = inner.map.iter().min_by_key(|(_, (_, used))| *used).map(|(text, _)| text.clone());
            if let Some(oldest) = oldest {
                inner.map.remove(&oldest);
            }
        }
        inner.map.insert(text.into(), (document, now));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recently_used_documents_up_to_the_cap() {
        let documents = Documents::default();
        let text = |index: usize| format!("GET http://127.0.0.1/{index}\n");
        for index in 0..KEPT_DOCUMENTS {
            documents.keep(&text(index), Arc::new(volley_syntax::parse(&text(index))));
        }
        // The first text is used again: the second is now the least recently used.
        let first = documents.get(&text(0)).expect("kept");
        assert_eq!(*first, volley_syntax::parse(&text(0)), "the document a parse gives");
        documents.keep(&text(KEPT_DOCUMENTS), Arc::new(volley_syntax::parse(&text(KEPT_DOCUMENTS))));
        assert_eq!(documents.len(), KEPT_DOCUMENTS);
        assert!(documents.get(&text(0)).is_some());
        assert!(documents.get(&text(1)).is_none(), "the least recently used is dropped");
        assert!(documents.get(&text(KEPT_DOCUMENTS)).is_some());
        // Keeping a kept text again replaces it without dropping another.
        documents.keep(&text(2), Arc::new(volley_syntax::parse(&text(2))));
        assert_eq!(documents.len(), KEPT_DOCUMENTS);
    }
}
