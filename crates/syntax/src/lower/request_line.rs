//! The request line: the method (registered, other tools' words, unsupported protocols),
//! the target and its continuation lines, the HTTP version.

use tree_sitter::Node;

use super::{Lowerer, named_children};
use crate::diagnostic::{Code, Diagnostic};
use crate::method::Method;
use crate::span::{Span, Spanned};
use crate::suggest;
use crate::template::{Part, Template};

/// What the request line says, before directives are applied.
pub(super) struct RequestLine {
    pub(super) span: Span,
    pub(super) method: Spanned<Method>,
    pub(super) special: Option<SpecialMethod>,
    pub(super) url: Template,
    pub(super) http_version: Option<Spanned<String>>,
}

/// Method words of other tools that say what kind of request it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SpecialMethod {
    /// `WEBSOCKET` (JetBrains), `WS`, `WSS` (httpyac): a WebSocket `GET`.
    WebSocket,
    /// `SSE`, `EVENTSOURCE` (httpyac): an event stream `GET`.
    Sse,
    /// `GRAPHQL` (JetBrains, Kulala, httpyac): a GraphQL `POST`.
    GraphQl,
    /// `GRPC` (JetBrains, httpyac, Kulala): a gRPC call, an HTTP/2 `POST`.
    Grpc,
}

/// Method words and URL schemes of protocols Volley does not send, with the tool that
/// has them.
const UNSUPPORTED_PROTOCOLS: &[(&str, &str, &str)] = &[
    ("MQTT", "mqtt://", "MQTT requests (httpyac)"),
    ("MQTTS", "mqtts://", "MQTT requests (httpyac)"),
    ("AMQP", "amqp://", "AMQP requests (httpyac)"),
    ("AMQPS", "amqps://", "AMQP requests (httpyac)"),
    ("KAFKA", "kafka://", "Kafka requests"),
];

impl Lowerer<'_> {
    /// Reports a request of gRPC, MQTT, AMQP or Kafka (by its method word or its URL's
    /// scheme); `true` when it is one.
    pub(super) fn unsupported_protocol(&mut self, line: &RequestLine) -> bool {
        let word = line.method.value.as_str();
        let start = match line.url.parts.first() {
            Some(Part::Text(text)) => text.value.as_bytes(),
            _ => &[],
        };
        let found = UNSUPPORTED_PROTOCOLS.iter().find(|(method, prefix, _)| {
            word.eq_ignore_ascii_case(method)
                || start.get(..prefix.len()).is_some_and(|scheme| scheme.eq_ignore_ascii_case(prefix.as_bytes()))
        });
        let Some((_, _, what)) = found else {
            return false;
        };
        self.report(
            Diagnostic::new(Code::UnsupportedRequest, line.span, format!("{what} are not supported"))
                .with_hint("Volley sends HTTP, Server-Sent Events, WebSocket and gRPC requests"),
        );
        true
    }

    pub(super) fn request_line(&mut self, node: Node<'_>) -> RequestLine {
        let span = self.node_span(node);
        let mut method = None;
        let mut special = None;
        let mut url = None;
        let mut http_version = None;
        for child in named_children(node) {
            let kind = child.kind_id();
            if kind == self.kinds.method {
                let word = self.node_text(child);
                let child_span = self.node_span(child);
                special = special_method(word);
                let parsed = match special {
                    Some(SpecialMethod::WebSocket | SpecialMethod::Sse) => Method::Get,
                    Some(SpecialMethod::GraphQl | SpecialMethod::Grpc) => Method::Post,
                    None => Method::from_word(word),
                };
                if special.is_none() && !parsed.is_known() {
                    self.check_method(word, child_span);
                }
                method = Some(Spanned::new(parsed, child_span));
            } else if kind == self.kinds.url {
                url = Some(self.template_trimmed(child));
            } else if kind == self.kinds.http_version {
                // The token carries the spaces before it.
                let (start, end) = self.trimmed(child.start_byte(), child.end_byte());
                http_version = Some(Spanned::new(self.slice(start, end).to_owned(), self.span(start, end)));
            }
        }
        let url = url.unwrap_or_else(|| {
            self.report(
                Diagnostic::new(Code::MissingUrl, span, "request line without a URL")
                    .with_hint("write the URL after the method: `GET https://example.com/`"),
            );
            Template::empty(self.span(node.end_byte(), node.end_byte()))
        });
        let method = method.unwrap_or_else(|| {
            let at = Span { end: url.span.start, end_position: url.span.start_position, ..url.span };
            Spanned::new(Method::Get, at)
        });
        RequestLine { span, method, special, url, http_version }
    }

    /// A method that is neither one of the nine of the spec nor special: registered
    /// methods (`PROPFIND`, `mkcol`) and other upper-case tokens (`PURGE`) are sent as
    /// they are; a word one edit away from one of the nine (`GETT`) or an unregistered
    /// word not in upper case (`fetch`) is `unknown-method`.
    fn check_method(&mut self, word: &str, span: Span) {
        if Method::is_registered(word) {
            return;
        }
        let upper = word.to_ascii_uppercase();
        let typo = Method::KNOWN.iter().copied().find(|known| suggest::edit_distance(&upper, known) == 1);
        if typo.is_none() && word == upper {
            return;
        }
        let diagnostic = Diagnostic::new(Code::UnknownMethod, span, format!("unknown method `{word}`"));
        let diagnostic = match typo {
            Some(best) => diagnostic.with_hint(format!("did you mean `{best}`?")),
            None if word != upper => diagnostic.with_hint(format!(
                "methods are case-sensitive: an unregistered method is written in upper case (`{upper}`)"
            )),
            None => diagnostic.with_hint(format!(
                "methods are {} and the other registered ones (`PROPFIND` …); an unregistered method is \
                 written in upper case (`PURGE`); a comment line starts with `#`",
                Method::KNOWN.join(", ")
            )),
        };
        self.report(diagnostic);
    }

    /// Appends a `?a=1` / `&b=2` / `/path` line to the URL. The first query
    /// continuation of a URL without a query starts the query even when written with
    /// `&`; a path continuation is appended as written.
    pub(super) fn append_continuation(&mut self, url: &mut Template, node: Node<'_>) {
        let (start, _) = self.trimmed(node.start_byte(), node.end_byte());
        let written = self.slice(start, start + 1);
        let has_query = url.parts.iter().any(|part| matches!(part, Part::Text(text) if text.value.contains('?')));
        let separator = if has_query || written == "/" { written } else { "?" };
        url.parts.push(Part::Text(Spanned::new(separator.to_owned(), self.span(start, start + 1))));
        if let Some(value) = self.name_and_value(node).value {
            let value = self.template_trimmed(value);
            url.parts.extend(value.parts);
        }
        url.span = url.span.cover(self.node_span(node));
    }
}

/// The special meaning of a method word, in any case.
pub(super) fn special_method(word: &str) -> Option<SpecialMethod> {
    let is = |name: &str| word.eq_ignore_ascii_case(name);
    if is("WEBSOCKET") || is("WS") || is("WSS") {
        Some(SpecialMethod::WebSocket)
    } else if is("SSE") || is("EVENTSOURCE") {
        Some(SpecialMethod::Sse)
    } else if is("GRAPHQL") {
        Some(SpecialMethod::GraphQl)
    } else if is("GRPC") {
        Some(SpecialMethod::Grpc)
    } else {
        None
    }
}
