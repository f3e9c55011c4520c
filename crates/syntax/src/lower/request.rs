//! Requests: the request line, headers, directives and the protocol they imply.

use tree_sitter::Node;

use super::body::ContentType;
use super::graphql::take_graphql_marker;
use super::request_line::{RequestLine, SpecialMethod};
use super::{Lowerer, Mark, named_children};
use crate::diagnostic::{Code, Diagnostic};
use crate::directive::{self, DirectiveKind, ValueRule};
use crate::document::{
    Body, Directive, GrpcOptions, Header, Protocol, Request, Script, SseOptions, Timeout, WebSocketOptions,
};
use crate::method::Method;
use crate::span::{Span, Spanned};
use crate::suggest;
use crate::template::Template;

impl Lowerer<'_> {
    pub(crate) fn request(
        &mut self,
        node: Node<'_>,
        block: usize,
        separator_name: Option<Spanned<String>>,
        directives: Vec<Directive>,
        mut scripts: Vec<Script>,
    ) -> Request {
        let kinds = self.kinds;
        let index = self.next_request_index();
        let mut line = None;
        let mut assertions = Vec::new();
        let mut headers = Vec::new();
        let mut continuations = Vec::new();
        let mut body_node = None;
        // Where a request line written without `###` starts the next request.
        let mut split = None;
        // httpyac: a body may start right after the headers, without a blank line: from
        // this header line (where it starts) to the end of the last one.
        let mut early_body: Option<(Node<'_>, usize)> = None;
        for child in named_children(node) {
            let kind = child.kind_id();
            if kind == kinds.request_line {
                line = Some(self.request_line(child));
            } else if kind == kinds.query_continuation {
                continuations.push(child);
            } else if kind == kinds.header {
                let text = self.node_text(child).trim_start();
                if super::implicit::is_request_line(text) {
                    // Never a header (a header's name has no space), nor a body's line
                    // as httpyac reads them.
                    split = Some(child.start_byte());
                    break;
                } else if let Some((first, _)) = early_body {
                    early_body = Some((first, child.end_byte()));
                } else if starts_body(text, child) {
                    early_body = Some((child, child.end_byte()));
                } else if child.child_count() == 1 && text.starts_with("...") {
                    self.report(
                        Diagnostic::new(
                            Code::UnsupportedExpression,
                            self.node_span(child),
                            format!("httpyac header spreads (`{}`) are not supported", text.trim_end()),
                        )
                        .with_hint("write each header as `Name: value`; values may use `{{variables}}`"),
                    );
                } else {
                    headers.push(self.header(child));
                }
            } else if kind == kinds.directive {
                let misplaced = self.directive(child);
                self.report(
                    Diagnostic::new(
                        Code::DirectiveAfterRequestLine,
                        misplaced.span,
                        format!("directive `@{}` after the request line", misplaced.name.value),
                    )
                    .with_hint("directives go above the request line; move it there"),
                );
            } else if kind == kinds.assertion {
                assertions.push(self.assertion(child));
            } else if kind == kinds.js_block {
                // After the request line: httpyac runs it once the response is there.
                scripts.push(self.httpyac_script(child, true));
            } else if kind == kinds.script || kind == kinds.unclosed_script || kind == kinds.script_file {
                scripts.push(self.script(child));
            } else if kind == kinds.output_redirect {
                scripts.push(self.handler(child));
            } else if kind == kinds.junk {
                self.junk(child);
            } else if kind == kinds.body {
                body_node = Some(child);
            }
        }
        let mut line = line.unwrap_or_else(|| {
            // The grammar always gives a request a request line; stay total anyway.
            let span = self.node_span(node);
            RequestLine {
                span,
                method: Spanned::new(Method::Get, span),
                special: None,
                url: Template::empty(span),
                http_version: None,
            }
        });
        for continuation in continuations {
            self.append_continuation(&mut line.url, continuation);
        }
        let unsupported = self.unsupported_protocol(&line);
        let marked = line.special == Some(SpecialMethod::GraphQl)
            || take_graphql_marker(&mut headers)
            || directives.iter().any(|directive| directive.kind == DirectiveKind::GraphQl);
        let content_type = ContentType::of(&headers);
        let graphql =
            marked || (content_type.allows_graphql() && body_node.is_some_and(|body| self.starts_graphql(body)));
        let mut body = match body_node {
            Some(body) => self.body(body, &content_type, graphql, &mut scripts, &mut assertions, &mut split),
            None => Body::None,
        };
        if let Some((first, headers_end)) = early_body {
            let end = body.span().map_or(headers_end, |span| span.end - self.base);
            let end = Mark { offset: end, position: self.lines.position(end) };
            body = Body::Inline(self.template_in(node, Self::start_mark(first), end));
        }
        let span = match split {
            Some(at) => {
                self.split_requests(at, node.end_byte());
                self.span(node.start_byte(), at)
            }
            None => self.node_span(node),
        };
        let mut request = Request {
            index,
            block,
            span,
            line_span: line.span,
            name: separator_name,
            description: None,
            directives: Vec::new(),
            method: line.method,
            url: line.url,
            http_version: line.http_version,
            headers,
            body,
            protocol: Protocol::Http,
            timeout: None,
            no_redirect: false,
            no_cookie_jar: false,
            disabled: false,
            note: None,
            scripts,
        };
        self.apply_directives(&mut request, directives, line.special);
        request.directives.extend(assertions);
        if unsupported {
            request.protocol = Protocol::Http;
        }
        request
    }

    /// httpyac's `?? status == 200`: an `@assert` directive named `??`, read with
    /// httpyac's operators by the engine.
    pub(crate) fn assertion(&mut self, node: Node<'_>) -> Directive {
        let span = self.node_span(node);
        let marker_end = node.child(0).map_or(node.start_byte(), |marker| marker.end_byte());
        let (marker_start, _) = self.trimmed(node.start_byte(), marker_end);
        let name = Spanned::new("??".to_owned(), self.span(marker_start, marker_end));
        let value = node
            .child_by_field_id(self.kinds.field_value)
            .map(|value| self.template_trimmed(value))
            .filter(|value| !value.is_empty());
        let directive = Directive { span, name, kind: DirectiveKind::Assert, value };
        if directive.value.is_none() {
            self.report(
                Diagnostic::new(Code::MissingDirectiveValue, span, "`??` needs an assertion")
                    .with_hint("write `?? status == 200`, `?? header content-type includes json` …"),
            );
        }
        directive
    }

    fn header(&mut self, node: Node<'_>) -> Header {
        let span = self.node_span(node);
        let fields = self.name_and_value(node);
        let name = fields.name.map_or_else(|| Template::empty(span), |name| self.template_trimmed(name));
        let has_colon = fields.children > 1;
        let value = self.template_or_empty(fields.value, node.end_byte());
        if !has_colon {
            let text = self.node_text(node).trim();
            let hint = if text.starts_with('@') {
                "file variables (`@name = value`) go above the request line"
            } else if text.starts_with(['{', '[', '<', '"']) {
                "a body needs a blank line between the headers and it"
            } else {
                "write headers as `Name: value`; a blank line starts the body"
            };
            self.report(
                Diagnostic::new(Code::MalformedHeader, span, format!("header line without `:`: `{}`", clip(text)))
                    .with_hint(hint),
            );
        } else if let Some(literal) =
            name.as_literal().filter(|literal| literal.is_empty() || !literal.bytes().all(is_token_byte))
        {
            let hint = if literal.starts_with(['{', '[', '<', '"']) {
                "a body needs a blank line between the headers and it"
            } else {
                "header names are letters, digits and `!#$%&'*+-.^_`|~`, without spaces"
            };
            self.report(
                Diagnostic::new(Code::MalformedHeader, name.span, format!("invalid header name `{}`", clip(&literal)))
                    .with_hint(hint),
            );
        }
        Header { span, name, value }
    }

    // ------------------------------------------------------------------ directives

    fn apply_directives(&mut self, request: &mut Request, directives: Vec<Directive>, special: Option<SpecialMethod>) {
        let websocket_method = special == Some(SpecialMethod::WebSocket);
        let sse_method = special == Some(SpecialMethod::Sse);
        let mut sse_directive = None;
        let mut ws_directive = None;
        let mut last_event_id = None;
        let mut subprotocols = None;
        let mut connect_timeout = None;
        let mut grpc = GrpcOptions::default();
        let mut grpc_directives = Vec::new();
        for directive in &directives {
            if !self.check_directive_value(directive) {
                continue;
            }
            if matches!(
                directive.kind,
                DirectiveKind::GrpcProto
                    | DirectiveKind::GrpcImportPath
                    | DirectiveKind::GrpcProtoset
                    | DirectiveKind::GrpcPlaintext
                    | DirectiveKind::GrpcReflection
            ) {
                grpc_directives.push((directive.name.span, directive.name.value.clone()));
            }
            match directive.kind {
                DirectiveKind::Name => {
                    if let Some(value) = &directive.value {
                        let text = value.to_source();
                        request.name = Some(Spanned::new(text, value.span));
                    }
                }
                DirectiveKind::Description => {
                    if let Some(value) = &directive.value {
                        request.description = Some(Spanned::new(value.to_source(), value.span));
                    }
                }
                DirectiveKind::Timeout => request.timeout = self.duration(directive),
                DirectiveKind::WsConnectTimeout => connect_timeout = self.duration(directive),
                DirectiveKind::Sse => sse_directive = Some(directive.span),
                DirectiveKind::Ws => ws_directive = Some(directive.span),
                DirectiveKind::LastEventId => last_event_id.clone_from(&directive.value),
                DirectiveKind::WsSubprotocols => subprotocols.clone_from(&directive.value),
                DirectiveKind::NoRedirect => request.no_redirect = true,
                DirectiveKind::NoCookieJar => request.no_cookie_jar = true,
                DirectiveKind::Disabled => request.disabled = true,
                DirectiveKind::Note => {
                    let text = directive.value.as_ref().map_or_else(String::new, Template::to_source);
                    request.note = Some(Spanned::new(text, directive.span));
                }
                DirectiveKind::GrpcProto => grpc.protos.extend(directive.value.clone()),
                DirectiveKind::GrpcImportPath => grpc.import_paths.extend(directive.value.clone()),
                DirectiveKind::GrpcProtoset => grpc.protoset.clone_from(&directive.value),
                DirectiveKind::GrpcPlaintext => grpc.plaintext = true,
                // Read by `volley load`; checked here, so that every front end says so.
                DirectiveKind::Load => {
                    let value = directive.value.as_ref().map_or_else(String::new, Template::to_source);
                    let span = directive.value.as_ref().map_or(directive.span, |value| value.span);
                    for error in crate::threshold::of_directive(&value).into_iter().filter_map(Result::err) {
                        self.report(error.diagnostic(span));
                    }
                }
                DirectiveKind::GrpcReflection => {
                    grpc.reflection = true;
                    grpc.reflection_server.clone_from(&directive.value);
                }
                // Acted on by the engine, from the request's directives.
                DirectiveKind::Assert
                | DirectiveKind::GraphQl
                | DirectiveKind::Jq
                | DirectiveKind::Sleep
                | DirectiveKind::Ref
                | DirectiveKind::ForceRef
                | DirectiveKind::Prompt
                | DirectiveKind::Import
                | DirectiveKind::Loop
                | DirectiveKind::RateLimit
                | DirectiveKind::Ignored
                | DirectiveKind::Unknown => {}
            }
        }
        request.directives = directives;

        let scheme = request.url.literal_prefix().to_ascii_lowercase();
        let ws_url = scheme.starts_with("ws://") || scheme.starts_with("wss://");
        let sse_accept = request.headers_named("accept").find(|header| {
            header.value.as_literal().is_some_and(|value| value.to_ascii_lowercase().contains("text/event-stream"))
        });
        let grpc_url = scheme.starts_with("grpc://") || scheme.starts_with("grpcs://");
        if special == Some(SpecialMethod::Grpc) || grpc_url {
            self.grpc_request(request, grpc);
            return;
        }
        for (span, name) in grpc_directives {
            self.ineffective(span, &format!("@{name}"), "gRPC");
        }
        let websocket = ws_directive.is_some() || websocket_method || ws_url;
        let sse = sse_directive.or(sse_accept.map(|header| header.span)).or(sse_method.then_some(request.method.span));

        if websocket {
            if let Some(sse_span) = sse {
                self.report(
                    Diagnostic::new(Code::ConflictingProtocol, sse_span, "a request cannot be both SSE and WebSocket")
                        .with_hint("remove `@sse` / `Accept: text/event-stream`, or the WebSocket marker"),
                );
            }
            if request.method.value != Method::Get {
                self.report(
                    Diagnostic::new(
                        Code::ConflictingProtocol,
                        request.method.span,
                        format!("a WebSocket request is opened with GET, not {}", request.method.value),
                    )
                    .with_hint("write `GET` (or `WEBSOCKET`) before the ws:// URL"),
                );
            }
            // The body is the messages sent once connected (`===` between them); form
            // fields and GraphQL are no messages.
            if let (Some(span), Body::Form(_) | Body::Parts(_) | Body::GraphQl(_)) =
                (request.body.span(), &request.body)
            {
                self.report(
                    Diagnostic::new(
                        Code::WebSocketBody,
                        span,
                        "the body of a WebSocket request is its messages, as text",
                    )
                    .with_hint("write each message as text or JSON, `===` between messages (or `< ./messages.txt`)"),
                );
            }
            request.protocol = Protocol::WebSocket(WebSocketOptions { subprotocols, connect_timeout });
            if let Some(value) = last_event_id {
                self.ineffective(value.span, "@lastEventId", "SSE");
            }
        } else {
            if let Some(value) = &subprotocols {
                self.ineffective(value.span, "@ws-subprotocols", "WebSocket");
            }
            if let Some(timeout) = &connect_timeout {
                self.ineffective(timeout.span(), "@ws-connect-timeout", "WebSocket");
            }
            if sse.is_some() {
                request.protocol = Protocol::Sse(SseOptions { last_event_id });
            } else if let Some(value) = last_event_id {
                self.ineffective(value.span, "@lastEventId", "SSE");
            }
        }
    }

    /// Makes `request` a gRPC call: its body is the request messages (text or a file,
    /// `===` between messages).
    fn grpc_request(&mut self, request: &mut Request, options: GrpcOptions) {
        match &request.body {
            Body::None | Body::Inline(_) | Body::File(_) => {}
            Body::Form(_) | Body::Parts(_) | Body::GraphQl(_) => {
                if let Some(span) = request.body.span() {
                    self.report(
                        Diagnostic::new(Code::InvalidGrpc, span, "the body of a gRPC request is its messages, as JSON")
                            .with_hint(
                                "write each message as a JSON object, `===` between messages, or `< ./message.json`",
                            ),
                    );
                }
            }
        }
        if let Some(version) = &request.http_version {
            self.report(
                Diagnostic::new(Code::InvalidGrpc, version.span, "a gRPC call is always HTTP/2")
                    .with_hint(format!("remove `{}`", version.value)),
            );
        }
        request.protocol = Protocol::Grpc(options);
    }

    /// Reports a missing or unexpected value and unknown names; `false` when the
    /// directive cannot be applied.
    fn check_directive_value(&mut self, directive: &Directive) -> bool {
        let name = &directive.name.value;
        match directive.kind {
            DirectiveKind::Unknown => {
                let candidates = directive::SUPPORTED.iter().map(|info| info.name);
                // One or two letters from a directive Volley runs: a misspelling, an
                // error (a `# @asert` must not let the request run unchecked).
                let diagnostic = match suggest::closest(name, candidates) {
                    Some(best) => Diagnostic::new(
                        Code::MisspeltDirective,
                        directive.name.span,
                        format!("unknown directive `@{name}`, a letter or two from `@{best}`"),
                    )
                    .with_hint(format!("did you mean `@{best}`? A plain comment is written `# text`, without `@`")),
                    None => Diagnostic::new(
                        Code::UnknownDirective,
                        directive.name.span,
                        format!("unknown directive `@{name}`"),
                    )
                    .with_hint("a plain comment is written `# text` without `@`"),
                };
                self.report(diagnostic);
                return false;
            }
            DirectiveKind::Ignored => {
                self.report(
                    Diagnostic::new(
                        Code::UnsupportedDirective,
                        directive.name.span,
                        format!("`@{name}` is read but has no effect in Volley"),
                    )
                    .with_hint("see docs/format.md for the directives Volley acts on"),
                );
                return false;
            }
            _ => {}
        }
        let rule = directive::info(directive.kind).map_or(ValueRule::Optional, |info| info.value);
        match (rule, &directive.value) {
            (ValueRule::Required, None) => {
                let placeholder = directive::info(directive.kind).map_or("", |info| info.placeholder);
                self.report(
                    Diagnostic::new(Code::MissingDirectiveValue, directive.span, format!("`@{name}` needs a value"))
                        .with_hint(format!("write `# @{name} {placeholder}`")),
                );
                false
            }
            (ValueRule::None, Some(value)) => {
                self.report(
                    Diagnostic::new(Code::UnexpectedDirectiveValue, value.span, format!("`@{name}` takes no value"))
                        .with_hint("the value is ignored; remove it"),
                );
                true
            }
            _ => true,
        }
    }

    /// The value of a duration directive. A value with `{{…}}` is known only once
    /// variables are substituted: it is kept as a template and checked when sent.
    fn duration(&mut self, directive: &Directive) -> Option<Timeout> {
        let value = directive.value.as_ref()?;
        let Some(literal) = value.as_literal() else {
            return Some(Timeout::Template(value.clone()));
        };
        if let Some(millis) = directive::parse_duration_ms(&literal) {
            Some(Timeout::Millis(Spanned::new(millis, value.span)))
        } else {
            self.report(
                Diagnostic::new(
                    Code::InvalidTimeout,
                    value.span,
                    format!("invalid `@{}` value `{}`", directive.name.value, clip(&literal)),
                )
                .with_hint(directive::DURATION_HINT),
            );
            None
        }
    }

    fn ineffective(&mut self, span: Span, directive: &str, protocol: &str) {
        self.report(
            Diagnostic::new(
                Code::IneffectiveDirective,
                span,
                format!("`{directive}` has no effect on a request that is not {protocol}"),
            )
            .with_hint(format!("mark the request as {protocol}, or remove the directive")),
        );
    }
}

