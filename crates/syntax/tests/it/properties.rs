//! Properties that must hold for every input: parsing never panics, spans stay inside
//! the text, chunking never changes a document, and an edited tree gives the same
//! document as parsing the edited text from scratch.

use proptest::prelude::*;
use volley_syntax::{Body, BodyPart, Document, Expression, FormValue, Part, Span, SyntaxTree, Template};

/// Pieces `.http` files are made of, including the awkward ones (line-ending variants,
/// unclosed braces and scripts, non-ASCII), so that random concatenations reach the
/// interesting corners of the grammar far more often than random bytes do.
const PIECES: &[&str] = &[
    "\n",
    "\r\n",
    "\r",
    "###",
    "### Name",
    "\n###\n",
    "#",
    "// ",
    "# @name ",
    "# @timeout 5",
    "@",
    "@v = ",
    "GET ",
    "post ",
    "WEBSOCKET ",
    "https://example.com/",
    "ws://h/",
    "?q=1",
    "&b=2",
    " HTTP/1.1",
    "Accept: ",
    "Content-Type: application/json",
    "Content-Type: multipart/form-data",
    ": ",
    "{{",
    "}}",
    "{{host}}",
    "{{$uuid()}}",
    "{{$random(1, 2)}}",
    "{{$f(\"a,b\", {{x}})}}",
    "{{$g([\"a\"])}}",
    "{{$randomInt 1 9}}",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "(",
    ")",
    ",",
    "< ./f.json",
    "<@ ./t",
    "<> ./r",
    ">> out",
    "> {%",
    "%}",
    "< {%",
    "{% x %}",
    "name = value",
    "file = @./a.png | b.png",
    "a=1&b=2",
    "  ",
    "\t",
    "x",
    "é",
    "😀",
    "\u{feff}",
    "%",
    "$",
    ".",
    "=",
    "|",
];

fn http_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..60).prop_map(|pieces| pieces.concat())
}

/// An edit: a position and a length in thousandths of the text, and replacement text.
fn edits() -> impl Strategy<Value = Vec<(usize, usize, String)>> {
    prop::collection::vec((0..=1000usize, 0..300usize, http_text().prop_map(|t| t.chars().take(12).collect())), 1..8)
}

fn floor_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Every span lies inside the text on character boundaries and agrees with its own
/// positions; diagnostics are sorted; blocks follow each other.
fn check_invariants(text: &str, document: &Document) {
    let lines = volley_syntax::LineIndex::new(text);
    let check = |span: Span| {
        assert!(span.start <= span.end && span.end <= text.len(), "span {span:?} outside a text of {}", text.len());
        assert!(
            text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
            "span {span:?} splits a character"
        );
        assert_eq!(lines.position(span.start), span.start_position, "start position of {span:?}");
        assert_eq!(lines.position(span.end), span.end_position, "end position of {span:?}");
    };
    let check_template = |template: &Template| {
        check(template.span);
        for part in &template.parts {
            match part {
                Part::Text(text) => {
                    check(text.span);
                    assert!(text.span.start >= template.span.start && text.span.end <= template.span.end);
                }
                Part::Interpolation(interpolation) => {
                    interpolation.walk(&mut |inner| {
                        check(inner.span);
                        if let Some(Expression::Resolver(call)) = &inner.expression {
                            check(call.name.span);
                            for argument in call.arguments.templates() {
                                check(argument.span);
                                for part in &argument.parts {
                                    if let Part::Text(text) = part {
                                        check(text.span);
                                    }
                                }
                            }
                        }
                    });
                }
            }
        }
    };
    for diagnostic in &document.diagnostics {
        check(diagnostic.span);
        assert!(!diagnostic.message.is_empty());
    }
    assert!(document.diagnostics.windows(2).all(|pair| pair[0].span.start <= pair[1].span.start));
    let mut previous_end = 0;
    for block in &document.blocks {
        check(block.span);
        assert!(block.span.start >= previous_end, "blocks overlap");
        previous_end = block.span.end;
        if let Some(request) = &block.request {
            check(request.span);
            check(request.line_span);
            check_template(&request.url);
            for header in &request.headers {
                check(header.span);
                check_template(&header.name);
                check_template(&header.value);
            }
            for directive in &request.directives {
                check(directive.span);
                check(directive.name.span);
                if let Some(value) = &directive.value {
                    check_template(value);
                }
            }
            match &request.body {
                Body::None => {}
                Body::Inline(template) => check_template(template),
                Body::File(file) => {
                    check(file.span);
                    check_template(&file.path);
                }
                Body::Form(form) => {
                    check(form.span);
                    for field in &form.fields {
                        check(field.span);
                        check(field.name.span);
                        match &field.value {
                            FormValue::Text(value) => check_template(value),
                            FormValue::File { path, filename } => {
                                check_template(path);
                                if let Some(filename) = filename {
                                    check_template(filename);
                                }
                            }
                        }
                    }
                }
                Body::Parts(parts) => {
                    check(parts.span);
                    for part in &parts.parts {
                        match part {
                            BodyPart::Text(text) => check_template(text),
                            BodyPart::File(file) => {
                                check(file.span);
                                check_template(&file.path);
                            }
                        }
                    }
                }
                Body::GraphQl(graphql) => {
                    check(graphql.span);
                    check_template(&graphql.query);
                    if let Some(variables) = &graphql.variables {
                        check_template(variables);
                    }
                }
            }
        }
    }
    for variable in &document.variables {
        check(variable.span);
        check_template(&variable.value);
    }
    check_errors_have_one_owner(document);
}

