//! Completion: a small classifier over the line text before the cursor and the request
//! around it decides the context (inside `{{ }}`, after `$`, after `# @`, a line start,
//! the header zone), then the candidates of that context are listed. LSP types are
//! built in `convert.rs`.

use std::ops::Range;

use volley_syntax::Method;
use volley_syntax::directive::SUPPORTED;

use crate::documents::Snapshot;
use crate::scope::Scope;

/// What a candidate is, for its icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Variable,
    Reference,
    Function,
    Keyword,
    Property,
    Value,
}

/// One completion candidate: `text` replaces the bytes `replace` of the document.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) label: String,
    pub(crate) kind: Kind,
    pub(crate) detail: Option<String>,
    /// Markdown.
    pub(crate) documentation: Option<String>,
    pub(crate) text: String,
    /// `text` is an LSP snippet (`${1:min}`).
    pub(crate) snippet: bool,
    pub(crate) replace: Range<usize>,
}

/// The methods offered at the start of a request line.
const METHODS_EXTRA: [&str; 1] = ["WEBSOCKET"];

/// Common header names.
const HEADERS: [&str; 16] = [
    "Accept",
    "Accept-Encoding",
    "Accept-Language",
    "Authorization",
    "Cache-Control",
    "Connection",
    "Content-Length",
    "Content-Type",
    "Cookie",
    "If-Match",
    "If-None-Match",
    "Origin",
    "Referer",
    "User-Agent",
    "X-Api-Key",
    "X-Request-Id",
];

/// Common values of `Content-Type` and `Accept`.
const MEDIA_TYPES: [&str; 8] = [
    "application/json",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "text/plain",
    "text/html",
    "application/xml",
    "text/event-stream",
    "*/*",
];

/// The most candidates one answer carries. Beyond it (the chaining paths of a file with
/// thousands of named requests) the list is cut to the candidates matching what was
/// typed and marked incomplete, so the editor asks again as the user types.
pub(crate) const MAX_CANDIDATES: usize = 200;

/// The candidates of one answer.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    pub(crate) candidates: Vec<Candidate>,
    /// More candidates match than were given.
    pub(crate) incomplete: bool,
}

/// The completion candidates at byte `offset` of a snapshot, at most
/// [`MAX_CANDIDATES`] of them.
pub(crate) fn complete(
    snapshot: &Snapshot,
    engine: &volley_engine::Client,
    profile: Option<&str>,
    offset: usize,
) -> Completion {
    let candidates = candidates(snapshot, engine, profile, offset);
    if candidates.len() <= MAX_CANDIDATES {
        return Completion { candidates, incomplete: false };
    }
    let typed = candidates.first().map(|candidate| snapshot.rope.byte_slice(candidate.replace.clone()).to_string());
    let typed = typed.unwrap_or_default().to_lowercase();
    let mut matching = candidates.into_iter().filter(|candidate| matches(&candidate.label, &typed));
    let kept: Vec<Candidate> = matching.by_ref().take(MAX_CANDIDATES).collect();
    let incomplete = matching.next().is_some();
    Completion { candidates: kept, incomplete }
}

/// `true` when the characters of `typed` (lowercase) appear in `label` in order, as
/// editors filter.
fn matches(label: &str, typed: &str) -> bool {
    let mut label = label.chars().flat_map(char::to_lowercase);
    typed.chars().all(|wanted| label.any(|character| character == wanted))
}

fn candidates(
    snapshot: &Snapshot,
    engine: &volley_engine::Client,
    profile: Option<&str>,
    offset: usize,
) -> Vec<Candidate> {
    let rope = &snapshot.rope;
    let offset = offset.min(rope.len_bytes());
    let line = rope.byte_to_line(offset);
    let line_start = rope.line_to_byte(line);
    let prefix = rope.byte_slice(line_start..offset).to_string();

    if let Some(token) = interpolation_token(&prefix) {
        let replace = line_start + token..offset;
        let scope = Scope::of(snapshot, engine, profile);
        return if prefix[token..].starts_with('$') {
            resolvers(&scope, &replace)
        } else {
            variables(&scope, &replace, &prefix[token..].to_lowercase())
        };
    }
    if let Some(name) = directive_token(&prefix) {
        return directives(&(line_start + name..offset));
    }
    if in_header_zone(snapshot, line, offset) {
        return headers(&prefix, line_start, offset);
    }
    if prefix.chars().all(|character| character.is_ascii_alphabetic())
        && snapshot
            .model
            .request_at(offset)
            .is_none_or(|(placed, request)| line_start <= placed.place(request.line_span).start)
    {
        return methods(&(line_start..offset));
    }
    Vec::new()
}

