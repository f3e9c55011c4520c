//! Lowering: the tree-sitter tree becomes the typed [`Document`]. This is where the
//! format's rules that a context-free grammar cannot express live (which body form
//! applies, which protocol a request uses, which directive wins).

mod body;
mod errors;
mod graphql;
mod implicit;
mod request;
mod request_line;
mod scripts;
mod standalone;
mod template;

pub(crate) use standalone::template_text;

use std::collections::HashMap;

use tree_sitter::Node;

use crate::chunk::Chunk;
use crate::diagnostic::{Code, Diagnostic};
use crate::directive::{self, DirectiveKind};
use crate::document::{Block, Directive, Document, GraphQlFragment, Separator, VariableDeclaration};
use crate::grammar::Kinds;
use crate::listing::Listing;
use crate::span::{LineIndex, Position, Span, Spanned};

/// The document of one chunk, its diagnostics still being collected (the document's
/// own list is empty until [`finish`]).
pub(crate) struct Lowered {
    document: Document,
    diagnostics: Listing,
}

/// Lowers one chunk. Indices (blocks, requests) count from 0 within the chunk;
/// [`merge`] renumbers them.
pub(crate) fn lower_chunk(chunk: &Chunk) -> Lowered {
    lower_with(Lowerer::for_chunk(chunk), &chunk.tree())
}

/// The document of one chunk alone, its offsets and positions counted from the chunk's
/// start. Duplicate request names are not checked (that needs the whole file).
pub(crate) fn lower_chunk_relative(chunk: &Chunk) -> Document {
    let Lowered { document, diagnostics } = lower_with(Lowerer::relative(chunk), &chunk.tree());
    finish(document, diagnostics)
}

fn lower_with(mut lowerer: Lowerer<'_>, tree: &tree_sitter::Tree) -> Lowered {
    let root = tree.root_node();
    if root.has_error() {
        errors::collect(&mut lowerer, root);
    }
    let mut blocks = Vec::new();
    for node in named_children(root) {
        if blocks.len() % 256 == 255 && crate::budget::exceeded().is_some() {
            break;
        }
        if node.kind_id() == lowerer.kinds.block {
            let block = lowerer.block(node, blocks.len());
            blocks.push(block);
            lowerer.place_implicit(&mut blocks);
        }
    }
    let document = Document {
        blocks,
        variables: lowerer.variables,
        diagnostics: Vec::new(),
        fragments: lowerer.fragments,
        first_unlisted_error: None,
        known: crate::known::Known::default(),
    };
    Lowered { document, diagnostics: lowerer.diagnostics }
}

/// The document with its diagnostics listed (see [`Listing::finish`]).
fn finish(mut document: Document, diagnostics: Listing) -> Document {
    (document.diagnostics, document.first_unlisted_error) = diagnostics.finish();
    document
}

/// Joins the documents of consecutive chunks into the document of the file.
pub(crate) fn merge(parts: Vec<Lowered>) -> Document {
    let mut document = Document {
        blocks: Vec::with_capacity(parts.iter().map(|part| part.document.blocks.len()).sum()),
        variables: Vec::with_capacity(parts.iter().map(|part| part.document.variables.len()).sum()),
        diagnostics: Vec::new(),
        fragments: Vec::new(),
        first_unlisted_error: None,
        known: crate::known::Known::default(),
    };
    let mut diagnostics = Listing::new();
    let mut requests = 0;
    for Lowered { document: part, diagnostics: listing } in parts {
        let block_offset = document.blocks.len();
        for mut block in part.blocks {
            block.index += block_offset;
            if let Some(request) = &mut block.request {
                request.index = requests;
                request.block = block.index;
                requests += 1;
            }
            document.blocks.push(block);
        }
        document.variables.extend(part.variables.into_iter().map(|mut variable| {
            variable.block += block_offset;
            variable
        }));
        diagnostics.extend(listing);
        document.fragments.extend(part.fragments);
    }
    if !document.fragments.is_empty() {
        graphql::spread_fragments(&mut document);
    }
    for duplicate in duplicate_names(document.requests().filter_map(|request| request.name.as_ref())) {
        diagnostics.push(duplicate);
    }
    finish(document, diagnostics)
}

/// The named children of a node, in order. One cursor, one node per step (the
/// tree-sitter iterator builds each node twice): lowering is mostly this walk.
pub(crate) fn named_children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    children(node).filter(Node::is_named)
}

