//! Chunks: a text cut at block boundaries into pieces of whole blocks, each parsed into
//! its own tree-sitter tree.
//!
//! Every line break followed by `###` starts a block, whatever comes before it: the
//! grammar guarantees it (no token runs over such a line). Blocks therefore parse the
//! same alone as inside the whole file, so a large file is parsed as independent chunks
//! of about [`TARGET_CHUNK_BYTES`]: in parallel on several cores, and, after an edit,
//! only the chunk that changed is reparsed. Tree-sitter alone reuses unchanged blocks
//! one by one, which costs time in proportion to the number of blocks.
//!
//! "The same" holds for text without syntax errors, where parsing is deterministic.
//! Error recovery is a heuristic that looks at what surrounds the error, so a chunk
//! whose tree has errors is parsed again one block per chunk: an error then never
//! reaches past its block, and the document does not depend on how the text happened
//! to be cut.
//!
//! A chunk keeps its text, not its tree: a tree costs about 7 bytes per byte of text,
//! and a chunk of [`TARGET_CHUNK_BYTES`] parses again in well under a millisecond. Only
//! the chunks the latest edit reparsed keep theirs ([`Chunk::kept_tree`]), so that the
//! typed document of an edited chunk is lowered from the tree the edit made, and the
//! next keystroke in the same chunk reparses it incrementally (unless its tree has
//! errors: error recovery depends on what is reused, so such a chunk is parsed afresh).

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tree_sitter::{InputEdit, Point, Tree};

use crate::grammar::parse_tree;
use crate::span::LineIndex;

/// The size a chunk grows to before the next block starts a new one.
pub(crate) const TARGET_CHUNK_BYTES: usize = 32 * 1024;

/// Texts below this size are parsed on the calling thread only.
const PARALLEL_THRESHOLD_BYTES: usize = 512 * 1024;

/// A run of whole blocks. Offsets and positions inside are local to the chunk; `start`,
/// `start_line` and `start_column` place it in the file.
#[derive(Clone)]
pub(crate) struct Chunk {
    /// Shared with the front ends that keep it ([`crate::ChunkInfo::text`]).
    pub(crate) text: Arc<str>,
    /// The tree of `text`, while the chunk is one the latest edit reparsed (see the
    /// module documentation); [`Chunk::tree`] parses again without it.
    pub(crate) kept_tree: Option<Tree>,
    /// The tree has syntax errors.
    pub(crate) has_error: bool,
    pub(crate) lines: LineIndex,
    /// Byte offset of the chunk in the file.
    pub(crate) start: usize,
    /// Line of the file on which the chunk starts.
    pub(crate) start_line: u32,
    /// Byte column of that line at which the chunk starts (the line break that ends the
    /// line before a separator; 0 for the first chunk).
    pub(crate) start_column: u32,
    /// Unique to this text of this chunk: a new id whenever the chunk is (re)parsed, the
    /// same while only its placement changes. Front ends cache work per chunk by it.
    pub(crate) id: u64,
}

/// The next chunk id (ids are unique in the process).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Chunk {
    /// Parses `text` into a chunk that keeps its tree.
    pub(crate) fn parse(text: impl Into<Arc<str>>) -> Chunk {
        let text = text.into();
        let tree = parse_tree(&text, None);
        let lines = LineIndex::new(&text);
        let has_error = tree.root_node().has_error();
        Chunk { text, kept_tree: Some(tree), has_error, lines, start: 0, start_line: 0, start_column: 0, id: next_id() }
    }

    /// The chunk's tree: the one it keeps, else its text parsed again.
    pub(crate) fn tree(&self) -> Cow<'_, Tree> {
        match &self.kept_tree {
            Some(tree) => Cow::Borrowed(tree),
            None => Cow::Owned(parse_tree(&self.text, None)),
        }
    }

    fn end(&self) -> usize {
        self.start + self.text.len()
    }
}

/// Offsets at which `text` may be cut: the line break before every `###` line.
fn block_boundaries(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut boundaries: Vec<usize> = memchr::memmem::find_iter(bytes, b"\n###")
        .map(|index| if index > 0 && bytes[index - 1] == b'\r' { index - 1 } else { index })
        .collect();
    if memchr::memmem::find(bytes, b"\r###").is_some() {
        boundaries.extend(memchr::memmem::find_iter(bytes, b"\r###"));
        boundaries.sort_unstable();
        boundaries.dedup();
    }
    boundaries
}

