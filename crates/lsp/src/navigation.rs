//! Navigation over one document: which variable or request name a position refers to,
//! where it is declared and used, how to rename it, and which literal file paths can be
//! opened as links. Pure functions over the typed [`Document`]; LSP types are built in
//! `convert.rs`.
//!
//! A `{{path}}` refers to a request when its second segment is `response` (chaining:
//! `{{login.response.body.$.token}}` is the request `login`), else to a variable: the
//! longest file variable whose dotted name starts the path (`@api.host` for
//! `{{api.host.x}}`), else the root segment (`host` for `{{host.a.b}}`, which may come
//! from the configuration). Requests are declared by `# @name x`, or by the text of
//! their `###` line when they have no `@name` (the format's rule for a request's name).

use std::ops::Range;

use volley_syntax::{Body, BodyPart, DirectiveKind, Document, Expression, FormValue, Template, variable_path_segments};

/// What a position can refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Symbol {
    /// A variable: a file variable of the document, or one the configuration defines.
    Variable(String),
    /// A named request, referred to by `{{name.response.…}}`.
    Request(String),
}

/// The symbol under `offset` and the byte range of its name there: inside `{{name}}` /
/// `{{name.a.b}}` (anywhere between the braces; the range is the root segment's), on the
/// name of a `@name = value` line, on the value of `# @name x` (or `// @name x`), on the
/// `###` text naming a request without `@name`, or inside `{{x.response.…}}` (then
/// `Symbol::Request("x")`, even when no request is named x). Nested interpolations
/// (resolver arguments) are found too.
pub(crate) fn symbol_at(document: &Document, offset: usize) -> Option<(Symbol, Range<usize>)> {
    let occurrences = occurrences(document);
    // A cursor right after a name still belongs to it, but a name that really holds the
    // offset wins over one that merely ends there.
    let holds = |area: &Range<usize>| area.start <= offset && offset < area.end;
    let touches = |area: &Range<usize>| area.start <= offset && offset <= area.end;
    let found = occurrences
        .iter()
        .find(|occurrence| holds(&occurrence.area))
        .or_else(|| occurrences.iter().find(|occurrence| touches(&occurrence.area)))?;
    Some((found.symbol.clone(), found.range.clone()))
}

/// Where `symbol` is declared in the document: the name of every `@name = value` line for
/// a variable, the value of every `# @name` (and the `###` text of a request without
/// `@name`) for a request. Several when declared more than once; in file order.
pub(crate) fn declarations(document: &Document, symbol: &Symbol) -> Vec<Range<usize>> {
    ranges_of(document, symbol, Role::Declaration)
}

/// Every use of `symbol` (not its declarations): the ranges of the names in all templates
/// of the document (URL, headers, bodies, directive values, variable values, file paths,
/// form fields, resolver arguments), in file order. A `{{x.response.…}}` use refers to
/// `Request(x)`, never to `Variable(x)`.
pub(crate) fn references(document: &Document, symbol: &Symbol) -> Vec<Range<usize>> {
    ranges_of(document, symbol, Role::Use)
}

/// For `textDocument/prepareRename`: the range of the name under `offset` when it can be
/// renamed, that is a file variable declared in this document or a request named in this
/// document. Otherwise a message saying why not (a variable from the configuration is
/// renamed in the configuration).
pub(crate) fn prepare_rename(document: &Document, offset: usize) -> Result<Range<usize>, String> {
    let (symbol, range) =
        symbol_at(document, offset).ok_or_else(|| "there is no variable or request name here".to_owned())?;
    if declarations(document, &symbol).is_empty() {
        return Err(match symbol {
            Symbol::Variable(name) => format!(
                "`{name}` is not declared in this file; if it comes from volley.jsonc or a profile, rename it there"
            ),
            Symbol::Request(name) => format!("no request is named `{name}` in this file"),
        });
    }
    Ok(range)
}

