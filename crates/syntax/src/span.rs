//! Source locations: byte spans with line/column positions, and the line index that
//! converts between bytes, lines and UTF-16 columns.

use std::fmt;
use std::ops::Range;

use serde::Serialize;

/// A position in the text: 0-based line and 0-based column counted in bytes of UTF-8.
///
/// Byte columns are what tree-sitter reports and what slicing needs. Front ends that
/// count differently convert with [`LineIndex`]: UTF-16 units for LSP, characters for a
/// terminal caret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct Position {
    /// 0-based line.
    pub line: u32,
    /// 0-based column, in bytes from the start of the line.
    pub column: u32,
}

impl Position {
    /// A position from a 0-based line and byte column.
    #[must_use]
    pub const fn new(line: u32, column: u32) -> Self {
        Self { line, column }
    }
}

impl fmt::Display for Position {
    /// `line:column`, both 1-based, as compilers print them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line + 1, self.column + 1)
    }
}

/// A range of the source text: bytes `start..end` and the positions of both ends.
///
/// Serialized compactly as `"line:column-line:column"` (1-based, byte columns), which
/// keeps snapshots and JSON dumps readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset one past the last byte.
    pub end: usize,
    /// Line and column of `start`.
    pub start_position: Position,
    /// Line and column of `end`.
    pub end_position: Position,
}

impl Span {
    /// The byte range of the span.
    #[must_use]
    pub const fn range(&self) -> Range<usize> {
        self.start..self.end
    }

    /// Number of bytes covered.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.end - self.start
    }

    /// `true` for an empty span (a point between two bytes).
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// `true` when `offset` lies inside the span (the end included, as a cursor at the
    /// end of a word still belongs to it).
    #[must_use]
    pub const fn contains(&self, offset: usize) -> bool {
        self.start <= offset && offset <= self.end
    }

    /// The smallest span covering both.
    #[must_use]
    pub fn cover(self, other: Span) -> Span {
        let (start, start_position) = if other.start < self.start {
            (other.start, other.start_position)
        } else {
            (self.start, self.start_position)
        };
        let (end, end_position) =
            if other.end > self.end { (other.end, other.end_position) } else { (self.end, self.end_position) };
        Span { start, end, start_position, end_position }
    }

    /// The text the span covers.
    ///
    /// # Panics
    /// When the span does not belong to `text`.
    #[must_use]
    pub fn text<'a>(&self, text: &'a str) -> &'a str {
        &text[self.range()]
    }
}

impl Serialize for Span {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{}-{}", self.start_position, self.end_position))
    }
}

impl fmt::Display for Span {
    /// The 1-based `line:column` of the start.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.start_position.fmt(f)
    }
}

/// A value together with the span of the text it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Pairs a value with its span.
    pub const fn new(value: T, span: Span) -> Self {
        Self { value, span }
    }
}

/// Byte offsets of line starts, for converting between offsets, positions and UTF-16.
///
/// A line ends at `\n`, `\r\n` or a lone `\r` ([`crate::line_break`], the rule of LSP and
/// of the grammar).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Offset of the first byte of every line; always starts with 0.
    starts: Vec<usize>,
    /// Length of the indexed text.
    len: usize,
}

