//! The one rule of line breaks: `\n`, `\r\n` and a lone `\r` each end a line, as LSP
//! counts them and as the grammar reads them.
//!
//! Every layer that counts lines or cuts text into lines asks this module: the line
//! index ([`crate::LineIndex`]) and with it every position, the placement of chunks, and
//! the typed layer where it reads text line by line (error messages, bodies, messages
//! of streams, scripts). Rust's `str::lines` and a split at `\n` miss the lone `\r`, and
//! tree-sitter's points count `\n` only: where a text has a lone `\r`, positions come
//! from the line index, never from those. The language server's rope counts the same
//! breaks (ropey's `cr_lines`); its differential test checks the two agree.

/// The length of the line break that starts at byte `at`: 2 for `\r\n`, 1 for `\n` and
/// for a `\r` that no `\n` follows, 0 where none starts (inside a `\r\n` neither: its
/// `\n` belongs to the break that starts at the `\r`).
#[must_use]
pub fn break_len(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at) {
        Some(b'\r') if bytes.get(at + 1) == Some(&b'\n') => 2,
        Some(b'\n') if at > 0 && bytes[at - 1] == b'\r' => 0,
        Some(b'\r' | b'\n') => 1,
        _ => 0,
    }
}

/// The lines of `text` with their line breaks (the last one without, when the text does
/// not end with a break; nothing for an empty text): `str::split_inclusive` by this rule.
pub fn lines_inclusive(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let line_start = start;
        let end = memchr::memchr2(b'\n', b'\r', &bytes[start..]).map_or(bytes.len(), |found| {
            let at = start + found;
            at + break_len(bytes, at)
        });
        start = end;
        Some(&text[line_start..end])
    })
}

/// The lines of `text` without their line breaks: `str::lines` by this rule.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    lines_inclusive(text).map(without_break)
}

/// `line` without the line break at its end.
#[must_use]
pub fn without_break(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// `true` when `text` ends with a line break.
#[must_use]
pub fn ends_with_break(text: &str) -> bool {
    text.ends_with(['\n', '\r'])
}

/// Splits `text` after its first line break: the first line without its break and the
/// rest (`None` for a text of one line).
#[must_use]
pub fn split_first_line(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let at = memchr::memchr2(b'\n', b'\r', bytes)?;
    Some((&text[..at], &text[at + break_len(bytes, at)..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_break_ends_one_line() {
        let text = "a\nb\r\nc\rd\r\r\ne\n\r";
        assert_eq!(lines_inclusive(text).collect::<Vec<_>>(), ["a\n", "b\r\n", "c\r", "d\r", "\r\n", "e\n", "\r"]);
        assert_eq!(lines(text).collect::<Vec<_>>(), ["a", "b", "c", "d", "", "e", ""]);
        assert_eq!(lines("x").collect::<Vec<_>>(), ["x"]);
        assert_eq!(lines("").count(), 0);
        assert_eq!(split_first_line("a\r\nb\rc"), Some(("a", "b\rc")));
        assert_eq!(split_first_line("a\rb"), Some(("a", "b")));
        assert_eq!(split_first_line("ab"), None);
    }

    #[test]
    fn a_break_starts_at_its_first_byte_only() {
        let bytes = b"a\r\nb\rc\n";
        let lengths: Vec<usize> = (0..=bytes.len()).map(|at| break_len(bytes, at)).collect();
        assert_eq!(lengths, [0, 2, 0, 0, 1, 0, 1, 0]);
    }
}