/// The edits (range, new text) that rename the symbol under `offset` everywhere in the
/// document, declarations and uses, in file order. Refuses what [`prepare_rename`]
/// refuses, a `new_name` the format does not accept as such a name (see
/// [`check_variable_name`] and [`check_request_name`]), and a `new_name` that another
/// variable or request of the document already has, which would merge the two.
pub(crate) fn rename(
    document: &Document,
    offset: usize,
    new_name: &str,
) -> Result<Vec<(Range<usize>, String)>, String> {
    prepare_rename(document, offset)?;
    let Some((symbol, _)) = symbol_at(document, offset) else {
        return Err("there is no variable or request name here".to_owned());
    };
    let (old_name, renamed) = match &symbol {
        Symbol::Variable(name) => {
            check_variable_name(new_name)?;
            (name, Symbol::Variable(new_name.to_owned()))
        }
        Symbol::Request(name) => {
            check_request_name(new_name)?;
            (name, Symbol::Request(new_name.to_owned()))
        }
    };
    if old_name == new_name {
        return Ok(Vec::new());
    }
    if !declarations(document, &renamed).is_empty() || !references(document, &renamed).is_empty() {
        let what = match renamed {
            Symbol::Variable(_) => "a variable",
            Symbol::Request(_) => "a request",
        };
        return Err(format!("`{new_name}` is already {what} of this file; pick another name"));
    }
    let mut ranges = declarations(document, &symbol);
    ranges.extend(references(document, &symbol));
    ranges.sort_by_key(|range| (range.start, range.end));
    ranges.dedup();
    Ok(ranges.into_iter().map(|range| (range, new_name.to_owned())).collect())
}

/// The `< path` bodies and multipart `@path` form files whose path is literal (without
/// `{{ }}`), to be shown as document links: the range of the path text and the path as
/// written, trimmed. Paths with variables are left out: they are only known at run time.
pub(crate) fn file_links(document: &Document) -> Vec<(Range<usize>, String)> {
    let mut links: Vec<(Range<usize>, String)> =
        document.imports().into_iter().map(|path| (path.span.range(), path.value)).collect();
    for block in &document.blocks {
        for (target, _) in block.runs() {
            if let volley_syntax::RunTarget::File(path) = target {
                links.push((path.span.range(), path.value.clone()));
            }
        }
    }
    for request in document.requests() {
        match &request.body {
            Body::File(file) => links.extend(literal_path(&file.path)),
            Body::Form(form) => {
                for field in &form.fields {
                    if let FormValue::File { path, .. } = &field.value {
                        links.extend(literal_path(path));
                    }
                }
            }
            Body::Parts(parts) => {
                for part in &parts.parts {
                    if let BodyPart::File(file) = part {
                        links.extend(literal_path(&file.path));
                    }
                }
            }
            Body::None | Body::Inline(_) | Body::GraphQl(_) => {}
        }
    }
    links
}

/// Checks that `name` can be a file variable usable in `{{ }}`: ASCII letters, digits,
/// `_`, `-`, `$` and `.` (the `variable_declaration_name` of the grammar), not starting
/// with `$` (that would read as a resolver) nor a digit, without empty dotted segments,
/// and without `response` as second segment (that would read as a request reference).
pub(crate) fn check_variable_name(name: &str) -> Result<(), String> {
    let valid_byte = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'$' | b'.');
    let starts_well = name.as_bytes().first().is_some_and(|byte| byte.is_ascii_alphabetic() || *byte == b'_');
    let segments = variable_path_segments(name);
    if !starts_well || !name.bytes().all(valid_byte) || name.split('.').any(str::is_empty) {
        return Err(format!(
            "`{name}` is not a valid variable name: use letters, digits, `_`, `-` and `.` between parts, starting with a letter or `_`"
        ));
    }
    if segments.get(1) == Some(&"response") {
        return Err(format!("`{name}` would read as the response of the request `{}`", segments[0]));
    }
    Ok(())
}

