//! Bodies: which of the forms (inline, file, form fields) a body is, and the scripts
//! that follow it.

use tree_sitter::Node;

use super::{Lowerer, Mark, named_children};
use crate::diagnostic::{Code, Diagnostic};
use crate::document::{Body, BodyPart, Directive, FileBody, FormBody, FormField, FormValue, Header, PartsBody, Script};
use crate::span::{Position, Spanned};
use crate::template::Template;

/// The request's `Content-Type`, as far as it is known before substitution.
pub(crate) enum ContentType {
    Absent,
    Literal(String),
    Templated,
}

impl ContentType {
    pub(crate) fn of(headers: &[Header]) -> Self {
        match headers.iter().rev().find(|header| header.is_named("content-type")) {
            None => ContentType::Absent,
            Some(header) => match header.value.as_literal() {
                Some(value) => ContentType::Literal(value.to_ascii_lowercase()),
                None => ContentType::Templated,
            },
        }
    }

    /// Form fields are read as such only without a `Content-Type` or with a form type.
    fn allows_form(&self) -> bool {
        match self {
            ContentType::Absent => true,
            ContentType::Literal(value) => {
                value.starts_with("application/x-www-form-urlencoded") || value.starts_with("multipart/form-data")
            }
            ContentType::Templated => false,
        }
    }

    /// A body starting with `query` or `mutation` is GraphQL only without a
    /// `Content-Type` or with a JSON one (what a GraphQL request is sent as).
    pub(crate) fn allows_graphql(&self) -> bool {
        match self {
            ContentType::Absent => true,
            ContentType::Literal(value) => value.starts_with("application/json"),
            ContentType::Templated => false,
        }
    }

    fn is_multipart(&self) -> bool {
        matches!(self, ContentType::Literal(value) if value.starts_with("multipart/form-data"))
    }
}

