//! Server-owned WebSocket sessions (`POST /execute/ws`): the execution server holds
//! the upstream connection open; a [`WsSessionHandle`] names the session and opens its
//! control socket (`GET /ws/session/{id}?afterSeq=N`), a [`WsSessionSocket`] that sends
//! commands and receives the session's numbered [`WsEnvelope`]s.
//!
//! [`RemoteClient::run`] on a WebSocket definition opens a session the same way and
//! hands it out as a [`WebSocket`](crate::websocket::WebSocket) (see `ws_adapter`).

use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};
use http::header::AUTHORIZATION;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::answer::{self, WireAssertions};
use super::request::{self, Defaults, ExecuteBody};
use super::{RUN_MARGIN, RemoteClient, cancellable};
use crate::assert::AssertionResult;
use crate::client::RunOptions;
use crate::error::{Error, TransportError};
use crate::websocket::{self, ConnectFailure, WsClose, WsError, WsMessage, WsReceiver, WsSender};

/// How long opening a control socket may take.
const CONTROL_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How the server sets up a session it opens; each `None` leaves the server's default.
#[derive(Debug, Clone, Default)]
pub struct WsSessionOptions {
    /// How long the server may take to connect upstream (`connectTimeoutMs`, sent in
    /// whole milliseconds within 100..=300000; default: the definition's
    /// `@ws-connect-timeout`, else 30 s).
    pub connect_timeout: Option<Duration>,
    /// The session closes after this long without traffic (`idleTimeoutMs`; default
    /// 5 minutes).
    pub idle_timeout: Option<Duration>,
    /// How many envelopes the server keeps for a reconnecting control socket
    /// (`replayBufferSize`, 1..=5000; default 500).
    pub replay_buffer_size: Option<usize>,
}

impl WsSessionOptions {
    /// Sets the upstream connection timeout.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Sets the idle timeout of the session.
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = Some(timeout);
        self
    }

    /// Sets the size of the replay buffer.
    #[must_use]
    pub fn replay_buffer_size(mut self, size: usize) -> Self {
        self.replay_buffer_size = Some(size);
        self
    }

    fn apply(&self, body: &mut ExecuteBody<'_>) {
        body.connect_timeout_ms = self.connect_timeout.map(request::timeout_ms);
        body.idle_timeout_ms = self.idle_timeout.map(|timeout| u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX));
        body.replay_buffer_size = self.replay_buffer_size;
    }
}

/// What `POST /execute/ws` answered: the run that opened the session, and the session.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WsSessionInfo {
    /// The run that opened the session.
    pub run_id: String,
    /// The flow of the run.
    pub flow_id: Option<String>,
    /// The execution of the run (stored in the flow).
    pub req_exec_id: Option<String>,
    /// The request as the server selected it: `{index, name?, method, url, urlResolved}`.
    pub request: Value,
    /// Where the server found things: `{workspaceRoot, basePath, httpFilePath?, configPath?}`.
    pub resolved: Value,
    /// The session's id (`ws_<uuid>`).
    pub ws_session_id: String,
    /// The path of the control socket on the server (`/ws/session/<id>`).
    pub downstream_path: String,
    /// The upstream URL the server connected to.
    pub upstream_url: String,
    /// The subprotocol the upstream chose, if any.
    pub subprotocol: Option<String>,
    /// How many envelopes the server keeps for replay.
    pub replay_buffer_size: usize,
    /// The last `seq` of the session when the server answered (`session.opened` is 1).
    pub last_seq: u64,
}

/// A WebSocket session the execution server holds open upstream. Clones share the
/// record of the last `seq` received.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use futures_util::StreamExt as _;
/// use volley_engine::remote::{WsEnvelopeKind, WsSessionOptions};
/// use volley_engine::{RemoteClient, RemoteConfig, RunOptions};
///
/// let client = RemoteClient::new(RemoteConfig::new("http://127.0.0.1:4097"))?;
/// let session = client.open_websocket("chat.http", RunOptions::default(), WsSessionOptions::default()).await?;
/// let mut socket = session.connect(None).await?;
/// socket.send_text("hello").await?;
/// while let Some(envelope) = socket.next().await {
///     let envelope = envelope?;
///     if envelope.kind == WsEnvelopeKind::Inbound {
///         println!("{}", envelope.text().unwrap_or_default());
///         break;
///     }
/// }
/// // Later, from another process or after a network failure: the rest, then live.
/// let socket = session.connect(Some(session.last_seq())).await?;
/// socket.close(1000, "done").await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct WsSessionHandle {
    client: RemoteClient,
    info: Arc<WsSessionInfo>,
    seen: Arc<AtomicU64>,
}