/// Cuts `text` into ranges of whole blocks of about [`TARGET_CHUNK_BYTES`].
fn split(text: &str, target: usize) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for boundary in block_boundaries(text) {
        if boundary - start >= target {
            ranges.push(start..boundary);
            start = boundary;
        }
    }
    ranges.push(start..text.len());
    ranges
}

/// The end of the first ranges [`split`] cuts `text` into that hold at least `at_least`
/// bytes (the length of the text when that is all of them), found without looking at
/// the text after it.
pub(crate) fn first_ranges_end(text: &str, target: usize, at_least: usize) -> usize {
    let mut start = 0;
    let mut after = 0;
    while let Some(boundary) = next_boundary(text, after) {
        if boundary - start >= target {
            start = boundary;
            if start >= at_least {
                return start;
            }
        }
        after = boundary + 1;
    }
    text.len()
}

/// The first of [`block_boundaries`] at `from` or after it, found reading the text up to
/// it only.
fn next_boundary(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut search = from;
    // A line feed before `###`: the boundary is its `\r` when one comes before it.
    let line_feed = loop {
        let Some(found) = bytes.get(search..).and_then(|rest| memchr::memmem::find(rest, b"\n###")) else {
            break None;
        };
        let index = search + found;
        let boundary = if index > 0 && bytes[index - 1] == b'\r' { index - 1 } else { index };
        if boundary >= from {
            break Some(boundary);
        }
        search = index + 1;
    };
    // A lone `\r` before `###`, looked for only where it would come first.
    let end = line_feed.map_or(bytes.len(), |at| (at + 3).min(bytes.len()));
    let carriage_return =
        bytes.get(from..end).and_then(|window| memchr::memmem::find(window, b"\r###")).map(|found| from + found);
    carriage_return.or(line_feed)
}

/// Parses `text` into placed chunks, on several threads for large texts, and hands
/// each chunk to `then` on the thread that parsed it (to keep it, or to lower it and
/// drop its tree there). Results come back in text order.
pub(crate) fn parse_chunks<T: Send>(text: &str, target: usize, then: impl Fn(Chunk) -> T + Sync) -> Vec<T> {
    let ranges = split(text, target);
    let threads = if text.len() < PARALLEL_THRESHOLD_BYTES || ranges.len() < 2 {
        1
    } else {
        std::thread::available_parallelism().map_or(1, usize::from).min(ranges.len())
    };
    // Where every range starts, in lines and columns, from one pass over the text: any
    // thread can then place any range, and the threads take ranges as they get free.
    let starts = range_starts(text, &ranges);
    let budget = crate::budget::current();
    let parse_range = |index: usize| -> Vec<T> {
        // Every thread parses within the caller's budget; once it is exceeded, the
        // remaining ranges are skipped (the caller throws the result away).
        let _budget = crate::budget::enter(budget.clone());
        if crate::budget::exceeded().is_some() {
            return Vec::new();
        }
        let range = ranges[index].clone();
        let (line, column) = starts[index];
        let mut results = Vec::with_capacity(1);
        let mut previous: Option<Placement> = None;
        for mut chunk in parse_piece(&text[range.clone()]) {
            if let Some(placement) = previous {
                chunk.place_after(placement);
            } else {
                chunk.start = range.start;
                chunk.start_line = line;
                chunk.start_column = column;
            }
            previous = Some(chunk.placement());
            results.push(then(chunk));
        }
        results
    };
    on_threads(ranges.len(), threads, parse_range).into_iter().flatten().collect()
}

/// Runs `f` on every index below `count` on `threads` threads (the calling one among
/// them), each taking the next index as soon as it is free, so that no thread waits for
/// another that got the slower share. Results come back in index order.
fn on_threads<R: Send>(count: usize, threads: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    if threads <= 1 || count < 2 {
        return (0..count).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= count {
                return done;
            }
            done.push((index, f(index)));
        }
    };
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads.min(count)).map(|_| scope.spawn(work)).collect();
        let mut results = work();
        for handle in handles {
            match handle.join() {
                Ok(part) => results.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        results
    });
    results.sort_unstable_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

/// Parses one piece of whole blocks: one chunk, or one chunk per block when the piece
/// has syntax errors (see the module documentation).
fn parse_piece(text: &str) -> Vec<Chunk> {
    let chunk = Chunk::parse(text);
    if !chunk.has_error {
        return vec![chunk];
    }
    let mut starts: Vec<usize> = block_boundaries(text).into_iter().filter(|&start| start > 0).collect();
    if starts.is_empty() {
        return vec![chunk];
    }
    starts.insert(0, 0);
    starts.push(text.len());
    starts.windows(2).map(|pair| Chunk::parse(&text[pair[0]..pair[1]])).collect()
}

