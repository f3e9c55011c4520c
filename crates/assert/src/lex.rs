//! The words of an assertion, shared by both syntaxes (`# @assert` and httpyac's `??`):
//! tokens that keep brackets and quotes whole, words, quoted values, and the error that
//! points at a part of the expression.

use std::ops::Range;

use super::parse::AssertionSyntaxError;

pub(super) fn syntax_error(message: String, range: Range<usize>, hint: &str) -> AssertionSyntaxError {
    AssertionSyntaxError { message, range, hint: hint.to_owned() }
}

/// The end of the token at `at`: the first space or tab outside brackets, parentheses
/// and quotes (a JSONPath filter or a JavaScript accessor may contain spaces).
pub(super) fn token_end(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    let mut index = at;
    while index < bytes.len() {
        let byte = bytes[index];
        match (quote, byte) {
            (Some(_), b'\\') => index += 1,
            (Some(q), _) if byte == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(byte),
            (None, b'[' | b'(') => depth += 1,
            (None, b']' | b')') => depth -= 1,
            (None, b' ' | b'\t') if depth <= 0 => return index,
            _ => {}
        }
        index += 1;
    }
    text.len()
}

/// The word starting at `at` (after spaces) and the offset after it.
pub(super) fn word(text: &str, at: usize) -> (&str, usize) {
    let start = at + leading(text, at);
    let end = text[start..].find([' ', '\t']).map_or(text.len(), |offset| start + offset);
    (&text[start..end], end)
}

pub(super) fn leading(text: &str, at: usize) -> usize {
    let rest = &text[at.min(text.len())..];
    rest.len() - rest.trim_start_matches([' ', '\t']).len()
}

/// `raw` without its quotes (and escapes) when quoted, else as it is.
pub(super) fn unquote(raw: &str) -> Result<String, String> {
    if raw.is_empty() {
        return Err("the assertion needs a value".to_owned());
    }
    let Some(quote) = raw.chars().next().filter(|first| *first == '"' || *first == '\'') else {
        return Ok(raw.to_owned());
    };
    let inner = &raw[1..];
    let mut out = String::new();
    let mut characters = inner.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => match characters.next() {
                Some(escaped) => out.push(escaped),
                None => return Err("the value ends with a lone `\\`".to_owned()),
            },
            c if c == quote => {
                let after: String = characters.collect();
                if after.trim().is_empty() {
                    return Ok(out);
                }
                return Err(format!("unexpected `{}` after the quoted value", after.trim()));
            }
            c => out.push(c),
        }
    }
    Err(format!("the quoted value is not closed with {quote}"))
}