impl std::fmt::Debug for WsSessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsSessionHandle")
            .field("info", &self.info)
            .field("last_seq", &self.last_seq())
            .finish_non_exhaustive()
    }
}

impl WsSessionHandle {
    /// What the server answered when it opened the session.
    #[must_use]
    pub fn info(&self) -> &WsSessionInfo {
        &self.info
    }

    /// The session's id (`ws_<uuid>`).
    #[must_use]
    pub fn id(&self) -> &str {
        &self.info.ws_session_id
    }

    /// The subprotocol the upstream chose, if any.
    #[must_use]
    pub fn subprotocol(&self) -> Option<&str> {
        self.info.subprotocol.as_deref()
    }

    /// The largest `seq` received by this handle's control sockets (0 before any):
    /// [`connect`](WsSessionHandle::connect) with it to go on where they stopped.
    /// Only envelopes the server keeps for replay count (`session.opened`, `.inbound`,
    /// `.outbound`, `.closed`): `session.error` and `session.replay.end` may be sent to
    /// one socket only and carry the session's last `seq` at that moment.
    #[must_use]
    pub fn last_seq(&self) -> u64 {
        self.seen.load(Ordering::Acquire)
    }

    /// Opens a control socket (`GET {server}{downstreamPath}?afterSeq=N`, with the
    /// client's bearer token). The server first replays the envelopes it kept with a
    /// `seq` above `after_seq` (all of them for `None`), then sends
    /// `session.replay.end`, then live envelopes. A new control socket replaces the
    /// previous one, which the server closes with 1000.
    pub async fn connect(&self, after_seq: Option<u64>) -> Result<WsSessionSocket, Error> {
        let server = &self.client.inner.server;
        let url = control_url(server.base(), &self.info.downstream_path, after_seq)?;
        let mut headers = http::HeaderMap::new();
        if let Some(token) = server.token() {
            let value = http::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                Error::Transport(TransportError::Other {
                    message: "the token of the execution server is not a valid header value".to_owned(),
                })
            })?;
            headers.insert(AUTHORIZATION, value);
        }
        // Boxed: the handshake's future is large, and would make every run's future so.
        let handshake =
            Box::pin(websocket::handshake(&url, &headers, true, CONTROL_CONNECT_TIMEOUT)).await.map_err(|failure| {
                match failure {
                    ConnectFailure::Refused { status, body } => answer::server_error(status, &body),
                    ConnectFailure::Transport(TransportError::ConnectionRefused { .. }) => {
                        Error::Transport(TransportError::ConnectionRefused {
                            host: format!("the execution server at {}", server.base()),
                        })
                    }
                    ConnectFailure::Transport(error) => Error::Transport(error),
                }
            })?;
        let (sender, receiver) = handshake.socket.split();
        Ok(WsSessionSocket {
            sender: WsSessionSender { socket: sender },
            receiver: WsSessionReceiver { socket: receiver, seen: Arc::clone(&self.seen), close: None, ended: false },
        })
    }
}

impl RemoteClient {
    /// Reads the `.http` file at `path` here and has the server open the selected
    /// WebSocket request as a session it owns (`POST /execute/ws`); `basePath` as
    /// [`run`](RemoteClient::run) sends it. Nothing is received until
    /// [`WsSessionHandle::connect`]; what arrives before is kept for replay.
    pub async fn open_websocket(
        &self,
        path: impl AsRef<Path>,
        options: RunOptions,
        session: WsSessionOptions,
    ) -> Result<WsSessionHandle, Error> {
        let path = path.as_ref();
        let text = super::read_text(path)?;
        self.open_websocket_text(&text, request::base_path(path), &options, &session).await.map(|(handle, _)| handle)
    }

