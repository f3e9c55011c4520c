//! Syntax errors: the ERROR and MISSING nodes of tree-sitter's error recovery become
//! `syntax-error` diagnostics with a hint that fits where they are.

use tree_sitter::Node;

use super::Lowerer;
use super::request::clip;
use crate::diagnostic::{Code, Diagnostic};

/// Reports every ERROR and MISSING node below `root` (not descending into an ERROR:
/// one broken stretch is one diagnostic).
pub(crate) fn collect(lowerer: &mut Lowerer<'_>, root: Node<'_>) {
    // Iterative: error trees can be deep, and recursion would follow their depth.
    let mut cursor = root.walk();
    'nodes: loop {
        let node = cursor.node();
        if node.is_missing() {
            report_missing(lowerer, node);
        } else if node.is_error() {
            report_error(lowerer, node);
        } else if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'nodes;
            }
            if !cursor.goto_parent() {
                break 'nodes;
            }
        }
    }
}

fn report_error(lowerer: &mut Lowerer<'_>, node: Node<'_>) {
    // The error may begin with the line break before the broken line.
    let start = lowerer.skip_newline(node.start_byte()).min(node.end_byte());
    let text = lowerer.slice(start, node.end_byte());
    let first_line = text.lines().find(|line| !line.trim().is_empty()).unwrap_or("").trim();
    let line_end = start + text.find(['\n', '\r']).unwrap_or(text.len());
    let span = lowerer.span(start, line_end.max(start));
    let message = if first_line.is_empty() {
        "unexpected line break".to_owned()
    } else {
        format!("unexpected `{}`", clip(first_line))
    };
    let hint = hint_for(lowerer, node, first_line);
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

fn hint_for(lowerer: &Lowerer<'_>, node: Node<'_>, text: &str) -> Option<&'static str> {
    let kinds = lowerer.kinds;
    // Text left over at the end of a request line.
    // Text left over at the end of a request line: the error follows the request line,
    // as its sibling or after the block that ends with it.
    let mut previous = node.prev_named_sibling();
    while let Some(candidate) = previous {
        if candidate.kind_id() == kinds.request_line {
            if candidate.end_position().row == node.start_position().row {
                return Some(
                    "a request line is `METHOD URL` with an optional `HTTP/1.1`; write spaces in a URL as `%20`",
                );
            }
            break;
        }
        previous = candidate.named_child(candidate.named_child_count().saturating_sub(1) as u32);
    }
    let mut context = node.parent();
    while let Some(parent) = context {
        let kind = parent.kind_id();
        if kind == kinds.request_line {
            return Some("a request line is `METHOD URL` with an optional `HTTP/1.1`; write spaces in a URL as `%20`");
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
        context = parent.parent();
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