impl LineIndex {
    /// Indexes `text`.
    #[must_use]
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        push_line_starts(text.as_bytes(), 0, &mut starts);
        Self { starts, len: text.len() }
    }

    /// Number of lines (a text ending in a newline has an empty last line).
    #[must_use]
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Byte offset where `line` starts, or `None` past the last line.
    #[must_use]
    pub fn line_start(&self, line: u32) -> Option<usize> {
        self.starts.get(line as usize).copied()
    }

    /// The byte range of `line` without its line break.
    #[must_use]
    pub fn line_range(&self, text: &str, line: u32) -> Option<Range<usize>> {
        let start = self.line_start(line)?;
        let next = self.line_start(line + 1).unwrap_or(self.len);
        let end = start + crate::line_break::without_break(text.get(start..next)?).len();
        Some(start..end)
    }

    /// The position of a byte offset (clamped to the end of the text).
    #[must_use]
    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.len);
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        Position::new(line as u32, (offset - self.starts[line]) as u32)
    }

    /// The span of a byte range.
    #[must_use]
    pub fn span(&self, range: Range<usize>) -> Span {
        Span {
            start: range.start,
            end: range.end,
            start_position: self.position(range.start),
            end_position: self.position(range.end),
        }
    }

    /// The byte offset of a position, or `None` when the line does not exist. A column
    /// past the end of the line is clamped to the end of the text.
    #[must_use]
    pub fn offset(&self, position: Position) -> Option<usize> {
        let start = self.line_start(position.line)?;
        Some((start + position.column as usize).min(self.len))
    }

    /// The UTF-16 column of a byte offset on its line (what LSP calls `character`).
    #[must_use]
    pub fn utf16_column(&self, text: &str, offset: usize) -> u32 {
        let position = self.position(offset);
        let start = self.starts[position.line as usize];
        let end = floor_char_boundary(text, offset.min(text.len()));
        text[start..end.max(start)].encode_utf16().count() as u32
    }

    /// The character column of a byte offset on its line (for carets in a terminal).
    #[must_use]
    pub fn char_column(&self, text: &str, offset: usize) -> u32 {
        let position = self.position(offset);
        let start = self.starts[position.line as usize];
        let end = floor_char_boundary(text, offset.min(text.len()));
        text[start..end.max(start)].chars().count() as u32
    }

    /// The byte offset of a line and UTF-16 column. A column inside a surrogate pair or
    /// past the end of the line is clamped to the nearest character boundary before it,
    /// respectively to the end of the line, as LSP asks.
    #[must_use]
    pub fn offset_of_utf16(&self, text: &str, line: u32, column: u32) -> Option<usize> {
        let range = self.line_range(text, line)?;
        let mut units = 0u32;
        for (index, character) in text[range.clone()].char_indices() {
            let width = character.len_utf16() as u32;
            if units + width > column {
                return Some(range.start + index);
            }
            units += width;
        }
        Some(range.end)
    }

    /// Updates the index after `range` of the old text was replaced by `new_text`;
    /// `text` is the text *after* the edit. Only the lines touched by the edit are
    /// rescanned; later line starts are shifted.
    pub fn apply_edit(&mut self, text: &str, range: Range<usize>, new_text: &str) {
        let new_end = range.start + new_text.len();
        // A line start depends on the two bytes around it. Starts before the edit keep
        // both bytes; starts after the old end keep both bytes and only move.
        let tail_from = self.starts.partition_point(|&start| start <= range.end);
        let tail: Vec<usize> = self.starts[tail_from..].iter().map(|&start| start - range.end + new_end).collect();
        let keep = self.starts.partition_point(|&start| start < range.start).max(1);
        self.starts.truncate(keep);
        // Rescan from the byte before the edit (a `\r` there may now pair with a `\n`)
        // to the byte after it (for the same reason), keeping only starts in between.
        let bytes = text.as_bytes();
        let scan_from = range.start.saturating_sub(1);
        let scan_to = (new_end + 1).min(bytes.len());
        let mut found = Vec::new();
        push_line_starts(&bytes[scan_from..scan_to], scan_from, &mut found);
        self.starts.extend(found.into_iter().filter(|&start| start >= range.start.max(1) && start <= new_end));
        self.starts.extend(tail);
        self.len = text.len();
    }
}

/// Appends the start offset of every line that begins inside `bytes` (after a line
/// break within it), shifted by `base`.
fn push_line_starts(bytes: &[u8], base: usize, starts: &mut Vec<usize>) {
    for index in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        // The `\n` of a `\r\n` ends nothing by itself: the break starts at its `\r`.
        let length = crate::line_break::break_len(bytes, index);
        if length > 0 {
            starts.push(base + index + length);
        }
    }
}

/// The line breaks in `bytes` (`\r\n` counting once, as everywhere), and the offset
/// where the last line starts when there is a break.
pub(crate) fn line_breaks(bytes: &[u8]) -> (u32, Option<usize>) {
    let mut breaks = 0;
    let mut last_line_start = None;
    for index in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        let length = crate::line_break::break_len(bytes, index);
        if length > 0 {
            breaks += 1;
            last_line_start = Some(index + length);
        }
    }
    (breaks, last_line_start)
}

/// The largest character boundary at or before `offset`.
fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_follow_every_line_ending() {
        let text = "a\nbc\r\nd\re";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.position(0), Position::new(0, 0));
        assert_eq!(index.position(2), Position::new(1, 0));
        assert_eq!(index.position(4), Position::new(1, 2));
        assert_eq!(index.position(6), Position::new(2, 0));
        assert_eq!(index.position(8), Position::new(3, 0));
        assert_eq!(index.line_range(text, 1), Some(2..4));
        assert_eq!(index.offset(Position::new(3, 1)), Some(9));
    }

    #[test]
    fn utf16_columns_count_surrogate_pairs() {
        let text = "x\nä😀b";
        let index = LineIndex::new(text);
        let b = text.find('b').unwrap();
        assert_eq!(index.utf16_column(text, b), 3);
        assert_eq!(index.char_column(text, b), 2);
        assert_eq!(index.offset_of_utf16(text, 1, 3), Some(b));
        // Inside the surrogate pair: clamped to the start of the emoji.
        assert_eq!(index.offset_of_utf16(text, 1, 2), Some(b - 4));
        assert_eq!(index.offset_of_utf16(text, 1, 99), Some(text.len()));
    }

    #[test]
    fn incremental_edits_match_a_fresh_index() {
        let cases: &[(&str, Range<usize>, &str)] = &[
            ("a\nb\nc", 2..3, "x\ny"),
            ("a\nb\nc", 1..4, ""),
            ("a\r\nb", 1..2, ""),
            ("a\rb", 2..2, "\n"),
            ("a\r", 2..2, "\nz"),
            ("", 0..0, "\n\n"),
            ("abc\ndef\nghi\n", 5..6, "Z"),
            ("l1\nl2\nl3\nl4\n", 0..12, "only"),
        ];
        for (old, range, new_text) in cases {
            let mut text = (*old).to_owned();
            let mut index = LineIndex::new(&text);
            text.replace_range(range.clone(), new_text);
            index.apply_edit(&text, range.clone(), new_text);
            assert_eq!(index, LineIndex::new(&text), "{old:?} {range:?} {new_text:?}");
        }
    }
}
