//! Templates outside `.http` files: the content of a `<@ ./file` body, where `{{ }}`
//! are substituted and nothing else is special.
//!
//! The grammar still finds the interpolations: every line of the text is parsed as the
//! value of a directive line (`# @t <line>`), a place where the grammar reads any text up
//! to the end of the line, with `{{ }}` exactly as in a body, and never a separator, a
//! script or a form field. Spans are mapped back to the text.

use super::{Lowerer, Mark, named_children};
use crate::chunk::Chunk;
use crate::diagnostic::{Code, Diagnostic};
use crate::grammar::KINDS;
use crate::listing::Listing;
use crate::span::{LineIndex, Position, Span, Spanned};
use crate::template::{Arguments, Expression, Interpolation, Part, Template};

/// What every line is prefixed with.
const PREFIX: &str = "# @t ";

pub(crate) fn template_text(text: &str) -> (Template, Vec<Diagnostic>) {
    let lines = LineIndex::new(text);
    let mut synthetic = String::with_capacity(text.len() + lines.line_count() * (PREFIX.len() + 1));
    let mut ranges = Vec::with_capacity(lines.line_count());
    // Where each line's text ends in the synthetic text.
    let mut synthetic_ends = Vec::with_capacity(lines.line_count());
    for line in 0..lines.line_count() as u32 {
        let range = lines.line_range(text, line).unwrap_or(text.len()..text.len());
        synthetic_ends.push(synthetic.len() + PREFIX.len() + range.len());
        synthetic.push_str(PREFIX);
        synthetic.push_str(&text[range.clone()]);
        synthetic.push('\n');
        ranges.push(range);
    }
    let chunk = Chunk::parse(synthetic);
    let mut lowerer = Lowerer::for_chunk(&chunk);
    let tree = chunk.tree();
    let root = tree.root_node();
    // The directive of each line, by row (one line of the text, one synthetic line).
    let mut by_row = vec![None; ranges.len()];
    for directive in named_children(root)
        .filter(|node| node.kind_id() == KINDS.block)
        .flat_map(named_children)
        .filter(|node| node.kind_id() == KINDS.directive)
    {
        if let Some(slot) = by_row.get_mut(directive.start_position().row) {
            *slot = Some(directive);
        }
    }
    let map = |span: Span| map_span(span, &ranges, &lines);
    let mut parts = Vec::new();
    for (line, directive) in by_row.into_iter().enumerate() {
        let range = &ranges[line];
        // Where the line's text starts and ends in the synthetic text.
        let text_end = synthetic_ends[line];
        let text_start = text_end - range.len();
        match directive {
            Some(directive) if !range.is_empty() => {
                // The value starts with the space after the prefix's `@t`. When error
                // recovery cut the line otherwise (`{{$x (a = b` can read as a directive
                // named `a`), the whole directive is read: what is not an interpolation
                // is text, so every byte of the line is kept either way.
                let node = lowerer
                    .fields(directive)
                    .value
                    .filter(|value| value.start_byte() + 1 == text_start)
                    .unwrap_or(directive);
                let row = line as u32;
                let start = Mark { offset: text_start, position: Position::new(row, PREFIX.len() as u32) };
                let end = Mark { offset: text_end, position: Position::new(row, (PREFIX.len() + range.len()) as u32) };
                for mut part in lowerer.template_in(node, start, end).parts {
                    map_part(&mut part, &map);
                    parts.push(part);
                }
            }
            // Without a node (only possible for an empty line), the line is text.
            None if !range.is_empty() => {
                parts.push(Part::Text(Spanned::new(text[range.clone()].to_owned(), lines.span(range.clone()))));
            }
            _ => {}
        }
        // The line break of the original text, as written.
        let next = ranges.get(line + 1).map_or(text.len(), |next| next.start);
        if next > range.end {
            parts.push(Part::Text(Spanned::new(text[range.end..next].to_owned(), lines.span(range.end..next))));
        }
    }
    let diagnostics = lowerer
        .diagnostics
        .into_listed()
        .into_iter()
        .filter(|diagnostic| {
            matches!(diagnostic.code, Code::UnclosedVariable | Code::EmptyVariable | Code::SyntaxError)
        })
        .map(|mut diagnostic| {
            diagnostic.span = map(diagnostic.span);
            diagnostic
        })
        .collect();
    (Template { span: lines.span(0..text.len()), parts }, diagnostics)
}

/// Maps a span of the synthetic text (line `i`, column `c`) to the original text
/// (line `i`, column `c - PREFIX.len()`).
fn map_span(span: Span, ranges: &[std::ops::Range<usize>], lines: &LineIndex) -> Span {
    let map_position = |position: Position| -> usize {
        let line = (position.line as usize).min(ranges.len().saturating_sub(1));
        let range = &ranges[line];
        let column = (position.column as usize).saturating_sub(PREFIX.len());
        (range.start + column).min(range.end)
    };
    let start = map_position(span.start_position);
    let end = map_position(span.end_position).max(start);
    lines.span(start..end)
}

fn map_part(part: &mut Part, map: &impl Fn(Span) -> Span) {
    match part {
        Part::Text(text) => text.span = map(text.span),
        Part::Interpolation(interpolation) => map_interpolation(interpolation, map),
    }
}

fn map_interpolation(interpolation: &mut Interpolation, map: &impl Fn(Span) -> Span) {
    interpolation.span = map(interpolation.span);
    match &mut interpolation.expression {
        None => {}
        Some(Expression::Variable(name) | Expression::JavaScript(name)) => name.span = map(name.span),
        Some(Expression::Resolver(call)) => {
            call.name.span = map(call.name.span);
            let templates: Vec<&mut Template> = match &mut call.arguments {
                Arguments::None => Vec::new(),
                Arguments::List(list) | Arguments::Words(list) => list.iter_mut().collect(),
                Arguments::JsonArray(array) => vec![array],
            };
            for template in templates {
                template.span = map(template.span);
                for part in &mut template.parts {
                    map_part(part, map);
                }
            }
        }
    }
}

impl<'a> Lowerer<'a> {
    /// A lowerer for a chunk placed at the start of a text.
    pub(crate) fn for_chunk(chunk: &'a Chunk) -> Self {
        Self::placed(chunk, chunk.start, chunk.start_line, chunk.start_column)
    }

    /// A lowerer whose offsets and positions count from the start of the chunk, as if
    /// its text were a file of its own.
    pub(crate) fn relative(chunk: &'a Chunk) -> Self {
        Self::placed(chunk, 0, 0, 0)
    }

    pub(crate) fn placed(chunk: &'a Chunk, base: usize, base_line: u32, base_column: u32) -> Self {
        Lowerer {
            text: &chunk.text,
            lines: &chunk.lines,
            base,
            base_line,
            base_column,
            points_agree: crate::chunk::points_agree(&chunk.text),
            kinds: &KINDS,
            diagnostics: Listing::new(),
            variables: Vec::new(),
            request_count: 0,
            nesting: 0,
            parts: Vec::new(),
            implicit: Vec::new(),
            block_end: None,
            closing: super::template::ClosingOnLine::default(),
            template_end: 0,
            fragments: Vec::new(),
        }
    }
}
