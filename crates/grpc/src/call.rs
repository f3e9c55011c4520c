//! One call over HTTP/2: the request messages (proto3 JSON) encoded and framed, sent
//! with the metadata as headers, then the response headers, messages and status read.
//! Every request message is sent before the answers are read, which serves every kind
//! of call but a bidirectional one that waits for the server between messages.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf as _, Bytes, BytesMut};
use http_body_util::BodyExt as _;
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor, SerializeOptions};

use crate::connection::{Connect, Connections, open};
use crate::error::CallError;
use crate::outgoing::{Frames, Outgoing, RequestBody, frames, write};
use crate::status::Status;
use crate::target::Target;

/// Most bytes of one response message.
const MOST_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// Most bytes of all the response messages of a call.
const MOST_RESPONSE_BYTES: usize = 256 * 1024 * 1024;

/// The four kinds of call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One message each way.
    Unary,
    /// One message out, a stream back.
    ServerStreaming,
    /// A stream out, one message back.
    ClientStreaming,
    /// Streams both ways.
    Bidirectional,
}

impl Kind {
    /// The kind of `method`'s calls.
    #[must_use]
    pub fn of(method: &MethodDescriptor) -> Self {
        match (method.is_client_streaming(), method.is_server_streaming()) {
            (false, false) => Self::Unary,
            (false, true) => Self::ServerStreaming,
            (true, false) => Self::ClientStreaming,
            (true, true) => Self::Bidirectional,
        }
    }

    /// `unary`, `server-streaming`, …
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Unary => "unary",
            Self::ServerStreaming => "server-streaming",
            Self::ClientStreaming => "client-streaming",
            Self::Bidirectional => "bidirectional",
        }
    }
}

/// Hears each response message of a call as it arrives (proto3 JSON).
pub type OnMessage = Arc<dyn Fn(serde_json::Value) + Send + Sync>;

/// What the reading of an answer calls with each message's bytes.
type Tap<'a> = Option<&'a (dyn Fn(&Bytes) + Send + Sync)>;

/// How calls connect.
#[derive(Clone, Default)]
pub struct Settings {
    /// How long a call may take; also sent as its deadline (`grpc-timeout`).
    pub timeout: Option<Duration>,
    /// The TLS configuration of calls to `grpcs://` targets (and to Kulala's, by
    /// grpcurl's default): the trusted roots and client certificate. HTTP/2 is asked
    /// for by ALPN. Without one, such a call is refused.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Responses name fields as the proto file does (httpyac's `keepCase: true`), not by
    /// their JSON names.
    pub proto_field_names: bool,
    /// How connections are opened; `None`: directly.
    pub connect: Option<Connect>,
    /// Told each response message as it arrives (to show a stream as it comes); the
    /// outcome still has them all.
    pub on_message: Option<OnMessage>,
    /// Connections to keep and use again, for calls whose TLS and connecting are those of
    /// every call that uses them; `None`: a connection per call.
    pub connections: Option<Arc<Connections>>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("timeout", &self.timeout)
            .field("tls", &self.tls.is_some())
            .field("proto_field_names", &self.proto_field_names)
            .field("connect", &self.connect.is_some())
            .field("on_message", &self.on_message.is_some())
            .field("connections", &self.connections)
            .finish()
    }
}

/// What a call answered.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The response headers (the server's initial metadata), in order.
    pub headers: Vec<(String, String)>,
    /// The response messages, as proto3 JSON.
    pub messages: Vec<serde_json::Value>,
    /// How the call ended (a status that is not OK is an answer, not an error).
    pub status: Status,
    /// The status's details (`grpc-status-details-bin`) as proto3 JSON, each with its
    /// `@type`: the standard error details and the schema's own types decoded.
    pub details: Vec<serde_json::Value>,
    /// The trailers (the status's fields included), in order.
    pub trailers: Vec<(String, String)>,
}

