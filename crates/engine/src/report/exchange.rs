//! What came of one request that got a response, as every front end shows it: the
//! request as sent, the response, the timing and the placed assertion results, with
//! everything shown already through the request's redactor.

use base64::Engine as _;

use super::assertion::{PlacedAssertion, place_assertions};
use crate::Response;
use crate::redact::Redactor;
use crate::response::{SentRequest, Timing};

/// One exchange, built once from the engine's [`Response`] and the `.http` text.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The request as it went (the last one, after redirects).
    pub request: SentSummary,
    /// The response.
    pub response: ResponseSummary,
    /// How long it took.
    pub timing: Timing,
    /// The assertion results (`client.test` results included), each with its place in
    /// the text.
    pub assertions: Vec<PlacedAssertion>,
    /// What the request's scripts logged (`client.log`), redacted.
    pub logs: Vec<String>,
}

/// The request as sent, redacted.
#[derive(Debug, Clone)]
pub struct SentSummary {
    /// The method.
    pub method: String,
    /// The URL, redacted.
    pub url: String,
    /// The headers (lower-case names, one entry per value), redacted.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: BodySummary,
}

/// The response, redacted.
#[derive(Debug, Clone)]
pub struct ResponseSummary {
    /// The status code.
    pub status: u16,
    /// The status's reason phrase.
    pub status_text: &'static str,
    /// The HTTP version (`HTTP/1.1`).
    pub http_version: String,
    /// The final URL, redacted.
    pub url: String,
    /// The response came after a redirect.
    pub redirected: bool,
    /// The headers (lower-case names, one entry per value), redacted.
    pub headers: Vec<(String, String)>,
    /// The body as read (empty for a body that streams).
    pub body: BodySummary,
    /// The size of the body as received, before redaction.
    pub body_bytes: usize,
    /// The body was cut at the size limit.
    pub truncated: bool,
    /// How a gRPC call ended; `None` for other requests.
    pub grpc: Option<GrpcSummary>,
}

/// The status of a gRPC call, redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcSummary {
    /// `OK`, `NOT_FOUND`, …
    pub code: String,
    /// The status's number.
    pub number: u32,
    /// `grpc-message`, redacted; empty when the server sent none.
    pub message: String,
    /// The status's details as JSON, redacted.
    pub details: Vec<serde_json::Value>,
    /// `unary`, `server-streaming`, `client-streaming` or `bidirectional`.
    pub kind: &'static str,
    /// How many messages the server sent.
    pub messages: usize,
}

/// A body: its text (redacted) when it is UTF-8, else its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodySummary {
    /// UTF-8 text, redacted.
    Text(String),
    /// Bytes that are not UTF-8 (not redacted: no text to search).
    Binary(Vec<u8>),
}

impl BodySummary {
    /// `bytes` as shown through `redactor`: text when UTF-8, else the bytes.
    fn of(bytes: &[u8], redactor: &Redactor) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => Self::Text(redactor.redact(text).into_owned()),
            Err(_) => Self::Binary(bytes.to_vec()),
        }
    }

    /// The body cut to its first `limit` bytes (a text on a character boundary), and
    /// whether anything was cut. The cut comes after redaction, so no part of a secret
    /// is kept where the limit falls inside one.
    #[must_use]
    pub fn cut(self, limit: usize) -> (Self, bool) {
        match self {
            Self::Text(mut text) if text.len() > limit => {
                let end = (0..=limit).rev().find(|&end| text.is_char_boundary(end)).unwrap_or(0);
                text.truncate(end);
                (Self::Text(text), true)
            }
            Self::Binary(mut bytes) if bytes.len() > limit => {
                bytes.truncate(limit);
                (Self::Binary(bytes), true)
            }
            whole => (whole, false),
        }
    }

    /// `true` for an empty body.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Text(text) => text.is_empty(),
            Self::Binary(bytes) => bytes.is_empty(),
        }
    }

    /// The text of a text body; empty for a binary one.
    #[must_use]
    pub fn into_text(self) -> String {
        match self {
            Self::Text(text) => text,
            Self::Binary(_) => String::new(),
        }
    }

    /// The bytes of a binary body in standard base64; `None` for a text body.
    #[must_use]
    pub fn base64(&self) -> Option<String> {
        match self {
            Self::Text(_) => None,
            Self::Binary(bytes) => Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        }
    }
}

impl Exchange {
    /// The exchange of `response`, whose assertions are placed in `text`, the `.http`
    /// text it was run from.
    #[must_use]
    pub fn new(response: &Response, text: &str) -> Self {
        Self {
            request: SentSummary::new(response.request(), response.redactor()),
            response: ResponseSummary::new(response),
            timing: response.timing(),
            assertions: place_assertions(response.assertions(), text),
            logs: response.logs().to_vec(),
        }
    }
}

impl SentSummary {
    /// `sent` as `redactor` (the request's) lets it be shown.
    #[must_use]
    pub fn new(sent: &SentRequest, redactor: &Redactor) -> Self {
        Self::of(&sent.method, &sent.url, &sent.headers, &sent.body, redactor)
    }

    /// A request from its parts (one built but not sent, too), as `redactor` lets it be
    /// shown.
    #[must_use]
    pub fn of(
        method: &http::Method,
        url: &url::Url,
        headers: &http::HeaderMap,
        body: &[u8],
        redactor: &Redactor,
    ) -> Self {
        Self {
            method: method.to_string(),
            url: redactor.redact(url.as_str()).into_owned(),
            headers: redactor.headers(headers),
            body: BodySummary::of(body, redactor),
        }
    }
}

