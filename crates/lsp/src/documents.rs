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

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, MutexGuard};
use ropey::Rope;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};
use volley_engine::io::MemoryFs;
use volley_syntax::{Document, Position, ProtoImport, Protocol, Span, Spanned, SyntaxTree, VariableDeclaration};

use crate::convert;
use crate::diagnostics::PartDiagnostics;

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
    model: Arc<Model>,
    path: Option<PathBuf>,
    /// The text changed since it was last copied into the engine's files.
    unsynced: bool,
}

/// Documents up to this size are copied into the engine's files on every change; larger
/// ones once their diagnostics are published (see [`Documents::sync_file`]), so that the
/// copy is not in the way of a keystroke's diagnostics.
const SYNC_AT_ONCE_BYTES: usize = 256 * 1024;

/// `true` for the configuration files a document's analysis reads: open in the editor,
/// their unsaved text counts, but they are not `.http` documents (no diagnostics).
pub(crate) fn is_config(uri: &Uri) -> bool {
    let path = uri.path().as_str();
    ["volley.jsonc", "http-client.env.json", "http-client.private.env.json"].iter().any(|name| path.ends_with(name))
}

/// What a feature needs of one version of a document, taken cheaply under the lock.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) version: i32,
    pub(crate) rope: Rope,
    pub(crate) model: Arc<Model>,
    pub(crate) path: Option<PathBuf>,
}

impl Snapshot {
    /// The typed document of the whole text, built once per version on first use (for
    /// features that walk everything: symbols, navigation, formatting).
    pub(crate) fn document(&self) -> Arc<Document> {
        Arc::clone(self.model.whole.get_or_init(|| Arc::new(volley_syntax::parse(&self.rope.to_string()))))
    }
}

/// One chunk of a document's syntax tree with what is known of it, offsets and
/// positions counted from the chunk's start.
#[derive(Debug)]
pub(crate) struct Part {
    /// The chunk's id (see `volley_syntax::ChunkInfo::id`).
    pub(crate) id: u64,
    /// The chunk's text, shared with the syntax tree (a part shared by two versions may
    /// start elsewhere in each: see [`Placed`]).
    pub(crate) text: Arc<str>,
    /// What features over the whole file read of the chunk's typed document.
    pub(crate) outline: Outline,
    /// The typed document, while it is kept (see [`Part::document`]).
    document: Mutex<Option<Arc<Document>>>,
    /// Diagnostics computed from this part, kept while the chunk is unchanged.
    pub(crate) diagnostics: PartDiagnostics,
}

impl Part {
    /// A part of the chunk `id` with this text and typed document; `keep` keeps the
    /// document (else it is made again when asked for).
    fn new(id: u64, text: Arc<str>, document: Document, keep: bool) -> Part {
        let diagnostics = PartDiagnostics::new(&text, &document);
        let outline = Outline::of(&document);
        let document = Mutex::new(keep.then(|| Arc::new(document)));
        Part { id, text, outline, document, diagnostics }
    }

    /// The chunk's typed document: the one kept, else made again from the text (in
    /// about a millisecond for a chunk of 32 KiB) and kept until the next edit of the
    /// file.
    pub(crate) fn document(&self) -> Arc<Document> {
        let mut kept = self.document.lock();
        Arc::clone(kept.get_or_insert_with(|| Arc::new(volley_syntax::parse_chunk(&self.text))))
    }

    /// The chunk's typed document without keeping it when it was not kept: for walks
    /// over every part, which would otherwise keep them all.
    pub(crate) fn document_once(&self) -> Arc<Document> {
        let kept = self.document.lock().clone();
        kept.unwrap_or_else(|| Arc::new(volley_syntax::parse_chunk(&self.text)))
    }

    fn forget_document(&self) {
        self.document.lock().take();
    }
}

/// What features over the whole file read of a part's typed document (completion's
/// request names, folding, code lenses, the duplicate-name check, the schema of gRPC
/// requests in other parts), kept where the document is not: about 2% of its size.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    /// The blocks in order.
    pub(crate) blocks: Vec<OutlineBlock>,
    /// The file variable declarations in order.
    pub(crate) variables: Vec<VariableDeclaration>,
    /// What the part's scripts may set (its script files not read).
    pub(crate) script_variables: volley_engine::analysis::ScriptVariables,
    /// The part has a gRPC request (the gRPC features pass over the others).
    pub(crate) grpc: bool,
    /// httpyac's `proto <` lines of the part's blocks without a request line: they apply
    /// to every gRPC request of the file.
    pub(crate) global_proto_imports: Vec<ProtoImport>,
}

