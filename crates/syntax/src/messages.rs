//! Message streams: a body cut into messages at `===` lines, as JetBrains writes the
//! messages of a WebSocket or gRPC stream and httpyac those of a gRPC client stream.
//! `=== wait-for-server` waits for the next message of the server before going on.

use serde::Serialize;

use crate::span::{Position, Span, Spanned};
use crate::template::{Part, Template};

/// A WebSocket message's text without the line break before its `===` (or at the end
/// of the body): that is the separator's, not the message's.
#[must_use]
pub fn without_separator(mut text: String) -> String {
    text.truncate(text.trim_end_matches(['\r', '\n']).len());
    text
}

/// One message of a stream, and how many messages of the server to wait for before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamMessage {
    /// The `=== wait-for-server` lines right before it.
    pub wait_for_server: usize,
    /// The message; blank for waits after the last message.
    pub body: Template,
}

impl StreamMessage {
    /// `true` when there is no message, only waits.
    #[must_use]
    pub fn is_blank(&self) -> bool {
        self.body.parts.iter().all(|part| matches!(part, Part::Text(text) if text.value.trim().is_empty()))
    }
}

/// What a separator line says: `Some(false)` for `===`, `Some(true)` for
/// `=== wait-for-server`.
fn separator(line: &str) -> Option<bool> {
    let rest = line.trim().strip_prefix("===")?.trim();
    if rest.is_empty() {
        Some(false)
    } else if rest.eq_ignore_ascii_case("wait-for-server") {
        Some(true)
    } else {
        None
    }
}

/// Cuts `body` into messages at its `===` lines (a line of its own, outside any `{{ }}`).
/// Blank messages are dropped, except for waits after the last message. A body without
/// separators is one message.
#[must_use]
pub fn split_messages(body: &Template) -> Vec<StreamMessage> {
    let mut messages = Vec::new();
    let mut current = StreamMessage { wait_for_server: 0, body: Template::empty(start_of(body.span)) };
    let mut at_line_start = true;
    let parts = merged(&body.parts);
    for (index, part) in parts.iter().enumerate() {
        let text = match part {
            Part::Text(text) => text,
            Part::Interpolation(_) => {
                push_part(&mut current.body, part.clone());
                at_line_start = false;
                continue;
            }
        };
        // A last line without its break is a line of its own only at the end of the body.
        let last = index + 1 == parts.len();
        let mut offset = 0;
        for line in crate::line_break::lines_inclusive(&text.value) {
            let ends_with_break = crate::line_break::ends_with_break(line);
            let whole = at_line_start && (ends_with_break || last);
            let range = offset..offset + line.len();
            offset += line.len();
            at_line_start = ends_with_break;
            match separator(line).filter(|_| whole) {
                Some(wait) => {
                    let next_start = piece(text, range.end..range.end).span;
                    let finished = std::mem::replace(
                        &mut current,
                        StreamMessage { wait_for_server: 0, body: Template::empty(next_start) },
                    );
                    if finished.is_blank() {
                        current.wait_for_server = finished.wait_for_server;
                    } else {
                        messages.push(finished);
                    }
                    current.wait_for_server += usize::from(wait);
                }
                None => push_part(&mut current.body, Part::Text(piece(text, range))),
            }
        }
    }
    if !current.is_blank() || current.wait_for_server > 0 {
        messages.push(current);
    }
    messages
}

/// The parts with adjacent texts joined (the parser may cut a text at line breaks).
fn merged(parts: &[Part]) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::with_capacity(parts.len());
    for part in parts {
        if let (Some(Part::Text(previous)), Part::Text(text)) = (out.last_mut(), part) {
            previous.value.push_str(&text.value);
            previous.span = previous.span.cover(text.span);
        } else {
            out.push(part.clone());
        }
    }
    out
}

fn start_of(span: Span) -> Span {
    Span { end: span.start, end_position: span.start_position, ..span }
}

fn push_part(template: &mut Template, part: Part) {
    let span = match &part {
        Part::Text(text) => text.span,
        Part::Interpolation(interpolation) => interpolation.span,
    };
    template.span = if template.parts.is_empty() { span } else { template.span.cover(span) };
    template.parts.push(part);
}

/// The piece `range` of a text part, with its span.
fn piece(text: &Spanned<String>, range: std::ops::Range<usize>) -> Spanned<String> {
    let start = advance(text.span.start_position, &text.value[..range.start]);
    let end = advance(start, &text.value[range.clone()]);
    let span = Span {
        start: text.span.start + range.start,
        end: text.span.start + range.end,
        start_position: start,
        end_position: end,
    };
    Spanned::new(text.value[range].to_owned(), span)
}

fn advance(position: Position, text: &str) -> Position {
    match crate::span::line_breaks(text.as_bytes()) {
        (breaks, Some(last_line_start)) => Position::new(position.line + breaks, (text.len() - last_line_start) as u32),
        (_, None) => Position::new(position.line, position.column + text.len() as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::split_messages;

    fn messages(body: &str) -> Vec<(usize, String)> {
        let (template, _) = crate::parse_template(body);
        split_messages(&template)
            .into_iter()
            .map(|message| (message.wait_for_server, message.body.to_source()))
            .collect()
    }

    #[test]
    fn separators_cut_the_body() {
        assert_eq!(messages("{\"a\": 1}\n"), vec![(0, "{\"a\": 1}\n".to_owned())]);
        assert_eq!(
            messages("{\"a\": 1}\n===\n{\"b\": {{b}}}\n=== wait-for-server\n{\"c\": 3}"),
            vec![(0, "{\"a\": 1}\n".to_owned()), (0, "{\"b\": {{b}}}\n".to_owned()), (1, "{\"c\": 3}".to_owned())]
        );
        // JetBrains starts with `===`; waits add up; waits after the last message stay.
        assert_eq!(
            messages("===\n{\"a\": 1}\n=== wait-for-server\n=== wait-for-server\n{\"b\": 2}\n=== wait-for-server\n"),
            vec![(0, "{\"a\": 1}\n".to_owned()), (2, "{\"b\": 2}\n".to_owned()), (1, String::new())]
        );
    }

    #[test]
    fn only_whole_lines_are_separators() {
        assert_eq!(messages("{\"a\": \"===\"}\n"), vec![(0, "{\"a\": \"===\"}\n".to_owned())]);
        assert_eq!(messages("{{x}}===\n"), vec![(0, "{{x}}===\n".to_owned())]);
        assert_eq!(messages("==== \n"), vec![(0, "==== \n".to_owned())]);
    }

    #[test]
    fn spans_point_at_each_message() {
        let (template, _) = crate::parse_template("{}\n===\n{\"b\": 2}\n");
        let second = &split_messages(&template)[1];
        assert_eq!((second.body.span.start, second.body.span.start_position.line), (7, 2));
    }
}
