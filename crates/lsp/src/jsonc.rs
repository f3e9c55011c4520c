//! Where a variable is defined in a Volley configuration text (`volley.jsonc`): the
//! byte ranges of its keys, for references and rename across the `.http` file and its
//! configuration. A small hand-written JSONC scanner (comments, trailing commas) that
//! keeps byte offsets, which a JSON value parser throws away.

use std::ops::Range;

/// Byte ranges of the key `name` (the text inside the quotes) wherever it is a variable
/// of a Volley configuration text: a direct key of the top-level `"variables"` object or
/// of `"profiles" → <any profile> → "variables"`. Keys nested deeper are parts of a
/// variable's value, not variables. Keys are compared after resolving escapes, so
/// `"a\"b"` is the key `a"b`. Malformed text gives what was found before the error.
pub(crate) fn variable_keys(text: &str, name: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut scanner = Scanner { text, position: 0 };
    // What each open object or array is to the configuration.
    let mut stack: Vec<Frame> = Vec::new();
    // The role of the next value (set by the key before it).
    let mut next_role = Role::Root;
    let mut state = State::Value;
    loop {
        let token = scanner.next_token();
        match (state, token) {
            (State::Value | State::ValueOrClose, Token::Open(bracket)) => {
                let role = if bracket == b'{' { next_role } else { Role::Other };
                stack.push(Frame { bracket, role });
                // The elements of an array, and the values of keys not read yet, are
                // nothing to the configuration.
                next_role = Role::Other;
                state = if bracket == b'{' { State::KeyOrClose } else { State::ValueOrClose };
            }
            (State::Value | State::ValueOrClose, Token::String(..) | Token::Literal) => state = after_value(&stack),
            (State::ValueOrClose | State::KeyOrClose | State::CommaOrClose, Token::Close(bracket))
                if stack.last().is_some_and(|frame| frame.bracket == opening(bracket)) =>
            {
                stack.pop();
                state = after_value(&stack);
            }
            (State::KeyOrClose, Token::String(range, key)) => {
                let role = stack.last().map_or(Role::Other, |frame| frame.role);
                if role == Role::Variables && key == name {
                    found.push(range);
                }
                next_role = child_role(role, &key);
                state = State::Colon;
            }
            (State::Colon, Token::Colon) => state = State::Value,
            (State::CommaOrClose, Token::Comma) => {
                // A trailing comma is allowed: a closing bracket may follow.
                let in_object = stack.last().is_some_and(|frame| frame.bracket == b'{');
                next_role = Role::Other;
                state = if in_object { State::KeyOrClose } else { State::ValueOrClose };
            }
            // The end of a complete text, or anything unexpected: stop with what was found.
            _ => return found,
        }
        if state == State::Done {
            return found;
        }
    }
}

/// What an object is to the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The top-level object.
    Root,
    /// A `"variables"` object whose direct keys are variables.
    Variables,
    /// The `"profiles"` object: its values are profiles.
    Profiles,
    /// One profile.
    Profile,
    /// Anything else.
    Other,
}

/// An open `{` or `[`.
#[derive(Debug, Clone, Copy)]
struct Frame {
    bracket: u8,
    role: Role,
}

/// What the scanner expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Value,
    ValueOrClose,
    KeyOrClose,
    Colon,
    CommaOrClose,
    Done,
}

/// The role of the value of `key` in an object of role `parent`.
fn child_role(parent: Role, key: &str) -> Role {
    match (parent, key) {
        (Role::Root | Role::Profile, "variables") => Role::Variables,
        (Role::Root, "profiles") => Role::Profiles,
        (Role::Profiles, _) => Role::Profile,
        _ => Role::Other,
    }
}

/// What follows a complete value: the end when it was the top-level one.
fn after_value(stack: &[Frame]) -> State {
    if stack.is_empty() { State::Done } else { State::CommaOrClose }
}

fn opening(close: u8) -> u8 {
    if close == b'}' { b'{' } else { b'[' }
}