/// Runs `f` on every chunk, on several threads when the chunks are large in total.
/// Results come back in chunk order.
pub(crate) fn map_chunks<T: Send>(chunks: &[Chunk], f: impl Fn(&Chunk) -> T + Sync) -> Vec<T> {
    let total: usize = chunks.iter().map(|chunk| chunk.text.len()).sum();
    let threads = if total < PARALLEL_THRESHOLD_BYTES || chunks.len() < 2 {
        1
    } else {
        std::thread::available_parallelism().map_or(1, usize::from).min(chunks.len())
    };
    on_threads(chunks.len(), threads, |index| f(&chunks[index]))
}

/// The line and byte column at which each range starts, counting the same line breaks
/// as the grammar. Ranges are consecutive from offset 0, and cut points never fall
/// between the `\r` and `\n` of a break.
fn range_starts(text: &str, ranges: &[Range<usize>]) -> Vec<(u32, u32)> {
    let bytes = text.as_bytes();
    let has_cr = memchr::memchr(b'\r', bytes).is_some();
    let mut starts = Vec::with_capacity(ranges.len());
    let (mut line, mut column) = (0u32, 0u32);
    for range in ranges {
        starts.push((line, column));
        let piece = &bytes[range.clone()];
        let (breaks, last_line_start) = if has_cr { crate::span::line_breaks(piece) } else { breaks_lf(piece) };
        match last_line_start {
            Some(at) => {
                line += breaks;
                column = (piece.len() - at) as u32;
            }
            None => column += piece.len() as u32,
        }
    }
    starts
}

/// Line breaks in text with `\n` breaks only, and where its last line starts.
fn breaks_lf(bytes: &[u8]) -> (u32, Option<usize>) {
    // memchr counts with vector instructions; most texts have no `\r`.
    let breaks = memchr::memchr_iter(b'\n', bytes).count() as u32;
    (breaks, memchr::memrchr(b'\n', bytes).map(|at| at + 1))
}

/// Recomputes the placement of `chunks[from..]` from the chunk before each.
pub(crate) fn place_from(chunks: &mut [Chunk], from: usize) {
    if let (0, Some(first)) = (from, chunks.first_mut()) {
        first.start = 0;
        first.start_line = 0;
        first.start_column = 0;
    }
    for index in from.max(1)..chunks.len() {
        let placement = chunks[index - 1].placement();
        chunks[index].place_after(placement);
    }
}

/// Where a chunk ends in the file: what the chunk after it needs to place itself.
#[derive(Clone, Copy)]
struct Placement {
    end: usize,
    end_line: u32,
    end_column: u32,
}

impl Chunk {
    fn placement(&self) -> Placement {
        let last_line = self.lines.line_count() as u32 - 1;
        let last_line_start = self.lines.line_start(last_line).unwrap_or(0);
        let end_column = if last_line == 0 {
            self.start_column + self.text.len() as u32
        } else {
            (self.text.len() - last_line_start) as u32
        };
        Placement { end: self.end(), end_line: self.start_line + last_line, end_column }
    }

    /// Places this chunk right after the one `placement` describes.
    fn place_after(&mut self, placement: Placement) {
        self.start = placement.end;
        self.start_line = placement.end_line;
        self.start_column = placement.end_column;
    }
}

/// The chunk an offset belongs to for an edit starting or ending there: an offset at
/// a chunk's start belongs to the chunk before it, since text inserted there goes before
/// that chunk's separator.
pub(crate) fn chunk_for_edit(chunks: &[Chunk], offset: usize) -> usize {
    chunks.partition_point(|chunk| chunk.start < offset).saturating_sub(1)
}

/// `true` when `chunks[index]` starts a block (always for the first chunk).
fn starts_a_block(chunks: &[Chunk], index: usize) -> bool {
    index == 0 || text_starts_a_block(&chunks[index].text, &chunks[index - 1].text)
}

