//! A session the server opened (`POST /execute/ws` and its answer) and the handle
//! that opens its control sockets (`GET /ws/session/{id}?afterSeq=N`).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::header::AUTHORIZATION;
use serde_json::Value;
use volley_protocol::ExecuteWsResponse;

use super::super::answer;
use super::super::request::{self, Defaults, ExecuteBody};
use super::super::{RUN_MARGIN, RemoteClient, cancellable};
use super::options::WsSessionOptions;
use super::socket::WsSessionSocket;
use crate::assert::AssertionResult;
use crate::error::{Error, TransportError};
use crate::websocket::{self, ConnectFailure};
use volley_model::RunOptions;

/// How long opening a control socket may take.
const CONTROL_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// What the server reported of a session's opening besides the session: the
/// `@assert` checks of the handshake and the pre-request scripts' `client.log` lines.
#[derive(Debug, Default)]
pub(crate) struct Opening {
    pub(crate) assertions: Vec<AssertionResult>,
    pub(crate) logs: Vec<String>,
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
    /// The request as the server selected it: `{index, name?, method, url, urlResolved}`
    /// (the protocol's `RequestInfo` as read; its defaults when the server left it out).
    pub request: Value,
    /// Where the server found things: `{workspaceRoot, basePath, httpFilePath?, configPath?}`
    /// (the protocol's `Resolved` as read).
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
/// use volley_model::RunOptions;
/// use volley_remote::{RemoteClient, RemoteConfig, WsEnvelopeKind, WsSessionOptions};
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
        // Opened by the transport the program installed, as the engine's WebSockets are
        // (its future boxed: the handshake's is large).
        let transport = volley_transport::transport::default_transport();
        let connect = websocket::WsConnect {
            url: &url,
            headers: &headers,
            validate_ssl: true,
            network: None,
            timeout: CONTROL_CONNECT_TIMEOUT,
        };
        let handshake = transport.websocket(connect).await.map_err(|failure| match failure {
            ConnectFailure::Refused { status, body } => answer::server_error(status, &body),
            ConnectFailure::Transport(TransportError::ConnectionRefused { .. }) => {
                Error::Transport(TransportError::ConnectionRefused {
                    host: format!("the execution server at {}", server.base()),
                })
            }
            ConnectFailure::Transport(error) => Error::Transport(error),
        })?;
        let (sender, receiver) = handshake.socket.split();
        Ok(WsSessionSocket::new(sender, receiver, Arc::clone(&self.seen)))
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
        let text = super::super::read_text(path)?;
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

    /// `POST /execute/ws` in the client's session and flow: the handle, and what the
    /// server reported of the opening (assertions, log lines).
    pub(crate) async fn open_websocket_text(
        &self,
        content: &str,
        base_path: Option<String>,
        options: &RunOptions,
        session: &WsSessionOptions,
    ) -> Result<(WsSessionHandle, Opening), Error> {
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
            let answer = server
                .call_on(http::Method::POST, &["execute", "ws"], Some(&body), Some(timeout), Some(content))
                .await?;
            let bytes = answer.bytes().await.map_err(|error| server.transport_error(&error, timeout))?;
            let (info, opening) =
                session_from_answer(&bytes, Some(content)).map_err(|problem| server.unexpected_answer(&problem))?;
            let handle = WsSessionHandle { client: self.clone(), info: Arc::new(info), seen: Arc::default() };
            Ok((handle, opening))
        };
        cancellable(options.cancel.clone(), work).await
    }
}

/// The session of a `POST /execute/ws` answer, and its assertions (positioned in
/// `content`) and log lines when it has some; `Err` says what is wrong with an answer of
/// another shape.
pub(super) fn session_from_answer(answer: &[u8], content: Option<&str>) -> Result<(WsSessionInfo, Opening), String> {
    // The server's own type, read leniently (only `runId` and `ws.wsSessionId` are needed).
    let answer: ExecuteWsResponse = serde_json::from_slice(answer).map_err(|error| format!("invalid JSON: {error}"))?;
    let ws = answer.ws;
    if ws.ws_session_id.is_empty() {
        return Err("the session has no id".to_owned());
    }
    let downstream_path = Some(ws.downstream_path)
        .filter(|path| path.starts_with('/'))
        .unwrap_or_else(|| format!("/ws/session/{}", ws.ws_session_id));
    let info = WsSessionInfo {
        run_id: answer.run_id,
        flow_id: answer.flow_id,
        req_exec_id: Some(answer.req_exec_id).filter(|id| !id.is_empty()),
        request: serde_json::to_value(&answer.request).unwrap_or_default(),
        resolved: serde_json::to_value(&answer.resolved).unwrap_or_default(),
        ws_session_id: ws.ws_session_id,
        downstream_path,
        upstream_url: ws.upstream_url,
        subprotocol: ws.subprotocol,
        replay_buffer_size: ws.replay_buffer_size,
        last_seq: ws.last_seq,
    };
    let assertions = answer.assertions.map(|assertions| answer::assertions_of(assertions, content)).unwrap_or_default();
    Ok((info, Opening { assertions, logs: answer.logs }))
}

/// The URL of a control socket: the server's base URL (its path prefix kept) with
/// `ws`/`wss`, `downstream_path`, and `afterSeq` when given.
pub(super) fn control_url(base: &url::Url, downstream_path: &str, after_seq: Option<u64>) -> Result<url::Url, Error> {
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
