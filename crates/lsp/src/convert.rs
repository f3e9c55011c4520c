//! Every conversion between Volley's types and LSP's: byte offsets ⇄ UTF-16 positions,
//! diagnostics, symbols, folding ranges, URIs. Nothing else in the crate builds LSP
//! types by hand from syntax types, so a change of the LSP types crate stays here.

use std::path::PathBuf;

use ropey::Rope;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeLens, Command, CompletionItem, CompletionItemKind,
    CompletionTextEdit, Diagnostic, DiagnosticSeverity, DocumentLink, DocumentSymbol, Documentation, FoldingRange,
    FoldingRangeKind, Hover, HoverContents, InsertTextFormat, Location, MarkupContent, MarkupKind, NumberOrString,
    Position, Range, SymbolKind, TextEdit, Uri, WorkspaceEdit,
};
use volley_syntax::{Request, Severity, Span};

use crate::answers::{self, Candidate, Conversion, Kind};

/// The `source` of every diagnostic this server publishes.
pub(crate) const SOURCE: &str = "volley";

/// The UTF-16 position of the byte `offset` of `rope` (clamped to the text; an offset
/// inside a character counts as that character's start).
///
/// Lines are the rope's: ropey's `cr_lines` counts `\n`, `\r\n` and a lone `\r`, the rule of
/// `volley_syntax::line_break` that the syntax crate's positions follow; `random_edits.rs`
/// checks after every edit that both agree with LSP's.
pub(crate) fn position(rope: &Rope, offset: usize) -> Position {
    let offset = offset.min(rope.len_bytes());
    let line = rope.byte_to_line(offset);
    let line_start = rope.char_to_utf16_cu(rope.line_to_char(line));
    let character = rope.char_to_utf16_cu(rope.byte_to_char(offset)) - line_start;
    Position::new(line as u32, character as u32)
}

/// The byte offset of a UTF-16 `position` of `rope`. A line past the end gives the end
/// of the text; a character past the end of its line gives the end of the line (before
/// its line break); a position inside a surrogate pair gives the character's start.
pub(crate) fn offset(rope: &Rope, position: Position) -> usize {
    let line = position.line as usize;
    if line >= rope.len_lines() {
        return rope.len_bytes();
    }
    let line_start = rope.line_to_char(line);
    let content = line_content_chars(rope, line);
    let first = rope.char_to_utf16_cu(line_start);
    let last = rope.char_to_utf16_cu(line_start + content);
    let target = (first + position.character as usize).min(last);
    // Inside a surrogate pair, ropey answers the character that holds it.
    rope.char_to_byte(rope.utf16_cu_to_char(target))
}

/// The number of characters of line `line` without its line break.
fn line_content_chars(rope: &Rope, line: usize) -> usize {
    let slice = rope.line(line);
    let mut count = slice.len_chars();
    if count > 0 && slice.char(count - 1) == '\n' {
        count -= 1;
    }
    if count > 0 && slice.char(count - 1) == '\r' {
        count -= 1;
    }
    count
}

/// The LSP range of the byte range `start..end`.
pub(crate) fn range(rope: &Rope, start: usize, end: usize) -> Range {
    Range::new(position(rope, start), position(rope, end))
}

/// The LSP range of a span.
pub(crate) fn span_range(rope: &Rope, span: &Span) -> Range {
    range(rope, span.start, span.end)
}

/// The byte range of an LSP range.
pub(crate) fn byte_range(rope: &Rope, range: Range) -> std::ops::Range<usize> {
    let start = offset(rope, range.start);
    let end = offset(rope, range.end).max(start);
    start..end
}

/// A syntax or semantic diagnostic as an LSP diagnostic: the code is the stable code
/// string of `volley check`, the hint follows the message on its own line.
pub(crate) fn diagnostic(rope: &Rope, diagnostic: &volley_syntax::Diagnostic) -> Diagnostic {
    diagnostic_at(diagnostic, span_range(rope, &diagnostic.span))
}

/// A diagnostic of a chunk's document (offsets and positions counted from the start of
/// `text`, the chunk's text) with its range counted the same way: lines from the chunk's
/// first line, UTF-16 columns (on that first line, from where the chunk starts).
pub(crate) fn relative_diagnostic(text: &str, diagnostic: &volley_syntax::Diagnostic) -> Diagnostic {
    let span = &diagnostic.span;
    let start = relative_position(text, span.start, span.start_position);
    let end = relative_position(text, span.end, span.end_position);
    diagnostic_at(diagnostic, Range::new(start, end))
}

fn relative_position(text: &str, offset: usize, position: volley_syntax::Position) -> Position {
    let offset = offset.min(text.len());
    let line_start = offset.saturating_sub(position.column as usize);
    let column = text.get(line_start..offset).map_or(position.column as usize, |line| line.encode_utf16().count());
    Position::new(position.line, column as u32)
}