/// Applies an edit to the chunks (offsets in the whole text, already validated). The
/// chunks it reparses keep their trees; the others drop theirs.
pub(crate) fn edit(chunks: &mut Vec<Chunk>, target: usize, range: Range<usize>, new_text: &str) {
    let first = chunk_for_edit(chunks, range.start);
    let last = chunk_for_edit(chunks, range.end).max(first);
    for (index, chunk) in chunks.iter_mut().enumerate() {
        if !(first..=last).contains(&index) {
            chunk.kept_tree = None;
        }
    }
    if first == last {
        let base = chunks[first].start;
        edit_one(&mut chunks[first], range.start - base..range.end - base, new_text);
        place_from(chunks, first + 1);
        let mut low = first;
        let mut high = first;
        if !starts_a_block(chunks, first) {
            low = first - 1;
        }
        if first + 1 < chunks.len() && !starts_a_block(chunks, first + 1) {
            high = first + 1;
        }
        let split_blocks =
            chunks[first].has_error && block_boundaries(&chunks[first].text).iter().any(|&start| start > 0);
        if low != first || high != first || split_blocks || chunks[first].text.len() > target.saturating_mul(4) {
            resplit(chunks, target, low..=high, None);
        }
    } else {
        resplit(chunks, target, first..=last, Some((range, new_text)));
    }
}

/// Reparse of one chunk: incremental when it kept its tree and neither that tree nor
/// the new one has errors.
fn edit_one(chunk: &mut Chunk, range: Range<usize>, new_text: &str) {
    let start_position = tree_sitter_point(&chunk.text, range.start);
    let old_end_position = tree_sitter_point(&chunk.text, range.end);
    let mut text = String::with_capacity(chunk.text.len() - range.len() + new_text.len());
    text.push_str(&chunk.text[..range.start]);
    text.push_str(new_text);
    text.push_str(&chunk.text[range.end..]);
    chunk.text = Arc::from(text);
    chunk.lines.apply_edit(&chunk.text, range.clone(), new_text);
    let new_end = range.start + new_text.len();
    // Error recovery weighs what surrounds an error, and an incremental parse reuses
    // nodes around it: a tree with errors, before the edit or after it, can differ from
    // the one a fresh parse of the same text gives (an error kept over `{{$random(1,`
    // that a fresh parse reads as arguments). Such a chunk is parsed from scratch, so
    // that its document never depends on the edits that made its text.
    let incremental = chunk.kept_tree.take().filter(|_| !chunk.has_error).map(|mut tree| {
        tree.edit(&InputEdit {
            start_byte: range.start,
            old_end_byte: range.end,
            new_end_byte: new_end,
            start_position,
            old_end_position,
            new_end_position: tree_sitter_point(&chunk.text, new_end),
        });
        parse_tree(&chunk.text, Some(&tree))
    });
    let tree = match incremental {
        Some(tree) if !tree.root_node().has_error() => tree,
        _ => parse_tree(&chunk.text, None),
    };
    chunk.has_error = tree.root_node().has_error();
    chunk.kept_tree = Some(tree);
    chunk.id = next_id();
}

/// Joins `chunks[range]`, applies `edit` (offsets in the whole text) to the joined
/// text, cuts it again at block boundaries, parses the pieces and puts them in place.
/// Widens to the neighbours until every piece starts a block.
fn resplit(
    chunks: &mut Vec<Chunk>,
    target: usize,
    range: std::ops::RangeInclusive<usize>,
    edit: Option<(Range<usize>, &str)>,
) {
    let (mut low, mut high) = range.into_inner();
    let base = chunks[low].start;
    let mut joined = String::new();
    for chunk in &chunks[low..=high] {
        joined.push_str(&chunk.text);
    }
    if let Some((range, new_text)) = edit {
        joined.replace_range(range.start - base..range.end - base, new_text);
    }
    // A joined text that does not start a block takes the chunk before it along.
    while low > 0 && !text_starts_a_block(&joined, &chunks[low - 1].text) {
        low -= 1;
        joined.insert_str(0, &chunks[low].text);
    }
    while high + 1 < chunks.len() && !next_starts_a_block(&joined, &chunks[high + 1].text) {
        high += 1;
        joined.push_str(&chunks[high].text);
    }
    let pieces: Vec<Chunk> = split(&joined, target).into_iter().flat_map(|piece| parse_piece(&joined[piece])).collect();
    chunks.splice(low..=high, pieces);
    place_from(chunks, low);
}

/// `true` when `text`, placed after `previous`, starts with a line break and `###`
/// (and that break is not the `\n` of a `\r\n` split between the two).
fn text_starts_a_block(text: &str, previous: &str) -> bool {
    let bytes = text.as_bytes();
    let after_break = crate::line_break::break_len(bytes, 0);
    let joined = bytes.first() == Some(&b'\n') && previous.ends_with('\r');
    after_break > 0 && !joined && bytes[after_break..].starts_with(b"###")
}

fn next_starts_a_block(joined: &str, next: &str) -> bool {
    text_starts_a_block(next, joined)
}

