//! Formatting: normalises the layout of the lines whose meaning the syntax crate knows
//! (separators, file variables, directives and comments, request lines, headers) and
//! never touches bodies, scripts or lines of unknown kind. One edit per changed line, so
//! an editor keeps its cursor and undo history sensible.

use std::collections::BTreeMap;
use std::ops::Range;

use volley_syntax::{Code, Document, Header, LineIndex, Request, Separator, Span, VariableDeclaration};

/// Edits (range of a line's text, its new text) that normalise the layout of `document`,
/// parsed from `text`:
/// - separators: `###name` / `###   name  ` → `### name`; a bare `###` stays `###`;
/// - file variables: `@name=value` → `@name = value`;
/// - request lines: one space between method, URL and HTTP version;
/// - headers: `Name  :value` → `Name: value`;
/// - comments and directives (before the request line and among the headers): trailing
///   spaces and tabs removed, as on every normalised line.
///
/// Bodies (everything after the blank line that ends the headers), scripts, `?`/`&`
/// continuation lines and lines of unknown kind are left as they are, as is the
/// indentation of every line. Line breaks are never part of an edit, so `\n` and `\r\n`
/// stay as written. Lines already normal get no edit; applying the edits and formatting
/// again gives none.
pub(crate) fn format(document: &Document, text: &str) -> Vec<(Range<usize>, String)> {
    let index = LineIndex::new(text);
    let scripts = script_spans(document);
    let in_script = |offset: usize| scripts.iter().any(|script| script.start <= offset && offset < script.end);
    let line_of = |offset: usize| index.position(offset).line;
    let mut kinds: BTreeMap<u32, Kind<'_>> = BTreeMap::new();
    for variable in &document.variables {
        kinds.insert(line_of(variable.span.start), Kind::Variable(variable));
    }
    for (position, block) in document.blocks.iter().enumerate() {
        let block_end = document.blocks.get(position + 1).map_or(text.len(), |next| next.span.start);
        let last_line = line_of(block_end);
        let mut first_line = line_of(block.span.start);
        if let Some(separator) = &block.separator {
            first_line = line_of(separator.span.start);
            kinds.insert(first_line, Kind::Separator(separator));
            first_line += 1;
        }
        let Some(request) = &block.request else {
            // A block without a request line is all preamble.
            let end = if block_end == text.len() { last_line + 1 } else { last_line };
            mark_comments(&mut kinds, text, &index, first_line..end, &in_script);
            continue;
        };
        let request_line = line_of(request.line_span.start);
        mark_comments(&mut kinds, text, &index, first_line..request_line, &in_script);
        kinds.insert(request_line, Kind::RequestLine(request));
        // The header zone runs to the first blank line; the body comes after it.
        let mut header_zone_end = request_line + 1;
        while header_zone_end <= last_line {
            match index.line_range(text, header_zone_end) {
                Some(range) if range.start < block_end && !text[range.clone()].trim_matches([' ', '\t']).is_empty() => {
                    header_zone_end += 1;
                }
                _ => break,
            }
        }
        for header in &request.headers {
            kinds.insert(line_of(header.span.start), Kind::Header(header));
        }
        mark_comments(&mut kinds, text, &index, request_line + 1..header_zone_end, &in_script);
    }

    let mut edits = Vec::new();
    for (line, kind) in kinds {
        let Some(range) = index.line_range(text, line) else {
            continue;
        };
        if in_script(range.start) {
            continue;
        }
        let current = &text[range.clone()];
        let normal = match kind {
            Kind::Separator(separator) => separator_line(text, &range, separator),
            Kind::Variable(variable) => variable_line(text, &range, variable),
            Kind::RequestLine(request) => request_line(text, &range, request),
            Kind::Header(header) => header_line(text, &range, header),
            Kind::Comment => Some(trim_end(current).to_owned()),
        };
        if let Some(normal) = normal.filter(|normal| normal != current) {
            edits.push((range, normal));
        }
    }
    edits
}