/// A header line (its `text`, trimmed at the start) that starts a body written without a
/// blank line before it, as httpyac reads it: a line starting with `{` or `[` (JSON), or
/// a line without `:` starting with `{{` or `"`. A misspelt header never looks like that.
fn starts_body(text: &str, node: Node<'_>) -> bool {
    match text.as_bytes() {
        [b'{', b'{', ..] | [b'"', ..] => node.child_count() == 1,
        [b'{' | b'[', ..] => true,
        _ => false,
    }
}

/// Bytes allowed in a header name (RFC 9110 `token`).
fn is_token_byte(byte: u8) -> bool {
    TOKEN_BYTES[usize::from(byte)]
}

/// [`is_token_byte`] as a table: every header name of a file goes through it.
const TOKEN_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        #[allow(clippy::cast_possible_truncation)] // `byte` < 256.
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric()
            || matches!(b, b'!' | b'#'..=b'\'' | b'*' | b'+' | b'-' | b'.' | b'^'..=b'`' | b'|' | b'~');
        byte += 1;
    }
    table
};

/// The first 60 characters of a text, for messages.
pub(crate) fn clip(text: &str) -> String {
    let mut clipped: String = text.chars().take(60).collect();
    if clipped.len() < text.len() {
        clipped.push('…');
    }
    clipped
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_token_table_is_rfc_9110_tchar() {
        for byte in 0..=u8::MAX {
            let expected = byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte);
            assert_eq!(super::is_token_byte(byte), expected, "byte {byte:#04x}");
        }
    }
}
