//! The open documents: a version-stamped map from URI to text (a `Rope`), syntax tree
//! and typed model, changed synchronously, in the order the edits arrive, before any
//! handler awaits.
//!
//! The typed model is kept per chunk of the syntax tree ([`Part`]): an edit relowers
//! only the chunks it touched, and what is computed from a part (its diagnostics) is
//! kept with it, so the cost of a keystroke does not grow with the size of the file.
//!
//! A part keeps its text and an [`Outline`] (blocks, requests and their names, file
//! variables: what features over the whole file read), not its typed document: that
//! costs about 7 bytes per byte of text, and a chunk's text gives it again in about a
//! millisecond ([`Part::document`]). The parts the latest edit made keep theirs, since
//! the features that follow a keystroke (completion, diagnostics) read them.
//!
//! A document over [`LARGE_DOCUMENT_BYTES`] is parsed on a thread of its own when it is
//! opened (`opening.rs`): the edits that arrive meanwhile are queued and applied once
//! the parse is in, and [`Documents::snapshot`] awaits it. The engine reads an open
//! document's unsaved text through the rope itself (a clone shares it), never a copy.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use ropey::Rope;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};
use volley_engine::io::MemoryFs;

use crate::convert;
use crate::model::{Model, Snapshot};
use crate::opening::Parse;
use crate::parsed::Parsed;

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
    path: Option<PathBuf>,
    parsed: Parsed,
}

impl Entry {
    /// The model, once the parse is done: the queued edits are applied to its tree then.
    /// Else what tells when the parse is done.
    fn model(&mut self) -> Result<Arc<Model>, tokio::sync::watch::Receiver<bool>> {
        if let Parsed::Running { parse, edits } = &mut self.parsed {
            let parsed = parse.result().map_err(|()| parse.done())?;
            let edits = std::mem::take(edits);
            self.parsed = match parsed {
                Some(Ok((tree, model))) if edits.is_empty() => Parsed::Ready { tree, model: Arc::new(model) },
                Some(Ok((mut tree, model))) => {
                    let edited = volley_syntax::within(volley_syntax::Budget::standard(), || {
                        for (range, text) in edits {
                            if tree.edit(range, &text).is_err() {
                                return false;
                            }
                        }
                        true
                    });
                    match edited {
                        Ok(true) => {
                            let model = Arc::new(Model::build(&tree, &model));
                            Parsed::Ready { tree, model }
                        }
                        // Cannot happen for ranges computed from the rope; stay correct anyway.
                        Ok(false) => Parsed::within_budget(&self.rope.to_string()),
                        Err(exceeded) => Parsed::unread(exceeded, self.rope.len_bytes()),
                    }
                }
                Some(Err(exceeded)) => Parsed::unread(exceeded, self.rope.len_bytes()),
                None => Parsed::within_budget(&self.rope.to_string()),
            };
        }
        match &self.parsed {
            Parsed::Ready { model, .. } | Parsed::Unread { model, .. } => Ok(Arc::clone(model)),
            Parsed::Running { .. } => unreachable!("a finished parse was replaced above"),
        }
    }
}

/// A version of a document's text as the engine's files hold it: its rope, shared with
/// the document (a clone is a few pointers), made into bytes only when the engine reads
/// the file (another document imports it, a send reads it). A keystroke copies nothing.
#[derive(Debug)]
struct RopeContents(Rope);

impl volley_engine::io::Contents for RopeContents {
    fn bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.0.len_bytes());
        for chunk in self.0.chunks() {
            bytes.extend_from_slice(chunk.as_bytes());
        }
        bytes
    }
}

/// Opening a document larger than this gives the memory its parse freed back to the
/// system at once.
const RELEASE_AFTER_OPEN_BYTES: usize = 256 * 1024;

/// A document larger than this is parsed on a thread of its own when it is opened, and
/// its first diagnostics are those of its first chunks (`diagnostics::first`).
pub(crate) const LARGE_DOCUMENT_BYTES: usize = 1024 * 1024;

/// `true` for the configuration files a document's analysis reads: open in the editor,
/// their unsaved text counts, but they are not `.http` documents (no diagnostics).
pub(crate) fn is_config(uri: &Uri) -> bool {
    let path = uri.path().as_str();
    ["volley.jsonc", "http-client.env.json", "http-client.private.env.json"].iter().any(|name| path.ends_with(name))
}

impl Documents {
    pub(crate) fn new(files: MemoryFs) -> Self {
        Self { open: Arc::default(), files }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        // A panic in another handler leaves the map consistent (edits are applied whole).
        self.open.lock()
    }