/// Every error belongs to exactly one request or to none ([`Document::unowned_errors`]),
/// so that none goes unreported and none refuses two requests.
fn check_errors_have_one_owner(document: &Document) {
    let mut owners = vec![0usize; document.diagnostics.len()];
    let position = |diagnostic: &volley_syntax::Diagnostic| {
        document.diagnostics.iter().position(|other| std::ptr::eq(other, diagnostic)).expect("a document diagnostic")
    };
    for request in document.requests() {
        for diagnostic in document.errors_of(request) {
            owners[position(diagnostic)] += 1;
        }
    }
    for diagnostic in document.unowned_errors() {
        owners[position(diagnostic)] += 1;
    }
    for (diagnostic, count) in document.diagnostics.iter().zip(owners) {
        let expected = usize::from(diagnostic.is_error());
        assert_eq!(count, expected, "{diagnostic} is counted {count} times");
    }
}

proptest! {
    // 256 cases each by default; `PROPTEST_CASES=20000` for a longer hunt.

    #[test]
    fn arbitrary_strings_never_panic(text in ".{0,400}") {
        let document = volley_syntax::parse(&text);
        check_invariants(&text, &document);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let document = volley_syntax::parse(&text);
        check_invariants(&text, &document);
    }

    #[test]
    fn http_like_text_never_panics(text in http_text()) {
        let document = volley_syntax::parse(&text);
        check_invariants(&text, &document);
    }

    #[test]
    fn templates_keep_every_byte(text in http_text()) {
        check_template_keeps_every_byte(&text);
    }

    #[test]
    fn chunking_never_changes_the_document(text in http_text(), size in 1usize..64) {
        let whole = volley_syntax::parse_unchunked(&text);
        let chunked = SyntaxTree::with_chunk_size(&text, size).document();
        let per_block = SyntaxTree::with_chunk_size(&text, 1).document();
        prop_assert_eq!(&chunked, &per_block);
        prop_assert_eq!(&whole, &per_block);
        prop_assert_eq!(volley_syntax::parse(&text), per_block);
    }

    #[test]
    fn edits_match_a_fresh_parse(text in http_text(), edits in edits(), size in 1usize..64) {
        let mut tree = SyntaxTree::with_chunk_size(&text, size);
        let mut expected = text.clone();
        for (at, length, insert) in edits {
            let start = floor_boundary(&expected, at * expected.len() / 1000);
            let end = floor_boundary(&expected, start + length * expected.len() / 1000);
            expected.replace_range(start..end, &insert);
            tree.edit(start..end, &insert).expect("edit on character boundaries");
            prop_assert_eq!(tree.text(), expected.clone());
            prop_assert_eq!(tree.trees_unlike_a_fresh_parse(), Vec::new(), "after an edit of {:?}", expected);
            let document = tree.document();
            check_invariants(&expected, &document);
            prop_assert_eq!(document, volley_syntax::parse(&expected));
        }
    }

    /// A lone `\r` is a line break like `\n` for every layer: written instead of every
    /// `\n`, it leaves every diagnostic where it was (same bytes, same lines), with the
    /// same message and hint. Texts without syntax errors only: tree-sitter's error
    /// recovery weighs the rows it skips, and its rows count `\n` only.
    #[test]
    fn lone_carriage_returns_break_lines_like_line_feeds(text in http_text()) {
        let text = text.replace('\r', "");
        let carriage_returns = text.replace('\n', "\r");
        let with_line_feeds = volley_syntax::parse(&text);
        if with_line_feeds.diagnostics.iter().any(|diagnostic| diagnostic.code.as_str() == "syntax-error") {
            return Ok(());
        }
        let with_carriage_returns = volley_syntax::parse(&carriage_returns);
        prop_assert_eq!(&with_carriage_returns.diagnostics, &with_line_feeds.diagnostics, "{:?}", carriage_returns);
    }

    #[test]
    fn chunk_documents_placed_are_the_document(text in http_text(), edits in edits(), size in 1usize..64) {
        let mut tree = SyntaxTree::with_chunk_size(&text, size);
        let mut current = text.clone();
        let mut ids_before: Vec<(u64, String)> = tree.chunks().map(|chunk| (chunk.id, chunk.text.to_string())).collect();
        for (at, length, insert) in edits {
            let start = floor_boundary(&current, at * current.len() / 1000);
            let end = floor_boundary(&current, start + length * current.len() / 1000);
            current.replace_range(start..end, &insert);
            tree.edit(start..end, &insert).expect("edit on character boundaries");
            // An id that survives an edit still names the same text.
            for chunk in tree.chunks() {
                if let Some((_, before)) = ids_before.iter().find(|(id, _)| *id == chunk.id) {
                    prop_assert_eq!(before.as_str(), &**chunk.text);
                }
            }
            ids_before = tree.chunks().map(|chunk| (chunk.id, chunk.text.to_string())).collect();
            let whole = tree.document();
            let mut spans = Vec::new();
            let mut diagnostics = Vec::new();
            for (index, chunk) in tree.chunks().enumerate() {
                let part = tree.chunk_document(index).expect("chunk exists");
                prop_assert_eq!(&current[chunk.start..chunk.start + chunk.text.len()], &**chunk.text);
                spans.extend(part.blocks.iter().map(|block| chunk.place(block.span)));
                diagnostics.extend(part.diagnostics.iter().map(|diagnostic| (diagnostic.code, chunk.place(diagnostic.span))));
            }
            let names: Vec<_> = whole.requests().filter_map(|request| request.name.clone()).collect();
            diagnostics.extend(volley_syntax::duplicate_names(&names).iter().map(|diagnostic| (diagnostic.code, diagnostic.span)));
            diagnostics.sort_by_key(|(_, span)| (span.start, span.end));
            let expected_spans: Vec<_> = whole.blocks.iter().map(|block| block.span).collect();
            prop_assert_eq!(spans, expected_spans);
            let expected: Vec<_> = whole.diagnostics.iter().map(|diagnostic| (diagnostic.code, diagnostic.span)).collect();
            prop_assert_eq!(diagnostics, expected);
        }
    }
}