/// All the (visible) children of a node, in order.
pub(crate) fn children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    let mut cursor = node.walk();
    let mut started = false;
    std::iter::from_fn(move || {
        let moved = if started { cursor.goto_next_sibling() } else { cursor.goto_first_child() };
        started = true;
        moved.then(|| cursor.node())
    })
}

/// The field children of a node, found in one pass over its children (looking each up
/// by field id would walk the children once per field).
#[derive(Default)]
pub(crate) struct Fields<'tree> {
    pub(crate) name: Option<Node<'tree>>,
    pub(crate) value: Option<Node<'tree>>,
    pub(crate) path: Option<Node<'tree>>,
    pub(crate) file: Option<Node<'tree>>,
    pub(crate) filename: Option<Node<'tree>>,
    /// Number of visible children (named or not).
    pub(crate) children: usize,
}

impl Lowerer<'_> {
    /// The `name` and `value` children of a header, directive, file variable or query
    /// continuation. In a tree without errors they are the node's named children, in
    /// that order, and can be read by index without a cursor, which is most of the cost
    /// of [`Lowerer::fields`]; with errors it falls back to that.
    pub(crate) fn name_and_value<'tree>(&self, node: Node<'tree>) -> Fields<'tree> {
        if node.has_error() {
            return self.fields(node);
        }
        let mut fields = Fields { children: node.child_count() as usize, ..Fields::default() };
        for index in 0..2 {
            let Some(child) = node.named_child(index) else { break };
            if child.kind_id() == self.kinds.value {
                fields.value = Some(child);
            } else if index == 0 {
                fields.name = Some(child);
            }
        }
        fields
    }

    pub(crate) fn fields<'tree>(&self, node: Node<'tree>) -> Fields<'tree> {
        let mut fields = Fields::default();
        let mut cursor = node.walk();
        if !cursor.goto_first_child() {
            return fields;
        }
        loop {
            fields.children += 1;
            if let Some(id) = cursor.field_id() {
                let id = id.get();
                let child = Some(cursor.node());
                if id == self.kinds.field_name {
                    fields.name = child;
                } else if id == self.kinds.field_value {
                    fields.value = child;
                } else if id == self.kinds.field_path {
                    fields.path = child;
                } else if id == self.kinds.field_file {
                    fields.file = child;
                } else if id == self.kinds.field_filename {
                    fields.filename = child;
                }
            }
            if !cursor.goto_next_sibling() {
                return fields;
            }
        }
    }
}

/// A chunk-local offset with its chunk-local position, as tree-sitter counts lines.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    pub(crate) offset: usize,
    pub(crate) position: Position,
}

impl Mark {
    /// The mark at `offset` on the same line (a move within a line).
    pub(crate) fn moved_to(self, offset: usize) -> Mark {
        let column = if offset >= self.offset {
            self.position.column + (offset - self.offset) as u32
        } else {
            self.position.column.saturating_sub((self.offset - offset) as u32)
        };
        Mark { offset, position: Position::new(self.position.line, column) }
    }
}

/// The state of one lowering pass.
pub(crate) struct Lowerer<'a> {
    /// The chunk's text; node offsets are relative to it.
    pub(crate) text: &'a str,
    lines: &'a LineIndex,
    /// Where the chunk starts in the file.
    base: usize,
    base_line: u32,
    base_column: u32,
    /// `false` when the chunk has lone `\r` line breaks, which tree-sitter's points do
    /// not count: positions then come from the line index.
    points_agree: bool,
    pub(crate) kinds: &'static Kinds,
    pub(crate) diagnostics: Listing,
    variables: Vec<VariableDeclaration>,
    request_count: usize,
    /// Depth of interpolations being lowered (see [`template::MAX_NESTING`]).
    pub(crate) nesting: usize,
    /// A buffer for the parts of the template being built (see `Lowerer::keep_parts`).
    parts: Vec<crate::template::Part>,
    /// The documents of requests written without `###` before them (see
    /// [`Lowerer::split_requests`]), to be placed after the block being lowered.
    implicit: Vec<Lowered>,
    /// Where the block being lowered ends when a request line without `###` cut it.
    block_end: Option<usize>,
    /// The line searched last for a closing `}}` (see `closed_later_on_the_line`).
    pub(crate) closing: template::ClosingOnLine,
    /// Where the template being built ends (chunk-local): an httpyac JavaScript
    /// expression (`{{ Date.now() }}`) must close before it.
    pub(crate) template_end: usize,
    /// httpyac's GraphQL fragments, in order.
    fragments: Vec<GraphQlFragment>,
}