    /// [`open_websocket`](RemoteClient::open_websocket) of `content` (`.http` text);
    /// `basePath` comes from [`RunOptions::source_path`].
    pub async fn open_websocket_string(
        &self,
        content: &str,
        options: RunOptions,
        session: WsSessionOptions,
    ) -> Result<WsSessionHandle, Error> {
        let base_path = options.source_path.as_deref().and_then(request::base_path);
        self.open_websocket_text(content, base_path, &options, &session).await.map(|(handle, _)| handle)
    }

    /// `POST /execute/ws` in the client's session and flow: the handle, and the
    /// assertions the server checked on the handshake when it reports them.
    pub(super) async fn open_websocket_text(
        &self,
        content: &str,
        base_path: Option<String>,
        options: &RunOptions,
        session: &WsSessionOptions,
    ) -> Result<(WsSessionHandle, Vec<AssertionResult>), Error> {
        let work = async {
            let (session_id, flow_id) = self.ensure_session_and_flow().await?;
            self.flush_variables(&session_id).await?;
            let config = &self.inner.config;
            let defaults = Defaults { profile: config.profile.as_deref(), timeout: config.timeout };
            let mut body = ExecuteBody::new(content, base_path, options, defaults, (&session_id, &flow_id));
            session.apply(&mut body);
            let connect = body.connect_timeout_ms.or(body.timeout_ms).unwrap_or(request::MAX_TIMEOUT_MS);
            let timeout = Duration::from_millis(connect) + RUN_MARGIN;
            let server = &self.inner.server;
            let answer = server.call(http::Method::POST, &["execute", "ws"], Some(&body), Some(timeout)).await?;
            let bytes = answer.bytes().await.map_err(|error| server.transport_error(&error, timeout))?;
            let (info, assertions) =
                session_from_answer(&bytes, Some(content)).map_err(|problem| server.unexpected_answer(&problem))?;
            let handle = WsSessionHandle { client: self.clone(), info: Arc::new(info), seen: Arc::default() };
            Ok((handle, assertions))
        };
        cancellable(options.cancel.clone(), work).await
    }
}

/// The control socket of a session: commands out, envelopes in (a stream that ends
/// when the server closes the socket; [`close_frame`](WsSessionSocket::close_frame)
/// then says why). [`split`](WsSessionSocket::split) gives the halves to different
/// tasks.
#[derive(Debug)]
pub struct WsSessionSocket {
    sender: WsSessionSender,
    receiver: WsSessionReceiver,
}

impl WsSessionSocket {
    /// A handle that sends on this socket (clones share it).
    #[must_use]
    pub fn sender(&self) -> WsSessionSender {
        self.sender.clone()
    }

    /// Sends a text message upstream (`session.send`, `payloadType: "text"`).
    pub async fn send_text(&self, text: impl Into<String>) -> Result<(), WsError> {
        self.sender.send_text(text).await
    }

    /// Sends `value` upstream as JSON text (`session.send`, `payloadType: "json"`).
    pub async fn send_json(&self, value: &impl Serialize) -> Result<(), WsError> {
        self.sender.send_json(value).await
    }

    /// Keeps the session from idling (`session.ping`); nothing answers it.
    pub async fn ping(&self) -> Result<(), WsError> {
        self.sender.ping().await
    }

    /// Closes the upstream connection (`session.close`): the server answers with
    /// `session.closed`, then closes this socket with 1000 and ends the session.
    pub async fn close(&self, code: u16, reason: &str) -> Result<(), WsError> {
        self.sender.close(code, reason).await
    }

    /// The largest `seq` received so far by the sockets of this session's handle (see
    /// [`WsSessionHandle::last_seq`]).
    #[must_use]
    pub fn last_seq(&self) -> u64 {
        self.receiver.last_seq()
    }

    /// The server's close frame of this socket, once the stream has ended with one:
    /// 1000 session closed or socket replaced, 1001 idle timeout or shutdown, 1008
    /// session gone, 1011 internal error, 1013 too slow or at capacity (reconnect
    /// with [`last_seq`](WsSessionSocket::last_seq)).
    #[must_use]
    pub fn close_frame(&self) -> Option<&WsClose> {
        self.receiver.close_frame()
    }

    /// The sending and the receiving halves, for different tasks.
    #[must_use]
    pub fn split(self) -> (WsSessionSender, WsSessionReceiver) {
        (self.sender, self.receiver)
    }
}

impl Stream for WsSessionSocket {
    type Item = Result<WsEnvelope, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.receiver).poll_next(cx)
    }
}

