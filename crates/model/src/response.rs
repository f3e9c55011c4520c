//! The result of a run, shaped after the Fetch API `Response`.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt as _};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

use crate::assert::AssertionResult;
use crate::error::TransportError;
use crate::redact::Redactor;
use crate::sse::EventStream;
use crate::transport::BodyStream;
use crate::websocket::WebSocket;

/// A response. A status of 4xx or 5xx is a normal response (`ok()` is `false`), not an
/// error.
///
/// For an HTTP request the body has been read when the response is returned (the
/// request timeout covers it), so the body methods do not wait for the network. For a
/// Server-Sent Events request answered with `text/event-stream`, the response comes as
/// soon as its head arrives and the body streams: read it with
/// [`events`](Response::events) (or raw with [`body_stream`](Response::body_stream)).
/// For a WebSocket request the response is the handshake's (status 101) and
/// [`websocket`](Response::websocket) gives the connection.
#[derive(Debug, Clone)]
pub struct Response {
    #[doc(hidden)]
    pub status: http::StatusCode,
    #[doc(hidden)]
    pub version: http::Version,
    #[doc(hidden)]
    pub headers: http::HeaderMap,
    #[doc(hidden)]
    pub url: url::Url,
    #[doc(hidden)]
    pub redirected: bool,
    #[doc(hidden)]
    pub body: Body,
    /// The body was cut at [`RunOptions::max_body_bytes`](crate::RunOptions::max_body_bytes).
    #[doc(hidden)]
    pub truncated: bool,
    /// The whole body in a file, when it was cut and the run asked for one
    /// ([`RunOptions::spill_body_to`](crate::RunOptions::spill_body_to)).
    #[doc(hidden)]
    pub body_file: Option<BodyFile>,
    #[doc(hidden)]
    pub timing: Timing,
    #[doc(hidden)]
    pub request: SentRequest,
    /// Hides the secrets of the request (see [`Response::redactor`]).
    #[doc(hidden)]
    pub redactor: Redactor,
    #[doc(hidden)]
    pub assertions: Vec<AssertionResult>,
    /// What the request's scripts logged (`client.log`), secrets hidden.
    #[doc(hidden)]
    pub logs: Vec<String>,
    /// How a gRPC call ended, and its messages; `None` for other requests.
    #[doc(hidden)]
    pub grpc: Option<Arc<GrpcResult>>,
}

/// A body written whole to a file as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyFile {
    /// The file.
    pub path: std::path::PathBuf,
    /// The body's size in bytes.
    pub size: u64,
}

/// What a gRPC call answered besides its HTTP exchange: its status and its messages.
#[derive(Debug, Clone, PartialEq)]
pub struct GrpcResult {
    /// The status's name: `OK`, `NOT_FOUND`, …
    pub code: String,
    /// The status's number (0 for `OK`).
    pub number: u32,
    /// `grpc-message`, decoded; empty when the server sent none.
    pub message: String,
    /// The status's details (`grpc-status-details-bin`), each as proto3 JSON with its
    /// `@type` (`google.rpc.BadRequest` …); empty when the server sent none.
    pub details: Vec<serde_json::Value>,
    /// `unary`, `server-streaming`, `client-streaming` or `bidirectional`.
    pub kind: &'static str,
    /// The response messages as proto3 JSON, in order.
    pub messages: Vec<serde_json::Value>,
}

impl GrpcResult {
    /// `true` for status `OK`.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.number == 0
    }

    /// What assertions and response handlers read as the body: the message of a call
    /// that answers one, the array of the messages when the server streams.
    #[must_use]
    pub fn checked_body(&self) -> Vec<u8> {
        let streams = matches!(self.kind, "server-streaming" | "bidirectional");
        let value = match self.messages.as_slice() {
            [one] if !streams => one.clone(),
            [] if !streams => serde_json::Value::Null,
            all => serde_json::Value::Array(all.to_vec()),
        };
        serde_json::to_vec(&value).unwrap_or_default()
    }
}

/// What a response has for a body: one of three states.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub enum Body {
    /// Read with the response (an HTTP response, an event stream answered with another
    /// type, a remote answer).
    Read(Bytes),
    /// Still arriving (an event stream), until something takes it.
    Streaming(Pending<BodyStream>),
    /// The connection of a WebSocket request, until [`Response::websocket`] takes it;
    /// the handshake has no body.
    WebSocket(Pending<WebSocket>),
}

impl Body {
    /// The bytes read with the response: empty for a body that streams.
    #[must_use]
    pub fn read(&self) -> Option<&Bytes> {
        match self {
            Body::Read(bytes) => Some(bytes),
            Body::Streaming(_) | Body::WebSocket(_) => None,
        }
    }