impl<'a> Lowerer<'a> {
    // ------------------------------------------------------------------ spans and text

    /// The file position of a chunk-local position.
    fn place(&self, position: Position) -> Position {
        if position.line == 0 {
            Position::new(self.base_line, self.base_column + position.column)
        } else {
            Position::new(self.base_line + position.line, position.column)
        }
    }

    fn global_span(&self, start: usize, end: usize, start_position: Position, end_position: Position) -> Span {
        Span {
            start: self.base + start,
            end: self.base + end,
            start_position: self.place(start_position),
            end_position: self.place(end_position),
        }
    }

    /// The span of a node, from the positions tree-sitter already computed.
    pub(crate) fn node_span(&self, node: Node<'_>) -> Span {
        if !self.points_agree {
            return self.span(node.start_byte(), node.end_byte());
        }
        let start = node.start_position();
        let end = node.end_position();
        self.global_span(
            node.start_byte(),
            node.end_byte(),
            Position::new(start.row as u32, start.column as u32),
            Position::new(end.row as u32, end.column as u32),
        )
    }

    /// The chunk-local line of a chunk-local byte offset.
    pub(crate) fn line_of(&self, offset: usize) -> u32 {
        self.lines.position(offset).line
    }

    /// The span of a chunk-local byte range.
    pub(crate) fn span(&self, start: usize, end: usize) -> Span {
        self.global_span(start, end, self.lines.position(start), self.lines.position(end))
    }

    /// The span of a node without the line break some nodes start with (separators,
    /// blocks and bodies begin with the break that ends the line before them).
    pub(crate) fn span_after_newline(&self, node: Node<'_>) -> Span {
        let start = self.skip_newline(node.start_byte()).min(node.end_byte());
        if start == node.start_byte() {
            self.node_span(node)
        } else if !self.points_agree {
            self.span(start, node.end_byte())
        } else {
            let end = node.end_position();
            self.global_span(
                start,
                node.end_byte(),
                self.lines.position(start),
                Position::new(end.row as u32, end.column as u32),
            )
        }
    }

    /// Where a node starts.
    pub(crate) fn start_mark(node: Node<'_>) -> Mark {
        let point = node.start_position();
        Mark { offset: node.start_byte(), position: Position::new(point.row as u32, point.column as u32) }
    }

    /// Where a node ends.
    pub(crate) fn end_mark(node: Node<'_>) -> Mark {
        let point = node.end_position();
        Mark { offset: node.end_byte(), position: Position::new(point.row as u32, point.column as u32) }
    }

    /// The span between two marks: from their positions when tree-sitter's points agree
    /// with the line index (no lone `\r`), else from the line index.
    pub(crate) fn mark_span(&self, start: Mark, end: Mark) -> Span {
        if self.points_agree {
            self.global_span(start.offset, end.offset, start.position, end.position)
        } else {
            self.span(start.offset, end.offset)
        }
    }

    /// The marks of `start..end` with spaces and tabs trimmed from both ends (on the
    /// same lines, so only columns move).
    pub(crate) fn trimmed_marks(&self, start: Mark, end: Mark) -> (Mark, Mark) {
        let (trimmed_start, trimmed_end) = self.trimmed(start.offset, end.offset);
        (start.moved_to(trimmed_start), end.moved_to(trimmed_end))
    }

    /// The offset after the line break at `offset`, or `offset` when there is none.
    pub(crate) fn skip_newline(&self, offset: usize) -> usize {
        offset + crate::line_break::break_len(self.text.as_bytes(), offset)
    }