/// A block of an [`Outline`].
#[derive(Debug)]
pub(crate) struct OutlineBlock {
    /// As `volley_syntax::Block::span`.
    pub(crate) span: Span,
    /// The block's request, when it has one.
    pub(crate) request: Option<RequestOutline>,
}

/// A request of an [`Outline`]: the fields of `volley_syntax::Request` of the same names.
#[derive(Debug)]
pub(crate) struct RequestOutline {
    pub(crate) span: Span,
    pub(crate) line_span: Span,
    pub(crate) name: Option<Spanned<String>>,
}

impl Outline {
    fn of(document: &Document) -> Outline {
        let blocks = document
            .blocks
            .iter()
            .map(|block| OutlineBlock {
                span: block.span,
                request: block.request.as_deref().map(|request| RequestOutline {
                    span: request.span,
                    line_span: request.line_span,
                    name: request.name.clone(),
                }),
            })
            .collect();
        Outline {
            blocks,
            variables: document.variables.clone(),
            script_variables: volley_engine::analysis::ScriptVariables::of_document(document),
            grpc: document.requests().any(|request| matches!(request.protocol, Protocol::Grpc(_))),
            global_proto_imports: document
                .blocks
                .iter()
                .filter(|block| block.request.is_none())
                .flat_map(|block| block.proto_imports.iter().cloned())
                .collect(),
        }
    }

    /// The request of the block that contains the byte `offset` (as
    /// `volley_syntax::Document::request_at`).
    fn request_at(&self, offset: usize) -> Option<&RequestOutline> {
        let index = self.blocks.partition_point(|block| block.span.start <= offset);
        index.checked_sub(1).and_then(|index| self.blocks.get(index)).and_then(|block| block.request.as_ref())
    }

    fn requests(&self) -> impl Iterator<Item = &RequestOutline> {
        self.blocks.iter().filter_map(|block| block.request.as_ref())
    }
}

/// A part where it is in one version of the file.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    pub(crate) part: Arc<Part>,
    /// Byte offset of the chunk in the file.
    pub(crate) start: usize,
    /// Line and byte column of the file where the chunk starts.
    pub(crate) start_position: Position,
}

impl Placed {
    /// A span of the part's document, placed in the file.
    pub(crate) fn place(&self, span: Span) -> Span {
        Span {
            start: span.start + self.start,
            end: span.end + self.start,
            start_position: self.place_position(span.start_position),
            end_position: self.place_position(span.end_position),
        }
    }

    fn place_position(&self, position: Position) -> Position {
        if position.line == 0 {
            Position::new(self.start_position.line, self.start_position.column + position.column)
        } else {
            Position::new(self.start_position.line + position.line, position.column)
        }
    }

    /// A byte offset of the file, counted from the chunk's start.
    pub(crate) fn local(&self, offset: usize) -> usize {
        offset.saturating_sub(self.start)
    }
}

/// The typed model of one version of a document: its parts in file order.
#[derive(Debug, Default)]
pub(crate) struct Model {
    pub(crate) parts: Vec<Placed>,
    whole: OnceLock<Arc<Document>>,
}

impl Model {
    /// A text parsed from scratch and its model. The parts are made on the threads that
    /// parse their chunks, each document dropped there, so that the documents of the
    /// whole file are never held at once.
    fn parse(text: &str) -> (SyntaxTree, Model) {
        let (tree, parts) = SyntaxTree::with_chunk_documents(text, |chunk, document| {
            Arc::new(Part::new(chunk.id, Arc::clone(chunk.text), document, false))
        });
        let parts = tree
            .chunks()
            .zip(parts)
            .map(|(chunk, part)| Placed { part, start: chunk.start, start_position: chunk.start_position })
            .collect();
        (tree, Model { parts, whole: OnceLock::new() })
    }

    /// The model of `tree` after an edit, reusing the parts of `previous` whose chunks
    /// are unchanged. The new parts keep their documents; the reused ones forget theirs.
    fn build(tree: &SyntaxTree, previous: &Model) -> Model {
        let reusable: HashMap<u64, &Arc<Part>> =
            previous.parts.iter().map(|placed| (placed.part.id, &placed.part)).collect();
        let parts = tree
            .chunks()
            .enumerate()
            .map(|(index, chunk)| {
                let part = reusable.get(&chunk.id).map_or_else(
                    || {
                        let document = tree.chunk_document(index).unwrap_or_default();
                        Arc::new(Part::new(chunk.id, Arc::clone(chunk.text), document, true))
                    },
                    |part| {
                        part.forget_document();
                        Arc::clone(part)
                    },
                );
                Placed { part, start: chunk.start, start_position: chunk.start_position }
            })
            .collect();
        Model { parts, whole: OnceLock::new() }
    }

