//! The edits of the differential test: random `.http`-like files and the edits a user
//! makes to them (typing, deleting, pasting blocks, undoing, changing line breaks), as
//! `didChange` notifications over lines counted by the LSP specification alone.

use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

/// The client's view of lines, written from the LSP specification alone: `\n`, `\r\n`
/// and `\r` each end a line; characters are UTF-16 units; a character past the end of
/// its line means the end of the line; a line past the last means the end of the text.
pub(super) struct Lines {
    /// Where every line starts and where its content ends (before its line break).
    lines: Vec<(usize, usize)>,
}

impl Lines {
    pub(super) fn of(text: &str) -> Lines {
        let bytes = text.as_bytes();
        let mut lines = Vec::new();
        let mut start = 0;
        let mut index = 0;
        while index < bytes.len() {
            let width = match bytes[index] {
                b'\r' if bytes.get(index + 1) == Some(&b'\n') => 2,
                b'\r' | b'\n' => 1,
                _ => 0,
            };
            if width > 0 {
                lines.push((start, index));
                start = index + width;
                index += width;
            } else {
                index += 1;
            }
        }
        lines.push((start, text.len()));
        Lines { lines }
    }

    /// The line of `offset` and its column in bytes.
    pub(super) fn line_and_byte_column(&self, offset: usize) -> (u32, u32) {
        let line = self.lines.partition_point(|&(start, _)| start <= offset) - 1;
        (line as u32, (offset - self.lines[line].0) as u32)
    }

    pub(super) fn position(&self, text: &str, offset: usize) -> Position {
        let line = self.lines.partition_point(|&(start, _)| start <= offset) - 1;
        let (start, end) = self.lines[line];
        let character = text[start..offset.min(end)].encode_utf16().count();
        Position::new(line as u32, character as u32)
    }

    fn offset(&self, text: &str, position: Position) -> usize {
        let Some(&(start, end)) = self.lines.get(position.line as usize) else {
            return text.len();
        };
        let mut units = 0;
        for (index, character) in text[start..end].char_indices() {
            units += character.len_utf16() as u32;
            if units > position.character {
                return start + index;
            }
        }
        end
    }
}

/// Applies a change as the client does.
pub(super) fn apply(text: &mut String, change: &TextDocumentContentChangeEvent) {
    let range = change.range.unwrap();
    let lines = Lines::of(text);
    let start = lines.offset(text, range.start);
    let end = lines.offset(text, range.end).max(start);
    text.replace_range(start..end, &change.text);
}

/// The inverse of an edit: the bytes it inserted (in the text after it) and the text
/// it replaced.
pub(super) struct Inverse {
    range: std::ops::Range<usize>,
    text: String,
}

/// A random edit of `text`, as an editor makes them; edits other than undo are
/// remembered in `undo`.
pub(super) fn edit(random: &mut Random, text: &str, undo: &mut Vec<Inverse>) -> TextDocumentContentChangeEvent {
    let lines = Lines::of(text);
    let (start, end, new_text) = match random.below(100) {
        // Typing a character (Enter as the file's line breaks have it, or not).
        0..=44 => {
            let at = random.offset(text);
            (at, at, random.pick(TYPED).to_owned())
        }
        // Backspace or delete, a word, a line, a selection.
        45..=64 => {
            let at = random.offset(text);
            let length = match random.below(10) {
                0..=5 => 1 + random.below(2),
                6..=8 => 3 + random.below(20),
                _ => random.below(text.len() / 2 + 1),
            };
            (at, at + length, String::new())
        }
        // Pasting: a piece of a file, or a piece of this text (copy and paste).
        65..=79 => {
            let start = random.offset(text);
            let end = if random.below(3) == 0 { start + random.below(10) } else { start };
            let pasted = if random.below(2) == 0 {
                let from = random.offset(text);
                let to = floor_char_boundary(text, from + random.below(200));
                text[from..to.max(from)].to_owned()
            } else {
                random.pick(PASTED).replace('\n', random.pick(&["\n", "\r\n", "\r"]))
            };
            (start, end, pasted)
        }
        // A line break changed: `\r\n` to `\r` or `\n` (its `\n` or `\r` deleted),
        // `\n` to `\r\n` or `\r`.
        80..=89 => {
            let breaks: Vec<(usize, usize)> = lines.lines.windows(2).map(|pair| (pair[0].1, pair[1].0)).collect();
            if breaks.is_empty() {
                (0, 0, "\r".to_owned())
            } else {
                let (start, end) = breaks[random.below(breaks.len())];
                (start, end, random.pick(&["\r", "\n", "\r\n", "\r\r", "\n\r"]).to_owned())
            }
        }
        // Undo: the latest edit not undone, reverted.
        _ => match undo.pop() {
            Some(inverse) => {
                let change = change_of(&lines, text, inverse.range.start, inverse.range.end, inverse.text);
                return change;
            }
            None => (0, 0, String::new()),
        },
    };
    let start = start.min(text.len());
    let end = floor_char_boundary(text, end.min(text.len()).max(start));
    let mut change = change_of(&lines, text, start, end, new_text);
    // Now and then a position past the end of its line or of the text, which LSP
    // clamps to the end of the line, respectively of the text.
    if random.below(25) == 0 {
        let range = change.range.as_mut().unwrap();
        let position = if random.below(2) == 0 { &mut range.end } else { &mut range.start };
        if random.below(4) == 0 {
            position.line += 1 + random.below(2) as u32;
        } else {
            position.character += 1 + random.below(3) as u32;
        }
    }
    // What the client replaces: the positions' offsets, not the ones chosen.
    let range = change.range.unwrap();
    let replaced = lines.offset(text, range.start)..lines.offset(text, range.end).max(lines.offset(text, range.start));
    undo.push(Inverse { range: replaced.start..replaced.start + change.text.len(), text: text[replaced].to_owned() });
    if undo.len() > 100 {
        undo.remove(0);
    }
    change
}