    /// The text of a byte range; empty (and a failed debug assertion) if the range is
    /// not valid, so that no input can make lowering panic in release builds.
    pub(crate) fn slice(&self, start: usize, end: usize) -> &'a str {
        let slice = self.text.get(start..end);
        debug_assert!(slice.is_some(), "invalid range {start}..{end}");
        slice.unwrap_or_default()
    }

    pub(crate) fn node_text(&self, node: Node<'_>) -> &'a str {
        self.slice(node.start_byte(), node.end_byte())
    }

    /// The range of a node with the spaces and tabs at both ends removed.
    pub(crate) fn trimmed(&self, start: usize, end: usize) -> (usize, usize) {
        let bytes = self.text.as_bytes();
        let mut start = start;
        let mut end = end;
        while start < end && matches!(bytes[start], b' ' | b'\t') {
            start += 1;
        }
        while end > start && matches!(bytes[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        (start, end)
    }

    /// The trimmed text of a node with its span; `None` when only spaces are left.
    pub(crate) fn trimmed_text(&self, node: Node<'_>) -> Option<Spanned<String>> {
        let (start, end) = self.trimmed(node.start_byte(), node.end_byte());
        (start < end).then(|| Spanned::new(self.slice(start, end).to_owned(), self.span(start, end)))
    }

    pub(crate) fn report(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    // ------------------------------------------------------------------ blocks

    fn block(&mut self, node: Node<'_>, index: usize) -> Block {
        let kinds = self.kinds;
        let mut separator = None;
        let mut directives = Vec::new();
        let mut scripts = Vec::new();
        let mut request = None;
        let mut proto_imports = Vec::new();
        let mut commands = Vec::new();
        for child in named_children(node) {
            let kind = child.kind_id();
            if kind == kinds.separator {
                separator = Some(self.separator(child));
            } else if kind == kinds.directive {
                directives.push(self.directive(child));
            } else if kind == kinds.variable_declaration {
                self.variable_declaration(child, index);
            } else if kind == kinds.junk {
                self.junk(child);
            } else if kind == kinds.script
                || kind == kinds.unclosed_script
                || kind == kinds.js_block
                || kind == kinds.script_file
            {
                scripts.push(self.script(child));
            } else if kind == kinds.command {
                if let Some(import) = self.proto_import(child) {
                    proto_imports.push(import);
                } else {
                    commands.extend(self.command(child));
                }
            } else if kind == kinds.graphql_fragment {
                let text = self.node_text(child).trim_end();
                let name = text["fragment".len()..].split_whitespace().next().unwrap_or_default().to_owned();
                self.fragments.push(GraphQlFragment { span: self.node_span(child), name, text: text.to_owned() });
            } else if kind == kinds.request {
                let separator_name = separator.as_ref().and_then(|s: &Separator| s.name.clone());
                let taken = std::mem::take(&mut directives);
                let before = std::mem::take(&mut scripts);
                let mut lowered = self.request(child, index, separator_name, taken, before);
                // A "body" of comment lines only (`# …`, `// …` after the request, before a
                // saved response or the next request) is no body, as every tool reads it.
                if let crate::document::Body::Inline(body) = &lowered.body
                    && body.interpolations().next().is_none()
                    && crate::line_break::lines(&body.to_source()).all(|line| {
                        let line = line.trim();
                        line.is_empty() || line.starts_with('#') || line.starts_with("//")
                    })
                {
                    lowered.body = crate::document::Body::None;
                }
                if let Some(crate::command::Loop::Unsupported(text)) = lowered.repeat() {
                    self.report(
                        Diagnostic::new(
                            Code::InvalidCommand,
                            text.span,
                            format!("`@loop {}` is not supported", text.value),
                        )
                        .with_hint(
                            "Volley runs `@loop for <count>` and `@loop for <name> of <list>`; write the requests \
                                 one by one otherwise",
                        ),
                    );
                }
                // httpyac's `gql Name < ./query.gql` as a body line: a query from a file,
                // which Volley does not read; refused rather than sent as text.
                if let crate::document::Body::Inline(body) = &lowered.body
                    && let Some(first) = body.parts.first()
                    && let crate::template::Part::Text(text) = first
                    && text.value.trim_start().starts_with("gql ")
                    && crate::line_break::lines(text.value.trim_start()).next().is_some_and(|line| line.contains(" < "))
                {
                    self.report(
                        Diagnostic::new(Code::InvalidCommand, body.span, "httpyac `gql` imports are not supported")
                            .with_hint(
                                "write the query in the request's body, and shared parts as `fragment Name on Type \
                                 { … }` above it",
                            ),
                    );
                }
                request = Some(lowered);
            }
        }
        let mut span = self.span_after_newline(node);
        if let Some(end) = self.block_end.take() {
            span = self.span(span.start - self.base, end);
        }
        // httpyac's `# @import` lines stand where no request is (its global region), and a
        // block of `run` lines runs what they name.
        let applies = |directive: &&Directive| directive.kind != DirectiveKind::Import;
        if request.is_none() && commands.is_empty() {
            // httpyac's `{{` blocks in its global region run before every request.
            for script in scripts.iter().filter(|script| script.runs() && !script.is_httpyac()) {
                self.report(
                    Diagnostic::new(
                        Code::BlockWithoutRequest,
                        script.span,
                        "a script in a block without a request line does not run",
                    )
                    .with_hint(
                        "put a pre-request script (`< {% … %}`) just above a request line, and a response \
                         handler (`> {% … %}`) below its request",
                    ),
                );
            }
            if let Some(first) = directives.iter().find(applies) {
                self.report(
                    Diagnostic::new(
                        Code::BlockWithoutRequest,
                        first.span,
                        "directives in a block without a request line apply to nothing",
                    )
                    .with_hint("add a request line (`GET https://…`) below them, or delete them"),
                );
            } else if let Some(Separator { name: Some(name), .. }) =
                separator.as_ref().filter(|_| !directives.iter().any(|directive| !applies(&directive)))
            {
                self.report(
                    Diagnostic::new(
                        Code::BlockWithoutRequest,
                        name.span,
                        format!("block `{}` has no request line", name.value),
                    )
                    .with_hint("add a request line (`GET https://…`) to the block, or remove the separator"),
                );
            }
        }
        Block {
            index,
            span,
            separator,
            request: request.map(Box::new),
            orphan_directives: directives,
            orphan_scripts: scripts,
            proto_imports,
            commands,
        }
    }

    fn separator(&self, node: Node<'_>) -> Separator {
        let name = node
            .child_by_field_id(self.kinds.field_name)
            .and_then(|name| self.trimmed_text(name))
            .filter(|name| !name.value.is_empty());
        Separator { span: self.span_after_newline(node), name }
    }

    pub(crate) fn directive(&mut self, node: Node<'_>) -> Directive {
        let fields = self.name_and_value(node);
        let name = fields.name.map_or_else(
            || Spanned::new(String::new(), self.node_span(node)),
            |name| Spanned::new(self.node_text(name).to_owned(), self.node_span(name)),
        );
        let value = fields.value.map(|value| self.template_trimmed(value)).filter(|value| !value.is_empty());
        let kind = directive::kind_of(&name.value);
        Directive { span: self.node_span(node), name, kind, value }
    }

    fn variable_declaration(&mut self, node: Node<'_>, block: usize) {
        let fields = self.name_and_value(node);
        let Some(name_node) = fields.name else {
            // A lone `@`. After `@name value` (no `=`), the syntax error of the rest of
            // the line says what is wrong.
            let rest = self.text.get(node.end_byte()..).unwrap_or_default();
            if rest.split(['\n', '\r']).next().unwrap_or_default().trim().is_empty() {
                self.syntax_error(self.node_span(node), || {
                    ("`@` without a variable name".to_owned(), "file variables are written `@name = value`")
                });
            }
            return;
        };
        let name = Spanned::new(self.node_text(name_node).to_owned(), self.node_span(name_node));
        let span = self.node_span(node);
        let value = self.template_or_empty(fields.value, node.end_byte());
        self.variables.push(VariableDeclaration { span, name, value, block });
    }

    pub(crate) fn next_request_index(&mut self) -> usize {
        let index = self.request_count;
        self.request_count += 1;
        index
    }
}

/// The `duplicate-name` diagnostics of request names given in file order: every name
/// after the first of the same text.
pub fn duplicate_names<'a>(names: impl IntoIterator<Item = &'a Spanned<String>>) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let names = names.into_iter();
    // Sized for the most names the iterator may give: no rehashing on large files.
    let mut seen: HashMap<&str, Span> = HashMap::with_capacity(names.size_hint().1.unwrap_or(0).min(1 << 16));
    for name in names {
        if let Some(first) = seen.get(name.value.as_str()) {
            let hint = format!(
                "the first request named `{}` is at line {}; request variables and --name pick the first",
                name.value,
                first.start_position.line + 1
            );
            diagnostics.push(
                Diagnostic::new(
                    Code::DuplicateRequestName,
                    name.span,
                    format!("duplicate request name `{}`", name.value),
                )
                .with_hint(hint),
            );
        } else {
            seen.insert(&name.value, name.span);
        }
    }
    diagnostics
}
