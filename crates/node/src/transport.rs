//! A transport written in JavaScript (`config.transport.fetch(…)`): each exchange the
//! engine makes (every redirect hop and retry; redirects, cookies, timeouts and
//! cancellation stay the engine's) calls one threadsafe function, the JavaScript layer's
//! dispatcher, which builds the adapter's arguments, awaits its `Response` and answers
//! with its parts. When the engine stops waiting for an exchange (its timeout, the run's
//! cancellation, the client's close) a second function aborts the `AbortSignal` the
//! adapter was given.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;
use napi::Status;
use napi::bindgen_prelude::{Buffer, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use volley_engine::TransportError;
use volley_engine::transport::{BoxFuture, Transport, TransportRequest, TransportResponse};

/// One request, as the dispatcher receives it.
#[napi(object)]
pub struct NativeTransportRequest {
    /// The exchange's number, which an abort names.
    pub id: u32,
    /// The method.
    pub method: String,
    /// The URL.
    pub url: String,
    /// The headers as `[name, value]` pairs, in order.
    pub headers: Vec<Vec<String>>,
    /// The body; empty for none.
    pub body: Buffer,
    /// `false` when certificates are not to be checked.
    pub validate_ssl: bool,
}

/// The adapter's response, as the dispatcher answers.
#[napi(object)]
pub struct NativeTransportResponse {
    /// The status.
    pub status: u16,
    /// The headers as `[name, value]` pairs.
    pub headers: Vec<Vec<String>>,
    /// The whole body.
    pub body: Buffer,
}

impl std::fmt::Debug for NativeTransportRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeTransportRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("body_len", &self.body.len())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for NativeTransportResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeTransportResponse")
            .field("status", &self.status)
            .field("body_len", &self.body.len())
            .finish_non_exhaustive()
    }
}

/// The dispatcher; weak and called with `call_async_catch`, as the resolvers' is.
pub(crate) type TransportDispatcher = ThreadsafeFunction<
    NativeTransportRequest,
    Promise<NativeTransportResponse>,
    NativeTransportRequest,
    Status,
    false,
    true,
>;

/// Aborts the signal of exchange `id` (a call that answers nothing).
pub(crate) type TransportAborter = ThreadsafeFunction<u32, (), u32, Status, false, true>;

/// The engine's [`Transport`] over the dispatcher.
pub(crate) struct JsTransport {
    pub(crate) dispatcher: Arc<TransportDispatcher>,
    pub(crate) aborter: Arc<TransportAborter>,
    pub(crate) next: AtomicU32,
    /// Volley's own client: what opens the WebSockets and configures the gRPC TLS of a
    /// client with a JavaScript transport, whose dispatcher exchanges HTTP only.
    pub(crate) volley: volley_http::transport::HttpTransport,
}

/// Aborts its exchange's signal when dropped before the exchange answered: the engine
/// stopped waiting (a timeout, a cancellation) and the adapter should stop too.
struct AbortOnDrop {
    id: u32,
    aborter: Arc<TransportAborter>,
    answered: bool,
}

impl AbortOnDrop {
    fn answered(&mut self) {
        self.answered = true;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if !self.answered {
            let _ = self.aborter.call(self.id, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

impl std::fmt::Debug for JsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsTransport")
    }
}

impl Transport for JsTransport {
    fn send(&self, request: TransportRequest) -> BoxFuture<'_, Result<TransportResponse, TransportError>> {
        let dispatcher = Arc::clone(&self.dispatcher);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut guard = AbortOnDrop { id, aborter: Arc::clone(&self.aborter), answered: false };
        Box::pin(async move {
            let request = NativeTransportRequest {
                id,
                method: request.method.to_string(),
                url: request.url.to_string(),
                headers: request
                    .headers
                    .iter()
                    .map(|(name, value)| {
                        vec![name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()]
                    })
                    .collect(),
                body: request.body.to_vec().into(),
                validate_ssl: request.validate_ssl,
            };
            let failed = |error: napi::Error| TransportError::Other { message: format!("transport: {}", error.reason) };
            let answer = dispatcher.call_async_catch(request).await.map_err(failed)?.await;
            guard.answered();
            response_of(answer.map_err(failed)?)
        })
    }

    fn websocket<'a>(
        &'a self,
        connect: volley_engine::websocket::WsConnect<'a>,
    ) -> BoxFuture<'a, Result<volley_engine::websocket::Handshake, volley_engine::websocket::ConnectFailure>> {
        self.volley.websocket(connect)
    }

    fn tls(&self, tls: volley_engine::transport::TlsFor<'_>) -> Result<rustls::ClientConfig, TransportError> {
        self.volley.tls(tls)
    }
}

/// The engine's response from the adapter's parts; a status or header that HTTP does
/// not allow is an error of the exchange.
fn response_of(answer: NativeTransportResponse) -> Result<TransportResponse, TransportError> {
    let invalid = |what: String| TransportError::Other { message: format!("transport: {what}") };
    let status =
        http::StatusCode::from_u16(answer.status).map_err(|_| invalid(format!("invalid status {}", answer.status)))?;
    let mut headers = http::HeaderMap::new();
    for pair in answer.headers {
        let [name, value] =
            <[String; 2]>::try_from(pair).map_err(|_| invalid("a header is not a [name, value] pair".to_owned()))?;
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid(format!("invalid header name `{name}`")))?;
        let value =
            http::HeaderValue::from_str(&value).map_err(|_| invalid(format!("invalid value of header `{name}`")))?;
        headers.append(name, value);
    }
    let body = Bytes::from(Vec::from(answer.body));
    let stream = futures_util::stream::iter(std::iter::once(Ok(body)));
    Ok(TransportResponse { status, version: http::Version::HTTP_11, headers, body: Box::pin(stream) })
}