/// `parse_template` covers the text with contiguous parts, literal ones as written.
fn check_template_keeps_every_byte(text: &str) {
    let (template, _) = volley_syntax::parse_template(text);
    let mut rebuilt = String::new();
    let mut end = 0;
    for part in &template.parts {
        let span = match part {
            Part::Text(text_part) => {
                assert_eq!(&text_part.value, &text[text_part.span.range()], "in {text:?}");
                text_part.span
            }
            Part::Interpolation(interpolation) => interpolation.span,
        };
        assert_eq!(span.start, end, "parts are contiguous in {text:?}");
        rebuilt.push_str(&text[span.range()]);
        end = span.end;
    }
    assert_eq!(rebuilt, text);
}

#[test]
fn template_text_after_an_unclosed_interpolation_is_kept() {
    // The grammar leaves the spaces after `{{$x` out of the value node.
    for text in ["{{$x  \n", "{{$x  ", "a {{$uuid  \nb", "{{$x \t\n{{y}}  "] {
        check_template_keeps_every_byte(text);
    }
}

#[test]
fn syntax_errors_read_lone_carriage_returns_as_line_breaks() {
    // tree-sitter's rows count `\n` only: the error after `\r` was taken for text left
    // at the end of the request line and got that hint; and `str::lines` quoted the
    // text after a `\r` in the message.
    for text in ["GET https://e.com/a\n\0\n", "GET https://e.com/a\n\u{c}\n", "\n###\n  @###"] {
        let with_line_feeds = volley_syntax::parse(text);
        let with_carriage_returns = volley_syntax::parse(&text.replace('\n', "\r"));
        assert_eq!(with_carriage_returns.diagnostics, with_line_feeds.diagnostics, "{text:?}");
    }
}

#[test]
fn messages_of_a_stream_are_cut_and_placed_at_lone_carriage_returns() {
    let text = "WEBSOCKET wss://e.com/ws\n\n{\"a\": 1}\n===\n{\"b\": 2}\n";
    let messages = |text: &str| {
        let document = volley_syntax::parse(text);
        let request = document.request(0).expect("a request");
        let Body::Inline(body) = &request.body else { panic!("an inline body in {text:?}") };
        volley_syntax::split_messages(body).iter().map(|message| message.body.span).collect::<Vec<_>>()
    };
    let with_line_feeds = messages(text);
    assert_eq!(with_line_feeds.len(), 2);
    assert_eq!(messages(&text.replace('\n', "\r")), with_line_feeds);
}