/// A token of JSONC.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Open(u8),
    Close(u8),
    Colon,
    Comma,
    /// A string: the range inside its quotes and its value with escapes resolved.
    String(Range<usize>, String),
    /// A number, `true`, `false` or `null` (not checked further).
    Literal,
    /// The end of the text, an unterminated string or comment, or a stray character.
    End,
}

/// Reads tokens from `text`, skipping spaces and comments.
#[derive(Debug)]
struct Scanner<'a> {
    text: &'a str,
    position: usize,
}

impl Scanner<'_> {
    fn next_token(&mut self) -> Token {
        if !self.skip_trivia() {
            return Token::End;
        }
        let bytes = self.text.as_bytes();
        let Some(&byte) = bytes.get(self.position) else {
            return Token::End;
        };
        self.position += 1;
        match byte {
            b'{' | b'[' => Token::Open(byte),
            b'}' | b']' => Token::Close(byte),
            b':' => Token::Colon,
            b',' => Token::Comma,
            b'"' => self.string(),
            _ if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'+' | b'.') => {
                while bytes
                    .get(self.position)
                    .is_some_and(|next| next.is_ascii_alphanumeric() || matches!(next, b'-' | b'+' | b'.'))
                {
                    self.position += 1;
                }
                Token::Literal
            }
            _ => Token::End,
        }
    }

    /// Skips spaces, line breaks and comments; `false` at an unterminated `/* …`.
    fn skip_trivia(&mut self) -> bool {
        let bytes = self.text.as_bytes();
        loop {
            match (bytes.get(self.position), bytes.get(self.position + 1)) {
                (Some(b' ' | b'\t' | b'\r' | b'\n'), _) => self.position += 1,
                (Some(b'/'), Some(b'/')) => {
                    while bytes.get(self.position).is_some_and(|&byte| byte != b'\n' && byte != b'\r') {
                        self.position += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => match self.text[self.position + 2..].find("*/") {
                    Some(end) => self.position += 2 + end + 2,
                    None => return false,
                },
                _ => return true,
            }
        }
    }

    /// The rest of a string after its opening quote; [`Token::End`] when it is not closed
    /// on its line.
    fn string(&mut self) -> Token {
        let start = self.position;
        let mut value = String::new();
        let mut chars = self.text[start..].char_indices();
        while let Some((index, character)) = chars.next() {
            match character {
                '"' => {
                    self.position = start + index + 1;
                    return Token::String(start..start + index, value);
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, 't')) => value.push('\t'),
                    Some((_, 'r')) => value.push('\r'),
                    Some((_, 'b')) => value.push('\u{8}'),
                    Some((_, 'f')) => value.push('\u{c}'),
                    Some((at, 'u')) => {
                        let digits = self.text.get(start + at + 1..start + at + 5);
                        let unit = digits.and_then(|digits| u32::from_str_radix(digits, 16).ok());
                        let Some(unit) = unit else {
                            return Token::End;
                        };
                        for _ in 0..4 {
                            chars.next();
                        }
                        // A surrogate half alone is not a character; keep the key
                        // comparable anyway.
                        value.push(char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER));
                    }
                    Some((_, escaped)) => value.push(escaped),
                    None => return Token::End,
                },
                '\n' | '\r' => return Token::End,
                _ => value.push(character),
            }
        }
        Token::End
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys found, each as its start and the text it covers.
    fn keys(text: &str, name: &str) -> Vec<(usize, String)> {
        variable_keys(text, name).into_iter().map(|range| (range.start, text[range].to_owned())).collect()
    }

    fn starts(text: &str, name: &str) -> Vec<usize> {
        variable_keys(text, name).into_iter().map(|range| range.start).collect()
    }

    const CONFIG: &str = r#"{
  // Shared values.
  "variables": {
    "host": "https://example.com", // trailing comment
    /* "host": "commented out" */
    "nested": { "host": "not a variable" },
    "list": ["host", {"host": 1}],
    "quoted": "a \"host\": b",
    "host": 2,
  },
  "resolvers": { "host": { "type": "command", "command": "echo host" } },
  "profiles": {
    "dev": {
      "variables": { "host": "http://localhost", },
      "defaults": { "headers": { "host": "x" } },
    },
    "prod": { "defaults": {}, "variables": { "port": 443, "host": "https://prod" } },
  },
}
"#;

    #[test]
    fn finds_top_level_and_profile_variables_only() {
        let found = keys(CONFIG, "host");
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found.iter().all(|(_, text)| text == "host"));
        let lines: Vec<usize> =
            starts(CONFIG, "host").into_iter().map(|start| CONFIG[..start].matches('\n').count()).collect();
        assert_eq!(lines, [3, 8, 13, 16]);
        assert_eq!(keys(CONFIG, "port").len(), 1);
        assert!(keys(CONFIG, "nested").len() == 1 && keys(CONFIG, "type").is_empty());
        assert!(keys(CONFIG, "dev").is_empty(), "a profile is not a variable");
    }

    #[test]
    fn other_keys_named_variables_do_not_count() {
        let text = r#"{"defaults": {"variables": {"a": 1}}, "profiles": {"p": {"x": {"variables": {"a": 2}}}}, "variables": {"a": 3}}"#;
        assert_eq!(starts(text, "a"), [text.rfind("\"a\"").unwrap_or_default() + 1]);
    }

    #[test]
    fn escaped_keys_are_compared_by_value() {
        let text = r#"{"variables": {"a\"b": 1, "c\\": 2, "\u0068ost": 3, "x": "\\\"{"}}"#;
        assert_eq!(keys(text, "a\"b"), [(16, r#"a\"b"#.to_owned())]);
        assert_eq!(keys(text, "c\\").len(), 1);
        assert_eq!(keys(text, "host"), [(37, r"\u0068ost".to_owned())]);
        assert!(keys(text, "x").len() == 1, "a string ending in an escaped quote does not derail the scan");
    }

    #[test]
    fn malformed_text_keeps_what_came_before() {
        let cases = [
            // The second key is read before the missing colon stops the scan.
            (r#"{"variables": {"host": 1, "host" 2, "host": 3}}"#, 2),
            (r#"{"variables": {"host": 1, "#, 1),
            (r#"{"variables": {"host": "unterminated"#, 1),
            (r#"{"variables": {"host": 1, "host\"#, 1),
            ("{\"variables\": {\"host\": 1} /* never closed", 1),
            (r#"{"variables": {"host": 1]]]"#, 1),
            (r#"{"variables": {"host": 1}} trailing {"variables": {"host": 2}}"#, 1),
            (r#"["variables", {"host": 1}]"#, 0),
            (r#"{"variables": ["host"]}"#, 0),
            (r#"{"variables": [{"host": 1}], "profiles": [{"variables": {"host": 1}}]}"#, 0),
            (r#"{"profiles": {"p": [{"variables": {"host": 1}}]}}"#, 0),
            ("", 0),
            ("{\"variables\": {\"host\": @}}", 1),
        ];
        for (text, count) in cases {
            assert_eq!(variable_keys(text, "host").len(), count, "{text}");
        }
        let deep = "[".repeat(100_000);
        assert!(variable_keys(&deep, "host").is_empty());
        let text = "{\"variables\": {\"ü\": \"ä\\n\", \"host\": 1}}";
        for end in 0..=text.len() {
            if text.is_char_boundary(end) {
                let _ = variable_keys(&text[..end], "host");
            }
        }
    }

    #[test]
    fn non_ascii_keys() {
        let text = "{ /* ünïcode */ \"variables\": { \"grüße\": \"hallo\", \"日本\": 1 } }";
        assert_eq!(keys(text, "grüße"), [(text.find("grüße").unwrap_or_default(), "grüße".to_owned())]);
        assert_eq!(keys(text, "日本").len(), 1);
    }
}
