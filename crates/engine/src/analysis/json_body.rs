//! The analysis of a JSON body (`invalid-json-body`): the body parsed with each `{{…}}`
//! masked, and the parser's error placed on the character it names.

use volley_syntax::{Code, Diagnostic, Listing, Request, Span, Template};

use super::Walker;

impl Walker<'_> {
    /// Checks a JSON body with each `{{…}}` masked by a JSON number of the same width,
    /// so positions in the parser's error are positions in the file.
    pub(super) fn json_body(&self, template: &Template, out: &mut Listing) {
        let Some(source) = self.text.get(template.span.range()) else { return };
        if source.trim().is_empty() {
            return;
        }
        let mut masked = source.as_bytes().to_vec();
        for interpolation in template.interpolations() {
            let start = interpolation.span.start.saturating_sub(template.span.start);
            let end = interpolation.span.end.saturating_sub(template.span.start).min(masked.len());
            if start < end {
                masked[start] = b'0';
                masked[start + 1..end].fill(b' ');
            }
        }
        let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(&masked) else { return };
        // serde_json counts lines from 1 and columns in bytes from 1 (0 at a line's start).
        let line_start: usize =
            source.split_inclusive('\n').take(error.line().saturating_sub(1)).map(str::len).sum::<usize>();
        let offset = (line_start + error.column().saturating_sub(1)).min(source.len());
        let at = template.span.start + offset;
        let span = if error.is_eof() { template.span } else { point(self.text, template.span, at) };
        let message = error.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).to_owned();
        out.push(
            Diagnostic::new(Code::InvalidJsonBody, span, format!("the JSON body is not valid: {message}"))
                .with_hint("the Content-Type says JSON; fix the body or change the Content-Type"),
        );
    }
}

/// `true` when the request's literal `Content-Type` names JSON.
pub(super) fn is_json(request: &Request) -> bool {
    request.headers_named("content-type").any(|header| {
        header.value.as_literal().is_some_and(|value| {
            let essence = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
            essence == "application/json" || essence.ends_with("+json")
        })
    })
}

/// A one-character span at byte `at` of `text`, inside `within` (whose positions are
/// known): only the text from `within`'s start is indexed, not the whole file.
///
/// An `at` inside a character (or past the text) moves back to where that character
/// starts: a place is never a reason to panic.
fn point(text: &str, within: Span, at: usize) -> Span {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    if at < within.start {
        return within;
    }
    let end = text[at..].chars().next().map_or(at, |character| at + character.len_utf8());
    let Some(source) = text.get(within.start..end) else { return within };
    let index = volley_syntax::LineIndex::new(source);
    let relative = index.span(at - within.start..end - within.start);
    let shift = |position: volley_syntax::Position| {
        if position.line == 0 {
            volley_syntax::Position::new(within.start_position.line, within.start_position.column + position.column)
        } else {
            volley_syntax::Position::new(within.start_position.line + position.line, position.column)
        }
    };
    Span { start: at, end, start_position: shift(relative.start_position), end_position: shift(relative.end_position) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_inside_a_character_is_placed_on_the_character() {
        let text = "{\"a\": é}";
        let within = Span {
            start: 0,
            end: text.len(),
            start_position: volley_syntax::Position::new(3, 0),
            end_position: volley_syntax::Position::new(3, 9),
        };
        let inside = text.find('é').unwrap() + 1;
        let span = point(text, within, inside);
        assert_eq!((span.start, span.end), (inside - 1, inside + 1));
        assert_eq!(span.start_position, volley_syntax::Position::new(3, 6));
        assert_eq!(point(text, within, text.len() + 5).start, text.len());
    }
}