    /// The part a byte offset of the file falls in (the last one for the end of the
    /// text).
    pub(crate) fn part_at(&self, offset: usize) -> Option<&Placed> {
        let index = self.parts.partition_point(|placed| placed.start <= offset).saturating_sub(1);
        self.parts.get(index)
    }

    /// The request whose block holds the byte `offset` of the file, with its part.
    pub(crate) fn request_at(&self, offset: usize) -> Option<(&Placed, &RequestOutline)> {
        let placed = self.part_at(offset)?;
        placed.part.outline.request_at(placed.local(offset)).map(|request| (placed, request))
    }

    /// Every request of the file in order, with its part.
    pub(crate) fn requests(&self) -> impl Iterator<Item = (&Placed, &RequestOutline)> {
        self.parts.iter().flat_map(|placed| placed.part.outline.requests().map(move |request| (placed, request)))
    }

    /// Every file variable declaration of the file, in order.
    pub(crate) fn variables(&self) -> impl Iterator<Item = &VariableDeclaration> {
        self.parts.iter().flat_map(|placed| &placed.part.outline.variables)
    }

    /// What the scripts of every part may set (their script files not read).
    pub(crate) fn script_variables(&self) -> volley_engine::analysis::ScriptVariables {
        let mut all = volley_engine::analysis::ScriptVariables::default();
        for placed in &self.parts {
            all.extend(&placed.part.outline.script_variables);
        }
        all
    }

    /// The names of the file's named requests, in order.
    pub(crate) fn request_names(&self) -> impl Iterator<Item = &str> {
        self.requests().filter_map(|(_, request)| request.name.as_ref().map(|name| name.value.as_str()))
    }
}

impl Documents {
    pub(crate) fn new(files: MemoryFs) -> Self {
        Self { open: Arc::default(), files }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        // A panic in another handler leaves the map consistent (edits are applied whole).
        self.open.lock()
    }

    /// Opens (or reopens) a document.
    pub(crate) fn open(&self, uri: &Uri, version: i32, text: &str) {
        let path = convert::path(uri);
        if let Some(path) = &path {
            self.files.insert(path, text);
        }
        let (tree, model) = Model::parse(text);
        let entry = Entry { version, rope: Rope::from_str(text), tree, model: Arc::new(model), path, unsynced: false };
        self.lock().insert(uri.as_str().to_owned(), entry);
        if text.len() > SYNC_AT_ONCE_BYTES {
            // Parsing freed trees and documents of several times the text's size.
            volley_syntax::allocator::release_free_memory();
        }
    }

    /// Applies `changes` in order and stamps the document with `version`. Returns `false`
    /// for a document that is not open.
    pub(crate) fn change(&self, uri: &Uri, version: i32, changes: &[TextDocumentContentChangeEvent]) -> bool {
        let mut open = self.lock();
        let Some(entry) = open.get_mut(uri.as_str()) else {
            return false;
        };
        // The model of a text replaced whole, made as it was parsed.
        let mut replaced = None;
        for change in changes {
            if let Some(range) = change.range {
                replaced = None;
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
                let (tree, model) = Model::parse(&change.text);
                entry.tree = tree;
                replaced = Some(model);
            }
        }
        entry.version = version;
        entry.model = Arc::new(match replaced {
            Some(model) => model,
            None => Model::build(&entry.tree, &entry.model),
        });
        entry.unsynced = entry.path.is_some();
        if let Some(path) = &entry.path
            && entry.rope.len_bytes() <= SYNC_AT_ONCE_BYTES
        {
            self.files.insert(path, entry.rope.to_string());
            entry.unsynced = false;
        }
        true
    }

    /// Copies a large document's unsaved text into the engine's files, if it changed
    /// since the last copy.
    pub(crate) fn sync_file(&self, uri: &Uri) {
        let (rope, path) = {
            let mut open = self.lock();
            let Some(entry) = open.get_mut(uri.as_str()).filter(|entry| entry.unsynced) else { return };
            entry.unsynced = false;
            (entry.rope.clone(), entry.path.clone())
        };
        if let Some(path) = path {
            self.files.insert(path, rope.to_string());
            // The copy it replaced, and what computing the diagnostics freed.
            volley_syntax::allocator::release_free_memory();
        }
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

    /// A snapshot of a document, if it is open.
    pub(crate) fn snapshot(&self, uri: &Uri) -> Option<Snapshot> {
        self.lock().get(uri.as_str()).map(|entry| Snapshot {
            version: entry.version,
            rope: entry.rope.clone(),
            model: Arc::clone(&entry.model),
            path: entry.path.clone(),
        })
    }
}