#[test]
fn edits_out_of_range_or_inside_a_character_are_refused() {
    let mut tree = SyntaxTree::new("GET https://example.com/é\n");
    assert!(tree.edit(0..100, "x").is_err());
    let e_acute = tree.text().find('é').expect("é is in the text");
    assert!(tree.edit(e_acute + 1..e_acute + 1, "x").is_err());
    #[allow(clippy::reversed_empty_ranges)] // The point: a reversed range is refused.
    let reversed = 5..2;
    assert!(tree.edit(reversed, "x").is_err());
    assert_eq!(tree.text(), "GET https://example.com/é\n");
}

#[test]
fn deeply_nested_interpolations_are_refused_not_overflowed() {
    let depth = 5_000;
    let text = format!("GET https://e.com/{}x{}\n", "{{$f(".repeat(depth), ")}}".repeat(depth));
    let document = volley_syntax::parse(&text);
    assert!(document.has_errors());
    let arrays = format!("GET https://e.com/{{{{$f({}{})}}}}\n", "[".repeat(depth), "]".repeat(depth));
    let _ = volley_syntax::parse(&arrays);
}

#[test]
fn syntax_errors_past_two_hundred_are_counted_in_one_diagnostic() {
    // A NUL byte on a line is an error (tree-sitter reads NUL as the end of the text):
    // 1,000 errors in one block, and 1,000 spread over 500 blocks.
    for text in ["\0\n".repeat(1000), "###\n\0\n\0\n".repeat(500)] {
        let documents = [
            volley_syntax::parse(&text),
            volley_syntax::parse_unchunked(&text),
            SyntaxTree::with_chunk_size(&text, 64).document(),
        ];
        for document in &documents {
            let errors: Vec<_> =
                document.diagnostics.iter().filter(|diagnostic| diagnostic.code.as_str() == "syntax-error").collect();
            assert_eq!(errors.len(), 201);
            let summary = errors[200];
            assert_eq!(summary.message, "800 more syntax errors are not listed");
            assert_eq!(summary.span, errors[199].span, "placed after the last one listed");
            assert!(errors[..200].iter().all(|error| error.message.starts_with("unexpected")), "{errors:?}");
        }
        assert_eq!(documents[0], documents[1]);
        assert_eq!(documents[0], documents[2]);
    }
    // A chunk's own document (what the language server shows per part) counts its own.
    let tree = SyntaxTree::new("\0\n".repeat(300));
    let part = tree.chunk_document(0).expect("one chunk");
    let last = part.diagnostics.last().expect("diagnostics");
    assert_eq!((part.diagnostics.len(), last.message.as_str()), (201, "100 more syntax errors are not listed"));
}

#[test]
fn requests_past_the_listed_errors_are_refused() {
    // 300 requests with a syntax error each (a line of a form feed): only
    // 200 errors are listed, and a request whose error is not listed must not be sent.
    let text = "###\nGET https://e.com/\n\u{c}\n".repeat(300);
    let document = volley_syntax::parse(&text);
    let requests: Vec<_> = document.requests().collect();
    assert_eq!(requests.len(), 300);
    let first = document.first_unlisted_error.as_ref().expect("errors past the limit");
    assert_eq!(first.code.as_str(), "syntax-error");
    for request in &requests {
        let refusal = document.refusal_of(request);
        assert!(refusal.is_some(), "request {} is sent", request.index);
    }
    let last = document.refusal_of(requests[299]).expect("refused");
    assert!(last.errors.iter().any(|error| error.message.contains("more errors than are listed")), "{last:?}");
    // Before the first unlisted error, requests are refused for their own errors only.
    let early = document.refusal_of(requests[10]).expect("refused");
    assert!(early.errors.iter().all(|error| !error.message.contains("more errors than are listed")));
}

#[test]
fn every_kind_of_diagnostic_is_listed_two_hundred_times_at_most() {
    // One `unclosed-variable` per `{{`, one `empty-variable` per `{{}}`: a long line of
    // each gives two codes over the limit, each counted in one more diagnostic.
    let text = format!("GET https://e.com/{}\nX-A: {}\n", "{{".repeat(5_000), "{{}}".repeat(1_000));
    let document = volley_syntax::parse(&text);
    for (code, total) in [("unclosed-variable", 5_000), ("empty-variable", 1_000)] {
        let listed: Vec<_> =
            document.diagnostics.iter().filter(|diagnostic| diagnostic.code.as_str() == code).collect();
        assert_eq!(listed.len(), 201, "{code}");
        let summary = listed.last().expect("summary");
        assert_eq!(summary.message, format!("{} more `{code}` diagnostics are not listed", total - 200));
    }
    assert!(document.refusal_of(document.request(0).expect("request")).is_some());
}
