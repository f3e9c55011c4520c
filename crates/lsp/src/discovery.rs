//! `volley.tests`: what an editor's test view lists for one file — its requests and, for
//! each, the checks written in it (`# @assert`, httpyac's `??` lines, and the
//! `client.test` / `test` calls of its in-place response scripts) with their lines, so
//! that an editor needs no parser of its own. Tests of script files appear only in a
//! send's outcome.

use serde::Serialize;
use volley_syntax::{Document, Request, ScriptKind};

/// Files larger than this are not read for discovery (an error says so).
pub(crate) const MOST_BYTES: u64 = 16 * 1024 * 1024;

/// One request of the answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TestRequest {
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    method: String,
    /// The URL as written.
    url: String,
    /// The request line, 0-based.
    line: u32,
    /// The last line of its block.
    end_line: u32,
    disabled: bool,
    checks: Vec<Check>,
}

/// One check of a request.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub(crate) struct Check {
    /// `assert` or `test`.
    kind: &'static str,
    /// The expression of an assertion, the name of a test.
    label: String,
    line: u32,
}

/// The requests of `document` with their checks.
pub(crate) fn requests(document: &Document) -> Vec<TestRequest> {
    document
        .requests()
        .map(|request| {
            let end = document.blocks.get(request.block).map_or(request.span, |block| block.span);
            // A block ends at the start of the next separator: its last line is the one before.
            let end_line = if end.end_position.column == 0 && end.end_position.line > 0 {
                end.end_position.line - 1
            } else {
                end.end_position.line
            };
            TestRequest {
                index: request.index,
                name: request.name.as_ref().map(|name| name.value.clone()),
                method: request.method.value.to_string(),
                url: request.url.to_source(),
                line: request.line_span.start_position.line,
                end_line: end_line.max(request.line_span.start_position.line),
                disabled: request.disabled,
                checks: checks(request),
            }
        })
        .collect()
}

fn checks(request: &Request) -> Vec<Check> {
    let mut checks: Vec<Check> = request
        .assertions()
        .map(|directive| Check {
            kind: "assert",
            label: directive.value.as_ref().map(volley_syntax::Template::to_source).unwrap_or_default(),
            line: directive.span.start_position.line,
        })
        .collect();
    for script in &request.scripts {
        if !matches!(script.kind, ScriptKind::ResponseHandler | ScriptKind::HttpyacResponse) {
            continue;
        }
        let Some(code) = &script.code else { continue };
        let first_line = code.span.start_position.line;
        for (line, label) in test_calls(&code.value) {
            checks.push(Check { kind: "test", label, line: first_line + line });
        }
    }
    checks
}

/// The `client.test('name', …)` and `test('name', …)` calls of a script: the line of
/// each (0-based, within the script) and its name, when the name is a string literal.
fn test_calls(code: &str) -> Vec<(u32, String)> {
    let mut calls = Vec::new();
    for (number, line) in volley_syntax::line_break::lines(code).enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("test(") {
            let before = &rest[..at];
            let after = &rest[at + "test(".len()..];
            rest = after;
            // `test(` alone or after `client.`, not `latest(` or `mytest(`.
            let preceding = before.chars().next_back();
            let standalone = preceding.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '$'))
                && (preceding != Some('.') || before.ends_with("client."));
            if !standalone {
                continue;
            }
            if let Some(name) = string_literal(after.trim_start()) {
                calls.push((number as u32, name));
            }
        }
    }
    calls
}

/// The string literal at the start of `text` (`'…'`, `"…"` or a backtick string without
/// `${`), unescaped for the common escapes.
fn string_literal(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let mut value = String::new();
    let mut chars = text[1..].chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => value.push(chars.next()?),
            '$' if quote == '`' && chars.clone().next() == Some('{') => return None,
            c if c == quote => return Some(value),
            c => value.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_of_client_test_and_httpyac_test_are_found_with_their_lines() {
        let code = "client.test('a \\'b\\'', () => {});\n  test(\"two\", () => {}); latest('x'); my.test('no');\ntest(`t${x}`)";
        assert_eq!(test_calls(code), vec![(0, "a 'b'".to_owned()), (1, "two".to_owned())]);
        // A lone `\r` ends a line too, as for every position of the file.
        assert_eq!(test_calls(&code.replace('\n', "\r")), test_calls(code));
    }

    #[test]
    fn assertions_and_script_tests_are_listed_at_their_lines() {
        let text = "### one\n# @name login\n# @assert status == 200\nGET http://x/a\n\n> {%\nclient.test('ok', () => {});\n%}\n\n###\nGET http://x/b\n?? status == 201\n";
        let document = volley_syntax::parse(text);
        let requests = requests(&document);
        let first = serde_json::to_value(&requests[0]).unwrap();
        assert_eq!(first["name"], "login");
        assert_eq!(first["line"], 3);
        assert_eq!(first["endLine"], 7);
        assert_eq!(
            first["checks"],
            serde_json::json!([{"kind": "assert", "label": "status == 200", "line": 2}, {"kind": "test", "label": "ok", "line": 6}])
        );
        let second = serde_json::to_value(&requests[1]).unwrap();
        assert_eq!(second["line"], 10);
        assert_eq!(second["checks"], serde_json::json!([{"kind": "assert", "label": "status == 201", "line": 11}]));
    }
}