/// Checks that `name` can name a request referred to as `{{name.response.…}}`: ASCII
/// letters, digits, `_` and `-`, starting with a letter or `_` (no `.`, which would split
/// the reference, and no spaces).
pub(crate) fn check_request_name(name: &str) -> Result<(), String> {
    let valid_byte = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-');
    let starts_well = name.as_bytes().first().is_some_and(|byte| byte.is_ascii_alphabetic() || *byte == b'_');
    if starts_well && name.bytes().all(valid_byte) {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a valid request name: use letters, digits, `_` and `-`, starting with a letter or `_`"
        ))
    }
}

/// Whether an occurrence declares its symbol or uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Declaration,
    Use,
}

/// One place a symbol is written.
#[derive(Debug, Clone)]
struct Occurrence {
    symbol: Symbol,
    role: Role,
    /// The name.
    range: Range<usize>,
    /// Where a cursor finds this occurrence: the whole `{{ }}` for a use, the name for a
    /// declaration.
    area: Range<usize>,
}

fn ranges_of(document: &Document, symbol: &Symbol, role: Role) -> Vec<Range<usize>> {
    occurrences(document)
        .into_iter()
        .filter(|occurrence| occurrence.role == role && occurrence.symbol == *symbol)
        .map(|occurrence| occurrence.range)
        .collect()
}

/// Every declaration and use of the document, sorted by position.
fn occurrences(document: &Document) -> Vec<Occurrence> {
    let declared: Vec<&str> = document.variables.iter().map(|variable| variable.name.value.as_str()).collect();
    let mut found = Vec::new();
    for variable in &document.variables {
        let range = variable.name.span.range();
        found.push(Occurrence {
            symbol: Symbol::Variable(variable.name.value.clone()),
            role: Role::Declaration,
            area: range.clone(),
            range,
        });
    }
    for block in &document.blocks {
        let request_directives = block.request.iter().flat_map(|request| &request.directives);
        let mut named = false;
        for directive in request_directives.chain(&block.orphan_directives) {
            if directive.kind != DirectiveKind::Name {
                continue;
            }
            if let Some(name) = directive.value.as_ref().and_then(Template::as_literal) {
                named |= block.request.is_some();
                let range = directive.value.as_ref().map_or(0..0, |value| value.span.range());
                found.push(Occurrence {
                    symbol: Symbol::Request(name),
                    role: Role::Declaration,
                    area: range.clone(),
                    range,
                });
            }
        }
        // Without `@name`, the `###` text names the request.
        let separator_name = block.separator.as_ref().and_then(|separator| separator.name.as_ref());
        if let (Some(name), Some(_), false) = (separator_name, &block.request, named) {
            found.push(Occurrence {
                symbol: Symbol::Request(name.value.clone()),
                role: Role::Declaration,
                area: name.span.range(),
                range: name.span.range(),
            });
        }
    }
    // `run #name` (JetBrains, Kulala) and `# @ref name` (httpyac) use a request by name.
    for block in &document.blocks {
        let runs = block.runs().filter_map(|(target, _)| match target {
            volley_syntax::RunTarget::Request(name) => Some((name.value.clone(), name.span.range())),
            volley_syntax::RunTarget::File(_) => None,
        });
        let directives = block.request.iter().flat_map(|request| &request.directives).chain(&block.orphan_directives);
        let references = directives
            .filter(|directive| matches!(directive.kind, DirectiveKind::Ref | DirectiveKind::ForceRef))
            .filter_map(|directive| directive.value.as_ref())
            .filter_map(|value| Some((value.as_literal()?.trim().to_owned(), value.span.range())));
        for (name, range) in runs.chain(references) {
            found.push(Occurrence { symbol: Symbol::Request(name), role: Role::Use, area: range.clone(), range });
        }
    }
    for template in templates(document) {
        template.walk(&mut |interpolation| {
            if let Some(Expression::Variable(path)) = &interpolation.expression {
                let (symbol, length) = resolve(&path.value, &declared);
                let start = path.span.start;
                found.push(Occurrence {
                    symbol,
                    role: Role::Use,
                    range: start..start + length,
                    area: interpolation.span.range(),
                });
            }
        });
    }
    found.sort_by_key(|occurrence| (occurrence.range.start, occurrence.range.end));
    found.dedup_by(|a, b| a.range == b.range && a.role == b.role);
    found
}

