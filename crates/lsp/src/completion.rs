//! Completion: a small classifier over the line text before the cursor and the request
//! around it decides the context (inside `{{ }}`, inside a `{% %}` script, after `$`,
//! after `# @`, a line start, the header zone, a gRPC request's target or message: see
//! `grpc/`), then the candidates of that context are listed. LSP types are built in
//! `convert.rs`.

use std::ops::Range;

use volley_syntax::Method;
use volley_syntax::directive::SUPPORTED;

pub(crate) use crate::answers::{Candidate, Kind};
use crate::model::Snapshot;
use crate::scope::Scope;
use crate::script_api::{self, Member, MemberKind};
use crate::script_context::{self, ScriptAt};

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
/// [`MAX_CANDIDATES`] of them. `snippets`: the editor accepts snippets in completion
/// items (`completionItem.snippetSupport`); the script API's calls are snippets only then.
/// Runs off the async workers: a gRPC request's schema is awaited on this thread.
pub(crate) fn complete(
    snapshot: &Snapshot,
    engine: &volley_engine::Client,
    profile: Option<&str>,
    offset: usize,
    snippets: bool,
) -> Completion {
    let candidates = candidates(snapshot, engine, profile, offset, snippets);
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
    snippets: bool,
) -> Vec<Candidate> {
    let rope = &snapshot.rope;
    let offset = offset.min(rope.len_bytes());
    let line = rope.byte_to_line(offset);
    let line_start = rope.line_to_byte(line);
    let prefix = rope.byte_slice(line_start..offset).to_string();

    if let Some(token) = interpolation_token(&prefix) {
        let replace = line_start + token..offset;
        let mut scope = Scope::of(snapshot, engine, profile);
        let mut candidates = if prefix[token..].starts_with('$') {
            resolvers(&scope, &replace)
        } else {
            scope.requests = chainable(snapshot, offset);
            variables(&scope, &replace, &prefix[token..].to_lowercase())
        };
        let line_end = rope.line_to_byte((line + 1).min(rope.len_lines()));
        if !closed_after(&rope.byte_slice(offset..line_end).to_string()) {
            for candidate in &mut candidates {
                candidate.text.push_str(if candidate.snippet { r"\}\}" } else { "}}" });
            }
        }
        return candidates;
    }
    if let Some(script) = script_context::script_at(snapshot, offset) {
        return script_members(snapshot, &script, offset, snippets);
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
    if let Some(candidates) = crate::grpc::candidates(snapshot, engine, profile, offset) {
        return candidates;
    }
    Vec::new()
}

/// In a script's code: the members of the script API after the path written before
/// `offset` (`client.` → `global`, `test`, …), the API's roots at the start of a name;
/// nothing in strings and comments, after other objects, or right after `{`, `:` or `@`
/// (the trigger characters of other contexts).
fn script_members(snapshot: &Snapshot, script: &ScriptAt, offset: usize, snippets: bool) -> Vec<Candidate> {
    let code = snapshot.rope.byte_slice(script.code.start..offset).to_string();
    if !script_context::ends_in_code(&code) {
        return Vec::new();
    }
    let Some((qualifier, name_start)) = script_context::path_before(&code) else {
        return Vec::new();
    };
    if qualifier.is_empty() && name_start == code.len() && code.ends_with(['{', ':', '@']) {
        return Vec::new();
    }
    let replace = script.code.start + name_start..offset;
    script_api::members_of(&qualifier, script.kind)
        .map(|member| {
            let (text, snippet) = call(member, snippets);
            Candidate {
                label: member.name().to_owned(),
                kind: match member.kind {
                    MemberKind::Object if qualifier.is_empty() => Kind::Variable,
                    MemberKind::Object | MemberKind::Property => Kind::Property,
                    MemberKind::Method => Kind::Method,
                },
                detail: Some(member.signature()),
                documentation: Some(member.documentation()),
                text,
                snippet,
                replace: replace.clone(),
            }
        })
        .collect()
}

/// What completing `member` inserts, and whether it is a snippet: a method's call with a
/// placeholder per required parameter (`set(${1:name}, ${2:value})`, `log($1)` for
/// optional ones, `isEmpty()`); without snippets, `isEmpty()` or `set(`.
fn call(member: &Member, snippets: bool) -> (String, bool) {
    let name = member.name();
    if member.kind != MemberKind::Method {
        return (name.to_owned(), false);
    }
    let takes_arguments = member.parameters != "()";
    if !snippets {
        return (if takes_arguments { format!("{name}(") } else { format!("{name}()") }, false);
    }
    let placeholders: Vec<String> = member
        .required_parameters()
        .enumerate()
        .map(|(index, parameter)| format!("${{{}:{}}}", index + 1, escape_snippet(parameter)))
        .collect();
    let name = escape_snippet(name);
    match (placeholders.is_empty(), takes_arguments) {
        (false, _) => (format!("{name}({})", placeholders.join(", ")), true),
        (true, true) => (format!("{name}($1)"), true),
        (true, false) => (format!("{name}()"), false),
    }
}

/// The names a request at `offset` can chain to: those of the requests before it (a
/// response exists only once its request ran, and Send All runs them in order) that
/// are variable names inside `{{ }}` (`volley_syntax::is_variable_name`: a `###` title
/// with a space is not one).
fn chainable(snapshot: &Snapshot, offset: usize) -> Vec<String> {
    let current =
        snapshot.model.request_at(offset).map_or(offset, |(placed, request)| placed.place(request.span).start);
    snapshot
        .model
        .requests()
        .take_while(|(placed, request)| placed.place(request.span).start < current)
        .filter_map(|(_, request)| request.name.as_ref().map(|name| name.value.as_str()))
        .filter(|name| volley_syntax::is_variable_name(name))
        .map(str::to_owned)
        .collect()
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

/// Whether the `{{` being completed is already closed: the rest of its line, after the
/// rest of the word at the cursor and blanks, starts with `}}` (an editor that closes brackets
/// typed it). When it is not, the inserted text closes it.
fn closed_after(rest_of_line: &str) -> bool {
    let rest =
        rest_of_line.trim_start_matches(|character: char| character.is_alphanumeric() || "_.-$".contains(character));
    rest.trim_start_matches([' ', '\t']).starts_with("}}")
}

fn resolvers(scope: &Scope, replace: &Range<usize>) -> Vec<Candidate> {
    let builtins = volley_engine::resolvers::builtin_resolvers().map(|resolver| Candidate {
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

/// `\$randomInt(${1:min}, ${2:max})` for the required parameters; `\$uuid` without
/// any: an LSP snippet, its literal text escaped ([`escape_snippet`]) so that an editor
/// inserts `$randomInt(min, max)`.
fn snippet(name: &str, parameters: &str, arities: &[usize]) -> String {
    let required = arities.first().copied().unwrap_or(0);
    let call = escape_snippet(&format!("${name}"));
    if required == 0 {
        return call;
    }
    let inside = parameters.trim_start_matches('(').trim_end_matches(')');
    let inside = inside.split('[').next().unwrap_or_default();
    let placeholders: Vec<String> = inside
        .split(',')
        .map(str::trim)
        .filter(|parameter| !parameter.is_empty())
        .take(required)
        .enumerate()
        .map(|(index, parameter)| format!("${{{}:{}}}", index + 1, escape_snippet(parameter)))
        .collect();
    format!("{call}({})", placeholders.join(", "))
}

/// `text` as literal text of an LSP snippet: `\`, `$` and `}` escaped with a `\` (the
/// snippet grammar's escapes), so that none starts a tabstop or ends a placeholder.
pub(crate) fn escape_snippet(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 2);
    for character in text.chars() {
        if matches!(character, '\\' | '$' | '}') {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
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
        assert_eq!(snippet("uuid", "()", &[0]), r"\$uuid");
        assert_eq!(snippet("randomInt", "(min, max)", &[2]), r"\$randomInt(${1:min}, ${2:max})");
        assert_eq!(snippet("datetime", "(format[, amount, unit])", &[1, 3]), r"\$datetime(${1:format})");
    }

    #[test]
    fn braces_closed_after_the_word_at_the_cursor_are_not_closed_again() {
        assert!(closed_after("}}"));
        assert!(closed_after("ost}}/path"), "the rest of `{{h|ost}}`");
        assert!(closed_after("id}} {{x"));
        assert!(!closed_after(""));
        assert!(!closed_after("\n"));
        assert!(closed_after(" }}"), "`{{ host }}`");
        assert!(!closed_after("/path {{other}}"));
    }

    #[test]
    fn snippet_text_escapes_dollars_braces_and_backslashes() {
        assert_eq!(escape_snippet("plain {text}"), r"plain {text\}");
        assert_eq!(escape_snippet(r"$a\b}$"), r"\$a\\b\}\$");
        assert_eq!(read_snippet(&escape_snippet(r"$x}\y${1:z}")).0, r"$x}\y${1:z}");
    }

    /// A reader of the LSP snippet grammar, enough for completion items: text with the
    /// escapes `\$`, `\}`, `\\`; tabstops `$1`, `${1}`; placeholders `${1:default}`
    /// (nested allowed). Returns the text an editor inserts (placeholders at their
    /// defaults) and the placeholders' defaults in order; panics on what the grammar
    /// does not allow (an unescaped `$` that starts nothing, an unclosed `${`).
    fn read_snippet(snippet: &str) -> (String, Vec<String>) {
        fn read(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, nested: bool, out: &mut (String, Vec<String>)) {
            while let Some(character) = chars.next() {
                match character {
                    '\\' if matches!(chars.peek(), Some('$' | '}' | '\\')) => out.0.push(chars.next().unwrap_or('\\')),
                    '}' if nested => return,
                    '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                        while chars.peek().is_some_and(char::is_ascii_digit) {
                            chars.next();
                        }
                    }
                    '$' if chars.peek() == Some(&'{') => {
                        chars.next();
                        let mut digits = 0;
                        while chars.peek().is_some_and(char::is_ascii_digit) {
                            chars.next();
                            digits += 1;
                        }
                        assert!(digits > 0, "`${{` without a number");
                        match chars.next() {
                            Some('}') => {}
                            Some(':') => {
                                let mut inner = (String::new(), Vec::new());
                                read(chars, true, &mut inner);
                                out.0.push_str(&inner.0);
                                out.1.push(inner.0);
                                out.1.extend(inner.1);
                            }
                            other => panic!("unexpected {other:?} in a placeholder"),
                        }
                    }
                    '$' => panic!("an unescaped `$` that starts no tabstop"),
                    '}' => out.0.push('}'),
                    other => out.0.push(other),
                }
            }
            assert!(!nested, "an unclosed placeholder");
        }
        let mut out = (String::new(), Vec::new());
        read(&mut snippet.chars().peekable(), false, &mut out);
        out
    }

    /// Every built-in resolver's completion inserts its call with the placeholders'
    /// defaults: `$uuid`, `$random(min, max)`.
    #[test]
    fn every_resolver_snippet_inserts_its_call() {
        let mut count = 0;
        for resolver in volley_engine::resolvers::builtin_resolvers() {
            let text = snippet(resolver.name, resolver.parameters, resolver.arities);
            let (inserted, defaults) = read_snippet(&text);
            let required = resolver.arities.first().copied().unwrap_or(0);
            assert_eq!(defaults.len(), required, "{}: {text}", resolver.name);
            let expected = if defaults.is_empty() {
                format!("${}", resolver.name)
            } else {
                format!("${}({})", resolver.name, defaults.join(", "))
            };
            assert_eq!(inserted, expected, "{text}");
            for default in &defaults {
                assert!(resolver.parameters.contains(default.as_str()), "{}: {default}", resolver.name);
            }
            count += 1;
        }
        assert!(count > 10);
        let random =
            volley_engine::resolvers::builtin_resolvers().find(|resolver| resolver.name == "random").expect("$random");
        assert_eq!(read_snippet(&snippet(random.name, random.parameters, random.arities)).0, "$random(min, max)");
    }

    /// Every method of the script API completes to its call: the snippet inserts the
    /// call with its required parameters as placeholders, the plain text opens it.
    #[test]
    fn script_api_calls_insert_their_required_parameters() {
        for member in script_api::MEMBERS {
            let (text, snippet) = call(member, true);
            let (plain, plain_snippet) = call(member, false);
            assert!(!plain_snippet);
            if member.kind != MemberKind::Method {
                assert_eq!((text.as_str(), snippet), (member.name(), false));
                assert_eq!(plain, member.name());
                continue;
            }
            let (inserted, defaults) = if snippet { read_snippet(&text) } else { (text.clone(), Vec::new()) };
            let required: Vec<&str> = member.required_parameters().collect();
            assert_eq!(defaults, required, "{}", member.path);
            let expected =
                if member.parameters == "()" { "()".to_owned() } else { format!("({})", required.join(", ")) };
            assert_eq!(inserted, format!("{}{expected}", member.name()), "{}", member.path);
            assert!(inserted.starts_with(&plain), "{plain} {inserted}");
        }
        let set = script_api::member("client.global.set").expect("client.global.set");
        assert_eq!(call(set, true), ("set(${1:name}, ${2:value})".to_owned(), true));
        assert_eq!(call(set, false), ("set(".to_owned(), false));
        let log = script_api::member("client.log").expect("client.log");
        assert_eq!(call(log, true), ("log($1)".to_owned(), true));
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
