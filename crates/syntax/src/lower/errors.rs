//! Syntax errors: the ERROR and MISSING nodes of tree-sitter's error recovery, and the
//! grammar's junk lines, become `syntax-error` diagnostics with a hint that fits where
//! they are.

use tree_sitter::Node;

use super::Lowerer;
use super::request::clip;
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;

/// Reports the ERROR and MISSING nodes below `root` (not descending into an ERROR: one
/// broken stretch is one diagnostic). Once [`crate::MAX_LISTED`] are listed, the others
/// are only counted: their hints are not worked out.
pub(crate) fn collect(lowerer: &mut Lowerer<'_>, root: Node<'_>) {
    // Iterative: error trees can be deep, and recursion would follow their depth. The
    // walk keeps what the hints need (the ancestors, and the named node before each
    // error): tree-sitter finds a node's parent or previous sibling by descending from
    // the root, so asking it for every error would cost time in proportion to the size
    // of the tree, and a text with errors on every line would take minutes.
    let mut cursor = root.walk();
    let mut ancestors: Vec<Node<'_>> = Vec::new();
    // For each depth, the last named node the walk has passed there.
    let mut passed: Vec<Option<Node<'_>>> = vec![None];
    'nodes: loop {
        let node = cursor.node();
        if (node.is_missing() || node.is_error()) && lowerer.diagnostics.is_full(Code::SyntaxError) {
            let span = lowerer.node_span(node);
            lowerer
                .diagnostics
                .skip(Code::SyntaxError, span, || Diagnostic::new(Code::SyntaxError, span, "syntax error"));
        } else if node.is_missing() {
            report_missing(lowerer, node);
        } else if node.is_error() {
            let previous = passed.last().copied().flatten();
            report_error(lowerer, node, &Context { ancestors: &ancestors, previous });
        } else if node.has_error() && cursor.goto_first_child() {
            ancestors.push(node);
            passed.push(None);
            continue;
        }
        let mut current = node;
        loop {
            if current.is_named()
                && let Some(last) = passed.last_mut()
            {
                *last = Some(current);
            }
            if cursor.goto_next_sibling() {
                continue 'nodes;
            }
            if !cursor.goto_parent() {
                break 'nodes;
            }
            passed.pop();
            let Some(parent) = ancestors.pop() else { break 'nodes };
            current = parent;
        }
    }
}

/// Where an ERROR node is: its ancestors (the root first) and the named node before it
/// on its level.
struct Context<'a, 'tree> {
    ancestors: &'a [Node<'tree>],
    previous: Option<Node<'tree>>,
}

impl Lowerer<'_> {
    /// A line nothing can start (the grammar's `junk`): a syntax error, which names the
    /// character that starts it.
    pub(crate) fn junk(&mut self, node: Node<'_>) {
        let text = self.node_text(node);
        self.syntax_error(self.node_span(node), || {
            let first = text.trim_start_matches([' ', '\t']).chars().next().unwrap_or(' ');
            if first == '@' {
                (format!("unexpected `{}`", clip(text.trim())), "file variables are written `@name = value`")
            } else {
                let name = match first {
                    '\u{c}' => "a form feed",
                    '\u{b}' => "a vertical tab",
                    _ => "a space character",
                };
                (
                    format!("a line cannot start with {name} (U+{:04X})", u32::from(first)),
                    "delete it; a blank line holds nothing but spaces and tabs",
                )
            }
        });
    }

    /// Reports a `syntax-error` at `span`; its message and hint are worked out only
    /// while the code has room in the listing (a text of junk lines has millions).
    pub(super) fn syntax_error(&mut self, span: Span, say: impl FnOnce() -> (String, &'static str)) {
        if self.diagnostics.is_full(Code::SyntaxError) {
            self.diagnostics.skip(Code::SyntaxError, span, || Diagnostic::new(Code::SyntaxError, span, "syntax error"));
        } else {
            let (message, hint) = say();
            self.report(Diagnostic::new(Code::SyntaxError, span, message).with_hint(hint));
        }
    }
}

fn report_error(lowerer: &mut Lowerer<'_>, node: Node<'_>, context: &Context<'_, '_>) {
    // The error may begin with the line break before the broken line.
    let start = lowerer.skip_newline(node.start_byte()).min(node.end_byte());
    let text = lowerer.slice(start, node.end_byte());
    let first_line = crate::line_break::lines(text).find(|line| !line.trim().is_empty()).unwrap_or("").trim();
    let line_end = start + text.find(['\n', '\r']).unwrap_or(text.len());
    let span = lowerer.span(start, line_end.max(start));
    let message = if first_line.is_empty() {
        "unexpected line break".to_owned()
    } else {
        format!("unexpected `{}`", clip(first_line))
    };
    let hint = hint_for(lowerer, node, context, first_line);
    let mut diagnostic = Diagnostic::new(Code::SyntaxError, span, message);
    if let Some(hint) = hint {
        diagnostic = diagnostic.with_hint(hint);
    }
    lowerer.report(diagnostic);
}

fn report_missing(lowerer: &mut Lowerer<'_>, node: Node<'_>) {
    let span = lowerer.node_span(node);
    let what = node.kind();
    lowerer.report(
        Diagnostic::new(Code::SyntaxError, span, format!("missing `{what}`")).with_hint(format!("add `{what}` here")),
    );
}

fn hint_for(lowerer: &Lowerer<'_>, node: Node<'_>, context: &Context<'_, '_>, text: &str) -> Option<&'static str> {
    let kinds = lowerer.kinds;
    // Text left over at the end of a request line: the error follows the request line,
    // as its sibling or after the block that ends with it. Only a node that ends on the
    // error's line can hold such a request line last: lines of the line index, since
    // tree-sitter's rows count `\n` only and put the line after a lone `\r` on the row
    // of the request line.
    let line = lowerer.line_of(node.start_byte());
    let mut previous = context.previous;
    while let Some(candidate) = previous {
        if lowerer.line_of(candidate.end_byte()) != line {
            break;
        }
        if candidate.kind_id() == kinds.request_line {
            return Some("a request line is `METHOD URL` with an optional `HTTP/1.1` at its end");
        }
        // `@name value`: the `@` alone is the declaration, the rest is the error.
        if candidate.kind_id() == kinds.variable_declaration {
            return Some("file variables are written `@name = value`");
        }
        previous = candidate.named_child(candidate.named_child_count().saturating_sub(1) as u32);
    }
    for parent in context.ancestors.iter().rev() {
        let kind = parent.kind_id();
        if kind == kinds.request_line {
            return Some("a request line is `METHOD URL` with an optional `HTTP/1.1` at its end");
        }
        if kind == kinds.variable || kind == kinds.resolver || kind == kinds.arguments {
            return Some("write variables as `{{name}}` and resolvers as `{{$name(arg, arg)}}`");
        }
        if kind == kinds.variable_declaration {
            return Some("file variables are written `@name = value`");
        }
        if kind == kinds.request || kind == kinds.block {
            break;
        }
    }
    if text.starts_with('@') {
        return Some("file variables are written `@name = value`");
    }
    if text.contains("{{") {
        return Some("write variables as `{{name}}` and resolvers as `{{$name(arg, arg)}}`");
    }
    if text.split_whitespace().count() > 3 {
        return Some("comment lines start with `#` or `//`");
    }
    None
}
