//! The top level of a gRPC message's JSON text, read leniently, as it is while being
//! typed: the keys of its object, and whether the text before the cursor ends where a key
//! of that object is written. `{{ }}` in the text are masked first (a `0` and blanks, as
//! the engine's analysis reads JSON bodies), so that they read as values.

use std::ops::Range;

/// A key of the top-level object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    /// The key, escapes resolved.
    pub(crate) name: String,
    /// Its bytes in the text, quotes included.
    pub(crate) range: Range<usize>,
}

/// A key of the top-level object being written at the end of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyAt {
    /// Where what is typed of it starts (after its opening quote, when it has one).
    pub(crate) start: usize,
    /// Inside a string (`"ite`), not before one (`{ ` or `, ite`).
    pub(crate) quoted: bool,
}

/// A piece of a text with its `{{ }}` masked.
#[derive(Debug)]
pub(crate) struct Masked {
    pub(crate) text: String,
    /// The masked ranges, counted from the piece's start.
    holes: Vec<Range<usize>>,
}

impl Masked {
    /// The bytes `range` of `text` with the `interpolations` (byte ranges of `text`)
    /// that lie inside it masked; `None` for a range that is not in `text`.
    pub(crate) fn of(
        text: &str,
        range: Range<usize>,
        interpolations: impl Iterator<Item = Range<usize>>,
    ) -> Option<Masked> {
        let piece = text.get(range.clone())?;
        let mut bytes = piece.as_bytes().to_vec();
        let mut holes = Vec::new();
        for interpolation in interpolations {
            if interpolation.start < range.start || interpolation.end > range.end || interpolation.is_empty() {
                continue;
            }
            let hole = interpolation.start - range.start..interpolation.end - range.start;
            bytes[hole.start] = b'0';
            bytes[hole.start + 1..hole.end].fill(b' ');
            holes.push(hole);
        }
        // An interpolation covers whole characters: the bytes are still UTF-8.
        let text = String::from_utf8(bytes).ok()?;
        Some(Masked { text, holes })
    }

    /// `true` when a masked interpolation overlaps `range`.
    pub(crate) fn has_hole_in(&self, range: &Range<usize>) -> bool {
        self.holes.iter().any(|hole| hole.start < range.end && range.start < hole.end)
    }
}

/// The keys of the top-level object of `text`, as far as it reads.
pub(crate) fn top_level_keys(text: &str) -> Vec<Key> {
    scan(text).0
}

/// Where a key of the top-level object is being written at the end of `text` (the
/// message up to the cursor), if one is.
pub(crate) fn key_at_end(text: &str) -> Option<KeyAt> {
    scan(text).1
}

/// The keys of the top-level object, and the key being written at the end of the text.
fn scan(text: &str) -> (Vec<Key>, Option<KeyAt>) {
    let bytes = text.as_bytes();
    // The open objects and arrays.
    let mut stack: Vec<u8> = Vec::new();
    let mut expecting_key = false;
    let mut keys = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        let top_level_key = expecting_key && stack == [b'{'];
        match byte {
            b'"' => {
                let start = at;
                at += 1;
                let mut closed = false;
                while at < bytes.len() {
                    match bytes[at] {
                        b'\\' => at += 2,
                        b'"' => {
                            at += 1;
                            closed = true;
                            break;
                        }
                        _ => at += 1,
                    }
                }
                if !closed {
                    return (keys, top_level_key.then_some(KeyAt { start: start + 1, quoted: true }));
                }
                if top_level_key && let Ok(name) = serde_json::from_str::<String>(&text[start..at]) {
                    keys.push(Key { name, range: start..at });
                }
                expecting_key = false;
                continue;
            }
            b'{' | b'[' => {
                stack.push(byte);
                expecting_key = byte == b'{';
            }
            b'}' | b']' => {
                stack.pop();
                expecting_key = false;
            }
            b',' => expecting_key = stack.last() == Some(&b'{'),
            b':' => expecting_key = false,
            byte if byte.is_ascii_whitespace() => {}
            _ => {
                // A literal, a number, or a key typed without its quotes.
                let start = at;
                while at < bytes.len() && !is_delimiter(bytes[at]) {
                    at += 1;
                }
                if at == bytes.len() && top_level_key {
                    return (keys, Some(KeyAt { start, quoted: false }));
                }
                expecting_key = false;
                continue;
            }
        }
        at += 1;
    }
    let end = (expecting_key && stack == [b'{']).then_some(KeyAt { start: text.len(), quoted: false });
    (keys, end)
}

fn is_delimiter(byte: u8) -> bool {
    byte.is_ascii_whitespace() || matches!(byte, b',' | b':' | b'{' | b'}' | b'[' | b']' | b'"')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        top_level_keys(text).into_iter().map(|key| key.name).collect()
    }

    #[test]
    fn only_keys_of_the_top_level_object_count() {
        assert_eq!(
            names(r#"{"item": "tea", "price": {"units": 1}, "tags": [{"a": 1}], "at": null}"#),
            ["item", "price", "tags", "at"]
        );
        assert_eq!(names(r#"{"a\"b": 1, "c": "x:y", "d": "{\"e\": 1}"}"#), ["a\"b", "c", "d"]);
        assert_eq!(names(r#"[{"a": 1}]"#), Vec::<String>::new());
        // Unfinished: what reads so far.
        assert_eq!(names("{\"item\": \"tea\",\n  \"qua"), ["item"]);
        let keys = top_level_keys(r#" {"item": 1}"#);
        assert_eq!(keys[0].range, 2..8);
    }

    #[test]
    fn the_key_being_written_at_the_end() {
        assert_eq!(key_at_end("{\n  "), Some(KeyAt { start: 4, quoted: false }));
        assert_eq!(key_at_end("{\"item\": 1, \"qu"), Some(KeyAt { start: 13, quoted: true }));
        assert_eq!(key_at_end("{\"item\": 1, qu"), Some(KeyAt { start: 12, quoted: false }));
        assert_eq!(key_at_end("{\"item\": \"te"), None, "a value");
        assert_eq!(key_at_end("{\"price\": {\"un"), None, "a nested object");
        assert_eq!(key_at_end("{\"item\" "), None, "after a key");
        assert_eq!(key_at_end(""), None, "before the object");
    }

    #[test]
    fn interpolations_read_as_values() {
        let text = r#"{"item": "{{item}}", "quantity": {{count}}, "{{key}}": 1}"#;
        let holes = [10..18, 33..42, 45..52];
        let masked = Masked::of(text, 0..text.len(), holes.iter().cloned()).expect("masked");
        let keys = top_level_keys(&masked.text);
        assert_eq!(keys.iter().map(|key| key.name.as_str()).collect::<Vec<_>>(), ["item", "quantity", "0      "]);
        assert!(masked.has_hole_in(&keys[2].range));
        assert!(!masked.has_hole_in(&keys[1].range));
    }
}
