//! Response bodies for people: JSON re-indented (keys in their order, numbers as
//! written) and highlighted; text as it is; binary summarised.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};

const KEY: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Blue)));
const STRING: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
const NUMBER: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));
const LITERAL: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Magenta)));

/// `text` re-indented with two spaces when it is valid JSON, with styles (stripped by
/// anstream when colour is off); `None` when it is not JSON.
pub(crate) fn json(text: &str) -> Option<String> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    let mut out = String::with_capacity(text.len() * 2);
    // For each open container: is it an object, and does a key come next?
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let mut chars = text.char_indices().peekable();
    let bytes = text.as_bytes();
    while let Some((at, character)) = chars.next() {
        match character {
            ' ' | '\t' | '\n' | '\r' => {}
            '{' | '[' => {
                let object = character == '{';
                let close = if object { b'}' } else { b']' };
                // `{}` and `[]` stay on one line.
                let next = text[at + 1..].trim_start();
                if next.as_bytes().first() == Some(&close) {
                    out.push(character);
                    out.push(close as char);
                    let skip = text.len() - next.len() + 1 - (at + 1);
                    for _ in 0..skip {
                        chars.next();
                    }
                    continue;
                }
                out.push(character);
                stack.push((object, object));
                newline(&mut out, stack.len());
            }
            '}' | ']' => {
                stack.pop();
                newline(&mut out, stack.len());
                out.push(character);
            }
            ',' => {
                out.push(',');
                if let Some(top) = stack.last_mut() {
                    top.1 = top.0;
                }
                newline(&mut out, stack.len());
            }
            ':' => {
                out.push_str(": ");
                if let Some(top) = stack.last_mut() {
                    top.1 = false;
                }
            }
            '"' => {
                let mut end = at + 1;
                while end < bytes.len() {
                    match bytes[end] {
                        b'\\' => end += 2,
                        b'"' => break,
                        _ => end += 1,
                    }
                }
                let end = (end + 1).min(text.len());
                let style = if stack.last().is_some_and(|top| top.1) { KEY } else { STRING };
                let _ = write!(out, "{style}{}{style:#}", &text[at..end]);
                while chars.peek().is_some_and(|(next, _)| *next < end) {
                    chars.next();
                }
            }
            _ => {
                let end =
                    text[at..].find([',', '}', ']', ' ', '\t', '\n', '\r']).map_or(text.len(), |offset| at + offset);
                let word = &text[at..end];
                let style = if matches!(word, "true" | "false" | "null") { LITERAL } else { NUMBER };
                let _ = write!(out, "{style}{word}{style:#}");
                while chars.peek().is_some_and(|(next, _)| *next < end) {
                    chars.next();
                }
            }
        }
    }
    Some(out)
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// `true` when a body with this `Content-Type` and these bytes should be shown as text.
pub(crate) fn is_text(content_type: Option<&str>, body: &[u8]) -> bool {
    let essence = content_type.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let textual = essence.is_empty()
        || essence.starts_with("text/")
        || essence.ends_with("json")
        || essence.ends_with("xml")
        || essence.ends_with("javascript")
        || essence.ends_with("yaml")
        || essence == "application/x-www-form-urlencoded"
        || essence == "application/graphql";
    textual && !body.contains(&0) && (std::str::from_utf8(body).is_ok() || !essence.is_empty())
}

/// `true` for a JSON `Content-Type`.
pub(crate) fn is_json(content_type: Option<&str>) -> bool {
    let essence = content_type.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> String {
        let styled = json(text).unwrap();
        anstream::adapter::strip_str(&styled).to_string()
    }

    #[test]
    fn reindents_keeping_order_and_numbers() {
        assert_eq!(
            plain(r#"{"z":1.50,"a":[1, {"b":"x, \"y\": z"}],"e":{},"f":[ ],"g":null}"#),
            "{\n  \"z\": 1.50,\n  \"a\": [\n    1,\n    {\n      \"b\": \"x, \\\"y\\\": z\"\n    }\n  ],\n  \"e\": {},\n  \"f\": [],\n  \"g\": null\n}"
        );
        assert_eq!(plain("  42 "), "42");
        assert!(json("{oops").is_none());
    }

    #[test]
    fn keys_and_values_are_styled_apart() {
        let styled = json(r#"{"k":"v"}"#).unwrap();
        assert!(styled.contains(&format!("{KEY}\"k\"{KEY:#}")));
        assert!(styled.contains(&format!("{STRING}\"v\"{STRING:#}")));
    }

    #[test]
    fn tells_text_from_binary() {
        assert!(is_text(Some("application/json; charset=utf-8"), b"{}"));
        assert!(is_text(None, b"hello"));
        assert!(!is_text(Some("image/png"), b"\x89PNG"));
        assert!(!is_text(None, b"\xff\xfe\x00"));
    }
}