/// Moves a range counted from a chunk's start (see [`relative_diagnostic`]) to the
/// chunk's place: it starts on `line`, at UTF-16 column `column`.
pub(crate) fn place_range(range: Range, line: u32, column: u32) -> Range {
    let place = |position: Position| {
        if position.line == 0 {
            Position::new(line, column + position.character)
        } else {
            Position::new(line + position.line, position.character)
        }
    };
    Range::new(place(range.start), place(range.end))
}

fn diagnostic_at(diagnostic: &volley_syntax::Diagnostic, range: Range) -> Diagnostic {
    let message = match &diagnostic.hint {
        Some(hint) => format!("{}\nhint: {hint}", diagnostic.message),
        None => diagnostic.message.clone(),
    };
    Diagnostic {
        range,
        severity: Some(severity(diagnostic.severity)),
        code: Some(NumberOrString::String(diagnostic.code.as_str().to_owned())),
        source: Some(SOURCE.to_owned()),
        message,
        ..Diagnostic::default()
    }
}

/// The configuration error of a file (`volley.jsonc` does not load), reported once at
/// the top of the file with the hint `volley check` prints.
pub(crate) fn config_error(message: &str, hint: &str) -> Diagnostic {
    file_error(message, hint)
}

/// An error of the whole file, at its top, with a hint.
pub(crate) fn file_error(message: &str, hint: &str) -> Diagnostic {
    Diagnostic {
        range: Range::new(Position::new(0, 0), Position::new(0, 0)),
        severity: Some(DiagnosticSeverity::ERROR),
        source: Some(SOURCE.to_owned()),
        message: format!("{message}\nhint: {hint}"),
        ..Diagnostic::default()
    }
}

fn severity(severity: Severity) -> DiagnosticSeverity {
    match severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// The symbol of a request: its name, else `METHOD url`; the range is the block the
/// request owns (from its `###` line to the next: what a cursor anywhere in it sends),
/// the selection its request line.
#[allow(deprecated)] // `DocumentSymbol::deprecated` must be written to build the struct.
pub(crate) fn symbol(rope: &Rope, request: &Request, block: std::ops::Range<usize>) -> DocumentSymbol {
    let line = format!("{} {}", request.method.value, request.url.to_source());
    let (name, detail) = match &request.name {
        Some(name) => (name.value.clone(), Some(line)),
        None => (line, None),
    };
    DocumentSymbol {
        name,
        detail,
        kind: if request.name.is_some() { SymbolKind::FUNCTION } else { SymbolKind::METHOD },
        tags: None,
        deprecated: None,
        range: range(rope, block.start, block.end),
        selection_range: span_range(rope, &request.line_span),
        children: None,
    }
}

/// A folding range over a block's lines, when it has more than one.
pub(crate) fn folding_range(rope: &Rope, span: &Span) -> Option<FoldingRange> {
    let start = position(rope, span.start).line;
    // A block ends after its last line break; fold up to the line that holds its last byte.
    let end = position(rope, span.end.saturating_sub(1).max(span.start)).line;
    (end > start).then(|| FoldingRange {
        start_line: start,
        end_line: end,
        kind: Some(FoldingRangeKind::Region),
        ..FoldingRange::default()
    })
}

/// A completion candidate as an LSP item: its text replaces the candidate's range.
pub(crate) fn completion_item(rope: &Rope, candidate: &Candidate) -> CompletionItem {
    let kind = match candidate.kind {
        Kind::Variable => CompletionItemKind::VARIABLE,
        Kind::Reference => CompletionItemKind::REFERENCE,
        Kind::Function => CompletionItemKind::FUNCTION,
        Kind::Method => CompletionItemKind::METHOD,
        Kind::Keyword => CompletionItemKind::KEYWORD,
        Kind::Property => CompletionItemKind::PROPERTY,
        Kind::Value => CompletionItemKind::VALUE,
        Kind::Module => CompletionItemKind::MODULE,
        Kind::Field => CompletionItemKind::FIELD,
    };
    CompletionItem {
        label: candidate.label.clone(),
        kind: Some(kind),
        detail: candidate.detail.clone(),
        documentation: candidate.documentation.as_ref().map(|value| Documentation::MarkupContent(markdown(value))),
        insert_text_format: Some(if candidate.snippet {
            InsertTextFormat::SNIPPET
        } else {
            InsertTextFormat::PLAIN_TEXT
        }),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit {
            range: range(rope, candidate.replace.start, candidate.replace.end),
            new_text: candidate.text.clone(),
        })),
        ..CompletionItem::default()
    }
}

/// A location of `uri` over the bytes `range` of `rope` (its text).
pub(crate) fn location(uri: &Uri, rope: &Rope, range: std::ops::Range<usize>) -> Location {
    Location::new(uri.clone(), self::range(rope, range.start, range.end))
}