/// Inside an unclosed `{{` of `prefix`: where the token being written starts.
fn interpolation_token(prefix: &str) -> Option<usize> {
    let open = prefix.rfind("{{")? + 2;
    if prefix[open..].contains("}}") {
        return None;
    }
    let inner = &prefix[open..];
    let token = open + (inner.len() - inner.trim_start().len());
    let written = &prefix[token..];
    written.chars().all(|character| character.is_alphanumeric() || "$._-".contains(character)).then_some(token)
}

/// After `# @` or `// @` at the start of a line: where the directive name starts.
fn directive_token(prefix: &str) -> Option<usize> {
    let trimmed = prefix.trim_start();
    let comment = trimmed.strip_prefix('#').or_else(|| trimmed.strip_prefix("//"))?;
    let name = comment.trim_start().strip_prefix('@')?;
    name.chars().all(|character| character.is_alphanumeric() || character == '-').then(|| prefix.len() - name.len())
}

/// A line after a request line and before the first blank line (not a comment).
fn in_header_zone(snapshot: &Snapshot, line: usize, offset: usize) -> bool {
    let Some((placed, request)) = snapshot.model.request_at(offset) else {
        return false;
    };
    let request_line = snapshot.rope.byte_to_line(placed.place(request.line_span).start);
    if line <= request_line {
        return false;
    }
    let current = snapshot.rope.line(line).to_string();
    let current = current.trim_start();
    if current.starts_with('#') || current.starts_with("//") {
        return false;
    }
    (request_line + 1..line).all(|between| !snapshot.rope.line(between).to_string().trim().is_empty())
}

/// The variables and chaining paths matching `typed` (lowercase): one more than
/// [`MAX_CANDIDATES`] at most, so that a file with thousands of named requests does not
/// build candidates only to drop them.
fn variables(scope: &Scope, replace: &Range<usize>, typed: &str) -> Vec<Candidate> {
    let variables =
        scope.variables.iter().filter(|variable| matches(&variable.name, typed)).map(|variable| Candidate {
            label: variable.name.clone(),
            kind: Kind::Variable,
            detail: Some(format!("{} ({})", variable.value, variable.source.describe())),
            documentation: None,
            text: variable.name.clone(),
            snippet: false,
            replace: replace.clone(),
        });
    let paths = scope.requests.iter().flat_map(|name| {
        [("response.body.$", "a JSONPath into the response body"), ("response.headers.", "a response header")]
            .into_iter()
            .map(move |(path, what)| (name, format!("{name}.{path}"), what))
    });
    let chaining = paths.filter(|(_, label, _)| matches(label, typed)).map(|(name, label, what)| Candidate {
        label: label.clone(),
        kind: Kind::Reference,
        detail: Some(format!("request {name}")),
        documentation: Some(format!("Chaining: {what} of the request `{name}`, sent first.")),
        text: label,
        snippet: false,
        replace: replace.clone(),
    });
    variables.chain(chaining).take(MAX_CANDIDATES + 1).collect()
}

fn resolvers(scope: &Scope, replace: &Range<usize>) -> Vec<Candidate> {
    let builtins = volley_engine::builtin_resolvers().map(|resolver| Candidate {
        label: format!("${}", resolver.name),
        kind: Kind::Function,
        detail: Some(format!("${}{}", resolver.name, resolver.parameters)),
        documentation: Some(resolver.doc.to_owned()),
        text: snippet(resolver.name, resolver.parameters, resolver.arities),
        snippet: true,
        replace: replace.clone(),
    });
    let commands = scope.resolvers.iter().map(|name| Candidate {
        label: format!("${name}"),
        kind: Kind::Function,
        detail: Some("command resolver (volley.jsonc)".to_owned()),
        documentation: None,
        text: format!("${name}"),
        snippet: false,
        replace: replace.clone(),
    });
    builtins.chain(commands).collect()
}