/// The sending half of a control socket.
#[derive(Debug, Clone)]
pub struct WsSessionSender {
    socket: WsSender,
}

impl WsSessionSender {
    /// Sends a text message upstream (`session.send`, `payloadType: "text"`).
    pub async fn send_text(&self, text: impl Into<String>) -> Result<(), WsError> {
        let text: String = text.into();
        self.command(&json!({ "type": "session.send", "payloadType": "text", "payload": text })).await
    }

    /// Sends `value` upstream as JSON text (`session.send`, `payloadType: "json"`): the
    /// text `serde_json` writes for it, fields in their order.
    pub async fn send_json(&self, value: &impl Serialize) -> Result<(), WsError> {
        /// `session.send` with the payload's JSON text written as it is.
        #[derive(Serialize)]
        struct SendJson<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(rename = "payloadType")]
            payload_type: &'static str,
            payload: &'a RawValue,
        }
        let payload = serde_json::value::to_raw_value(value).map_err(|error| WsError::Connection(error.to_string()))?;
        self.command(&SendJson { kind: "session.send", payload_type: "json", payload: &payload }).await
    }

    /// Keeps the session from idling (`session.ping`); nothing answers it.
    pub async fn ping(&self) -> Result<(), WsError> {
        self.command(&json!({ "type": "session.ping" })).await
    }

    /// Closes the upstream connection (`session.close`; the server takes 1000 and
    /// 3000–4999).
    pub async fn close(&self, code: u16, reason: &str) -> Result<(), WsError> {
        self.command(&json!({ "type": "session.close", "code": code, "reason": reason })).await
    }

    /// Closes this control socket only: the session stays open upstream and keeps
    /// what arrives for the next [`WsSessionHandle::connect`].
    pub async fn disconnect(&self) -> Result<(), WsError> {
        self.socket.close(1000, "").await
    }

    async fn command(&self, command: &impl Serialize) -> Result<(), WsError> {
        let text = serde_json::to_string(command).map_err(|error| WsError::Connection(error.to_string()))?;
        self.socket.send_text(text).await
    }
}

/// The receiving half of a control socket: the session's envelopes as they arrive.
#[derive(Debug)]
pub struct WsSessionReceiver {
    socket: WsReceiver,
    seen: Arc<AtomicU64>,
    close: Option<WsClose>,
    ended: bool,
}

impl WsSessionReceiver {
    /// See [`WsSessionSocket::last_seq`].
    #[must_use]
    pub fn last_seq(&self) -> u64 {
        self.seen.load(Ordering::Acquire)
    }

    /// See [`WsSessionSocket::close_frame`].
    #[must_use]
    pub fn close_frame(&self) -> Option<&WsClose> {
        self.close.as_ref()
    }
}

impl Stream for WsSessionReceiver {
    type Item = Result<WsEnvelope, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if self.ended {
                return Poll::Ready(None);
            }
            let message = match self.socket.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(message) => message,
            };
            let item = match message {
                None => {
                    self.ended = true;
                    return Poll::Ready(None);
                }
                Some(Ok(WsMessage::Text(text))) => match WsEnvelope::parse(&text) {
                    Ok(envelope) => {
                        if envelope.kind.is_retained() {
                            self.seen.fetch_max(envelope.seq, Ordering::AcqRel);
                        }
                        Ok(envelope)
                    }
                    Err(error) => Err(WsError::Connection(format!(
                        "the execution server sent a message that is not a session envelope: {error}"
                    ))),
                },
                Some(Ok(WsMessage::Pong(_))) => continue,
                Some(Ok(WsMessage::Close(frame))) => {
                    self.close = frame;
                    self.ended = true;
                    return Poll::Ready(None);
                }
                Some(Err(WsError::Binary { len })) => Err(WsError::Connection(format!(
                    "the execution server sent a binary message of {len} bytes; control sockets carry JSON text"
                ))),
                Some(Err(error)) => Err(error),
            };
            return Poll::Ready(Some(item));
        }
    }
}

