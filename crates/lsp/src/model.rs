//! The typed model of one version of an open document (`documents.rs` keeps the
//! versions): its parts, one per chunk of the syntax tree, each with its [`Outline`] and
//! what is computed from it ([`PartDiagnostics`]), where each part is placed in the file
//! ([`Placed`]), and the names over the whole file ([`FileNames`]), kept with a version
//! and shared with the next while its edits leave them alone: a keystroke in a large
//! file does not go over every name.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use ropey::Rope;
use tower_lsp_server::ls_types::Diagnostic;
use volley_syntax::{Document, Position, ProtoImport, Protocol, Span, Spanned, SyntaxTree, VariableDeclaration};

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
    pub(crate) fn build(tree: &SyntaxTree, previous: &Model) -> Model {
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

/// What is computed from one part, kept with it.
#[derive(Debug, Default)]
pub(crate) struct PartDiagnostics {
    /// The parser's, ranges counted from the part's start.
    pub(crate) syntax: Vec<Diagnostic>,
    /// The analysis's, ranges counted from the part's start.
    pub(crate) analysis: Kept,
    /// Those of its gRPC requests' schemas (`grpc/check.rs`), ranges counted from the
    /// part's start.
    pub(crate) grpc: Kept,
}

/// Diagnostics with the fingerprint of the context they were made in.
#[derive(Debug, Default)]
pub(crate) struct Kept(Mutex<Option<(u64, Arc<Vec<Diagnostic>>)>>);

impl Kept {
    /// The diagnostics kept, when they were made in the context `fingerprint`.
    pub(crate) fn get(&self, fingerprint: u64) -> Option<Arc<Vec<Diagnostic>>> {
        let cached = self.0.lock();
        cached.as_ref().filter(|(made_in, _)| *made_in == fingerprint).map(|(_, diagnostics)| Arc::clone(diagnostics))
    }

    /// The diagnostics kept, when they were made in the context `fingerprint`; else
    /// those `compute` makes, kept instead.
    pub(crate) fn get_or(&self, fingerprint: u64, compute: impl FnOnce() -> Vec<Diagnostic>) -> Arc<Vec<Diagnostic>> {
        let mut cached = self.0.lock();
        if let Some((made_in, diagnostics)) = &*cached
            && *made_in == fingerprint
        {
            return Arc::clone(diagnostics);
        }
        let diagnostics = Arc::new(compute());
        *cached = Some((fingerprint, Arc::clone(&diagnostics)));
        diagnostics
    }
}

impl PartDiagnostics {
    /// The diagnostics of a part with this text and typed document: the parser's now,
    /// the analysis's and the gRPC schemas' when first asked for.
    pub(crate) fn new(text: &str, document: &volley_syntax::Document) -> Self {
        let syntax = document
            .diagnostics
            .iter()
            .map(|diagnostic| crate::convert::relative_diagnostic(text, diagnostic))
            .collect();
        PartDiagnostics { syntax, analysis: Kept::default(), grpc: Kept::default() }
    }
}

/// The names of a whole file that the analysis of every part reads, and the request
/// names given twice: made when a model is made from scratch or an edit changes a name,
/// else kept from the version before (a keystroke does not go over every name of a
/// large file).
#[derive(Debug, Default)]
pub(crate) struct FileNames {
    /// The names of the file variables.
    pub(crate) variables: BTreeSet<String>,
    /// The request names.
    pub(crate) requests: BTreeSet<String>,
    /// The request names given to more than one request.
    pub(crate) duplicated: BTreeSet<String>,
    /// What the scripts of every part may set (their script files not read).
    pub(crate) script_variables: volley_engine::analysis::ScriptVariables,
}

impl FileNames {
    pub(crate) fn of(parts: &[Placed]) -> FileNames {
        let mut names = FileNames::default();
        for placed in parts {
            let outline = &placed.part.outline;
            names.variables.extend(outline.variables.iter().map(|declaration| declaration.name.value.clone()));
            for name in outline.requests().filter_map(|request| request.name.as_ref()) {
                if !names.requests.insert(name.value.clone()) {
                    names.duplicated.insert(name.value.clone());
                }
            }
            names.script_variables.extend(&outline.script_variables);
        }
        names
    }

    /// `true` when parts with the outlines `made` have the names of the parts with the
    /// outlines `replaced`, in the same order: the names of a file where they replace
    /// them stay the same.
    pub(crate) fn same(replaced: &[&Outline], made: &[&Outline]) -> bool {
        fn variables<'a>(outlines: &'a [&'a Outline]) -> impl Iterator<Item = &'a str> {
            outlines
                .iter()
                .flat_map(|outline| outline.variables.iter().map(|declaration| declaration.name.value.as_str()))
        }
        fn requests<'a>(outlines: &'a [&'a Outline]) -> impl Iterator<Item = &'a str> {
            outlines.iter().flat_map(|outline| {
                outline.requests().filter_map(|request| request.name.as_ref().map(|name| name.value.as_str()))
            })
        }
        fn scripts(outlines: &[&Outline]) -> volley_engine::analysis::ScriptVariables {
            let mut all = volley_engine::analysis::ScriptVariables::default();
            for outline in outlines {
                all.extend(&outline.script_variables);
            }
            all
        }
        variables(replaced).eq(variables(made))
            && requests(replaced).eq(requests(made))
            && scripts(replaced) == scripts(made)
    }
}