/// `$randomInt(${1:min}, ${2:max})` for the required parameters; `$uuid` without any.
fn snippet(name: &str, parameters: &str, arities: &[usize]) -> String {
    let required = arities.first().copied().unwrap_or(0);
    if required == 0 {
        return format!("${name}");
    }
    let inside = parameters.trim_start_matches('(').trim_end_matches(')');
    let inside = inside.split('[').next().unwrap_or_default();
    let placeholders: Vec<String> = inside
        .split(',')
        .map(str::trim)
        .filter(|parameter| !parameter.is_empty())
        .take(required)
        .enumerate()
        .map(|(index, parameter)| format!("${{{}:{parameter}}}", index + 1))
        .collect();
    format!("${name}({})", placeholders.join(", "))
}

fn directives(replace: &Range<usize>) -> Vec<Candidate> {
    SUPPORTED
        .iter()
        .map(|directive| Candidate {
            label: directive.name.to_owned(),
            kind: Kind::Keyword,
            detail: (!directive.placeholder.is_empty())
                .then(|| format!("@{} {}", directive.name, directive.placeholder)),
            documentation: Some(directive.doc.to_owned()),
            text: directive.name.to_owned(),
            snippet: false,
            replace: replace.clone(),
        })
        .collect()
}

fn methods(replace: &Range<usize>) -> Vec<Candidate> {
    Method::KNOWN
        .iter()
        .chain(&METHODS_EXTRA)
        .map(|method| Candidate {
            label: (*method).to_owned(),
            kind: Kind::Keyword,
            detail: None,
            documentation: None,
            text: format!("{method} "),
            snippet: false,
            replace: replace.clone(),
        })
        .collect()
}

/// Header names before `:`, media types after `Content-Type: ` or `Accept: `.
fn headers(prefix: &str, line_start: usize, offset: usize) -> Vec<Candidate> {
    let start = line_start + (prefix.len() - prefix.trim_start().len());
    let Some((name, value)) = prefix.split_once(':') else {
        return HEADERS
            .iter()
            .map(|header| Candidate {
                label: (*header).to_owned(),
                kind: Kind::Property,
                detail: None,
                documentation: None,
                text: format!("{header}: "),
                snippet: false,
                replace: start..offset,
            })
            .collect();
    };
    let name = name.trim();
    if !name.eq_ignore_ascii_case("content-type") && !name.eq_ignore_ascii_case("accept") {
        return Vec::new();
    }
    let value_start = offset - value.trim_start().len();
    MEDIA_TYPES
        .iter()
        .map(|media_type| Candidate {
            label: (*media_type).to_owned(),
            kind: Kind::Value,
            detail: None,
            documentation: None,
            // Right after the `:`, the space comes with the value.
            text: if value.is_empty() { format!(" {media_type}") } else { (*media_type).to_owned() },
            snippet: false,
            replace: value_start..offset,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_hold_the_required_parameters() {
        assert_eq!(snippet("uuid", "()", &[0]), "$uuid");
        assert_eq!(snippet("randomInt", "(min, max)", &[2]), "$randomInt(${1:min}, ${2:max})");
        assert_eq!(snippet("datetime", "(format[, amount, unit])", &[1, 3]), "$datetime(${1:format})");
    }

    #[test]
    fn contexts_from_the_line_prefix() {
        assert_eq!(interpolation_token("GET {{ ho"), Some(7));
        assert_eq!(interpolation_token("GET {{a}} x"), None);
        assert_eq!(directive_token("# @na"), Some(3));
        assert_eq!(directive_token("  // @"), Some(6));
        assert_eq!(directive_token("# note"), None);
    }
}
