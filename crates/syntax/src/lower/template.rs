//! Templates and interpolations from `value`, `url`, `path`, `header_name` … nodes.

use tree_sitter::Node;

use super::{Lowerer, Mark, children, named_children};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Spanned;
use crate::template::{Arguments, Expression, Interpolation, Part, ResolverCall, Template};

/// How deep interpolations and JSON arrays may nest inside each other. Lowering
/// recurses along the nesting, so the limit keeps hostile input from exhausting the stack.
pub(crate) const MAX_NESTING: usize = 32;

/// The last `}}` of the rest of a line, from `from` to `line_end`. A line of many unclosed
/// `{{` asks the question once per `{{`: searched once, it is answered for all of them,
/// so the cost stays linear in the line.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClosingOnLine {
    from: usize,
    line_end: usize,
    last_close: Option<usize>,
}

impl ClosingOnLine {
    fn covers(self, offset: usize) -> bool {
        self.from <= offset && offset <= self.line_end && self.line_end > self.from
    }
}

impl Lowerer<'_> {
    /// The template of a node with the spaces at both ends trimmed.
    pub(crate) fn template_trimmed(&mut self, node: Node<'_>) -> Template {
        let (start, end) = self.trimmed_marks(Self::start_mark(node), Self::end_mark(node));
        self.template_in(node, start, end)
    }

    /// The trimmed template of an optional node; an empty template at `at` without one.
    pub(crate) fn template_or_empty(&mut self, node: Option<Node<'_>>, at: usize) -> Template {
        match node {
            Some(node) => self.template_trimmed(node),
            None => Template::empty(self.span(at, at)),
        }
    }

    /// The template of `start..end`, which lies inside `node`: every `variable` node
    /// inside the range (at any depth, but not inside another variable) is an
    /// interpolation, the text between them is literal.
    pub(crate) fn template_in(&mut self, node: Node<'_>, start: Mark, end: Mark) -> Template {
        self.template_end = end.offset;
        // Every `variable` node starts with `{{`: a subtree whose text has none holds
        // nothing to look for (most header values and many bodies), and its template is
        // one text part, or none.
        if !self.may_hold_variable(node) {
            let mut parts = Vec::with_capacity(usize::from(start.offset < end.offset));
            self.push_text(&mut parts, start, end);
            return Template { span: self.mark_span(start, end), parts };
        }
        let mut parts = self.take_parts();
        let mut position = start;
        self.collect_interpolations(node, start.offset, end.offset, &mut position, &mut parts, 0);
        self.push_text(&mut parts, position, end);
        Template { span: self.mark_span(start, end), parts: self.keep_parts(parts) }
    }

    /// An empty buffer to collect the parts of a template in: the lowerer's, whose
    /// capacity outlives each template, unless a template being built holds it.
    fn take_parts(&mut self) -> Vec<Part> {
        std::mem::take(&mut self.parts)
    }

    /// The parts collected in `buffer`, in a vector of exactly their number; the buffer
    /// goes back to the lowerer. Templates mostly have one or two parts: grown by
    /// `push`, their vectors would have room for four: that spare room was 45 % of the
    /// typed model's memory.
    fn keep_parts(&mut self, mut buffer: Vec<Part>) -> Vec<Part> {
        // Not `mem::take`: that would hand over the buffer with its spare room.
        #[allow(clippy::drain_collect)]
        let parts = buffer.drain(..).collect();
        if buffer.capacity() > self.parts.capacity() {
            self.parts = buffer;
        }
        parts
    }

    /// The template of `start..end` when its interpolations are `variables`, `variable`
    /// nodes in order (what [`Lowerer::template_in`] finds, for a caller that has them).
    pub(crate) fn template_of_variables(&mut self, variables: &[Node<'_>], start: Mark, end: Mark) -> Template {
        self.template_end = end.offset;
        let mut parts = self.take_parts();
        let mut position = start;
        for &variable in variables {
            if variable.end_byte() <= start.offset
                || variable.start_byte() >= end.offset
                || variable.is_error()
                || variable.start_byte() < position.offset
            {
                continue;
            }
            self.push_text(&mut parts, position, Self::start_mark(variable));
            let interpolation = self.interpolation(variable);
            position = self.after(variable, &interpolation);
            parts.push(Part::Interpolation(interpolation));
        }
        self.push_text(&mut parts, position, end);
        Template { span: self.mark_span(start, end), parts: self.keep_parts(parts) }
    }

    fn collect_interpolations(
        &mut self,
        node: Node<'_>,
        start: usize,
        end: usize,
        position: &mut Mark,
        parts: &mut Vec<Part>,
        depth: usize,
    ) {
        if depth > MAX_NESTING {
            return;
        }
        for child in named_children(node) {
            if child.end_byte() <= start || child.start_byte() >= end || child.is_error() {
                continue;
            }
            if child.kind_id() == self.kinds.variable {
                // Inside an httpyac expression already taken.
                if child.start_byte() < position.offset {
                    continue;
                }
                self.push_text(parts, *position, Self::start_mark(child));
                let interpolation = self.interpolation(child);
                *position = self.after(child, &interpolation);
                parts.push(Part::Interpolation(interpolation));
            } else if child.child_count() > 0 && self.may_hold_variable(child) {
                self.collect_interpolations(child, start, end, position, parts, depth + 1);
            }
        }
    }

    /// Whether a node's text has a `{{`, which every `variable` node starts with.
    fn may_hold_variable(&self, node: Node<'_>) -> bool {
        let text = self.node_text(node).as_bytes();
        let mut from = 0;
        while let Some(found) = text.get(from..).and_then(|rest| rest.iter().position(|&byte| byte == b'{')) {
            if text.get(from + found + 1) == Some(&b'{') {
                return true;
            }
            from += found + 1;
        }
        false
    }

    /// Where the text after an interpolation starts: after its node, or after the `}}`
    /// of an httpyac expression, which the grammar leaves as text.
    fn after(&self, node: Node<'_>, interpolation: &Interpolation) -> Mark {
        let end = Self::end_mark(node);
        let taken = interpolation.span.end.saturating_sub(self.base);
        if matches!(interpolation.expression, Some(Expression::JavaScript(_))) && taken > end.offset {
            end.moved_to(taken)
        } else {
            end
        }
    }

    fn push_text(&self, parts: &mut Vec<Part>, start: Mark, end: Mark) {
        if start.offset < end.offset {
            let text = self.slice(start.offset, end.offset).to_owned();
            parts.push(Part::Text(Spanned::new(text, self.mark_span(start, end))));
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
        if node.has_error() {
            for child in children(node) {
                if child.kind_id() == self.kinds.close_braces {
                    closed = true;
                } else if let Some(found) = self.expression(child) {
                    expression = Some(found);
                }
            }
        } else {
            // `{{`, at most one named child, then `}}` when closed: read by index, without
            // a cursor (most interpolations are this simple).
            let count = node.child_count();
            closed = count > 1 && node.child(count - 1).is_some_and(|last| last.kind_id() == self.kinds.close_braces);
            expression = node.named_child(0).and_then(|child| self.expression(child));
        }
        if !closed && !node.has_error() && self.closed_later_on_the_line(node) {
            if let Some(javascript) = self.javascript(node) {
                return javascript;
            }
            self.report(
                Diagnostic::new(
                    Code::UnsupportedExpression,
                    span,
                    "JavaScript expressions in `{{ }}` (httpyac) are not supported",
                )
                .with_hint(
                    "Volley substitutes a variable name (`{{user}}`), a request variable \
                     (`{{login.response.body.$.id}}`) or a resolver (`{{$uuid()}}`) only",
                ),
            );
        } else if !closed && !node.has_error() {
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

    /// httpyac's JavaScript expression that an unclosed `{{` starts: up to the first
    /// `}}` after it on its line, which must be inside the template being built (else
    /// the expression is reported as not supported).
    fn javascript(&mut self, node: Node<'_>) -> Option<Interpolation> {
        if self.nesting > 1 {
            return None;
        }
        let open = node.start_byte();
        let rest = &self.text.as_bytes()[open + 2..];
        let line_end = open + 2 + memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
        let close = open + 2 + memchr::memmem::find(&self.text.as_bytes()[open + 2..line_end], b"}}")?;
        if close + 2 > self.template_end {
            return None;
        }
        let inner = &self.text[open + 2..close];
        let code = inner.trim();
        if code.is_empty() {
            return None;
        }
        let code_start = open + 2 + (inner.len() - inner.trim_start().len());
        let code = Spanned::new(code.to_owned(), self.span(code_start, code_start + code.len()));
        Some(Interpolation {
            span: self.span(open, close + 2),
            expression: Some(Expression::JavaScript(code)),
            closed: true,
        })
    }

    /// `true` when `}}` follows an unclosed `{{` later on its line: what is between is
    /// not a name or a resolver call, but an expression of another tool
    /// (`{{user.replace(' ', '+')}}`, `{{ $global.token }}`).
    fn closed_later_on_the_line(&mut self, node: Node<'_>) -> bool {
        let from = node.end_byte();
        let searched = self.closing;
        if searched.covers(from) {
            return searched.last_close.is_some_and(|close| close >= from);
        }
        let rest = &self.text.as_bytes()[from..];
        let line_end = from + memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
        let last_close = memchr::memmem::rfind(&self.text.as_bytes()[from..line_end], b"}}").map(|at| from + at);
        self.closing = ClosingOnLine { from, line_end, last_close };
        last_close.is_some()
    }

    /// The expression a `variable_name` or `resolver` node holds.
    fn expression(&mut self, node: Node<'_>) -> Option<Expression> {
        let kind = node.kind_id();
        if kind == self.kinds.variable_name {
            let text = self.node_text(node);
            let spanned = Spanned::new(text.to_owned(), self.node_span(node));
            // httpyac: what is not a variable path is a JavaScript expression.
            if is_javascript(text) {
                return Some(Expression::JavaScript(spanned));
            }
            Some(Expression::Variable(spanned))
        } else if kind == self.kinds.resolver {
            Some(Expression::Resolver(self.resolver(node)))
        } else {
            None
        }
    }

    fn resolver(&mut self, node: Node<'_>) -> ResolverCall {
        let mut name = Spanned::new(String::new(), self.node_span(node));
        let mut arguments = Arguments::None;
        let mut words = Vec::new();
        for child in named_children(node) {
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
        for child in named_children(node) {
            let kind = child.kind_id();
            if kind == self.kinds.json_array {
                return Arguments::JsonArray(self.template_in(child, Self::start_mark(child), Self::end_mark(child)));
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
        let (start, end) = self.trimmed_marks(Self::start_mark(node), Self::end_mark(node));
        let mut parts = self.take_parts();
        let mut position = start;
        for child in named_children(node) {
            let kind = child.kind_id();
            if kind == self.kinds.variable {
                self.push_text(&mut parts, position, Self::start_mark(child));
                let interpolation = self.interpolation(child);
                parts.push(Part::Interpolation(interpolation));
                position = Self::end_mark(child);
            } else if kind == self.kinds.string {
                self.push_text(&mut parts, position, Self::start_mark(child));
                self.string(child, &mut parts);
                position = Self::end_mark(child);
            }
        }
        if end.offset > position.offset {
            self.push_text(&mut parts, position, end);
        }
        Template { span: self.mark_span(start, end), parts: self.keep_parts(parts) }
    }

    /// The content of a `"…"` string node, unescaped.
    fn string(&mut self, node: Node<'_>, parts: &mut Vec<Part>) {
        let node_start = Self::start_mark(node);
        let start = node_start.moved_to(node_start.offset + 1);
        let text = self.node_text(node);
        let node_end = Self::end_mark(node);
        let end =
            if text.len() >= 2 && text.ends_with('"') { node_end.moved_to(node_end.offset - 1) } else { node_end };
        let mut position = start;
        for child in named_children(node) {
            if child.kind_id() == self.kinds.variable {
                self.push_unescaped(parts, position, Self::start_mark(child));
                let interpolation = self.interpolation(child);
                parts.push(Part::Interpolation(interpolation));
                position = Self::end_mark(child);
            }
        }
        if end.offset > position.offset {
            self.push_unescaped(parts, position, end);
        }
    }

    fn push_unescaped(&self, parts: &mut Vec<Part>, start: Mark, end: Mark) {
        if start.offset >= end.offset {
            return;
        }
        let raw = self.slice(start.offset, end.offset);
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
        parts.push(Part::Text(Spanned::new(value, self.mark_span(start, end))));
    }
}

/// Whether the text of `{{ }}` is JavaScript (httpyac) rather than a variable path: it
/// has a character no variable name or index has (`(`, a space, an operator, a quote),
/// and is not a request's response path (`{{login.response.body.$['a b']}}`).
pub(crate) fn is_javascript(text: &str) -> bool {
    let segments = crate::variable_path_segments(text);
    if segments.get(1) == Some(&"response") {
        return false;
    }
    text.chars()
        .any(|character| !(character.is_alphanumeric() || matches!(character, '_' | '.' | '$' | '-' | ':' | '[' | ']')))
}