/// What the variable path of a `{{ }}` refers to, and the length of the name that says
/// so at the start of the path.
fn resolve(path: &str, declared: &[&str]) -> (Symbol, usize) {
    let segments = variable_path_segments(path);
    let root = segments.first().copied().unwrap_or(path);
    if segments.get(1) == Some(&"response") {
        return (Symbol::Request(root.to_owned()), root.len());
    }
    let longest = declared
        .iter()
        .filter(|name| path.strip_prefix(**name).is_some_and(|rest| rest.is_empty() || rest.starts_with('.')))
        .max_by_key(|name| name.len());
    let name = longest.copied().unwrap_or(root);
    (Symbol::Variable(name.to_owned()), name.len())
}

/// Every template of the document in which `{{ }}` are substituted (nested ones are
/// reached with [`Template::walk`]).
fn templates(document: &Document) -> Vec<&Template> {
    let mut templates: Vec<&Template> = document.variables.iter().map(|variable| &variable.value).collect();
    for block in &document.blocks {
        templates.extend(block.orphan_directives.iter().filter_map(|directive| directive.value.as_ref()));
        let Some(request) = &block.request else {
            continue;
        };
        request.for_each_template(&mut |template| templates.push(template));
    }
    templates
}

/// The trimmed literal path of a template and its range, `None` when it holds `{{`.
fn literal_path(path: &Template) -> Option<(Range<usize>, String)> {
    let literal = path.as_literal().filter(|literal| !literal.contains("{{"))?;
    let trimmed = literal.trim_matches([' ', '\t']);
    if trimmed.is_empty() {
        return None;
    }
    let range = if literal.len() == path.span.len() {
        let leading = literal.len() - literal.trim_start_matches([' ', '\t']).len();
        let start = path.span.start + leading;
        start..start + trimmed.len()
    } else {
        path.span.range()
    };
    Some((range, trimmed.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte offset of the `nth` (0-based) occurrence of `needle` plus `shift`.
    fn at(text: &str, needle: &str, nth: usize, shift: usize) -> usize {
        text.match_indices(needle).nth(nth).map(|(index, _)| index + shift).expect("needle in text")
    }

    /// The texts a list of ranges covers, with their starts, for readable asserts.
    fn texts(text: &str, ranges: &[Range<usize>]) -> Vec<(usize, String)> {
        ranges.iter().map(|range| (range.start, text[range.clone()].to_owned())).collect()
    }

    fn symbol(text: &str, offset: usize) -> Option<(Symbol, String)> {
        let document = volley_syntax::parse(text);
        symbol_at(&document, offset).map(|(symbol, range)| (symbol, text[range].to_owned()))
    }

    fn variable(name: &str) -> Symbol {
        Symbol::Variable(name.to_owned())
    }

    fn request(name: &str) -> Symbol {
        Symbol::Request(name.to_owned())
    }

    /// Applies edits (sorted, not overlapping) to `text`.
    fn apply(text: &str, edits: &[(Range<usize>, String)]) -> String {
        let mut out = text.to_owned();
        for (range, replacement) in edits.iter().rev() {
            out.replace_range(range.clone(), replacement);
        }
        out
    }

    const CHAIN: &str = "@host = https://example.com\n@token = {{$env(TOKEN)}}\n\n### Login\n# @name login\nPOST {{host}}/login\nAuthorization: Bearer {{token}}\n\n{\"user\": \"{{ user.name }}\"}\n\n### Me\nGET {{host}}/me?t={{$base64({{login.response.body.$.token}})}}\nX-Id: {{login.response.headers.X-Id}}\n";

    #[test]
    fn symbols_in_url_header_body_and_nested_arguments() {
        let cases = [
            (at(CHAIN, "{{host}}/login", 0, 3), Some((variable("host"), "host".to_owned()))),
            (at(CHAIN, "{{host}}/login", 0, 0), Some((variable("host"), "host".to_owned()))),
            (at(CHAIN, "{{token}}", 0, 8), Some((variable("token"), "token".to_owned()))),
            (at(CHAIN, "user.name", 0, 7), Some((variable("user"), "user".to_owned()))),
            (at(CHAIN, "login.response.body", 0, 2), Some((request("login"), "login".to_owned()))),
            (at(CHAIN, "response.body.$.token", 0, 16), Some((request("login"), "login".to_owned()))),
            (at(CHAIN, "login.response.headers", 0, 0), Some((request("login"), "login".to_owned()))),
            (at(CHAIN, "TOKEN", 0, 1), None),
            (at(CHAIN, "POST", 0, 1), None),
            (at(CHAIN, "Bearer", 0, 1), None),
        ];
        for (offset, expected) in cases {
            assert_eq!(symbol(CHAIN, offset), expected, "at {offset}: {:?}", &CHAIN[offset..offset + 8]);
        }
    }

    #[test]
    fn symbols_on_declarations() {
        assert_eq!(symbol(CHAIN, 2), Some((variable("host"), "host".to_owned())));
        assert_eq!(symbol(CHAIN, at(CHAIN, "@token", 0, 6)), Some((variable("token"), "token".to_owned())));
        assert_eq!(symbol(CHAIN, at(CHAIN, "@name login", 0, 8)), Some((request("login"), "login".to_owned())));
        assert_eq!(symbol(CHAIN, at(CHAIN, "@name login", 0, 3)), None, "the directive name is not a symbol");
        assert_eq!(symbol(CHAIN, at(CHAIN, "### Login", 0, 5)), None, "`@name` wins over the separator text");
        assert_eq!(symbol(CHAIN, at(CHAIN, "### Me", 0, 5)), Some((request("Me"), "Me".to_owned())));
        let slashes = "// @name  second\nGET https://x\n";
        assert_eq!(symbol(slashes, 11), Some((request("second"), "second".to_owned())));
    }

    #[test]
    fn chaining_to_an_unnamed_request_is_still_a_request() {
        let text = "GET https://x/{{nobody.response.status}}\n";
        assert_eq!(symbol(text, at(text, "nobody", 0, 1)), Some((request("nobody"), "nobody".to_owned())));
        let document = volley_syntax::parse(text);
        assert!(declarations(&document, &request("nobody")).is_empty());
        assert_eq!(references(&document, &request("nobody")).len(), 1);
        assert_eq!(
            prepare_rename(&document, at(text, "nobody", 0, 1)),
            Err("no request is named `nobody` in this file".to_owned())
        );
    }

    #[test]
    fn dotted_file_variables_are_one_symbol() {
        let text = "@api.host = h\n@api = a\nGET {{api.host}}/{{api.port}}/{{api.host.x}}\n";
        assert_eq!(symbol(text, at(text, "{{api.host}}", 0, 7)), Some((variable("api.host"), "api.host".to_owned())));
        assert_eq!(symbol(text, at(text, "{{api.port}}", 0, 7)), Some((variable("api"), "api".to_owned())));
        let document = volley_syntax::parse(text);
        assert_eq!(
            texts(text, &references(&document, &variable("api.host"))),
            [
                (at(text, "api.host}}", 0, 0), "api.host".to_owned()),
                (at(text, "api.host.x", 0, 0), "api.host".to_owned())
            ]
        );
        assert_eq!(
            texts(text, &references(&document, &variable("api"))),
            [(at(text, "api.port", 0, 0), "api".to_owned())]
        );
    }

    #[test]
    fn declarations_twice_and_references_everywhere() {
        let text = "@v = 1\n@v = {{v}}2\n\n# @name r\n# @timeout {{v}}\nPOST https://x/{{v}}\n{{v}}: {{v}}\n\nf = {{v}}\ng = @./{{v}}.bin | {{v}}.txt\n\n###\n# @name r\nGET https://y/{{$random({{v}}, 10)}}\n\n< ./{{v}}.json\n";
        let document = volley_syntax::parse(text);
        let declared = declarations(&document, &variable("v"));
        assert_eq!(texts(text, &declared), [(1, "v".to_owned()), (8, "v".to_owned())]);
        let requests = declarations(&document, &request("r"));
        assert_eq!(requests.len(), 2);
        assert!(requests.iter().all(|range| &text[range.clone()] == "r"));
        let used = references(&document, &variable("v"));
        // Variable value, directive, URL, header name and value, form text, form path and
        // filename, resolver argument, file body path.
        assert_eq!(used.len(), 10, "{:?}", texts(text, &used));
        assert!(used.iter().all(|range| &text[range.clone()] == "v"));
        assert!(used.windows(2).all(|pair| pair[0].start < pair[1].start), "in file order");
        assert!(references(&document, &request("r")).is_empty());
    }

    #[test]
    fn prepare_rename_accepts_file_names_and_refuses_the_rest() {
        let document = volley_syntax::parse(CHAIN);
        let on_host = at(CHAIN, "{{host}}/me", 0, 4);
        assert_eq!(prepare_rename(&document, on_host).map(|range| &CHAIN[range]), Ok("host"));
        let on_login = at(CHAIN, "login.response.headers", 0, 3);
        assert_eq!(prepare_rename(&document, on_login).map(|range| &CHAIN[range]), Ok("login"));
        assert_eq!(
            prepare_rename(&document, at(CHAIN, "user.name", 0, 1)),
            Err("`user` is not declared in this file; if it comes from volley.jsonc or a profile, rename it there"
                .to_owned())
        );
        assert_eq!(
            prepare_rename(&document, at(CHAIN, "POST", 0, 0)),
            Err("there is no variable or request name here".to_owned())
        );
    }

    #[test]
    fn rename_edits_declarations_and_uses() {
        let document = volley_syntax::parse(CHAIN);
        let edits = rename(&document, at(CHAIN, "{{host}}/me", 0, 4), "baseUrl").expect("renamed");
        assert_eq!(edits.len(), 3);
        let renamed = apply(CHAIN, &edits);
        assert!(renamed.starts_with("@baseUrl = https://example.com\n"));
        assert_eq!(renamed.matches("{{baseUrl}}").count(), 2);

        let edits = rename(&document, at(CHAIN, "@name login", 0, 8), "signIn").expect("renamed");
        let renamed = apply(CHAIN, &edits);
        assert!(renamed.contains("# @name signIn\n"));
        assert!(renamed.contains("{{signIn.response.body.$.token}}"));
        assert!(renamed.contains("{{signIn.response.headers.X-Id}}"));
        assert!(!renamed.contains("login."));
        let reparsed = volley_syntax::parse(&renamed);
        assert_eq!(references(&reparsed, &request("signIn")).len(), 2);

        // The separator names a request without `@name`.
        let text = "### first\nGET https://x\n\n###\nGET https://y/{{first.response.status}}\n";
        let document = volley_syntax::parse(text);
        let edits = rename(&document, at(text, "first.response", 0, 0), "second").expect("renamed");
        assert_eq!(apply(text, &edits), "### second\nGET https://x\n\n###\nGET https://y/{{second.response.status}}\n");

        assert_eq!(rename(&document, at(text, "first.response", 0, 0), "first"), Ok(Vec::new()));
    }

    #[test]
    fn rename_refuses_invalid_and_taken_names() {
        let document = volley_syntax::parse(CHAIN);
        let on_host = at(CHAIN, "{{host}}/me", 0, 4);
        let on_login = at(CHAIN, "@name login", 0, 8);
        let refusals = [
            (on_host, "token", "`token` is already a variable of this file; pick another name"),
            (on_host, "user", "`user` is already a variable of this file; pick another name"),
            (
                on_host,
                "my host",
                "`my host` is not a valid variable name: use letters, digits, `_`, `-` and `.` between parts, starting with a letter or `_`",
            ),
            (
                on_host,
                "$host",
                "`$host` is not a valid variable name: use letters, digits, `_`, `-` and `.` between parts, starting with a letter or `_`",
            ),
            (
                on_host,
                "a..b",
                "`a..b` is not a valid variable name: use letters, digits, `_`, `-` and `.` between parts, starting with a letter or `_`",
            ),
            (
                on_host,
                "",
                "`` is not a valid variable name: use letters, digits, `_`, `-` and `.` between parts, starting with a letter or `_`",
            ),
            (
                on_host,
                "hôte",
                "`hôte` is not a valid variable name: use letters, digits, `_`, `-` and `.` between parts, starting with a letter or `_`",
            ),
            (on_host, "x.response", "`x.response` would read as the response of the request `x`"),
            (on_login, "Me", "`Me` is already a request of this file; pick another name"),
            (
                on_login,
                "log.in",
                "`log.in` is not a valid request name: use letters, digits, `_` and `-`, starting with a letter or `_`",
            ),
            (
                on_login,
                "1st",
                "`1st` is not a valid request name: use letters, digits, `_` and `-`, starting with a letter or `_`",
            ),
        ];
        for (offset, new_name, message) in refusals {
            assert_eq!(rename(&document, offset, new_name), Err(message.to_owned()), "{new_name}");
        }
        assert!(rename(&document, at(CHAIN, "user.name", 0, 1), "people").is_err(), "not declared here");
        assert!(rename(&document, on_host, "api.base-url_2").is_ok());
    }

    #[test]
    fn file_links_are_literal_paths_only() {
        let text = "POST https://x\n\n<   ./data/ünïcode.json  \n\n###\nPOST https://y\nContent-Type: multipart/form-data\n\nfile = @./a.png | b.png\nother = @ ./{{dir}}/c.png\nname = text\n\n###\nPOST https://z\n\n<@ ./{{env}}.json\n";
        let document = volley_syntax::parse(text);
        let links = file_links(&document);
        assert_eq!(
            links.iter().map(|(range, path)| (&text[range.clone()], path.as_str())).collect::<Vec<_>>(),
            [("./data/ünïcode.json", "./data/ünïcode.json"), ("./a.png", "./a.png")]
        );
    }

    #[test]
    fn every_offset_and_prefix_is_safe() {
        for end in (0..=CHAIN.len()).filter(|&end| CHAIN.is_char_boundary(end)) {
            let prefix = &CHAIN[..end];
            let document = volley_syntax::parse(prefix);
            let _ = file_links(&document);
            for offset in 0..=prefix.len() {
                if let Some((symbol, range)) = symbol_at(&document, offset) {
                    assert!(range.end <= prefix.len() && prefix.is_char_boundary(range.start));
                    let _ = (declarations(&document, &symbol), references(&document, &symbol));
                    let _ = rename(&document, offset, "renamed");
                }
            }
        }
    }

    #[test]
    fn non_ascii_text_keeps_byte_ranges() {
        let text = "@grüße = hallo wörld\n# @name añadir\nPOST https://ä.example/{{grüße}}/é\n\n{\"ü\": \"{{ añadir.response.status }}\"}\n";
        let document = volley_syntax::parse(text);
        let on_use = at(text, "{{grüße}}", 0, 4);
        let found = symbol_at(&document, on_use).map(|(symbol, range)| (symbol, &text[range]));
        // The grammar's variable names are ASCII; a non-ASCII name is still found as written.
        assert_eq!(found.map(|(_, name)| name), Some("grüße"));
        let on_chain = at(text, "añadir.response", 0, 2);
        assert_eq!(
            symbol_at(&document, on_chain).map(|(symbol, range)| (symbol, &text[range])),
            Some((request("añadir"), "añadir"))
        );
        assert_eq!(
            texts(text, &declarations(&document, &request("añadir"))),
            [(at(text, "añadir", 0, 0), "añadir".to_owned())]
        );
    }
}
