//! The concrete syntax tree: tree-sitter parsing, incremental reparsing, and the node
//! kind ids the typed layer dispatches on.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::chunk::{self, Chunk};
use crate::document::Document;
use crate::grammar::parse_tree;
use crate::span::{Position, Span};

/// An edit that does not fit the text it is applied to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    /// The rejected range.
    pub range: Range<usize>,
    /// The length of the text.
    pub len: usize,
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "edit range {}..{} does not fit a text of {} bytes on character boundaries",
            self.range.start, self.range.end, self.len
        )
    }
}

impl std::error::Error for EditError {}

/// A text with its syntax trees, kept in step through edits: the language server's
/// view of a document.
///
/// The text is held in chunks of whole blocks, each parsed into its own tree (see
/// `chunk.rs`): an edit reparses only the chunk it falls in, so its cost does not grow
/// with the size of the file. Trees are not kept, but for the chunks the latest edit
/// reparsed: a chunk's text parses again in well under a millisecond, and a tree costs
/// about 7 bytes per byte of text.
///
/// ```
/// let mut tree = volley_syntax::SyntaxTree::new("GET https://example.com/a\n");
/// tree.edit(24..25, "b").unwrap();
/// assert_eq!(tree.text(), "GET https://example.com/b\n");
/// let document = tree.document();
/// assert_eq!(document.request(0).unwrap().url.as_literal().unwrap(), "https://example.com/b");
/// ```
#[derive(Clone)]
pub struct SyntaxTree {
    chunks: Vec<Chunk>,
    /// Chunk size to aim for (see `chunk.rs`).
    target: usize,
}

impl fmt::Debug for SyntaxTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyntaxTree")
            .field("len", &self.len())
            .field("chunks", &self.chunks.len())
            .finish_non_exhaustive()
    }
}

impl SyntaxTree {
    /// Parses `text` from scratch.
    #[must_use]
    pub fn new(text: impl AsRef<str>) -> Self {
        Self::with_chunk_size(text, chunk::TARGET_CHUNK_BYTES)
    }

    /// Like [`SyntaxTree::new`] with another chunk size: tests use tiny chunks to
    /// exercise chunk boundaries with small texts. The document does not depend on it.
    #[doc(hidden)]
    #[must_use]
    pub fn with_chunk_size(text: impl AsRef<str>, target: usize) -> Self {
        let target = target.max(1);
        let chunks = chunk::parse_chunks(text.as_ref(), target, |mut chunk| {
            chunk.kept_tree = None;
            chunk
        });
        Self { chunks, target }
    }

    /// Parses `text` from scratch and hands the typed document of every chunk (as
    /// [`SyntaxTree::chunk_document`] gives it) to `then`, on the thread that parsed
    /// the chunk: what a front end that keeps work per chunk needs at first, for one
    /// parse, without holding every document at once. Results come back in chunk order.
    pub fn with_chunk_documents<T: Send>(
        text: impl AsRef<str>,
        then: impl Fn(ChunkInfo<'_>, Document) -> T + Sync,
    ) -> (Self, Vec<T>) {
        let target = chunk::TARGET_CHUNK_BYTES;
        let (chunks, results) = chunk::parse_chunks(text.as_ref(), target, |mut chunk| {
            let document = crate::lower::lower_chunk_relative(&chunk);
            chunk.kept_tree = None;
            let result = then(ChunkInfo::of(&chunk), document);
            (chunk, result)
        })
        .into_iter()
        .unzip();
        (Self { chunks, target }, results)
    }

    /// Number of chunks the text is held in.
    #[doc(hidden)]
    #[must_use]
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Replaces `range` (bytes of the current text) with `new_text` and reparses what
    /// changed: the chunks it falls in, incrementally when the previous edit left their
    /// trees.
    pub fn edit(&mut self, range: Range<usize>, new_text: &str) -> Result<(), EditError> {
        let len = self.len();
        if range.start > range.end
            || range.end > len
            || !self.is_char_boundary(range.start)
            || !self.is_char_boundary(range.end)
        {
            return Err(EditError { range, len });
        }
        chunk::edit(&mut self.chunks, self.target, range, new_text);
        Ok(())
    }

    /// Length of the text in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.chunks.last().map_or(0, |chunk| chunk.start + chunk.text.len())
    }

    /// `true` for an empty text.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The current text (assembled from the chunks).
    #[must_use]
    pub fn text(&self) -> String {
        let mut text = String::with_capacity(self.len());
        for chunk in &self.chunks {
            text.push_str(&chunk.text);
        }
        text
    }

    /// Builds the typed document of the current text.
    #[must_use]
    pub fn document(&self) -> Document {
        let parts = chunk::map_chunks(&self.chunks, crate::lower::lower_chunk);
        crate::lower::merge(parts)
    }