impl ResponseSummary {
    /// `response` as its redactor lets it be shown.
    #[must_use]
    pub fn new(response: &Response) -> Self {
        let redactor = response.redactor();
        Self {
            status: response.status(),
            status_text: response.status_text(),
            http_version: format!("{:?}", response.version()),
            url: redactor.redact(response.url().as_str()).into_owned(),
            redirected: response.redirected(),
            headers: redactor.headers(response.headers()),
            body: BodySummary::of(response.body_bytes(), redactor),
            body_bytes: response.body_bytes().len(),
            truncated: response.truncated(),
            grpc: response.grpc().map(|grpc| GrpcSummary {
                code: grpc.code.clone(),
                number: grpc.number,
                message: redactor.redact(&grpc.message).into_owned(),
                details: grpc.details.iter().map(|detail| redactor.redact_json(detail)).collect(),
                kind: grpc.kind,
                messages: grpc.messages.len(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;
    use volley_syntax::LineIndex;

    use super::{BodySummary, Exchange};
    use crate::Response;
    use crate::assert::{AssertionResult, Outcome, Place};
    use crate::redact::{Redactor, Secrets};
    use crate::response::{SentRequest, Timing};

    fn response(secret: &str, text: &str) -> Response {
        let mut headers = http::HeaderMap::new();
        headers.insert("authorization", http::HeaderValue::from_static("Bearer abc"));
        headers.insert("x-api-key", http::HeaderValue::from_str(secret).unwrap_or(http::HeaderValue::from_static("")));
        headers.insert("accept", http::HeaderValue::from_static("application/json"));
        let url = url::Url::parse(&format!("https://example.test/items?key={secret}")).ok().unwrap_or_else(|| {
            url::Url::parse("https://example.test/").unwrap_or_else(|_| unreachable!("a valid URL"))
        });
        let request = SentRequest {
            method: http::Method::POST,
            url: url.clone(),
            headers,
            body: Bytes::from(format!("{{\"key\":\"{secret}\"}}")),
        };
        let timing = Timing { ttfb: Duration::from_millis(3), total: Duration::from_millis(5) };
        let mut response = Response::from_parts(
            http::StatusCode::OK,
            http::Version::HTTP_11,
            http::HeaderMap::new(),
            url,
            request,
            timing,
        );
        let mut secrets = Secrets::new();
        secrets.add_value(secret);
        response.redactor = Redactor::new(&secrets);
        let start = text.find("status").unwrap_or_default();
        response.assertions = vec![AssertionResult {
            expression: "status == 200".to_owned(),
            span: LineIndex::new(text).span(start..start + 6),
            outcome: Outcome::Passed,
        }];
        response
    }

    #[test]
    fn the_request_as_sent_is_redacted_by_the_policy() {
        let text = "POST https://example.test/items\n# ☃ @assert status == 200\n";
        let exchange = Exchange::new(&response("s3cr3t-value", text), text);
        let shown = format!("{:?}", exchange.request);
        assert!(!shown.contains("s3cr3t-value"), "{shown}");
        assert!(!shown.contains("Bearer abc"), "{shown}");
        let header =
            |name: &str| exchange.request.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
        assert_eq!(header("accept").as_deref(), Some("application/json"));
        assert_ne!(header("authorization").as_deref(), Some("Bearer abc"));
        assert_ne!(header("x-api-key").as_deref(), Some("s3cr3t-value"));
        assert!(matches!(&exchange.request.body, BodySummary::Text(body) if !body.contains("s3cr3t")));
        assert_eq!(exchange.request.method, "POST");
        assert_eq!(exchange.response.status, 200);
        assert_eq!(exchange.timing.total, Duration::from_millis(5));
        // `# ☃ @assert ` is 12 characters (14 bytes): the place counts characters.
        assert_eq!(exchange.assertions[0].place, Place { line: 2, column: 13 });
    }

    #[test]
    fn a_body_is_cut_after_redaction_on_a_character_boundary() {
        let mut secrets = Secrets::new();
        secrets.add_value("s3cr3t-value");
        let redactor = Redactor::new(&secrets);
        // The limit falls inside the secret: cut before redaction, its start would be kept.
        let body = BodySummary::of("ab s3cr3t-value".as_bytes(), &redactor);
        let (cut, truncated) = body.clone().cut(6);
        assert!(truncated);
        assert_eq!(cut, BodySummary::Text("ab [RE".to_owned()));
        assert_eq!(body.clone().cut(1000), (body, false));
        // `é` is two bytes: a cut in its middle keeps the text before it.
        assert_eq!(BodySummary::Text("aé".to_owned()).cut(2), (BodySummary::Text("a".to_owned()), true));
        assert_eq!(BodySummary::Binary(vec![0xff, 1, 2]).cut(2), (BodySummary::Binary(vec![0xff, 1]), true));
        assert!(BodySummary::Text(String::new()).is_empty());
    }

    #[test]
    fn a_body_that_is_not_utf8_is_kept_as_bytes() {
        let body = BodySummary::Binary(vec![0xff, 0x00]);
        assert_eq!(body.base64().as_deref(), Some("/wA="));
        assert_eq!(BodySummary::Text("a".to_owned()).base64(), None);
    }
}
