//! Hover: on `{{name}}` the variable's value and source (masked when sensitive), or
//! "undefined" with a hint; on `{{$resolver(…)}}` the resolver's doc; on a member of the
//! script API in a `{% %}` script (`client.global.set`) its signature and doc; on
//! `# @directive` the directive's doc. Markdown; LSP types are built in `convert.rs`.

use std::ops::Range;

use volley_engine::resolvers::KnownResolver;
use volley_syntax::directive::{IGNORED, SUPPORTED};

pub(crate) use crate::answers::Hover;
use crate::model::Snapshot;
use crate::scope::Scope;
use crate::script_api;
use crate::script_context::{self, ScriptAt};

/// The hover at byte `offset` of a snapshot, if there is something to say.
pub(crate) fn hover(
    snapshot: &Snapshot,
    engine: &volley_engine::Client,
    profile: Option<&str>,
    offset: usize,
) -> Option<Hover> {
    let rope = &snapshot.rope;
    let offset = offset.min(rope.len_bytes());
    let line = rope.byte_to_line(offset);
    let line_start = rope.line_to_byte(line);
    let text = rope.line(line).to_string();
    let column = offset - line_start;
    if let Some((inner, range)) = interpolation_at(&text, column) {
        let range = line_start + range.start..line_start + range.end;
        let scope = Scope::of(snapshot, engine, profile);
        let markdown = match inner.strip_prefix('$') {
            Some(call) => resolver(&scope, call)?,
            None => variable(&scope, inner),
        };
        return Some(Hover { markdown, range });
    }
    if let Some(script) = script_context::script_at(snapshot, offset) {
        return script_member(snapshot, &script, &text, line_start, column);
    }
    let (name, range) = directive_at(&text, column)?;
    let markdown = directive(name)?;
    Some(Hover { markdown, range: line_start + range.start..line_start + range.end })
}

/// The member of the script API whose name is under `column` of `line` (which starts at
/// byte `line_start`), in the code of `script`: its signature and doc.
fn script_member(
    snapshot: &Snapshot,
    script: &ScriptAt,
    line: &str,
    line_start: usize,
    column: usize,
) -> Option<Hover> {
    let (path, range) = script_context::path_at(line, column)?;
    let range = line_start + range.start..line_start + range.end;
    if range.start < script.code.start || range.end > script.code.end {
        return None;
    }
    if !script_context::ends_in_code(&snapshot.rope.byte_slice(script.code.start..range.start).to_string()) {
        return None;
    }
    let member = script_api::member(&path)?;
    let mut markdown = format!("`{}`\n\n{}", member.signature(), member.documentation());
    if !member.available_in(script.kind) {
        markdown.push_str("\n\nThis pre-request script runs before there is a response.");
    }
    Some(Hover { markdown, range })
}

/// The trimmed inside and the range of the `{{ … }}` of `line` that holds `column`.
fn interpolation_at(line: &str, column: usize) -> Option<(&str, Range<usize>)> {
    let mut from = 0;
    while let Some(open) = line[from..].find("{{").map(|index| from + index) {
        let close = line[open + 2..].find("}}").map_or(line.len(), |index| open + 2 + index + 2);
        if (open..=close).contains(&column) {
            let inner = line[open + 2..close.min(line.len())].trim_end_matches('}').trim();
            let inner = inner.trim_end_matches(['\r', '\n']).trim();
            return Some((inner, open..close));
        }
        from = close.max(open + 2);
        if from >= line.len() {
            break;
        }
    }
    None
}

/// The directive name of a `# @name` / `// @name` line and its range (from `@`), when
/// `column` is on it.
fn directive_at(line: &str, column: usize) -> Option<(&str, Range<usize>)> {
    let trimmed = line.trim_start();
    let comment = trimmed.strip_prefix('#').or_else(|| trimmed.strip_prefix("//"))?;
    let after = comment.trim_start().strip_prefix('@')?;
    let at = line.len() - after.len() - 1;
    let length =
        after.find(|character: char| !(character.is_alphanumeric() || character == '-')).unwrap_or(after.len());
    let range = at..at + 1 + length;
    (length > 0 && (range.start..=range.end).contains(&column)).then(|| (&after[..length], range))
}

fn variable(scope: &Scope, name: &str) -> String {
    if let Some(variable) = scope.variable(name) {
        return format!("`{name}` = `{}`\n\nfrom {}", variable.value, variable.source.describe());
    }
    let first = name.split('.').next().unwrap_or(name);
    if scope.requests.iter().any(|request| request == first) {
        return format!("`{name}`\n\nfrom the response of the request `{first}` (sent first)");
    }
    format!(
        "`{name}` is undefined\n\nhint: define it with `@{name} = value` in this file, or under `variables` in volley.jsonc"
    )
}

fn resolver(scope: &Scope, call: &str) -> Option<String> {
    let name = call.split(|character: char| character == '(' || character.is_whitespace()).next()?;
    if scope.resolvers.iter().any(|resolver| resolver == name) {
        return Some(format!("`${name}`\n\ncommand resolver (volley.jsonc)"));
    }
    Some(match volley_engine::resolvers::known_resolver(name) {
        Some(KnownResolver::Builtin(builtin)) => format!("`${name}{}`\n\n{}", builtin.parameters, builtin.doc),
        Some(KnownResolver::EnvironmentVariable(variable)) => {
            format!("`${name}`\n\nThe environment variable `{variable}` (empty when unset). JetBrains.")
        }
        Some(KnownResolver::Refused { message, instead }) => format!("`${name}`\n\n{message}\n\nhint: {instead}"),
        None => format!("`${name}` is not a known resolver"),
    })
}

fn directive(name: &str) -> Option<String> {
    if let Some(info) = SUPPORTED.iter().find(|info| info.name == name) {
        let usage =
            if info.placeholder.is_empty() { format!("@{name}") } else { format!("@{name} {}", info.placeholder) };
        return Some(format!("`{usage}`\n\n{}", info.doc));
    }
    IGNORED.contains(&name).then(|| format!("`@{name}`\n\nread for compatibility with other tools; no effect"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_interpolation_under_the_cursor() {
        let line = "GET {{host}}/{{ $uuid }}\n";
        assert_eq!(interpolation_at(line, 6), Some(("host", 4..12)));
        assert_eq!(interpolation_at(line, 17), Some(("$uuid", 13..24)));
        assert_eq!(interpolation_at(line, 2), None);
    }

    #[test]
    fn finds_the_directive_under_the_cursor() {
        assert_eq!(directive_at("# @name login\n", 4), Some(("name", 2..7)));
        assert_eq!(directive_at("# @name login\n", 10), None);
    }
}