/// One message of a control socket (server → client).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WsEnvelope {
    /// The `type`.
    #[serde(rename = "type")]
    pub kind: WsEnvelopeKind,
    /// When, in epoch milliseconds.
    #[serde(default)]
    pub ts: u64,
    /// Numbered per session from 1 (`session.opened`).
    pub seq: u64,
    /// The session.
    #[serde(default)]
    pub ws_session_id: String,
    /// The flow of the run that opened the session.
    #[serde(default)]
    pub flow_id: Option<String>,
    /// The execution that opened the session.
    #[serde(default)]
    pub req_exec_id: Option<String>,
    /// `text` or `json` for messages.
    #[serde(default)]
    pub payload_type: Option<String>,
    /// `utf-8` for messages.
    #[serde(default)]
    pub encoding: Option<String>,
    /// The size of the upstream frame in bytes.
    #[serde(default)]
    pub byte_length: Option<u64>,
    /// The content: a string for a text message, the parsed value for a JSON one, an
    /// object for the other types.
    #[serde(default)]
    pub payload: Option<Value>,
    /// The problem of a `session.error`.
    #[serde(default)]
    pub error: Option<WsEnvelopeError>,
    /// The JSON text of a `json` payload as the server relayed it: the message's own
    /// text (set by [`WsEnvelope::parse`]).
    #[serde(skip)]
    payload_json: Option<String>,
}

impl WsEnvelope {
    /// An envelope from the JSON text of a control socket frame.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        let mut envelope: WsEnvelope = serde_json::from_str(text)?;
        if envelope.payload_type.as_deref() == Some("json") {
            /// The payload alone, as its text.
            #[derive(Deserialize)]
            struct PayloadText<'a> {
                #[serde(borrow)]
                payload: Option<&'a RawValue>,
            }
            let payload = serde_json::from_str::<PayloadText<'_>>(text)?.payload;
            envelope.payload_json = payload.map(|raw| raw.get().to_owned());
        }
        Ok(envelope)
    }

    /// The payload as message text: a string as it is; a `json` payload as its text,
    /// keys in their order and numbers as written (for an envelope read with
    /// [`WsEnvelope::parse`]; serialized compactly otherwise). `None` without a payload.
    #[must_use]
    pub fn text(&self) -> Option<String> {
        match self.payload.as_ref()? {
            Value::String(text) => Some(text.clone()),
            other => Some(self.payload_json.clone().unwrap_or_else(|| other.to_string())),
        }
    }

    /// The code and reason of a `session.closed` (1005, no code, when it has none);
    /// `None` for the other types.
    #[must_use]
    pub fn closed(&self) -> Option<WsClose> {
        if self.kind != WsEnvelopeKind::Closed {
            return None;
        }
        let payload = self.payload.as_ref();
        let code = payload.and_then(|payload| payload.get("code")).and_then(Value::as_u64);
        let reason = payload.and_then(|payload| payload.get("reason")).and_then(Value::as_str);
        Some(WsClose {
            code: code.and_then(|code| u16::try_from(code).ok()).unwrap_or(1005),
            reason: reason.unwrap_or_default().to_owned(),
        })
    }
}

/// The `error` of a `session.error` envelope.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct WsEnvelopeError {
    /// `WS_UPSTREAM_ERROR`, `WS_UPSTREAM_NOT_OPEN`, `WS_SEND_FAILED`, `WS_INVALID_JSON`,
    /// `WS_PROTOCOL_ERROR`, `WS_BINARY_UNSUPPORTED`, `WS_FRAME_TOO_LARGE` or
    /// `WS_REPLAY_GAP`.
    pub code: String,
    /// For people.
    #[serde(default)]
    pub message: String,
}

/// The `type` of an envelope.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
#[non_exhaustive]
pub enum WsEnvelopeKind {
    /// `session.opened`: payload `{upstreamUrl, subprotocol?}`.
    Opened,
    /// `session.inbound`: a message from upstream.
    Inbound,
    /// `session.outbound`: a message sent upstream (the echo of a `session.send`).
    Outbound,
    /// `session.closed`: payload `{code, reason, wasClean}`; the session is over.
    Closed,
    /// `session.error`: see [`WsEnvelope::error`].
    Error,
    /// `session.replay.end`: payload `{afterSeq, replayed, gap}`; live envelopes follow.
    ReplayEnd,
    /// A type this client does not know.
    Other(String),
}

