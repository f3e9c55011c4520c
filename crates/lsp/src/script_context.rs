//! Where a position is in a `{% %}` script: the script around it (the parser's span of
//! its code; for a script not closed yet, from its `{%`), whether it is in code rather than in a
//! string or a comment, and the member path (`client.global.se`) written there.

use std::ops::Range;

use volley_syntax::ScriptKind;

use crate::model::Snapshot;

/// A pre-request script or response handler and the bytes of its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScriptAt {
    /// [`ScriptKind::PreRequest`] or [`ScriptKind::ResponseHandler`].
    pub(crate) kind: ScriptKind,
    /// From after `{%` to before `%}`. A script not closed yet (being written) runs to
    /// its request line (a pre-request script) or to the end of its block.
    pub(crate) code: Range<usize>,
}

/// The `< {% … %}` or `> {% … %}` script whose code holds byte `offset` (its edges
/// included: right after `{%`, right before `%}`).
pub(crate) fn script_at(snapshot: &Snapshot, offset: usize) -> Option<ScriptAt> {
    let placed = snapshot.model.part_at(offset)?;
    let document = placed.part.document();
    let block = document.block_at(placed.local(offset))?;
    let request = block.request.as_deref()?;
    let block_end = placed.place(block.span).end;
    let request_line = placed.place(request.line_span).start;
    let scripts: Vec<_> = request.scripts.iter().map(|script| (script, placed.place(script.span))).collect();
    scripts.iter().enumerate().find_map(|(index, (script, span))| {
        let kind = script.kind;
        if !matches!(kind, ScriptKind::PreRequest | ScriptKind::ResponseHandler) || offset < span.start {
            return None;
        }
        // A closed script: the parser's span of its code.
        if let Some(code) = &script.code {
            let code = placed.place(code.span);
            return (code.start..=code.end).contains(&offset).then_some(ScriptAt { kind, code: code.start..code.end });
        }
        // Not closed yet (being written): from its `{%` to the next script, its request
        // line (a pre-request script) or the end of its block.
        let text = snapshot.rope.byte_slice(span.start..span.end).to_string();
        let open = span.start + text.find("{%")? + 2;
        let next_script = scripts.get(index + 1).map_or(block_end, |(_, next)| next.start);
        let request_line = if request_line > span.start { request_line } else { block_end };
        let end = next_script.min(request_line).min(block_end).max(open);
        (open..=end).contains(&offset).then_some(ScriptAt { kind, code: open..end })
    })
}

/// Whether the end of `code` (a script's code from its start) is in code: not in a
/// string, in the text of a template literal (its `${ }` are code) or in a comment.
/// Regular expression literals are read as code.
pub(crate) fn ends_in_code(code: &str) -> bool {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum State {
        Code,
        LineComment,
        BlockComment,
        Quoted(char),
        Template,
    }
    let mut state = State::Code;
    // The brace depth at which each open `${` of a template literal started.
    let mut substitutions: Vec<usize> = Vec::new();
    let mut depth = 0_usize;
    let mut chars = code.chars().peekable();
    while let Some(character) = chars.next() {
        state = match (state, character) {
            (State::Code, '/') if chars.next_if_eq(&'/').is_some() => State::LineComment,
            (State::Code, '/') if chars.next_if_eq(&'*').is_some() => State::BlockComment,
            (State::Code, '\'' | '"') => State::Quoted(character),
            (State::Code, '`') => State::Template,
            (State::Code, '{') => {
                depth += 1;
                State::Code
            }
            (State::Code, '}') if substitutions.last() == Some(&depth) => {
                substitutions.pop();
                State::Template
            }
            (State::Code, '}') => {
                depth = depth.saturating_sub(1);
                State::Code
            }
            (State::LineComment, '\n') => State::Code,
            (State::BlockComment, '*') if chars.next_if_eq(&'/').is_some() => State::Code,
            (State::Quoted(_) | State::Template, '\\') => {
                chars.next();
                state
            }
            (State::Quoted(quote), _) if character == quote || character == '\n' => State::Code,
            (State::Template, '`') => State::Code,
            (State::Template, '$') if chars.next_if_eq(&'{').is_some() => {
                substitutions.push(depth);
                State::Code
            }
            (state, _) => state,
        };
    }
    state == State::Code
}