/// The change replacing `start..end` of `text` (on character boundaries: an undo after
/// one that could not be exact, its range inside a `\r\n`, may name any byte).
fn change_of(lines: &Lines, text: &str, start: usize, end: usize, new_text: String) -> TextDocumentContentChangeEvent {
    let end = floor_char_boundary(text, end);
    let start = floor_char_boundary(text, start);
    TextDocumentContentChangeEvent {
        range: Some(Range::new(lines.position(text, start.min(end)), lines.position(text, end))),
        range_length: None,
        text: new_text,
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// What typing inserts, one keystroke each.
const TYPED: &[&str] = &[
    "a", "e", "x", "1", "0", " ", " ", "\t", "{", "{", "}", "}", "(", ")", ",", "\"", ":", "#", "#", "@", "$", ".",
    "/", "=", "[", "]", "%", "<", ">", "\n", "\n", "\r\n", "\r\n", "\r", "é", "😀",
    // Characters no line starts with: the grammar's junk lines.
    "\u{c}", "\u{a0}",
];

/// Pieces of `.http` files that are pasted (their `\n` made the file's line break).
const PASTED: &[&str] = &[
    "{{$random(1,10)}}",
    "{{$random(1,",
    "{{$randomInt 1 9}}",
    "{{host}}",
    "{{token}}",
    "{{create.response.body.$.id}}",
    "\n###\n",
    "\n### Second\n",
    "# @name other\n",
    "# @timeout 5 s\n",
    "@host = https://example.com\n",
    "Content-Type: application/json\n",
    "Authorization: Bearer {{token}}\n",
    "GET {{host}}/users/{{$random(1,10)}} HTTP/1.1\n",
    "\n{\"name\": \"{{name}}\", \"id\": {{$random(1, 10)}}}\n",
    "\"tags\": [\"a\", \"b\"],",
    "> {% client.global.set(\"id\", response.body.id); %}\n",
    "< ./body.json\n",
    "\n###\nPOST https://example.com/items\nContent-Type: application/json\n\n{\"a\": 1}\n",
];

/// A file like those people write, with the line breaks of one editor or of several.
pub(super) fn file(random: &mut Random) -> String {
    let mut lines: Vec<String> = Vec::new();
    if random.below(2) == 0 {
        lines.push("@host = https://example.com".to_owned());
        lines.push("@token = {{$uuid()}}".to_owned());
        lines.push(String::new());
    }
    for block in 0..=random.below(6) {
        if block > 0 || random.below(2) == 0 {
            lines.push(format!("### {}", random.pick(&["Create user", "List", "", "Get one", "Login"])));
        }
        for piece in random.pick(BLOCKS).lines() {
            lines.push(piece.to_owned());
        }
        lines.push(String::new());
    }
    // Now and then a file of several chunks of the syntax tree (32 KiB each).
    if random.below(40) == 0 {
        let block = lines.join("\n");
        while lines.len() < 2_000 {
            lines.push("###".to_owned());
            lines.extend(block.lines().map(str::to_owned));
        }
    }
    let breaks = random.below(4);
    let mut text = String::new();
    for line in lines {
        text.push_str(&line);
        text.push_str(match breaks {
            0 => "\n",
            1 => "\r\n",
            _ => random.pick(&["\n", "\n", "\r\n", "\r\n", "\r"]),
        });
    }
    text
}

/// Requests of a file (without their `###` line).
const BLOCKS: &[&str] = &[
    "# @name create\n# @timeout 5 s\nPOST {{host}}/users?id={{$random(1,10)}} HTTP/1.1\nContent-Type: application/json\nAuthorization: Bearer {{token}}\n\n{\n  \"name\": \"{{$randomInt 1 9}}\",\n  \"tags\": [\"a\", \"b\"],\n  \"n\": {{$random(1, 10)}}\n}\n\n> {% client.global.set(\"id\", response.body.id); %}",
    "GET {{host}}/users/{{create.response.body.$.id}}\nAccept: application/json",
    "// a comment\nGET https://example.com/items?page=1\n    &size={{$random(1,10)}}\nAccept: */*",
    "# @no-redirect\nDELETE {{host}}/users/{{id}}",
    "POST https://example.com/upload\nContent-Type: application/json\n\n< ./body.json",
    "PUT {{host}}/users/1\nContent-Type: application/json\n\n{\"name\": \"{{name}}\", \"age\": {{$random(18,\n99)}}}",
    "# @name login\nPOST {{host}}/login\nContent-Type: application/x-www-form-urlencoded\n\nuser={{user}}&password={{password}}",
    "GET {{host}}/{{$unknown()}}\nX-Broken: {{",
];

/// A small deterministic generator (SplitMix64): a seed names a sequence for good,
/// with no dependency.
pub(super) struct Random(u64);

impl Random {
    pub(super) fn new(seed: u64) -> Random {
        Random(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `bound` (0 for 0).
    pub(super) fn below(&mut self, bound: usize) -> usize {
        if bound == 0 { 0 } else { (self.next() % bound as u64) as usize }
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// An offset of `text` on a character boundary.
    fn offset(&mut self, text: &str) -> usize {
        floor_char_boundary(text, self.below(text.len() + 1))
    }
}
