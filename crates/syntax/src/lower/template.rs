//! Templates and interpolations from `value`, `url`, `path`, `header_name` … nodes.

use tree_sitter::Node;

use super::Lowerer;
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Spanned;
use crate::template::{Arguments, Expression, Interpolation, Part, ResolverCall, Template};

/// How deep interpolations and JSON arrays may nest inside each other. Lowering
/// recurses along the nesting, so the limit keeps hostile input from exhausting the stack.
pub(crate) const MAX_NESTING: usize = 32;

impl Lowerer<'_> {
    /// The template of a node with the spaces at both ends trimmed.
    pub(crate) fn template_trimmed(&mut self, node: Node<'_>) -> Template {
        let (start, end) = self.trimmed(node.start_byte(), node.end_byte());
        self.template_in(node, start, end)
    }

    /// The trimmed template of an optional node; an empty template at `at` without one.
    pub(crate) fn template_or_empty(&mut self, node: Option<Node<'_>>, at: usize) -> Template {
        match node {
            Some(node) => self.template_trimmed(node),
            None => Template::empty(self.span(at, at)),
        }
    }

    /// The template of the bytes `start..end`, which lie inside `node`: every
    /// `variable` node inside the range (at any depth, but not inside another variable)
    /// is an interpolation, the text between them is literal.
    pub(crate) fn template_in(&mut self, node: Node<'_>, start: usize, end: usize) -> Template {
        let mut parts = Vec::new();
        let mut position = start;
        self.collect_interpolations(node, start, end, &mut position, &mut parts, 0);
        self.push_text(&mut parts, position, end);
        Template { span: self.span(start, end), parts }
    }

    fn collect_interpolations(
        &mut self,
        node: Node<'_>,
        start: usize,
        end: usize,
        position: &mut usize,
        parts: &mut Vec<Part>,
        depth: usize,
    ) {
        if depth > MAX_NESTING {
            return;
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.end_byte() <= start || child.start_byte() >= end || child.is_error() {
                continue;
            }
            if child.kind_id() == self.kinds.variable {
                self.push_text(parts, *position, child.start_byte());
                let interpolation = self.interpolation(child);
                parts.push(Part::Interpolation(interpolation));
                *position = child.end_byte();
            } else if child.child_count() > 0 {
                self.collect_interpolations(child, start, end, position, parts, depth + 1);
            }
        }
    }

    fn push_text(&self, parts: &mut Vec<Part>, start: usize, end: usize) {
        if start < end {
            let text = self.slice(start, end).to_owned();
            parts.push(Part::Text(Spanned::new(text, self.span(start, end))));
        }
    }

    /// A `variable` node: `{{ … }}`.
    pub(crate) fn interpolation(&mut self, node: Node<'_>) -> Interpolation {
        let span = self.node_span(node);
        if self.nesting >= MAX_NESTING {
            self.report(
                Diagnostic::new(Code::SyntaxError, span, format!("interpolations nested more than {MAX_NESTING} deep"))
                    .with_hint("pass the inner value through a file variable instead"),
            );
            return Interpolation { span, expression: None, closed: true };
        }
        self.nesting += 1;
        let interpolation = self.interpolation_inner(node, span);
        self.nesting -= 1;
        interpolation
    }

    fn interpolation_inner(&mut self, node: Node<'_>, span: crate::span::Span) -> Interpolation {
        let mut closed = false;
        let mut expression = None;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            let kind = child.kind_id();
            if kind == self.kinds.close_braces {
                closed = true;
            } else if kind == self.kinds.variable_name {
                expression =
                    Some(Expression::Variable(Spanned::new(self.node_text(child).to_owned(), self.node_span(child))));
            } else if kind == self.kinds.resolver {
                expression = Some(Expression::Resolver(self.resolver(child)));
            }
        }
        if !closed && !node.has_error() {
            self.report(
                Diagnostic::new(Code::UnclosedVariable, span, "unclosed `{{`")
                    .with_hint("close the variable with `}}` on the same line"),
            );
        } else if expression.is_none() && !node.has_error() {
            self.report(
                Diagnostic::new(Code::EmptyVariable, span, "empty `{{}}`")
                    .with_hint("write a variable name (`{{host}}`) or a resolver (`{{$uuid()}}`)"),
            );
        }
        Interpolation { span, expression, closed }
    }

    fn resolver(&mut self, node: Node<'_>) -> ResolverCall {
        let mut name = Spanned::new(String::new(), self.node_span(node));
        let mut arguments = Arguments::None;
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let kind = child.kind_id();
            if kind == self.kinds.resolver_name {
                let text = self.node_text(child);
                let span = self.span(child.start_byte() + 1, child.end_byte());
                name = Spanned::new(text.trim_start_matches('$').to_owned(), span);
            } else if kind == self.kinds.arguments {
                arguments = self.arguments(child);
            } else if kind == self.kinds.argument {
                words.push(self.argument(child));
            }
        }
        if !words.is_empty() {
            arguments = Arguments::Words(words);
        }
        ResolverCall { name, arguments }
    }

    fn arguments(&mut self, node: Node<'_>) -> Arguments {
        let mut list = Vec::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let kind = child.kind_id();
            if kind == self.kinds.json_array {
                return Arguments::JsonArray(self.template_in(child, child.start_byte(), child.end_byte()));
            }
            if kind == self.kinds.argument {
                list.push(self.argument(child));
            }
        }
        Arguments::List(list)
    }

    /// One argument: unquoted text trimmed at the argument's ends, quoted strings with
    /// their quotes removed and `\x` escapes resolved, interpolations kept.
    fn argument(&mut self, node: Node<'_>) -> Template {
        let (start, end) = self.trimmed(node.start_byte(), node.end_byte());
        let mut parts = Vec::new();
        let mut position = start;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let kind = child.kind_id();
            if kind == self.kinds.variable {
                self.push_text(&mut parts, position, child.start_byte());
                let interpolation = self.interpolation(child);
                parts.push(Part::Interpolation(interpolation));
                position = child.end_byte();
            } else if kind == self.kinds.string {
                self.push_text(&mut parts, position, child.start_byte());
                self.string(child, &mut parts);
                position = child.end_byte();
            }
        }
        self.push_text(&mut parts, position, end.max(position));
        Template { span: self.span(start, end), parts }
    }

    /// The content of a `"…"` string node, unescaped.
    fn string(&mut self, node: Node<'_>, parts: &mut Vec<Part>) {
        let start = node.start_byte() + 1;
        let text = self.node_text(node);
        let end = if text.len() >= 2 && text.ends_with('"') { node.end_byte() - 1 } else { node.end_byte() };
        let mut position = start;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind_id() == self.kinds.variable {
                self.push_unescaped(parts, position, child.start_byte());
                let interpolation = self.interpolation(child);
                parts.push(Part::Interpolation(interpolation));
                position = child.end_byte();
            }
        }
        self.push_unescaped(parts, position, end.max(position));
    }

    fn push_unescaped(&self, parts: &mut Vec<Part>, start: usize, end: usize) {
        if start >= end {
            return;
        }
        let raw = self.slice(start, end);
        let mut value = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(character) = chars.next() {
            if character == '\\' {
                if let Some(escaped) = chars.next() {
                    value.push(escaped);
                }
            } else {
                value.push(character);
            }
        }
        parts.push(Part::Text(Spanned::new(value, self.span(start, end))));
    }
}