/// What a line is, as far as formatting cares.
#[derive(Debug, Clone, Copy)]
enum Kind<'a> {
    Separator(&'a Separator),
    Variable(&'a VariableDeclaration),
    RequestLine(&'a Request),
    Header(&'a Header),
    /// A comment or a directive: only trailing whitespace goes.
    Comment,
}

/// Marks the `#` / `//` lines of `lines` that nothing else claimed and no script holds.
fn mark_comments(
    kinds: &mut BTreeMap<u32, Kind<'_>>,
    text: &str,
    index: &LineIndex,
    lines: Range<u32>,
    in_script: &impl Fn(usize) -> bool,
) {
    for line in lines {
        let Some(range) = index.line_range(text, line) else {
            break;
        };
        let content = text[range.clone()].trim_start_matches([' ', '\t']);
        let comment = content.starts_with('#') || content.starts_with("//");
        if comment && !in_script(range.start) {
            kinds.entry(line).or_insert(Kind::Comment);
        }
    }
}

/// The spans of scripts: those of requests and of blocks without one, and those the
/// diagnostics point at.
fn script_spans(document: &Document) -> Vec<Range<usize>> {
    let of_requests = document.requests().flat_map(|request| request.scripts.iter().map(|script| script.span));
    let orphans = document.blocks.iter().flat_map(|block| block.orphan_scripts.iter().map(|script| script.span));
    let of_requests = of_requests.chain(orphans);
    let reported = document
        .diagnostics
        .iter()
        .filter(|diagnostic| matches!(diagnostic.code, Code::UnsupportedScript | Code::UnclosedScript))
        .map(|diagnostic| diagnostic.span);
    of_requests.chain(reported).map(|span: Span| span.range()).collect()
}

/// `###name  ` → `### name`; the number of `#` is kept.
fn separator_line(text: &str, line: &Range<usize>, separator: &Separator) -> Option<String> {
    let current = &text[line.clone()];
    let hashes = current.len() - current.trim_start_matches('#').len();
    if hashes < 3 {
        return None;
    }
    let mut normal = current[..hashes].to_owned();
    if let Some(name) = &separator.name {
        normal.push(' ');
        normal.push_str(name.span.text(text));
    }
    Some(normal)
}

/// `@name=value  ` → `@name = value` (`@name =` without a value).
fn variable_line(text: &str, line: &Range<usize>, variable: &VariableDeclaration) -> Option<String> {
    let name = variable.name.span;
    let at = name.start.checked_sub(1)?;
    if !(line.start <= at && name.end <= line.end && text.as_bytes().get(at) == Some(&b'@')) {
        return None;
    }
    let value = variable.value.span;
    let value_text =
        if variable.value.is_empty() || value.start < name.end || value.end > line.end { "" } else { value.text(text) };
    // Only spaces, tabs and the `=` may lie between the name and the value.
    let between_end = if value_text.is_empty() { line.end } else { value.start };
    let between = text[name.end..between_end].trim_matches([' ', '\t']);
    if between != "=" {
        return None;
    }
    let mut normal = format!("{} =", &text[line.start..name.end]);
    if !value_text.is_empty() {
        normal.push(' ');
        normal.push_str(value_text);
    }
    Some(normal)
}

/// `GET   url\tHTTP/1.1 ` → `GET url HTTP/1.1`; the URL itself is kept as written.
fn request_line(text: &str, line: &Range<usize>, request: &Request) -> Option<String> {
    let within = |span: &Span| line.start <= span.start && span.end <= line.end;
    let mut pieces: Vec<Range<usize>> = Vec::new();
    if !request.method.span.is_empty() && within(&request.method.span) {
        pieces.push(request.method.span.range());
    }
    let version = request.http_version.as_ref().map(|version| version.span).filter(within);
    let url_start = request.url.span.start;
    if (line.start..line.end).contains(&url_start) && !request.url.is_empty() {
        // The URL's span covers its `?`/`&` continuation lines: cut it at the version or
        // at the end of the request line.
        let url_end = version.map_or(line.end, |version| version.start).min(request.url.span.end);
        let url = text[url_start..url_end.max(url_start)].trim_end_matches([' ', '\t']);
        if !url.is_empty() {
            pieces.push(url_start..url_start + url.len());
        }
    }
    pieces.extend(version.map(|version| version.range()));
    let first = pieces.first()?;
    let mut normal = text[line.start..first.start].to_owned();
    let mut previous_end = first.start;
    for (position, piece) in pieces.iter().enumerate() {
        let gap = &text[previous_end..piece.start];
        if position > 0 {
            // Anything but spaces and tabs between the pieces is not understood here.
            if gap.is_empty() || !gap.bytes().all(|byte| matches!(byte, b' ' | b'\t')) {
                return None;
            }
            normal.push(' ');
        }
        normal.push_str(&text[piece.clone()]);
        previous_end = piece.end;
    }
    let rest = &text[previous_end..line.end];
    rest.bytes().all(|byte| matches!(byte, b' ' | b'\t')).then_some(normal)
}

/// `Name  :value ` → `Name: value` (`Name:` without a value); a line without `:` is
/// left alone (it is reported, not guessed at).
fn header_line(text: &str, line: &Range<usize>, header: &Header) -> Option<String> {
    let name = header.name.span;
    if header.name.is_empty() || name.start < line.start || name.end > line.end {
        return None;
    }
    let value = header.value.span;
    let has_value = !header.value.is_empty() && value.start >= name.end && value.end <= line.end;
    let between_end = if has_value { value.start } else { line.end };
    if text[name.end..between_end].trim_matches([' ', '\t']) != ":" {
        return None;
    }
    let mut normal = format!("{}:", &text[line.start..name.end]);
    if has_value {
        normal.push(' ');
        normal.push_str(value.text(text));
    }
    Some(normal)
}

fn trim_end(line: &str) -> &str {
    line.trim_end_matches([' ', '\t'])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies edits (sorted, not overlapping) to `text`.
    fn apply(text: &str, edits: &[(Range<usize>, String)]) -> String {
        let mut out = text.to_owned();
        for (range, replacement) in edits.iter().rev() {
            out.replace_range(range.clone(), replacement);
        }
        out
    }

    /// Formats `input`, checks the result and that formatting it again changes nothing.
    fn check(input: &str, expected: &str) {
        let edits = format(&volley_syntax::parse(input), input);
        assert!(edits.windows(2).all(|pair| pair[0].0.end <= pair[1].0.start), "sorted, disjoint: {edits:?}");
        let formatted = apply(input, &edits);
        assert_eq!(formatted, expected, "formatting {input:?}");
        let again = format(&volley_syntax::parse(&formatted), &formatted);
        assert!(again.is_empty(), "not idempotent: {again:?} on {formatted:?}");
    }

    #[test]
    fn separators() {
        check("###name\nGET https://a\n", "### name\nGET https://a\n");
        check("###   spaced name  \nGET https://a\n", "### spaced name\nGET https://a\n");
        check("GET https://a\n\n###  \t\nGET https://b\n", "GET https://a\n\n###\nGET https://b\n");
        check("GET https://a\n\n#####five\n", "GET https://a\n\n##### five\n");
        check("### \n", "###\n");
    }

    #[test]
    fn file_variables() {
        check(
            "@host=https://a\n@a   =  1  \n@empty=\n@b = {{host}}/x \t\nGET {{host}}\n",
            "@host = https://a\n@a = 1\n@empty =\n@b = {{host}}/x\nGET {{host}}\n",
        );
    }

    #[test]
    fn request_lines() {
        check("GET    https://a/{{ x }}   HTTP/1.1  \n", "GET https://a/{{ x }} HTTP/1.1\n");
        check("post\thttps://a\t\n", "post https://a\n");
        check("https://bare.example   \n", "https://bare.example\n");
        check("WEBSOCKET   wss://a\n", "WEBSOCKET wss://a\n");
        check("GET  https://a\n  ?x=1   \n  &y=2\n", "GET https://a\n  ?x=1   \n  &y=2\n");
    }

    #[test]
    fn headers() {
        check(
            "GET https://a\nAccept:application/json\nX-Name  :   value with  spaces  \nX-Empty:   \n  Indented :v\n",
            "GET https://a\nAccept: application/json\nX-Name: value with  spaces\nX-Empty:\n  Indented: v\n",
        );
        check("GET https://a\n{{name}} :{{value}}\n", "GET https://a\n{{name}}: {{value}}\n");
        check("GET https://a\nno colon here  \n", "GET https://a\nno colon here  \n");
    }

    #[test]
    fn comments_and_directives() {
        check(
            "# a comment  \n// another\t\n# @name  login  \n// @timeout 5 s \nGET https://a\n# between headers  \nAccept: x\n",
            "# a comment\n// another\n# @name  login\n// @timeout 5 s\nGET https://a\n# between headers\nAccept: x\n",
        );
        check("###   lonely  \n# @name nothing  \n# note  \n", "### lonely\n# @name nothing\n# note\n");
    }

    #[test]
    fn bodies_and_scripts_are_untouched() {
        let body = "POST https://a\nContent-Type: text/plain\n\n# not a comment  \nKey:value  \n@x=1  \n\n###   next  \nPOST https://b\n\nf=1  \ng = @./a.png  \n\n###\nPOST https://c\n\n<   ./file.json  \n";
        check(
            body,
            "POST https://a\nContent-Type: text/plain\n\n# not a comment  \nKey:value  \n@x=1  \n\n### next\nPOST https://b\n\nf=1  \ng = @./a.png  \n\n###\nPOST https://c\n\n<   ./file.json  \n",
        );
        let scripts = "< {%\n  # inside  \n  request.x = 1;  \n%}\nGET https://a\n\n> {%\n # handler  \n%}\n\n###\n< {%\n# orphan script  \n%}\n";
        check(scripts, scripts);
        // Blank lines with spaces are left alone (they may end the headers).
        check("GET https://a\n   \nbody  \n", "GET https://a\n   \nbody  \n");
    }

    #[test]
    fn line_endings_are_kept() {
        check(
            "@a=1 \r\n###x  \r\n# c  \r\nGET   https://a  \r\nAccept:x \r\n\r\nbody  \r\n",
            "@a = 1\r\n### x\r\n# c\r\nGET https://a\r\nAccept: x\r\n\r\nbody  \r\n",
        );
        check("GET  https://a\rAccept:x\r", "GET https://a\rAccept: x\r");
    }

    #[test]
    fn normal_text_gets_no_edits() {
        let text = "@host = https://a\n\n### Login\n# @name login\nPOST {{host}}/login HTTP/1.1\nContent-Type: application/json\n\n{\"a\":  1}  \n";
        assert!(format(&volley_syntax::parse(text), text).is_empty());
    }

    #[test]
    fn one_edit_per_changed_line() {
        let text = "###a\nGET  https://a\nAccept:x\nX-Ok: y\n";
        let edits = format(&volley_syntax::parse(text), text);
        let changed: Vec<&str> = edits.iter().map(|(range, _)| &text[range.clone()]).collect();
        assert_eq!(changed, ["###a", "GET  https://a", "Accept:x"]);
    }

    #[test]
    fn every_prefix_formats_without_panic_and_settles() {
        let text = "@a=1 \r\n###x  \n# @name  n \n< {%\n # s  \n%}\nGET   https://ä/{{a}}?q  HTTP/1.1 \n  &y=1\nAccept:x \nbad line\n\nbody  \n###\nPOST  u\n\nf = @./ü.png  \n";
        for end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
            let prefix = &text[..end];
            let edits = format(&volley_syntax::parse(prefix), prefix);
            let formatted = apply(prefix, &edits);
            let again = format(&volley_syntax::parse(&formatted), &formatted);
            assert!(again.is_empty(), "not idempotent on {prefix:?}: {again:?}");
        }
    }

    #[test]
    fn non_ascii_text() {
        check(
            "###  Größe prüfen  \n@gruss=hallo wörld  \nGET   https://ä.example/{{gruss}}  \nX-Émoji:😀  \n\n{\"ü\": 1}  \n",
            "### Größe prüfen\n@gruss = hallo wörld\nGET https://ä.example/{{gruss}}\nX-Émoji: 😀\n\n{\"ü\": 1}  \n",
        );
        // The grammar's variable names are ASCII: this line is of unknown kind.
        check("@grüße=x  \nGET https://a\n", "@grüße=x  \nGET https://a\n");
    }
}