    /// The chunks the text is held in, in order: for front ends that keep work per
    /// chunk and redo it only for chunks whose [`ChunkInfo::id`] changed (the language
    /// server's diagnostics on a large file).
    #[must_use]
    pub fn chunks(&self) -> impl ExactSizeIterator<Item = ChunkInfo<'_>> {
        self.chunks.iter().map(ChunkInfo::of)
    }

    /// The typed document of chunk `index` alone (its text parsed again unless the
    /// latest edit reparsed it), its offsets and positions counted from the start of the
    /// chunk (place them with [`ChunkInfo::place`]). Request and block
    /// indexes count within the chunk, and duplicate request names are not checked
    /// ([`duplicate_names`](crate::duplicate_names) does that over the whole file).
    /// `None` for an index past the last chunk.
    #[must_use]
    pub fn chunk_document(&self, index: usize) -> Option<Document> {
        self.chunks.get(index).map(crate::lower::lower_chunk_relative)
    }

    /// The chunks whose tree (the one an edit left, or the text parsed again) is not the
    /// tree a fresh parse of their text gives: index, the tree's s-expression and the
    /// fresh one's. Empty when incremental parsing kept nothing stale; the differential
    /// tests of edits check it after every edit.
    #[doc(hidden)]
    #[must_use]
    pub fn trees_unlike_a_fresh_parse(&self) -> Vec<(usize, String, String)> {
        self.chunks
            .iter()
            .enumerate()
            .filter_map(|(index, chunk)| {
                let kept = chunk.tree().root_node().to_sexp();
                let fresh = parse_tree(&chunk.text, None).root_node().to_sexp();
                (kept != fresh).then_some((index, kept, fresh))
            })
            .collect()
    }

    fn is_char_boundary(&self, offset: usize) -> bool {
        let index = self.chunks.partition_point(|chunk| chunk.start <= offset).saturating_sub(1);
        self.chunks.get(index).is_some_and(|chunk| chunk.text.is_char_boundary(offset - chunk.start))
    }
}

/// One chunk of a [`SyntaxTree`]: a run of whole blocks (the first starting with the
/// line break before its `###`).
#[derive(Debug, Clone, Copy)]
pub struct ChunkInfo<'a> {
    /// Unique to this text of this chunk in the process: a new id whenever the chunk is
    /// reparsed, the same id while an edit elsewhere only moves it.
    pub id: u64,
    /// Byte offset of the chunk in the file.
    pub start: usize,
    /// Line and byte column of the file at which the chunk starts.
    pub start_position: Position,
    /// The chunk's text, shared: a front end that keeps it holds no copy.
    pub text: &'a Arc<str>,
}

impl<'a> ChunkInfo<'a> {
    fn of(chunk: &'a Chunk) -> Self {
        ChunkInfo {
            id: chunk.id,
            start: chunk.start,
            start_position: Position::new(chunk.start_line, chunk.start_column),
            text: &chunk.text,
        }
    }

    /// Places a span counted from the chunk's start (as in
    /// [`SyntaxTree::chunk_document`]) in the file.
    #[must_use]
    pub fn place(&self, span: Span) -> Span {
        Span {
            start: span.start + self.start,
            end: span.end + self.start,
            start_position: self.place_position(span.start_position),
            end_position: self.place_position(span.end_position),
        }
    }

    /// Places a position counted from the chunk's start in the file.
    #[must_use]
    pub fn place_position(&self, position: Position) -> Position {
        if position.line == 0 {
            Position::new(self.start_position.line, self.start_position.column + position.column)
        } else {
            Position::new(self.start_position.line + position.line, position.column)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SyntaxTree;

    fn kept(tree: &SyntaxTree) -> Vec<bool> {
        tree.chunks.iter().map(|chunk| chunk.kept_tree.is_some()).collect()
    }

    #[test]
    fn only_the_chunks_the_latest_edit_reparsed_keep_their_trees() {
        let text = "GET https://a/1\n###\nGET https://a/2\n###\nGET https://a/3\n";
        let mut tree = SyntaxTree::with_chunk_size(text, 1);
        assert_eq!(kept(&tree), [false, false, false], "a parse from scratch keeps none");
        let first = text.find("/1").unwrap() + 1;
        tree.edit(first..first, "x").unwrap();
        assert_eq!(kept(&tree), [true, false, false]);
        let last = tree.text().find("/3").unwrap() + 1;
        tree.edit(last..last, "y").unwrap();
        assert_eq!(kept(&tree), [false, false, true]);
        assert_eq!(tree.text(), "GET https://a/x1\n###\nGET https://a/2\n###\nGET https://a/y3\n");
        assert_eq!(tree.document(), crate::parse(&tree.text()));
        let edited = tree.chunks().nth(2).unwrap();
        assert_eq!(tree.chunk_document(2), Some(crate::parse_chunk(edited.text)));
    }
}
