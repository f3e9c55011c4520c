//! The open documents: a version-stamped map from URI to text (a `Rope`) and syntax tree,
//! changed synchronously, in the order the edits arrive, before any handler awaits.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use ropey::Rope;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};
use volley_engine::MemoryFs;
use volley_syntax::SyntaxTree;

use crate::convert;

/// The open documents, shared by every handler. Its lock is never held across `.await`.
#[derive(Debug, Clone)]
pub(crate) struct Documents {
    open: Arc<Mutex<HashMap<String, Entry>>>,
    /// The unsaved buffers, seen by the engine's analysis (file references, config).
    files: MemoryFs,
}

#[derive(Debug)]
struct Entry {
    version: i32,
    rope: Rope,
    tree: SyntaxTree,
    path: Option<PathBuf>,
}

/// What a feature needs of one version of a document, taken cheaply under the lock.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) version: i32,
    pub(crate) rope: Rope,
    pub(crate) tree: SyntaxTree,
    pub(crate) path: Option<PathBuf>,
}

impl Documents {
    pub(crate) fn new(files: MemoryFs) -> Self {
        Self { open: Arc::default(), files }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        // A panic in another handler leaves the map consistent (edits are applied whole).
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Opens (or reopens) a document.
    pub(crate) fn open(&self, uri: &Uri, version: i32, text: &str) {
        let path = convert::path(uri);
        if let Some(path) = &path {
            self.files.insert(path, text);
        }
        let entry = Entry { version, rope: Rope::from_str(text), tree: SyntaxTree::new(text), path };
        self.lock().insert(uri.as_str().to_owned(), entry);
    }

    /// Applies `changes` in order and stamps the document with `version`. Returns `false`
    /// for a document that is not open.
    pub(crate) fn change(&self, uri: &Uri, version: i32, changes: &[TextDocumentContentChangeEvent]) -> bool {
        let mut open = self.lock();
        let Some(entry) = open.get_mut(uri.as_str()) else {
            return false;
        };
        for change in changes {
            if let Some(range) = change.range {
                let bytes = convert::byte_range(&entry.rope, range);
                let chars = entry.rope.byte_to_char(bytes.start)..entry.rope.byte_to_char(bytes.end);
                entry.rope.remove(chars.clone());
                entry.rope.insert(chars.start, &change.text);
                if entry.tree.edit(bytes, &change.text).is_err() {
                    // Cannot happen for ranges computed from the rope; stay correct anyway.
                    entry.tree = SyntaxTree::new(entry.rope.to_string());
                }
            } else {
                entry.rope = Rope::from_str(&change.text);
                entry.tree = SyntaxTree::new(&change.text);
            }
        }
        entry.version = version;
        if let Some(path) = &entry.path {
            self.files.insert(path, entry.rope.to_string());
        }
        true
    }

    /// Closes a document: the engine reads the file from disk again.
    pub(crate) fn close(&self, uri: &Uri) {
        if let Some(entry) = self.lock().remove(uri.as_str())
            && let Some(path) = entry.path
        {
            self.files.remove(path);
        }
    }

    /// The current version of a document, if it is open.
    pub(crate) fn version(&self, uri: &Uri) -> Option<i32> {
        self.lock().get(uri.as_str()).map(|entry| entry.version)
    }

    /// A snapshot of a document, if it is open.
    pub(crate) fn snapshot(&self, uri: &Uri) -> Option<Snapshot> {
        self.lock().get(uri.as_str()).map(|entry| Snapshot {
            version: entry.version,
            rope: entry.rope.clone(),
            tree: entry.tree.clone(),
            path: entry.path.clone(),
        })
    }
}