/// A member path written before the end of `code`: `client.global.se` is the
/// qualifier `client.global` and the name `se` (being written, maybe empty) that starts
/// `name_start` bytes into `code`. `None` when the path is a member of something else
/// (`x.client.`, `f().`) or is no path (`1.`).
pub(crate) fn path_before(code: &str) -> Option<(String, usize)> {
    let name_start = identifier_start(code, code.len());
    let mut qualifier = Vec::new();
    let mut start = name_start;
    while code[..start].ends_with('.') {
        let end = start - 1;
        start = identifier_start(code, end);
        let name = &code[start..end];
        if !is_identifier(name) {
            return None;
        }
        qualifier.push(name);
    }
    if code[..start].ends_with(['.', '?'])
        || code[name_start..].starts_with(|character: char| character.is_ascii_digit())
    {
        return None;
    }
    qualifier.reverse();
    Some((qualifier.join("."), name_start))
}

/// The member path that ends with the name under `column` of `line`, and the name's
/// range: `client.global.set` on `set` of `client.global.set("a", 1)`, `client.global`
/// on `global`.
pub(crate) fn path_at(line: &str, column: usize) -> Option<(String, Range<usize>)> {
    let column = column.min(line.len());
    if !line.is_char_boundary(column) {
        return None;
    }
    let start = identifier_start(line, column);
    let end = column
        + line[column..].find(|character: char| !is_identifier_character(character)).unwrap_or(line.len() - column);
    if start == end {
        return None;
    }
    let (qualifier, _) = path_before(&line[..end])?;
    let name = &line[start..end];
    let path = if qualifier.is_empty() { name.to_owned() } else { format!("{qualifier}.{name}") };
    Some((path, start..end))
}

fn is_identifier_character(character: char) -> bool {
    character.is_ascii_alphanumeric() || character == '_' || character == '$'
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty() && !name.starts_with(|character: char| character.is_ascii_digit())
}

/// Where the identifier that ends at `end` of `text` starts (`end` when none does).
fn identifier_start(text: &str, end: usize) -> usize {
    text[..end].rfind(|character: char| !is_identifier_character(character)).map_or(0, |index| index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_before_the_cursor() {
        assert_eq!(path_before("  client.global.se"), Some(("client.global".to_owned(), 16)));
        assert_eq!(path_before("client."), Some(("client".to_owned(), 7)));
        assert_eq!(path_before("x = cl"), Some((String::new(), 4)));
        assert_eq!(path_before(""), Some((String::new(), 0)));
        assert_eq!(path_before("f(response.headers."), Some(("response.headers".to_owned(), 19)));
        assert_eq!(path_before("x.client."), Some(("x.client".to_owned(), 9)));
        assert_eq!(path_before("f()."), None);
        assert_eq!(path_before("a?.b"), None);
        assert_eq!(path_before("1."), None);
        assert_eq!(path_before("x = 1"), None);
    }

    #[test]
    fn paths_under_the_cursor() {
        let line = "  client.global.set(\"a\", response.status);";
        assert_eq!(path_at(line, 17), Some(("client.global.set".to_owned(), 16..19)));
        assert_eq!(path_at(line, 10), Some(("client.global".to_owned(), 9..15)));
        assert_eq!(path_at(line, 2), Some(("client".to_owned(), 2..8)));
        assert_eq!(path_at(line, 35), Some(("response.status".to_owned(), 34..40)));
        assert_eq!(path_at(line, 0), None);
    }

    #[test]
    fn strings_comments_and_templates_are_not_code() {
        assert!(ends_in_code("client.log(1); "));
        assert!(!ends_in_code("client.log(\"cli"));
        assert!(!ends_in_code("client.log('it\\'s cli"));
        assert!(ends_in_code("client.log('a', "));
        assert!(!ends_in_code("// client."));
        assert!(ends_in_code("// note\nclient."));
        assert!(!ends_in_code("/* client."));
        assert!(ends_in_code("/* a */ client."));
        assert!(!ends_in_code("`id: res"));
        assert!(ends_in_code("`id: ${res"));
        assert!(ends_in_code("`id: ${ {a: 1}.a } and ${ f({}) + res"));
        assert!(!ends_in_code("`id: ${x} and res"));
        assert!(ends_in_code("if (a) { `x` } else { client."));
    }
}