/// The code action of a curl command's conversion in the document `uri`.
pub(crate) fn code_action(uri: &Uri, rope: &Rope, conversion: Conversion) -> CodeActionOrCommand {
    let edit = text_edit(rope, conversion.replace, conversion.text);
    CodeActionOrCommand::CodeAction(CodeAction {
        title: answers::TITLE.to_owned(),
        kind: Some(CodeActionKind::REFACTOR_REWRITE),
        edit: Some(WorkspaceEdit {
            changes: Some(std::collections::HashMap::from([(uri.clone(), vec![edit])])),
            ..WorkspaceEdit::default()
        }),
        ..CodeAction::default()
    })
}

/// An edit replacing the bytes `range` of `rope` with `new_text`.
pub(crate) fn text_edit(rope: &Rope, range: std::ops::Range<usize>, new_text: String) -> TextEdit {
    TextEdit { range: self::range(rope, range.start, range.end), new_text }
}

/// A code lens over the bytes `range` of `rope` (an empty range at 0: the top of the
/// file) that runs `command` with one argument.
pub(crate) fn code_lens(
    rope: &Rope,
    range: std::ops::Range<usize>,
    title: String,
    command: &str,
    argument: serde_json::Value,
) -> CodeLens {
    CodeLens {
        range: self::range(rope, range.start, range.end),
        command: Some(Command { title, command: command.to_owned(), arguments: Some(vec![argument]) }),
        data: None,
    }
}

/// A link over the bytes `range` of `rope` to the file at `target`; `None` when the
/// path makes no URI.
pub(crate) fn document_link(
    rope: &Rope,
    range: std::ops::Range<usize>,
    target: &std::path::Path,
) -> Option<DocumentLink> {
    Some(DocumentLink {
        range: self::range(rope, range.start, range.end),
        target: Some(Uri::from_file_path(target)?),
        tooltip: Some(target.display().to_string()),
        data: None,
    })
}

/// A hover as LSP's: Markdown over its range.
pub(crate) fn hover(rope: &Rope, hover: &answers::Hover) -> Hover {
    Hover {
        contents: HoverContents::Markup(markdown(&hover.markdown)),
        range: Some(range(rope, hover.range.start, hover.range.end)),
    }
}

fn markdown(value: &str) -> MarkupContent {
    MarkupContent { kind: MarkupKind::Markdown, value: value.to_owned() }
}

/// The path of a `file:` URI; `None` for other schemes (unsaved buffers).
pub(crate) fn path(uri: &Uri) -> Option<PathBuf> {
    uri.to_file_path().map(std::borrow::Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character boundary of `text` maps to a position and back (the `\n` of a
    /// `\r\n` is inside the line break, so it comes back as the break's start).
    fn round_trips(text: &str) {
        let rope = Rope::from_str(text);
        for index in text.char_indices().map(|(index, _)| index).chain([text.len()]) {
            let back = offset(&rope, position(&rope, index));
            let expected =
                if text[..index].ends_with('\r') && text[index..].starts_with('\n') { index - 1 } else { index };
            assert_eq!(back, expected, "{text:?} at {index}");
        }
    }

    #[test]
    fn ascii_positions_are_byte_columns() {
        let rope = Rope::from_str("GET /a\nPOST /b\n");
        assert_eq!(position(&rope, 9), Position::new(1, 2));
        assert_eq!(offset(&rope, Position::new(1, 2)), 9);
        assert_eq!(position(&rope, 15), Position::new(2, 0));
    }

    #[test]
    fn multi_byte_text_counts_utf16_units() {
        // é: 2 bytes, 1 unit. 🦀: 4 bytes, 2 units.
        let text = "# café 🦀 x\nGET /\n";
        let rope = Rope::from_str(text);
        let x = text.find('x').unwrap();
        assert_eq!(x, 13);
        assert_eq!(position(&rope, x), Position::new(0, 10));
        assert_eq!(offset(&rope, Position::new(0, 10)), x);
        round_trips(text);
    }

    #[test]
    fn crlf_is_one_line_break() {
        let text = "GET /é\r\nHost: 🦀\r\n\r\nbody";
        let rope = Rope::from_str(text);
        assert_eq!(position(&rope, text.find("Host").unwrap()), Position::new(1, 0));
        assert_eq!(position(&rope, text.find("body").unwrap()), Position::new(3, 0));
        // A column past the end of a line stops before its line break.
        assert_eq!(offset(&rope, Position::new(0, 99)), text.find('\r').unwrap());
        round_trips(text);
        round_trips("a\rb\r\n\r\nc\n");
    }

    #[test]
    fn positions_past_the_end_clamp() {
        let rope = Rope::from_str("ab\n🦀");
        assert_eq!(offset(&rope, Position::new(7, 0)), rope.len_bytes());
        assert_eq!(position(&rope, 999), Position::new(1, 2));
        // Inside the surrogate pair: the character's start.
        assert_eq!(offset(&rope, Position::new(1, 1)), 3);
    }
}