impl WsEnvelopeKind {
    /// The wire name (`session.inbound`).
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            WsEnvelopeKind::Opened => "session.opened",
            WsEnvelopeKind::Inbound => "session.inbound",
            WsEnvelopeKind::Outbound => "session.outbound",
            WsEnvelopeKind::Closed => "session.closed",
            WsEnvelopeKind::Error => "session.error",
            WsEnvelopeKind::ReplayEnd => "session.replay.end",
            WsEnvelopeKind::Other(other) => other,
        }
    }

    /// Envelopes of this type are kept for replay, so their `seq` is the session's
    /// numbering (`session.error` may be for one socket only).
    fn is_retained(&self) -> bool {
        matches!(
            self,
            WsEnvelopeKind::Opened | WsEnvelopeKind::Inbound | WsEnvelopeKind::Outbound | WsEnvelopeKind::Closed
        )
    }
}

impl From<String> for WsEnvelopeKind {
    fn from(kind: String) -> Self {
        match kind.as_str() {
            "session.opened" => WsEnvelopeKind::Opened,
            "session.inbound" => WsEnvelopeKind::Inbound,
            "session.outbound" => WsEnvelopeKind::Outbound,
            "session.closed" => WsEnvelopeKind::Closed,
            "session.error" => WsEnvelopeKind::Error,
            "session.replay.end" => WsEnvelopeKind::ReplayEnd,
            _ => WsEnvelopeKind::Other(kind),
        }
    }
}

