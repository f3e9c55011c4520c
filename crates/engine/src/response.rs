//! The result of a run, shaped after the Fetch API `Response`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use serde::de::DeserializeOwned;

use crate::assert::AssertionResult;

/// A response. A status of 4xx or 5xx is a normal response (`ok()` is `false`), not an
/// error. The body has been read when the response is returned (the request timeout
/// covers it), so the body methods do not wait for the network.
#[derive(Debug, Clone)]
pub struct Response {
    pub(crate) status: http::StatusCode,
    pub(crate) version: http::Version,
    pub(crate) headers: http::HeaderMap,
    pub(crate) url: url::Url,
    pub(crate) redirected: bool,
    pub(crate) body: Bytes,
    pub(crate) timing: Timing,
    pub(crate) request: SentRequest,
    pub(crate) secrets: Arc<[String]>,
    pub(crate) assertions: Vec<AssertionResult>,
}

/// How long the exchange took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timing {
    /// From sending the first request to the head of the final response (redirect hops
    /// included): time to first byte.
    pub ttfb: Duration,
    /// From sending to the end of the final response's body.
    pub total: Duration,
}

/// The request as it went on the wire (the last hop of a redirect chain), cookies from
/// the jar included.
#[derive(Debug, Clone)]
pub struct SentRequest {
    /// The method.
    pub method: http::Method,
    /// The URL.
    pub url: url::Url,
    /// The headers.
    pub headers: http::HeaderMap,
    /// The body.
    pub body: Bytes,
}

/// A body that cannot be read as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// The body is not the JSON asked for.
    #[error("the response body is not valid JSON for the expected type: {0}")]
    Json(#[from] serde_json::Error),
}

impl Response {
    /// The status code.
    #[must_use]
    pub fn status(&self) -> u16 {
        self.status.as_u16()
    }

    /// The reason phrase of the status (`"Not Found"`), empty when there is none.
    #[must_use]
    pub fn status_text(&self) -> &'static str {
        self.status.canonical_reason().unwrap_or("")
    }

    /// `true` for a status in 200–299.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.status.is_success()
    }

    /// The headers: names are case-insensitive and repeated headers keep every value
    /// (`headers().get_all("set-cookie")`).
    #[must_use]
    pub fn headers(&self) -> &http::HeaderMap {
        &self.headers
    }

    /// The URL of the final response, after redirects.
    #[must_use]
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    /// `true` when at least one redirect was followed.
    #[must_use]
    pub fn redirected(&self) -> bool {
        self.redirected
    }

    /// The HTTP version of the response.
    #[must_use]
    pub fn version(&self) -> http::Version {
        self.version
    }

    /// The body as text, decoded with the charset of the `Content-Type` (UTF-8 when
    /// none is named); invalid sequences become U+FFFD.
    #[allow(clippy::unused_async)] // Async as in the Fetch API, and for streamed bodies later.
    pub async fn text(&self) -> Result<String, BodyError> {
        Ok(decode_text(&self.body, self.headers.get(http::header::CONTENT_TYPE)))
    }

    /// The body parsed as JSON into `T` (`serde_json::Value` for any JSON).
    #[allow(clippy::unused_async)] // Async as in the Fetch API, and for streamed bodies later.
    pub async fn json<T: DeserializeOwned>(&self) -> Result<T, BodyError> {
        Ok(serde_json::from_slice(&self.body)?)
    }

    /// The body bytes, after content decoding (gzip, brotli, deflate).
    #[allow(clippy::unused_async)] // Async as in the Fetch API, and for streamed bodies later.
    pub async fn bytes(&self) -> Result<Bytes, BodyError> {
        Ok(self.body.clone())
    }

    /// The body bytes, without waiting: the body has been read when the response is
    /// returned.
    #[must_use]
    pub fn body_bytes(&self) -> &[u8] {
        &self.body
    }

    /// The body as a stream of chunks.
    pub fn body_stream(&self) -> impl Stream<Item = Result<Bytes, BodyError>> + Send + 'static {
        futures_util::stream::iter(std::iter::once(Ok(self.body.clone())))
    }

    /// Timing of the exchange.
    #[must_use]
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// The request as sent.
    #[must_use]
    pub fn request(&self) -> &SentRequest {
        &self.request
    }

    /// The outcomes of the request's `# @assert` directives, in order.
    #[must_use]
    pub fn assertions(&self) -> &[AssertionResult] {
        &self.assertions
    }

    /// `true` when every `# @assert` passed (also when there are none).
    #[must_use]
    pub fn assertions_passed(&self) -> bool {
        self.assertions.iter().all(AssertionResult::passed)
    }

    /// `text` with the values of the `$secret(…)` resolvers used for this request
    /// replaced by `[REDACTED]`: use it on anything shown or logged.
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        redact(text, &self.secrets)
    }
}

/// Replaces every secret value in `text` with `[REDACTED]` (longest secrets first, so a
/// secret that contains another is replaced whole).
#[must_use]
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut sorted: Vec<&String> = secrets.iter().filter(|secret| !secret.is_empty()).collect();
    sorted.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    let mut redacted = text.to_owned();
    for secret in sorted {
        redacted = redacted.replace(secret.as_str(), "[REDACTED]");
    }
    redacted
}

/// Decodes body bytes with the charset named in a `Content-Type` value.
pub(crate) fn decode_text(body: &[u8], content_type: Option<&http::HeaderValue>) -> String {
    let charset = content_type
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            value.split(';').skip(1).find_map(|parameter| {
                let (name, value) = parameter.split_once('=')?;
                name.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches('"').to_owned())
            })
        })
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = charset.decode(body);
    text.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_by_charset() {
        let latin1 = http::HeaderValue::from_static("text/plain; charset=ISO-8859-1");
        assert_eq!(decode_text(b"caf\xe9", Some(&latin1)), "café");
        assert_eq!(decode_text("café".as_bytes(), None), "café");
        assert_eq!(decode_text(b"caf\xe9", None), "caf\u{fffd}");
    }

    #[test]
    fn redacts_longest_first() {
        let secrets = vec!["abc".to_owned(), "abcdef".to_owned(), String::new()];
        assert_eq!(redact("x abcdef y abc", &secrets), "x [REDACTED] y [REDACTED]");
    }
}