    /// Opens (or reopens) a document. A large one is parsed on a thread of its own
    /// ([`LARGE_DOCUMENT_BYTES`]): what needs its model waits for it
    /// ([`Documents::snapshot`]), its edits are queued meanwhile.
    pub(crate) fn open(&self, uri: &Uri, version: i32, text: String) {
        let path = convert::path(uri);
        let rope = Rope::from_str(&text);
        if let Some(path) = &path {
            self.files.insert_contents(path, Arc::new(RopeContents(rope.clone())));
        }
        let parsed = if text.len() > LARGE_DOCUMENT_BYTES {
            Parsed::Running { parse: Parse::start(text), edits: Vec::new() }
        } else {
            let parsed = Parsed::within_budget(&text);
            if text.len() > RELEASE_AFTER_OPEN_BYTES {
                // Parsing freed trees and documents of several times the text's size.
                volley_syntax::allocator::release_free_memory();
            }
            parsed
        };
        self.lock().insert(uri.as_str().to_owned(), Entry { version, rope, path, parsed });
    }

    /// Applies `changes` in order and stamps the document with `version`. Returns `false`
    /// for a document that is not open.
    pub(crate) fn change(&self, uri: &Uri, version: i32, changes: &[TextDocumentContentChangeEvent]) -> bool {
        let mut open = self.lock();
        let Some(entry) = open.get_mut(uri.as_str()) else {
            return false;
        };
        // The model follows the tree after range edits; a text replaced whole has the
        // model made as it was parsed.
        let mut rebuild = false;
        for change in changes {
            if let Some(range) = change.range {
                let bytes = convert::byte_range(&entry.rope, range);
                let chars = entry.rope.byte_to_char(bytes.start)..entry.rope.byte_to_char(bytes.end);
                entry.rope.remove(chars.clone());
                entry.rope.insert(chars.start, &change.text);
                match &mut entry.parsed {
                    Parsed::Ready { tree, .. } => {
                        match volley_syntax::within(volley_syntax::Budget::standard(), || {
                            tree.edit(bytes, &change.text)
                        }) {
                            Ok(Ok(())) => rebuild = true,
                            // Cannot happen for ranges computed from the rope; stay correct anyway.
                            Ok(Err(_)) => {
                                entry.parsed = Parsed::within_budget(&entry.rope.to_string());
                                rebuild = false;
                            }
                            Err(exceeded) => {
                                entry.parsed = Parsed::unread(exceeded, entry.rope.len_bytes());
                                rebuild = false;
                            }
                        }
                    }
                    Parsed::Running { edits, .. } => edits.push((bytes, change.text.clone())),
                    Parsed::Unread { .. } => {}
                }
            } else {
                entry.rope = Rope::from_str(&change.text);
                entry.parsed = Parsed::within_budget(&change.text);
                rebuild = false;
            }
        }
        // The junk of a text over the budget deleted: read it again.
        if let Parsed::Unread { len, .. } = entry.parsed
            && entry.rope.len_bytes() <= len / 2
        {
            entry.parsed = Parsed::within_budget(&entry.rope.to_string());
        }
        entry.version = version;
        if let Parsed::Ready { tree, model } = &mut entry.parsed
            && rebuild
        {
            *model = Arc::new(Model::build(tree, model));
        }
        if let Some(path) = &entry.path {
            self.files.insert_contents(path, Arc::new(RopeContents(entry.rope.clone())));
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

    /// The URIs and versions of every open document.
    pub(crate) fn all(&self) -> Vec<(Uri, i32)> {
        self.lock().iter().filter_map(|(uri, entry)| uri.parse::<Uri>().ok().map(|uri| (uri, entry.version))).collect()
    }

    /// A snapshot of a document, if it is open: once its parse is done, when it was
    /// opened large and is still parsing (awaited, not blocking the task).
    pub(crate) async fn snapshot(&self, uri: &Uri) -> Option<Snapshot> {
        loop {
            let mut done = {
                let mut open = self.lock();
                let entry = open.get_mut(uri.as_str())?;
                match entry.model() {
                    Ok(model) => {
                        return Some(Snapshot {
                            version: entry.version,
                            rope: entry.rope.clone(),
                            model,
                            path: entry.path.clone(),
                        });
                    }
                    Err(done) => done,
                }
            };
            // Set at the end of the parse, whatever became of it.
            let _ = done.wait_for(|done| *done).await;
        }
    }

    /// The text of a document, if it is open (without waiting for its parse).
    pub(crate) fn rope(&self, uri: &Uri) -> Option<Rope> {
        self.lock().get(uri.as_str()).map(|entry| entry.rope.clone())
    }
}

#[cfg(test)]
impl Documents {
    /// Opens a document as a large one is opened, its parse held until the returned
    /// function runs: the edits made before that are queued.
    pub(crate) fn open_held(&self, uri: &Uri, version: i32, text: &str) -> impl FnOnce() + use<> {
        let (parse, finish) = Parse::held(text.to_owned());
        let parsed = Parsed::Running { parse, edits: Vec::new() };
        let entry = Entry { version, rope: Rope::from_str(text), path: convert::path(uri), parsed };
        self.lock().insert(uri.as_str().to_owned(), entry);
        finish
    }

    /// The syntax tree of an open document whose parse is done.
    pub(crate) fn tree(&self, uri: &Uri) -> Option<volley_syntax::SyntaxTree> {
        match &self.lock().get(uri.as_str())?.parsed {
            Parsed::Ready { tree, .. } => Some(tree.clone()),
            Parsed::Running { .. } | Parsed::Unread { .. } => None,
        }
    }
}