impl std::fmt::Display for WsEnvelopeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The answer of `POST /execute/ws` (the fields the client uses).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireAnswer {
    run_id: String,
    flow_id: Option<String>,
    req_exec_id: Option<String>,
    #[serde(default)]
    request: Value,
    #[serde(default)]
    resolved: Value,
    ws: WireSession,
    assertions: Option<WireAssertions>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSession {
    ws_session_id: String,
    downstream_path: Option<String>,
    #[serde(default)]
    upstream_url: String,
    subprotocol: Option<String>,
    #[serde(default)]
    replay_buffer_size: usize,
    #[serde(default)]
    last_seq: u64,
}

/// The session of a `POST /execute/ws` answer, and its assertions (positioned in
/// `content`) when it has some; `Err` says what is wrong with an answer of another shape.
fn session_from_answer(answer: &[u8], content: Option<&str>) -> Result<(WsSessionInfo, Vec<AssertionResult>), String> {
    let answer: WireAnswer = serde_json::from_slice(answer).map_err(|error| format!("invalid JSON: {error}"))?;
    let ws = answer.ws;
    if ws.ws_session_id.is_empty() {
        return Err("the session has no id".to_owned());
    }
    let downstream_path = ws
        .downstream_path
        .filter(|path| path.starts_with('/'))
        .unwrap_or_else(|| format!("/ws/session/{}", ws.ws_session_id));
    let info = WsSessionInfo {
        run_id: answer.run_id,
        flow_id: answer.flow_id,
        req_exec_id: answer.req_exec_id,
        request: answer.request,
        resolved: answer.resolved,
        ws_session_id: ws.ws_session_id,
        downstream_path,
        upstream_url: ws.upstream_url,
        subprotocol: ws.subprotocol,
        replay_buffer_size: ws.replay_buffer_size,
        last_seq: ws.last_seq,
    };
    let assertions = answer.assertions.map(|assertions| answer::assertions_of(assertions, content)).unwrap_or_default();
    Ok((info, assertions))
}

/// The URL of a control socket: the server's base URL (its path prefix kept) with
/// `ws`/`wss`, `downstream_path`, and `afterSeq` when given.
fn control_url(base: &url::Url, downstream_path: &str, after_seq: Option<u64>) -> Result<url::Url, Error> {
    let mut url = base.clone();
    let scheme = if base.scheme() == "https" { "wss" } else { "ws" };
    url.set_scheme(scheme).map_err(|()| {
        Error::Transport(TransportError::Other { message: format!("cannot make a WebSocket URL of `{base}`") })
    })?;
    if let Ok(mut path) = url.path_segments_mut() {
        path.pop_if_empty().extend(downstream_path.split('/').filter(|segment| !segment.is_empty()));
    }
    if let Some(after) = after_seq {
        url.query_pairs_mut().append_pair("afterSeq", &after.to_string());
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_of_every_type() {
        let opened = WsEnvelope::parse(
            r#"{"type":"session.opened","ts":1700000000000,"seq":1,"wsSessionId":"ws_1","flowId":"f_1",
                "reqExecId":"x_1","payload":{"upstreamUrl":"ws://up/echo","subprotocol":"json"}}"#,
        )
        .expect("an envelope");
        assert_eq!(opened.kind, WsEnvelopeKind::Opened);
        assert_eq!((opened.ts, opened.seq), (1_700_000_000_000, 1));
        assert_eq!(opened.ws_session_id, "ws_1");
        assert_eq!((opened.flow_id.as_deref(), opened.req_exec_id.as_deref()), (Some("f_1"), Some("x_1")));
        assert_eq!(opened.payload.as_ref().expect("a payload")["subprotocol"], "json");
        assert_eq!(opened.closed(), None);

        let text = WsEnvelope::parse(
            r#"{"type":"session.inbound","ts":1,"seq":2,"wsSessionId":"ws_1","payloadType":"text",
                "encoding":"utf-8","byteLength":5,"payload":"hello"}"#,
        )
        .expect("an envelope");
        assert_eq!(text.kind, WsEnvelopeKind::Inbound);
        assert_eq!((text.payload_type.as_deref(), text.encoding.as_deref()), (Some("text"), Some("utf-8")));
        assert_eq!(text.byte_length, Some(5));
        assert_eq!(text.text().as_deref(), Some("hello"));

        let json = WsEnvelope::parse(
            r#"{"type":"session.outbound","ts":1,"seq":3,"wsSessionId":"ws_1","payloadType":"json",
                "encoding":"utf-8","byteLength":23,"payload":{"b":"x", "a":[1.50,2]}}"#,
        )
        .expect("an envelope");
        assert_eq!(json.kind, WsEnvelopeKind::Outbound);
        // The message's own text: keys in their order, numbers and spaces as written.
        assert_eq!(json.text().as_deref(), Some(r#"{"b":"x", "a":[1.50,2]}"#));
        assert_eq!(json.payload, Some(json!({"a": [1.5, 2], "b": "x"})));

        let closed = WsEnvelope::parse(
            r#"{"type":"session.closed","ts":1,"seq":4,"wsSessionId":"ws_1",
                "payload":{"code":4000,"reason":"asked to","wasClean":true}}"#,
        )
        .expect("an envelope");
        assert_eq!(closed.closed(), Some(WsClose { code: 4000, reason: "asked to".to_owned() }));
        let bare = WsEnvelope::parse(r#"{"type":"session.closed","seq":4}"#).expect("an envelope");
        assert_eq!(bare.closed(), Some(WsClose { code: 1005, reason: String::new() }));

        let error = WsEnvelope::parse(
            r#"{"type":"session.error","ts":1,"seq":4,"wsSessionId":"ws_1",
                "error":{"code":"WS_REPLAY_GAP","message":"gone"},"payload":{"afterSeq":0,"oldestAvailableSeq":9}}"#,
        )
        .expect("an envelope");
        assert_eq!(error.kind, WsEnvelopeKind::Error);
        assert_eq!(error.error, Some(WsEnvelopeError { code: "WS_REPLAY_GAP".to_owned(), message: "gone".to_owned() }));

        let end = WsEnvelope::parse(
            r#"{"type":"session.replay.end","ts":1,"seq":4,"wsSessionId":"ws_1",
                "payload":{"afterSeq":2,"replayed":2,"gap":false}}"#,
        )
        .expect("an envelope");
        assert_eq!(end.kind, WsEnvelopeKind::ReplayEnd);
        assert_eq!(end.kind.to_string(), "session.replay.end");

        let unknown = WsEnvelope::parse(r#"{"type":"session.later","seq":9,"extra":true}"#).expect("additive");
        assert_eq!(unknown.kind, WsEnvelopeKind::Other("session.later".to_owned()));
        assert_eq!(unknown.kind.as_str(), "session.later");
        assert_eq!(unknown.text(), None);
    }

