//! `NativeResponse`: the parts of the engine's [`Response`] that a Fetch API `Response`
//! is built from, with a body that can be read whole or chunk by chunk.

use std::pin::Pin;

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use volley_engine::{BodyError, CancellationToken, Response};

type Chunks = Pin<Box<dyn Stream<Item = Result<Bytes, BodyError>> + Send>>;

/// A response: status line, headers, final URL, and a body that was read with the
/// response (`takeBody()`) or still arrives (`streaming`, then `read()` until `null`).
#[napi]
pub struct NativeResponse {
    status: u16,
    status_text: String,
    headers: Vec<Vec<String>>,
    url: String,
    redirected: bool,
    /// The body read with the response (empty for a streamed one), until `takeBody()`.
    body: parking_lot::Mutex<Option<Vec<u8>>>,
    /// A streamed body still to come; `None` once it ended or for a body read whole.
    chunks: tokio::sync::Mutex<Option<Chunks>>,
    /// Triggered by `cancel()`: ends a `read()` under way, which holds `chunks`.
    stop: CancellationToken,
    streaming: bool,
    grpc: Option<GrpcStatus>,
}

/// How a gRPC call ended: the `grpc` property of its `Response`.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct GrpcStatus {
    /// `OK`, `NOT_FOUND`, …
    pub code: String,
    /// 0 for `OK`.
    pub number: u32,
    /// `grpc-message`, decoded; empty when the server sent none.
    pub message: String,
    /// The status's details, each as proto3 JSON with its `@type`.
    pub details: Vec<serde_json::Value>,
    /// `unary`, `server-streaming`, `client-streaming` or `bidirectional`.
    pub kind: String,
}

impl std::fmt::Debug for NativeResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeResponse")
            .field("status", &self.status)
            .field("url", &self.url)
            .field("streaming", &self.streaming)
            .finish_non_exhaustive()
    }
}

impl From<Response> for NativeResponse {
    fn from(response: Response) -> Self {
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| vec![name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()])
            .collect();
        let streaming = response.is_streaming();
        // Only a streamed body needs its stream: a body read whole is handed over once.
        let chunks = streaming.then(|| -> Chunks { Box::pin(response.body_stream()) });
        Self {
            status: response.status(),
            status_text: response.status_text().to_owned(),
            headers,
            url: response.url().to_string(),
            redirected: response.redirected(),
            body: parking_lot::Mutex::new(Some(response.body_bytes().to_vec())),
            chunks: tokio::sync::Mutex::new(chunks),
            stop: CancellationToken::new(),
            streaming,
            grpc: response.grpc().map(|grpc| GrpcStatus {
                code: grpc.code.clone(),
                number: grpc.number,
                message: response.redact(&grpc.message),
                details: grpc.details.iter().map(|detail| response.redactor().redact_json(detail)).collect(),
                kind: grpc.kind.to_owned(),
            }),
        }
    }
}

#[napi]
impl NativeResponse {
    /// The status code.
    #[napi(getter)]
    #[must_use]
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The reason phrase of the status (`"OK"`), empty for an unknown status.
    #[napi(getter)]
    #[must_use]
    pub fn status_text(&self) -> String {
        self.status_text.clone()
    }

    /// The headers as `[name, value]` pairs in the order received (names lowercase;
    /// a repeated header is one pair per value).
    #[napi(getter)]
    #[must_use]
    pub fn headers(&self) -> Vec<Vec<String>> {
        self.headers.clone()
    }

    /// The URL of the final response (after redirects).
    #[napi(getter)]
    #[must_use]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// `true` when redirects were followed.
    #[napi(getter)]
    #[must_use]
    pub fn redirected(&self) -> bool {
        self.redirected
    }

    /// How a gRPC call ended; `null` for other requests (whose body is then not JSON lines).
    #[napi(getter)]
    #[must_use]
    pub fn grpc(&self) -> Option<GrpcStatus> {
        self.grpc.clone()
    }

    /// `true` when the body still arrives (an event stream): read it with `read()`.
    #[napi(getter)]
    #[must_use]
    pub fn streaming(&self) -> bool {
        self.streaming
    }

    /// The body read with the response, decoded (gzip, brotli, deflate), handed over
    /// without a copy: a second call gives an empty buffer, as does a streamed body.
    #[napi]
    #[must_use]
    pub fn take_body(&self) -> Buffer {
        self.body.lock().take().unwrap_or_default().into()
    }

    /// The next chunk of the body, `null` at its end: as they arrive for a streamed
    /// body, else the body read with the response in one chunk (unless `takeBody()`
    /// took it).
    #[napi]
    pub async fn read(&self) -> napi::Result<Option<Buffer>> {
        if !self.streaming {
            return Ok(self.body.lock().take().map(Buffer::from));
        }
        let mut guard = self.chunks.lock().await;
        let Some(chunks) = guard.as_mut() else { return Ok(None) };
        let next = tokio::select! {
            biased;
            () = self.stop.cancelled() => None,
            next = chunks.next() => next,
        };
        match next {
            Some(Ok(chunk)) => Ok(Some(chunk.to_vec().into())),
            Some(Err(error)) => {
                *guard = None;
                Err(napi::Error::from_reason(error.to_string()))
            }
            None => {
                *guard = None;
                Ok(None)
            }
        }
    }

    /// Stops a streamed body: a `read()` waiting for a chunk gives `null` at once, and
    /// the stream (the connection) is dropped.
    #[napi]
    pub fn cancel(&self) {
        self.stop.cancel();
        // Without a `read()` under way, the stream goes now; else that read drops it.
        if let Ok(mut chunks) = self.chunks.try_lock() {
            chunks.take();
        }
    }
}