/// Calls `method` at `target` with `messages` (proto3 JSON; none sends one empty
/// message for a call that takes one) and `metadata`, as `settings` say (a call that
/// does not end within the timeout ends with `DEADLINE_EXCEEDED`). The messages are
/// checked against the method's input type before anything is sent.
pub async fn call(
    target: &Target,
    method: &MethodDescriptor,
    metadata: &[(String, String)],
    messages: &[Outgoing],
    settings: &Settings,
) -> Result<CallOutcome, CallError> {
    let kind = Kind::of(method);
    let count = messages.iter().filter(|message| message.json.is_some()).count();
    if matches!(kind, Kind::Unary | Kind::ServerStreaming) && count > 1 {
        return Err(CallError::TooManyMessages { kind: kind.name(), count });
    }
    let frames = frames(&method.input(), messages, matches!(kind, Kind::Unary | Kind::ServerStreaming))?;
    let output = method.output();
    let options = SerializeOptions::new().skip_default_fields(false).use_proto_field_name(settings.proto_field_names);
    let heard = settings.on_message.as_ref().map(|on_message| {
        let (output, options) = (output.clone(), options.clone());
        move |bytes: &Bytes| {
            if let Ok(message) = to_json(&output, bytes.clone(), &options) {
                on_message(message);
            }
        }
    });
    let tap: Tap<'_> = heard.as_ref().map(|heard| heard as &(dyn Fn(&Bytes) + Send + Sync));
    let raw = exchange_tapped(target, &target.path(), metadata, frames, settings, tap).await?;
    let messages = raw.messages.into_iter().map(|bytes| to_json(&output, bytes, &options)).collect::<Result<_, _>>()?;
    // A call that fails at once answers "trailers only": the details in the headers.
    let details = crate::details::details(raw.trailers.iter().chain(&raw.headers), output.parent_pool());
    Ok(CallOutcome { headers: raw.headers, messages, status: raw.status, details, trailers: raw.trailers })
}

/// A call's answer before its messages are read: their bytes.
pub(crate) struct RawOutcome {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) messages: Vec<Bytes>,
    pub(crate) status: Status,
    pub(crate) trailers: Vec<(String, String)>,
}

/// Sends the framed `body` to `path` (`/package.Service/Method`) at `target` and reads the
/// answer, within `timeout` (as gRPC's own clients do, a deadline that passes here ends
/// the call with `DEADLINE_EXCEEDED`, whether the server or this side saw it first).
pub(crate) async fn exchange(
    target: &Target,
    path: &str,
    metadata: &[(String, String)],
    body: Frames,
    settings: &Settings,
) -> Result<RawOutcome, CallError> {
    exchange_tapped(target, path, metadata, body, settings, None).await
}

/// [`exchange`], each response message's bytes handed to `tap` as it arrives.
async fn exchange_tapped(
    target: &Target,
    path: &str,
    metadata: &[(String, String)],
    body: Frames,
    settings: &Settings,
    tap: Tap<'_>,
) -> Result<RawOutcome, CallError> {
    let tls = if target.tls.unwrap_or(target.grpcurl_form) {
        Some(settings.tls.clone().ok_or(CallError::Tls)?)
    } else {
        None
    };
    let (sender, receiver) = tokio::sync::mpsc::channel(4);
    let request = request(target, path, metadata, RequestBody::new(receiver), settings.timeout, tls.is_some())?;
    let ways = (settings.connect.as_ref(), settings.connections.as_deref());
    let exchange = send(target, request, tls, (body, sender), ways, tap);
    let Some(limit) = settings.timeout else { return exchange.await };
    match tokio::time::timeout(limit, exchange).await {
        Ok(outcome) => outcome,
        Err(_) => Ok(RawOutcome {
            headers: Vec::new(),
            messages: Vec::new(),
            status: Status {
                code: crate::status::Code::DeadlineExceeded,
                number: 4,
                message: format!("the call did not end within {} ms", limit.as_millis()),
            },
            trailers: Vec::new(),
        }),
    }
}

fn request(
    target: &Target,
    path: &str,
    metadata: &[(String, String)],
    body: RequestBody,
    timeout: Option<Duration>,
    tls: bool,
) -> Result<http::Request<RequestBody>, CallError> {
    let scheme = if tls { "https" } else { "http" };
    let mut builder = http::Request::post(format!("{scheme}://{}{path}", target.authority))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("user-agent", concat!("volley/", env!("CARGO_PKG_VERSION"), " grpc"));
    if let Some(limit) = timeout {
        // Milliseconds, at most the 8 digits gRPC allows.
        builder = builder.header("grpc-timeout", format!("{}m", limit.as_millis().min(99_999_999)));
    }
    for (name, value) in metadata {
        let name = http::HeaderName::from_bytes(name.trim().to_ascii_lowercase().as_bytes())
            .map_err(|_| CallError::Metadata(name.clone()))?;
        let value = http::HeaderValue::from_str(value.trim()).map_err(|_| CallError::Metadata(name.to_string()))?;
        builder = builder.header(name, value);
    }
    builder.body(body).map_err(|error| CallError::Http(error.to_string()))
}

