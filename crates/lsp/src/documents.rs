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

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, MutexGuard};
use ropey::Rope;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};
use volley_engine::io::MemoryFs;
use volley_syntax::{Document, Position, ProtoImport, Protocol, Span, Spanned, SyntaxTree, VariableDeclaration};

use crate::convert;
use crate::diagnostics::PartDiagnostics;
use crate::names::FileNames;
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

/// What a feature needs of one version of a document, taken cheaply under the lock.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) version: i32,
    pub(crate) rope: Rope,
    pub(crate) model: Arc<Model>,
    pub(crate) path: Option<PathBuf>,
}

impl Snapshot {
    /// A snapshot of a text parsed alone, not an open document's (the first chunks of a
    /// large document, diagnosed while the whole is parsed).
    pub(crate) fn parse(version: i32, text: &str, path: Option<PathBuf>) -> Snapshot {
        let (_, model) = Model::parse(text);
        Snapshot { version, rope: Rope::from_str(text), model: Arc::new(model), path }
    }

    /// The typed document of the whole text, built once per version on first use (for
    /// features that walk everything: symbols, navigation, formatting).
    pub(crate) fn document(&self) -> Arc<Document> {
        Arc::clone(self.model.whole.get_or_init(|| {
            // A text over the parse budget is not read here either.
            if self.model.unread.is_some() {
                return Arc::default();
            }
            Arc::new(volley_syntax::parse(&self.rope.to_string()))
        }))
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
    /// The part has an import line (`# @import`, `import`): the features that read what
    /// the file imports make its document, the others are passed over.
    pub(crate) imports: bool,
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
            imports: document.has_imports(),
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

    pub(crate) fn requests(&self) -> impl Iterator<Item = &RequestOutline> {
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
    /// The names over the whole file, shared with the versions before while edits leave
    /// them alone.
    pub(crate) names: Arc<FileNames>,
    whole: OnceLock<Arc<Document>>,
    /// The text went over the parse budget and was not read: no parts (see
    /// `Parsed::Unread`).
    pub(crate) unread: Option<volley_syntax::Exceeded>,
}

impl Model {
    /// The model of a text over the parse budget: no parts (see `Parsed::Unread`).
    pub(crate) fn unread(exceeded: volley_syntax::Exceeded) -> Model {
        Model { unread: Some(exceeded), ..Model::default() }
    }

    /// A text parsed from scratch and its model. The parts are made on the threads that
    /// parse their chunks, each document dropped there, so that the documents of the
    /// whole file are never held at once.
    pub(crate) fn parse(text: &str) -> (SyntaxTree, Model) {
        let (tree, parts) = SyntaxTree::with_chunk_documents(text, |chunk, document| {
            Arc::new(Part::new(chunk.id, Arc::clone(chunk.text), document, false))
        });
        let parts = tree
            .chunks()
            .zip(parts)
            .map(|(chunk, part)| Placed { part, start: chunk.start, start_position: chunk.start_position })
            .collect::<Vec<_>>();
        let names = Arc::new(FileNames::of(&parts));
        (tree, Model { parts, names, whole: OnceLock::new(), unread: None })
    }

    /// The model of `tree` after an edit, reusing the parts of `previous` whose chunks
    /// are unchanged. The new parts keep their documents; the reused ones forget theirs.
    fn build(tree: &SyntaxTree, previous: &Model) -> Model {
        let reusable: HashMap<u64, &Arc<Part>> =
            previous.parts.iter().map(|placed| (placed.part.id, &placed.part)).collect();
        let parts: Vec<Placed> = tree
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
        let kept: HashSet<u64> = parts.iter().map(|placed| placed.part.id).collect();
        let replaced: Vec<&Outline> = previous
            .parts
            .iter()
            .filter(|placed| !kept.contains(&placed.part.id))
            .map(|placed| &placed.part.outline)
            .collect();
        let made: Vec<&Outline> = parts
            .iter()
            .filter(|placed| !reusable.contains_key(&placed.part.id))
            .map(|placed| &placed.part.outline)
            .collect();
        let names = if FileNames::same(&replaced, &made) {
            Arc::clone(&previous.names)
        } else {
            Arc::new(FileNames::of(&parts))
        };
        Model { parts, names, whole: OnceLock::new(), unread: None }
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
    pub(crate) fn tree(&self, uri: &Uri) -> Option<SyntaxTree> {
        match &self.lock().get(uri.as_str())?.parsed {
            Parsed::Ready { tree, .. } => Some(tree.clone()),
            Parsed::Running { .. } | Parsed::Unread { .. } => None,
        }
    }
}