    /// The bytes read with the response, empty for a body that streams.
    #[must_use]
    pub fn read_or_empty(&self) -> Bytes {
        self.read().cloned().unwrap_or_default()
    }
}

/// Something a response holds until one reader takes it (clones share it).
#[doc(hidden)]
pub struct Pending<T>(Arc<Mutex<Option<T>>>);

impl<T> Pending<T> {
    pub fn new(value: T) -> Self {
        Self(Arc::new(Mutex::new(Some(value))))
    }

    fn take(&self) -> Option<T> {
        self.0.lock().take()
    }
}

impl<T> Clone for Pending<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> std::fmt::Debug for Pending<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let taken = self.0.lock().is_none();
        f.debug_struct("Pending").field("taken", &taken).finish()
    }
}

pub use volley_assert::Timing;

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
    /// A streamed body was read already (by `events`, `body_stream`, `text`, …).
    #[error("the response body is a stream that has already been read")]
    Consumed,
    /// A streamed body failed while it was read.
    #[error("reading the response body failed: {0}")]
    Transport(#[from] TransportError),
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

    /// `true` for a status in 200–299; for a gRPC call, `true` for its status `OK`.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.grpc.as_ref().map_or_else(|| self.status.is_success(), |grpc| grpc.is_ok())
    }

    /// How a gRPC call ended and what it answered; `None` for other requests. The
    /// response's [`status`](Response::status) is then the HTTP exchange's (200), its
    /// body the messages as JSON lines, its headers the response headers and trailers.
    #[must_use]
    pub fn grpc(&self) -> Option<&GrpcResult> {
        self.grpc.as_deref()
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
    /// none is named); invalid sequences become U+FFFD. A streamed body is read to its
    /// end first (once: a second read is [`BodyError::Consumed`]).
    pub async fn text(&self) -> Result<String, BodyError> {
        let body = self.bytes().await?;
        Ok(decode_text(&body, self.headers.get(http::header::CONTENT_TYPE)))
    }

    /// The body parsed as JSON into `T` (`serde_json::Value` for any JSON).
    pub async fn json<T: DeserializeOwned>(&self) -> Result<T, BodyError> {
        Ok(serde_json::from_slice(&self.bytes().await?)?)
    }

    /// The body bytes, after content decoding (gzip, brotli, deflate). A streamed body
    /// is read to its end first.
    pub async fn bytes(&self) -> Result<Bytes, BodyError> {
        let Body::Streaming(pending) = &self.body else { return Ok(self.body.read_or_empty()) };
        let mut stream = pending.take().ok_or(BodyError::Consumed)?;
        let mut collected = BytesMut::new();
        while let Some(chunk) = stream.next().await {
            collected.extend_from_slice(&chunk?);
        }
        Ok(collected.freeze())
    }

    /// The body bytes read with the response, without waiting: the whole body of an
    /// HTTP response; empty for a streamed body (see [`is_streaming`](Response::is_streaming)).
    #[must_use]
    pub fn body_bytes(&self) -> &[u8] {
        self.body.read().map_or(&[], |bytes| &bytes[..])
    }

    /// `true` when the body is a stream still arriving from the server (an event
    /// stream), not read with the response.
    #[must_use]
    pub fn is_streaming(&self) -> bool {
        matches!(self.body, Body::Streaming(_))
    }

    /// The body as a stream of chunks: as they arrive for a streamed body (which it
    /// takes: a second call gives one [`BodyError::Consumed`] item), else the body read
    /// with the response in one chunk.
    pub fn body_stream(&self) -> impl Stream<Item = Result<Bytes, BodyError>> + Send + 'static {
        let taken = match &self.body {
            Body::Streaming(pending) => Some(pending.take()),
            Body::Read(_) | Body::WebSocket(_) => None,
        };
        let body = self.body.read_or_empty();
        let stream: std::pin::Pin<Box<dyn Stream<Item = Result<Bytes, BodyError>> + Send>> = match taken {
            None => Box::pin(futures_util::stream::iter(std::iter::once(Ok(body)))),
            Some(Some(stream)) => Box::pin(stream.map(|chunk| chunk.map_err(BodyError::from))),
            Some(None) => Box::pin(futures_util::stream::iter(std::iter::once(Err(BodyError::Consumed)))),
        };
        stream
    }

    /// The body as Server-Sent Events, parsed as they arrive (WHATWG rules): takes a
    /// streamed body (once), or parses a body read whole.
    ///
    /// ```no_run
    /// # async fn example(response: volley_model::Response) -> Result<(), Box<dyn std::error::Error>> {
    /// use futures_util::StreamExt as _;
    ///
    /// let mut events = response.events()?;
    /// while let Some(event) = events.next().await {
    ///     let event = event?;
    ///     println!("{} {:?}: {}", event.event, event.id, event.data);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn events(&self) -> Result<EventStream, BodyError> {
        match &self.body {
            Body::Streaming(pending) => pending.take().map(EventStream::new).ok_or(BodyError::Consumed),
            Body::Read(_) | Body::WebSocket(_) => Ok(EventStream::from_bytes(self.body_bytes())),
        }
    }

    /// `true` for the response of a WebSocket request (also once its connection was
    /// taken).
    #[must_use]
    pub fn is_websocket(&self) -> bool {
        matches!(self.body, Body::WebSocket(_))
    }

    /// The connection of a WebSocket request (the response is the handshake's, status
    /// 101). It can be taken once; `None` for other requests and after the first call.
    #[must_use]
    pub fn websocket(&self) -> Option<WebSocket> {
        match &self.body {
            Body::WebSocket(pending) => pending.take(),
            Body::Read(_) | Body::Streaming(_) => None,
        }
    }

    /// Whether the body was cut at [`RunOptions::max_body_bytes`](crate::RunOptions::max_body_bytes)
    /// (the rest was not read, unless it went to [`body_file`](Self::body_file)).
    #[must_use]
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The file that holds the whole body, when it was cut and the run asked for one
    /// ([`RunOptions::spill_body_to`](crate::RunOptions::spill_body_to)).
    #[must_use]
    pub fn body_file(&self) -> Option<&BodyFile> {
        self.body_file.as_ref()
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

    /// The outcomes of the request's `# @assert` directives, in order, then those of its
    /// response handlers' `client.test` calls, with the request's secrets already
    /// hidden ([`Response::redactor`]).
    #[must_use]
    pub fn assertions(&self) -> &[AssertionResult] {
        &self.assertions
    }

    /// The lines the request's pre-request scripts and response handlers logged with
    /// `client.log`, in order, with the request's secrets hidden.
    #[must_use]
    pub fn logs(&self) -> &[String] {
        &self.logs
    }

    /// `true` when every `# @assert` passed (also when there are none).
    #[must_use]
    pub fn assertions_passed(&self) -> bool {
        self.assertions.iter().all(AssertionResult::passed)
    }

    /// Lets go of what only showing the exchange needs — the body (read, streaming or a
    /// WebSocket's connection), the headers, the request as sent and the scripts' logs —
    /// and keeps the status, version, URLs, timing and assertion results. A long run
    /// keeps, of each response it has printed, what its summary still reads, so its
    /// memory does not grow with the bodies.
    pub fn release_payload(&mut self) {
        self.body = Body::Read(Bytes::new());
        self.headers = http::HeaderMap::new();
        self.request.headers = http::HeaderMap::new();
        self.request.body = Bytes::new();
        self.logs = Vec::new();
    }

    /// What hides the request's secrets — its `$secret` values, the values of the
    /// sensitive-named variables, `.env` keys and environment variables it could read,
    /// its credential headers — from whatever is shown or logged of the exchange: the
    /// URLs, headers ([`Redactor::headers`]), bodies and stream items. The response
    /// keeps them as they are (for chaining and checks).
    #[must_use]
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// `text` with the request's secrets replaced by `[REDACTED]` (see
    /// [`redactor`](Response::redactor)): use it on anything shown or logged.
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text).into_owned()
    }

    /// A response from its head, built by something else than an exchange (the remote
    /// client maps the execution server's answer): no body, no stream, no redirect, no
    /// secret values (the rules of names only), no assertions, which the caller sets on the hidden fields. Kept
    /// here so that a new field gets its default in the same file.
    #[doc(hidden)]
    #[must_use]
    pub fn from_parts(
        status: http::StatusCode,
        version: http::Version,
        headers: http::HeaderMap,
        url: url::Url,
        request: SentRequest,
        timing: Timing,
    ) -> Self {
        Self {
            status,
            version,
            headers,
            url,
            redirected: false,
            body: Body::Read(Bytes::new()),
            truncated: false,
            body_file: None,
            timing,
            request,
            redactor: Redactor::default(),
            assertions: Vec::new(),
            logs: Vec::new(),
            grpc: None,
        }
    }
}

/// Decodes body bytes with the charset named in a `Content-Type` value.
#[doc(hidden)]
#[must_use]
pub fn decode_text(body: &[u8], content_type: Option<&http::HeaderValue>) -> String {
    let charset = content_type
        .and_then(|value| value.to_str().ok())
        .and_then(charset_of)
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = charset.decode(body);
    text.into_owned()
}

/// The `charset` parameter of a `Content-Type` value (`utf-8` of
/// `application/json; charset="utf-8"`), if it has one.
#[doc(hidden)]
#[must_use]
pub fn charset_of(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches('"').to_owned())
    })
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
}