async fn send(
    target: &Target,
    request: http::Request<RequestBody>,
    tls: Option<Arc<rustls::ClientConfig>>,
    (frames, sender): (Frames, tokio::sync::mpsc::Sender<Bytes>),
    (connect, pool): (Option<&Connect>, Option<&Connections>),
    tap: Tap<'_>,
) -> Result<RawOutcome, CallError> {
    let (count, received) = tokio::sync::watch::channel(0);
    let writer = tokio::spawn(write(frames, sender, received));
    let outcome = async {
        let http = |error: hyper::Error| CallError::Http(error.to_string());
        let Some(pool) = pool else {
            let (mut connection, driver) = open(target, tls.clone(), connect).await?;
            let response = connection.send_request(request).await.map_err(http);
            let outcome = match response {
                Ok(response) => read(response, &count, tap).await,
                Err(error) => Err(error),
            };
            driver.abort();
            return outcome;
        };
        // A kept connection, else a new one, kept for the next calls. A kept one the
        // server closed meanwhile gives the request back: it goes on a new one.
        let key = format!("{}|{}", tls.is_some(), target.authority);
        let mut kept = pool.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key).cloned();
        let alive = match kept.as_mut() {
            Some(kept) => !kept.is_closed() && kept.ready().await.is_ok(),
            None => false,
        };
        let (mut connection, fresh) = match kept.filter(|_| alive) {
            Some(kept) => (kept, false),
            None => (pool.open(&key, target, tls.clone(), connect).await?, true),
        };
        let response = match connection.try_send_request(request).await {
            Ok(response) => response,
            Err(mut error) => match error.take_message().filter(|_| !fresh) {
                Some(request) => {
                    let mut connection = pool.open(&key, target, tls.clone(), connect).await?;
                    connection.send_request(request).await.map_err(http)?
                }
                None => return Err(http(error.into_error())),
            },
        };
        read(response, &count, tap).await
    }
    .await;
    writer.abort();
    outcome
}

async fn read(
    response: http::Response<hyper::body::Incoming>,
    count: &tokio::sync::watch::Sender<usize>,
    tap: Tap<'_>,
) -> Result<RawOutcome, CallError> {
    let content_type = response.headers().get("content-type").and_then(|value| value.to_str().ok()).unwrap_or("");
    if response.status() != http::StatusCode::OK || !content_type.starts_with("application/grpc") {
        return Err(CallError::NotGrpc { status: response.status().as_u16(), content_type: content_type.to_owned() });
    }
    let headers = pairs(response.headers());
    // A call that fails at once answers "trailers only": the status in the headers.
    let mut status = status_of(response.headers());
    let mut trailers = Vec::new();
    let mut messages = Vec::new();
    let mut buffer = BytesMut::new();
    let mut received = 0usize;
    let mut body = response.into_body();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| CallError::Http(error.to_string()))?;
        if let Some(data) = frame.data_ref() {
            received += data.len();
            if received > MOST_RESPONSE_BYTES {
                return Err(CallError::TooLarge(MOST_RESPONSE_BYTES >> 20));
            }
            buffer.extend_from_slice(data);
            while let Some(message) = next_message(&mut buffer)? {
                if let Some(tap) = tap {
                    tap(&message);
                }
                messages.push(message);
                count.send_replace(messages.len());
            }
        } else if let Some(fields) = frame.trailers_ref() {
            trailers = pairs(fields);
            status = status_of(fields).or(status);
        }
    }
    if !buffer.is_empty() {
        return Err(CallError::Cut);
    }
    let status = status.ok_or(CallError::NoStatus)?;
    Ok(RawOutcome { headers, messages, status, trailers })
}

/// The next whole message of `buffer`, taken out of it.
fn next_message(buffer: &mut BytesMut) -> Result<Option<Bytes>, CallError> {
    if buffer.len() < 5 {
        return Ok(None);
    }
    let compressed = buffer[0] != 0;
    let length =
        usize::try_from(u32::from_be_bytes([buffer[1], buffer[2], buffer[3], buffer[4]])).unwrap_or(usize::MAX);
    if length > MOST_MESSAGE_BYTES {
        return Err(CallError::TooLarge(MOST_MESSAGE_BYTES >> 20));
    }
    if buffer.len() < 5 + length {
        return Ok(None);
    }
    if compressed {
        return Err(CallError::Compressed);
    }
    buffer.advance(5);
    Ok(Some(buffer.split_to(length).freeze()))
}

/// A response message of type `output` as proto3 JSON.
fn to_json(
    output: &MessageDescriptor,
    bytes: Bytes,
    options: &SerializeOptions,
) -> Result<serde_json::Value, CallError> {
    let failed = |reason: String| CallError::Decode { message: output.full_name().to_owned(), reason };
    let message = DynamicMessage::decode(output.clone(), bytes).map_err(|error| failed(error.to_string()))?;
    message.serialize_with_options(serde_json::value::Serializer, options).map_err(|error| failed(error.to_string()))
}

fn pairs(headers: &http::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect()
}

fn status_of(headers: &http::HeaderMap) -> Option<Status> {
    let field = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    Status::from_fields(field("grpc-status"), field("grpc-message"))
}