/// How one line of a body reads.
#[derive(Clone, Copy)]
pub(super) enum Line<'tree> {
    Blank,
    Text,
    File(Node<'tree>),
    Field(Node<'tree>),
    Handler(Node<'tree>),
    /// httpyac's `?? …`.
    Assertion(Node<'tree>),
    /// `HTTP/1.1 200 OK`: a saved response starts here.
    Response,
    /// Text that reads as a request line (`GET https://…`).
    Request,
}

impl Line<'_> {
    /// `true` for the lines that end the body's content.
    fn ends_content(self) -> bool {
        matches!(self, Line::Handler(_) | Line::Assertion(_) | Line::Response | Line::Request)
    }
}

impl Lowerer<'_> {
    /// Lowers a `body` node. Scripts, redirections and httpyac assertions found after
    /// the body are added to `scripts` and `assertions`.
    pub(crate) fn body(
        &mut self,
        node: Node<'_>,
        content_type: &ContentType,
        graphql: bool,
        scripts: &mut Vec<Script>,
        assertions: &mut Vec<Directive>,
        split: &mut Option<usize>,
    ) -> Body {
        let kinds = self.kinds;
        let end = node.end_byte();
        let first_line = self.skip_newline(node.start_byte()).min(end);

        // Named children in order; the hidden text tokens are not nodes, so lines are
        // found in the text and matched to the node that starts them, if any.
        let children: Vec<Node<'_>> = named_children(node).collect();
        if !graphql
            && children.iter().all(|child| child.kind_id() == kinds.variable)
            && !super::implicit::has_request_line(&self.text.as_bytes()[first_line..end])
        {
            return self.text_body(node, &children, first_line, end);
        }
        let mut next_child = 0;
        let mut lines: Vec<(usize, usize, Line<'_>)> = Vec::new();
        let mut position = first_line;
        let bytes = self.text.as_bytes();
        while position <= end {
            while next_child < children.len() && children[next_child].start_byte() < position {
                next_child += 1;
            }
            let starting = children.get(next_child).filter(|child| child.start_byte() == position);
            let kind = starting.map(Node::kind_id);
            let line_end = match starting {
                // A script may run over several lines.
                Some(child) if kind == Some(kinds.script) || kind == Some(kinds.js_block) => {
                    line_end_from(bytes, child.end_byte(), end)
                }
                _ => line_end_from(bytes, position, end),
            };
            let line = match (starting, kind) {
                (Some(child), Some(kind)) if kind == kinds.file_reference => Line::File(*child),
                (Some(child), Some(kind)) if kind == kinds.form_field => Line::Field(*child),
                (Some(child), Some(kind))
                    if kind == kinds.script
                        || kind == kinds.unclosed_script
                        || kind == kinds.output_redirect
                        || kind == kinds.response_reference
                        || kind == kinds.js_block
                        || kind == kinds.script_file =>
                {
                    Line::Handler(*child)
                }
                (Some(child), Some(kind)) if kind == kinds.assertion => Line::Assertion(*child),
                (Some(_), Some(kind)) if kind == kinds.response_line => Line::Response,
                _ if self.slice(position, line_end).trim().is_empty() => Line::Blank,
                _ if super::implicit::is_request_line(self.slice(position, line_end)) => Line::Request,
                _ => Line::Text,
            };
            lines.push((position, line_end, line));
            if line_end >= end {
                break;
            }
            position = self.skip_newline(line_end);
        }

        // The body is what comes before the first handler, assertion, saved response or
        // request line, without trailing blank lines.
        let handler_at = lines.iter().position(|(_, _, line)| line.ends_content());
        let content = &lines[..handler_at.unwrap_or(lines.len())];
        let content_end = content.iter().rposition(|(_, _, line)| !matches!(line, Line::Blank));
        let body = match content_end {
            None => Body::None,
            Some(last) => {
                // The body starts on the line after the blank line; every content line
                // is one row (positions are only used when tree-sitter's rows agree).
                let first_row = node.start_position().row as u32 + 1;
                let start = Mark { offset: first_line, position: Position::new(first_row, 0) };
                let (last_start, last_end, _) = content[last];
                let end = Mark {
                    offset: last_end,
                    position: Position::new(first_row + last as u32, (last_end - last_start) as u32),
                };
                self.body_of(node, start, end, &content[..=last], content_type, graphql)
            }
        };

        if let Some(handler_at) = handler_at {
            *split = self.after_body(&lines[handler_at..], scripts, assertions);
        }
        body
    }

    /// The lines after the body: handlers and assertions belong to the request; a saved
    /// response ends everything; other text is reported. Returns where a request line
    /// starts the next request.
    fn after_body(
        &mut self,
        lines: &[(usize, usize, Line<'_>)],
        scripts: &mut Vec<Script>,
        assertions: &mut Vec<Directive>,
    ) -> Option<usize> {
        let mut reported_text = false;
        for (start, line_end, line) in lines {
            match line {
                Line::Handler(child) => scripts.push(self.handler(*child)),
                Line::Assertion(child) => assertions.push(self.assertion(*child)),
                Line::Blank => {}
                Line::Response => {
                    self.report(
                        Diagnostic::new(
                            Code::SavedResponse,
                            self.span(*start, *line_end),
                            "a saved response is not part of the request",
                        )
                        .with_hint("the lines from here to the next `###` are ignored; they are never sent"),
                    );
                    return None;
                }
                Line::Request => return Some(*start),
                _ if !reported_text => {
                    reported_text = true;
                    self.report(
                        Diagnostic::new(
                            Code::TextAfterHandler,
                            self.span(*start, *line_end),
                            "text after a response handler or an assertion is not part of the body",
                        )
                        .with_hint("move the text above the handler, or start a new request with `###`"),
                    );
                }
                _ => {}
            }
        }
        None
    }

    /// A body with no line of its own kind (file, field, script): text up to its last
    /// line that is not blank, found without splitting it into lines. The same body as
    /// the line by line reading of [`Lowerer::body`] gives.
    fn text_body(&mut self, node: Node<'_>, variables: &[Node<'_>], first_line: usize, end: usize) -> Body {
        let content = self.slice(first_line, end).trim_end();
        if content.trim_start().is_empty() {
            return Body::None;
        }
        let bytes = self.text.as_bytes();
        let last_char = first_line + content.len();
        let last_end = line_end_from(bytes, last_char, end);
        let last_start =
            memchr::memrchr2(b'\n', b'\r', &bytes[first_line..last_char]).map_or(first_line, |at| first_line + at + 1);
        let first_row = node.start_position().row as u32 + 1;
        let start = Mark { offset: first_line, position: Position::new(first_row, 0) };
        let end = Mark {
            offset: last_end,
            position: Position::new(
                first_row + crate::span::line_breaks(&bytes[first_line..last_start]).0,
                (last_end - last_start) as u32,
            ),
        };
        Body::Inline(self.template_of_variables(variables, start, end))
    }

    fn body_of(
        &mut self,
        node: Node<'_>,
        start: Mark,
        end: Mark,
        lines: &[(usize, usize, Line<'_>)],
        content_type: &ContentType,
        graphql: bool,
    ) -> Body {
        let filled: Vec<&(usize, usize, Line<'_>)> =
            lines.iter().filter(|(_, _, line)| !matches!(line, Line::Blank)).collect();

        if let [(_, _, Line::File(reference))] = filled.as_slice() {
            return Body::File(self.file_body(*reference));
        }
        if graphql {
            return Body::GraphQl(self.graphql_body(node, start, end, lines));
        }
        if filled.iter().any(|(_, _, line)| matches!(line, Line::File(_))) {
            return Body::Parts(self.parts_body(node, start, end, lines));
        }
        let all_fields = filled.iter().all(|(_, _, line)| matches!(line, Line::Field(_)));
        if all_fields && content_type.allows_form() {
            let fields: Vec<Node<'_>> = filled
                .iter()
                .filter_map(|(_, _, line)| match line {
                    Line::Field(field) => Some(*field),
                    _ => None,
                })
                .collect();
            if !fields.iter().any(|field| self.is_query_string_line(*field)) {
                let fields: Vec<FormField> = fields.into_iter().map(|field| self.form_field(field)).collect();
                let multipart = content_type.is_multipart()
                    || fields.iter().any(|field| matches!(field.value, FormValue::File { .. }));
                let first = filled.first().map_or(start.offset, |(line_start, _, _)| *line_start);
                return Body::Form(FormBody { span: self.span(first, end.offset), multipart, fields });
            }
        }
        Body::Inline(self.template_in(node, start, end))
    }

    /// Text with `< ./file` lines among it: text, file, text … (the line breaks around a
    /// file line stay with the text).
    fn parts_body(&mut self, node: Node<'_>, start: Mark, end: Mark, lines: &[(usize, usize, Line<'_>)]) -> PartsBody {
        let mut parts = Vec::new();
        let mut text_start = start;
        for (row, (line_start, line_end, line)) in lines.iter().enumerate() {
            let Line::File(reference) = line else { continue };
            let row = start.position.line + row as u32;
            let line_mark = Mark { offset: *line_start, position: Position::new(row, 0) };
            if text_start.offset < *line_start {
                parts.push(BodyPart::Text(self.template_in(node, text_start, line_mark)));
            }
            parts.push(BodyPart::File(self.file_body(*reference)));
            text_start = Mark { offset: *line_end, position: Position::new(row, (line_end - line_start) as u32) };
        }
        if text_start.offset < end.offset {
            parts.push(BodyPart::Text(self.template_in(node, text_start, end)));
        }
        PartsBody { span: self.mark_span(start, end), parts }
    }

    /// `a=1&b=2`: written without spaces around `=` and with `&` in the value, the line
    /// is an already-encoded query string, so the body stays raw.
    fn is_query_string_line(&self, field: Node<'_>) -> bool {
        let Some(name) = field.child_by_field_id(self.kinds.field_name) else {
            return false;
        };
        let name_text = self.node_text(name);
        let compact = !name_text.contains([' ', '\t']);
        compact && self.node_text(field).contains('&')
    }

    fn file_body(&mut self, node: Node<'_>) -> FileBody {
        let span = self.node_span(node);
        let mut substitute = false;
        let mut encoding = None;
        if let Some(marker) = node.child(0).filter(|marker| marker.kind_id() == self.kinds.file_reference_substitute) {
            substitute = true;
            let name = self.node_text(marker).trim_end().trim_start_matches("<@");
            if !name.is_empty() {
                encoding = Some(name.to_owned());
            }
        }
        let path = self.template_or_empty(node.child_by_field_id(self.kinds.field_path), node.end_byte());
        FileBody { span, path, substitute, encoding }
    }

    fn form_field(&mut self, node: Node<'_>) -> FormField {
        let span = self.node_span(node);
        let (name_start, name_end) =
            node.child_by_field_id(self.kinds.field_name).map_or((span.start, span.start), |name| {
                let text = self.node_text(name);
                let before_equals = text.find('=').unwrap_or(text.len());
                let (start, end) = self.trimmed(name.start_byte(), name.start_byte() + before_equals);
                (start, end)
            });
        let name = Spanned::new(self.slice(name_start, name_end).to_owned(), self.span(name_start, name_end));
        let value = if let Some(file) = node.child_by_field_id(self.kinds.field_file) {
            let path = self.template_or_empty(file.child_by_field_id(self.kinds.field_path), file.end_byte());
            let filename = file
                .child_by_field_id(self.kinds.field_filename)
                .map(|filename| self.template_trimmed(filename))
                .filter(|filename| !filename.is_empty());
            FormValue::File { path, filename }
        } else if let Some(value) = node.child_by_field_id(self.kinds.field_value) {
            FormValue::Text(self.template_trimmed(value))
        } else {
            FormValue::Text(Template::empty(self.span(node.end_byte(), node.end_byte())))
        };
        FormField { span, name, value }
    }
}

/// The end of the line starting at `start` (before its line break), at most `end`.
pub(super) fn line_end_from(bytes: &[u8], start: usize, end: usize) -> usize {
    let limit = end.min(bytes.len());
    memchr::memchr2(b'\n', b'\r', &bytes[start.min(limit)..limit]).map_or(limit, |offset| start + offset)
}