/// The point of `offset` as tree-sitter counts: rows end at `\n` only (a lone `\r`
/// is a line break for the format and for LSP, not for tree-sitter's points).
fn tree_sitter_point(text: &str, offset: usize) -> Point {
    let before = &text.as_bytes()[..offset];
    let row = memchr::memchr_iter(b'\n', before).count();
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |index| index + 1);
    Point { row, column: offset - line_start }
}

/// `true` when tree-sitter's points agree with [`LineIndex`] positions for `text`:
/// when it has no `\r` that is not followed by `\n`.
pub(crate) fn points_agree(text: &str) -> bool {
    // Every chunk is lowered after this check: `memchr` skips the text 32 bytes at a
    // time, where a loop over its bytes was 7 % of the typed layer's instructions.
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\r', bytes).all(|index| crate::line_break::break_len(bytes, index) == 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_agree_unless_a_carriage_return_stands_alone() {
        for text in ["", "a\nb", "a\r\nb\r\n", "\r\n\r\n"] {
            assert!(points_agree(text), "{text:?}");
        }
        for text in ["\r", "a\rb", "a\r\nb\r", "\r\r\n", "é\r"] {
            assert!(!points_agree(text), "{text:?}");
        }
    }

    #[test]
    fn tree_sitter_points_count_line_feeds_only() {
        assert_eq!(tree_sitter_point("ab\ncd\r\nef\rg", 0), Point { row: 0, column: 0 });
        assert_eq!(tree_sitter_point("ab\ncd\r\nef\rg", 5), Point { row: 1, column: 2 });
        assert_eq!(tree_sitter_point("ab\ncd\r\nef\rg", 11), Point { row: 2, column: 4 });
    }

    #[test]
    fn the_first_ranges_end_where_split_cuts() {
        let texts = [
            "",
            "GET https://a\n",
            "a\n###\nb\r\n### x\r###\nccc\n###\r\n###",
            "###\n###\n###\n",
            "\r\n###\r\n###a\r###b\n\n###c",
            "GET https://a/1\n###\nGET https://a/2\n###\nGET https://a/3\n###\nGET https://a/4\n",
        ];
        for text in texts {
            let boundaries = block_boundaries(text);
            for from in 0..=text.len() {
                assert_eq!(
                    next_boundary(text, from),
                    boundaries.iter().copied().find(|&at| at >= from),
                    "{text:?} {from}"
                );
            }
            for target in 1..8 {
                let ends: Vec<usize> = split(text, target).iter().map(|range| range.end).collect();
                for at_least in 0..=text.len() + 1 {
                    let expected = ends.iter().copied().find(|&end| end >= at_least).unwrap_or(text.len());
                    assert_eq!(first_ranges_end(text, target, at_least), expected, "{text:?} {target} {at_least}");
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_first_ranges_of_any_text_end_where_split_cuts(
            pieces in proptest::collection::vec(
                proptest::sample::select(&["\n", "\r\n", "\r", "#", "###", "x", "\n###\n", "\r###"][..]),
                0..40,
            ),
            target in 1usize..16,
            at_least in 0usize..80,
        ) {
            let text = pieces.concat();
            let expected =
                split(&text, target).iter().map(|range| range.end).find(|&end| end >= at_least).unwrap_or(text.len());
            proptest::prop_assert_eq!(first_ranges_end(&text, target, at_least), expected);
        }
    }

    #[test]
    fn boundaries_are_line_breaks_before_separators() {
        assert_eq!(block_boundaries("a\n###\nb\r\n### x\r###"), vec![1, 7, 14]);
        assert!(block_boundaries("###\n# ###\n ###").is_empty());
    }

    #[test]
    fn ranges_start_where_the_text_before_them_ends() {
        let starts = |text: &str, cuts: &[usize]| {
            let mut bounds = vec![0];
            bounds.extend_from_slice(cuts);
            bounds.push(text.len());
            let ranges: Vec<Range<usize>> = bounds.windows(2).map(|pair| pair[0]..pair[1]).collect();
            range_starts(text, &ranges)
        };
        assert_eq!(starts("ab\ncd\n###", &[5]), vec![(0, 0), (1, 2)]);
        assert_eq!(starts("ab\r\n###", &[2]), vec![(0, 0), (0, 2)]);
        assert_eq!(starts("a\r\nb\r###", &[4]), vec![(0, 0), (1, 1)]);
        assert_eq!(starts("x\ny\r\nz\rw", &[2, 5]), vec![(0, 0), (1, 0), (2, 0)]);
        assert_eq!(starts("abcd\nx", &[2, 4]), vec![(0, 0), (0, 2), (0, 4)]);
        assert_eq!(starts("", &[]), vec![(0, 0)]);
    }
}