    #[test]
    fn envelopes_without_the_shape_are_errors() {
        for bad in ["", "[]", r#"{"seq":1}"#, r#"{"type":"session.inbound"}"#, r#"{"type":1,"seq":1}"#] {
            assert!(WsEnvelope::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_retained_envelopes_count_for_replay() {
        use WsEnvelopeKind as Kind;
        for kind in [Kind::Opened, Kind::Inbound, Kind::Outbound, Kind::Closed] {
            assert!(kind.is_retained(), "{kind}");
        }
        for kind in [Kind::Error, Kind::ReplayEnd, Kind::Other("x".to_owned())] {
            assert!(!kind.is_retained(), "{kind}");
        }
    }

    #[test]
    fn answers() {
        let answer = json!({
            "runId": "run_1", "flowId": "flow_1", "reqExecId": "exec_1",
            "request": {"index": 0, "method": "GET", "url": "{{ws}}/echo", "urlResolved": "ws://up/echo"},
            "resolved": {"workspaceRoot": "/w", "basePath": "/w"},
            "ws": {"wsSessionId": "ws_1", "downstreamPath": "/ws/session/ws_1", "upstreamUrl": "ws://up/echo",
                   "subprotocol": "json", "replayBufferSize": 500, "lastSeq": 1},
        });
        let (info, assertions) = session_from_answer(answer.to_string().as_bytes(), None).expect("an answer");
        assert!(assertions.is_empty());
        assert_eq!(info.run_id, "run_1");
        assert_eq!((info.flow_id.as_deref(), info.req_exec_id.as_deref()), (Some("flow_1"), Some("exec_1")));
        assert_eq!(info.request["urlResolved"], "ws://up/echo");
        assert_eq!(info.resolved["basePath"], "/w");
        assert_eq!(info.ws_session_id, "ws_1");
        assert_eq!(info.downstream_path, "/ws/session/ws_1");
        assert_eq!(info.upstream_url, "ws://up/echo");
        assert_eq!(info.subprotocol.as_deref(), Some("json"));
        assert_eq!((info.replay_buffer_size, info.last_seq), (500, 1));

        // The least an answer can be; assertions when the server reports them.
        let content = "# @assert status == 101\nGET ws://up/echo\n";
        let answer = json!({
            "runId": "run_2", "ws": {"wsSessionId": "ws_2"},
            "assertions": {"passed": true, "total": 1, "failed": 0, "checks": [
                {"expression": "status == 101", "outcome": "passed", "span": {"start": 10, "end": 23, "line": 1, "column": 11}}]},
        });
        let (info, assertions) = session_from_answer(answer.to_string().as_bytes(), Some(content)).expect("an answer");
        assert_eq!(info.downstream_path, "/ws/session/ws_2");
        assert_eq!(info.subprotocol, None);
        assert_eq!(assertions.len(), 1);
        assert_eq!(assertions[0].span.text(content), "status == 101");

        assert!(session_from_answer(b"{}", None).is_err());
        assert!(session_from_answer(br#"{"runId": "r", "ws": {"wsSessionId": ""}}"#, None).is_err());
    }

    #[test]
    fn control_urls() {
        let base = url::Url::parse("http://127.0.0.1:4097").expect("a URL");
        assert_eq!(
            control_url(&base, "/ws/session/ws_1", None).expect("a URL").as_str(),
            "ws://127.0.0.1:4097/ws/session/ws_1"
        );
        assert_eq!(
            control_url(&base, "/ws/session/ws_1", Some(7)).expect("a URL").as_str(),
            "ws://127.0.0.1:4097/ws/session/ws_1?afterSeq=7"
        );
        let prefixed = url::Url::parse("https://host/volley/").expect("a URL");
        assert_eq!(
            control_url(&prefixed, "/ws/session/ws_1", Some(0)).expect("a URL").as_str(),
            "wss://host/volley/ws/session/ws_1?afterSeq=0"
        );
    }

    #[test]
    fn session_options_in_the_body() {
        let options = RunOptions::default();
        let defaults = Defaults { profile: None, timeout: None };
        let mut body = ExecuteBody::new("GET ws://up/\n", None, &options, defaults, ("s", "f"));
        WsSessionOptions::default()
            .connect_timeout(Duration::from_secs(2))
            .idle_timeout(Duration::from_secs(60))
            .replay_buffer_size(50)
            .apply(&mut body);
        assert_eq!(
            serde_json::to_value(&body).expect("serializes"),
            json!({"content": "GET ws://up/\n", "sessionId": "s", "flowId": "f",
                   "connectTimeoutMs": 2000, "idleTimeoutMs": 60000, "replayBufferSize": 50})
        );
    }
}
