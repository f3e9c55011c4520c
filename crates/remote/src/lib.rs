//! Runs `.http` definitions through the execution server (`volley serve`) instead of
//! locally, returning the same [`Response`] as volley-engine's `Client`; the engine
//! re-exports it as `volley_engine::remote` (and `RemoteClient`, `RemoteConfig` at its root).
//!
//! The mapping is PROTOCOL.md's "Remote client mapping": a session (`POST /session`)
//! and a flow (`POST /flows`) created lazily on the first run, `POST /execute` (or
//! `/execute/sse` for event streams, `/execute/ws` and the session's control socket
//! for WebSockets) per run, `PUT /session/{id}/variables` for the client's variables,
//! `POST /flows/{id}/finish` on [`RemoteClient::close`].
//!
//! The session's control socket opens with the transport the program installed
//! (`volley_transport::transport::install_default`; the `volley` binary and the Node
//! addon install Volley's HTTP client); without one, opening it fails with a hint.

mod answer;
mod config;
mod device;
mod execute;
mod request;
mod server;
mod ws;
mod ws_adapter;

#[cfg(test)]
mod tests;

// The crates of the run model, the network and the assertions under the paths the
// modules named them by in the engine.
use volley_assert as assert;
use volley_model::{error, redact, response};
use volley_transport::{transport, websocket};

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use http::header::ACCEPT;
use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;
use volley_syntax::Protocol;

pub use config::RemoteConfig;
pub use ws::{
    WsEnvelope, WsEnvelopeError, WsEnvelopeKind, WsSessionHandle, WsSessionInfo, WsSessionOptions, WsSessionReceiver,
    WsSessionSender, WsSessionSocket,
};

use crate::error::{Error, TransportError};
use crate::redact::{Redactor, Secrets};
use crate::response::{Pending, Response, SentRequest, Timing};
use crate::transport::BodyStream;
use request::{Defaults, ExecuteBody};
use server::Server;
use volley_model::{RunOptions, Selection};

/// The upstream status of an `/execute/sse` answer.
const UPSTREAM_STATUS_HEADER: &str = "x-volley-upstream-status";
/// The upstream URL of an `/execute/sse` answer (optional).
const UPSTREAM_URL_HEADER: &str = "x-volley-upstream-url";
/// The prefix of the upstream response's headers on an `/execute/sse` answer.
const UPSTREAM_HEADER_PREFIX: &str = "x-volley-upstream-header-";
/// How long the server may take for a call that runs nothing (sessions, flows).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// What the server may take beyond a run's own timeout before the client gives up.
const RUN_MARGIN: Duration = Duration::from_secs(30);

/// Runs `.http` definitions through an execution server. Clones share the session,
/// the flow and the variables.
///
/// ```no_run
/// # async fn example() -> Result<(), volley_model::Error> {
/// use volley_model::RunOptions;
/// use volley_remote::{RemoteClient, RemoteConfig};
///
/// let client = RemoteClient::new(RemoteConfig::new("http://127.0.0.1:4097"))?;
/// client.set_variable("user", "ada").await?;
/// let login = client.run("api.http", RunOptions::default().name("login")).await?;
/// println!("{} in session {:?}", login.status(), client.session_id());
/// client.close().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RemoteClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: RemoteConfig,
    server: Server,
    variables: Mutex<Variables>,
    /// The session runs go to, once it exists (created, or given and synced).
    session: OnceCell<String>,
    /// The flow runs go to, once it exists (created, or given).
    flow: OnceCell<Flow>,
    /// `close` has finished the flow.
    finished: AtomicBool,
    /// The device codes shown already (a flow's events are replayed to each watch).
    shown_codes: Arc<Mutex<std::collections::HashSet<String>>>,
}

/// The client's variables: every one set (the local copy) and those the server does
/// not have yet.
#[derive(Debug, Default)]
struct Variables {
    all: Map<String, Value>,
    unsent: Map<String, Value>,
    /// The session exists: setters send at once.
    session_open: bool,
}

#[derive(Debug)]
struct Flow {
    id: String,
    /// Created by this client: `close` finishes it.
    created: bool,
}

/// What kind of exchange a selected request is, as the text says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Http,
    EventStream,
    WebSocket,
}

impl std::fmt::Debug for RemoteClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteClient")
            .field("config", &self.inner.config)
            .field("session_id", &self.session_id())
            .field("flow_id", &self.flow_id())
            .finish_non_exhaustive()
    }
}

impl RemoteClient {
    /// A client for the server of `config`. Nothing is sent until the first run; the
    /// URL must be an `http://` or `https://` URL.
    pub fn new(config: RemoteConfig) -> Result<Self, Error> {
        let server = Server::new(&config.server_url, config.token.clone())?;
        let variables =
            Variables { all: config.variables.clone(), unsent: config.variables.clone(), session_open: false };
        let flow = config.flow_id.clone().map(|id| Flow { id, created: false });
        let inner = Inner {
            config,
            server,
            variables: Mutex::new(variables),
            session: OnceCell::new(),
            flow: OnceCell::new_with(flow),
            finished: AtomicBool::new(false),
            shown_codes: Arc::default(),
        };
        Ok(Self { inner: Arc::new(inner) })
    }

    /// Reads the `.http` file at `path` here and runs the selected request on the
    /// server. A relative path without `..` also sends its directory as `basePath`, so
    /// `< file` references resolve on a server that shares the working directory.
    ///
    /// A WebSocket definition is opened as a session the server owns (`POST
    /// /execute/ws`): the response (status 101) gives it as a [`WebSocket`](crate::websocket::WebSocket)
    /// through [`Response::websocket`]; see [`open_websocket`](RemoteClient::open_websocket)
    /// for the session itself.
    pub async fn run(&self, path: impl AsRef<Path>, options: RunOptions) -> Result<Response, Error> {
        let path = path.as_ref();
        let text = read_text(path)?;
        self.execute(&text, request::base_path(path), options).await
    }

    /// Runs the selected request of `content` (`.http` text) on the server;
    /// `basePath` comes from [`RunOptions::source_path`] by the rule of
    /// [`run`](RemoteClient::run).
    pub async fn run_string(&self, content: &str, options: RunOptions) -> Result<Response, Error> {
        let base_path = options.source_path.as_deref().and_then(request::base_path);
        self.execute(content, base_path, options).await
    }

    /// Sets a session variable: kept here and sent with the session's creation, or at
    /// once (`PUT /session/{id}/variables`, merged) when the session exists.
    pub async fn set_variable(&self, name: impl Into<String>, value: impl Into<Value>) -> Result<(), Error> {
        self.set_variables([(name.into(), value.into())]).await
    }

    /// Sets several session variables (one call to the server once the session exists).
    pub async fn set_variables(&self, variables: impl IntoIterator<Item = (String, Value)>) -> Result<(), Error> {
        let variables: Map<String, Value> = variables.into_iter().collect();
        if variables.is_empty() {
            return Ok(());
        }
        let session = {
            let mut state = self.inner.variables.lock();
            state.all.extend(variables.clone());
            if !state.session_open {
                state.unsent.extend(variables);
                return Ok(());
            }
            // The session is being stored by the run that created it, which sends
            // the unsent variables next.
            let Some(session) = self.inner.session.get().cloned() else {
                state.unsent.extend(variables);
                return Ok(());
            };
            // Newer than anything still waiting to be sent.
            for name in variables.keys() {
                state.unsent.remove(name);
            }
            session
        };
        let result = self.put_variables(&session, &variables).await;
        if result.is_err() {
            // Sent again before the next run.
            self.restore_unsent(variables);
        }
        result
    }

    /// The client's variables: the initial ones and those set since (a local copy: the
    /// server's views redact secrets).
    #[must_use]
    pub fn get_variables(&self) -> Map<String, Value> {
        self.inner.variables.lock().all.clone()
    }

    /// Finishes the flow this client created (`POST /flows/{id}/finish`), once. Does
    /// nothing when no run created one or the flow was given.
    pub async fn close(&self) -> Result<(), Error> {
        let Some(flow) = self.inner.flow.get().filter(|flow| flow.created) else { return Ok(()) };
        if self.inner.finished.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let result: Result<Value, Error> = self
            .inner
            .server
            .call_json(http::Method::POST, &["flows", &flow.id, "finish"], Some(&json!({})), CALL_TIMEOUT)
            .await;
        if result.is_err() {
            self.inner.finished.store(false, Ordering::SeqCst);
        }
        result.map(drop)
    }

    /// The session runs go to: the given one, or the one created by the first run.
    #[must_use]
    pub fn session_id(&self) -> Option<String> {
        self.inner.session.get().cloned().or_else(|| self.inner.config.session_id.clone())
    }

    /// The flow runs go to: the given one, or the one created by the first run.
    #[must_use]
    pub fn flow_id(&self) -> Option<String> {
        self.inner.flow.get().map(|flow| flow.id.clone())
    }

    /// The server's base URL.
    #[must_use]
    pub fn server_url(&self) -> &url::Url {
        self.inner.server.base()
    }

    async fn execute(&self, content: &str, base_path: Option<String>, options: RunOptions) -> Result<Response, Error> {
        let kind = kind_of(content, &options.request);
        let response = if kind == Kind::WebSocket {
            self.execute_websocket(content, base_path, &options).await
        } else {
            cancellable(options.cancel.clone(), self.execute_inner(content, base_path, &options, kind)).await
        }?;
        Ok(self.with_known_secrets(response, &options))
    }

    /// `response` with a redactor of the secrets known here: the values of the
    /// sensitive-named variables this client sent (its own, the run's). What the server
    /// alone knew (its configuration, its `$secret` values) it redacted itself in what
    /// it echoes of the request; the upstream's response comes as the upstream sent it.
    fn with_known_secrets(&self, mut response: Response, options: &RunOptions) -> Response {
        response.redactor = if options.show_secrets {
            Redactor::reveal_all()
        } else {
            let mut secrets = Secrets::new();
            secrets
                .add_variables(&self.get_variables())
                .add_variables(&options.variables)
                .add_variables(&options.overrides)
                .add_variables(&options.command_variables);
            secrets.redactor()
        };
        response
    }

    /// A WebSocket definition: a session opened on the server, as a [`Response`].
    async fn execute_websocket(
        &self,
        content: &str,
        base_path: Option<String>,
        options: &RunOptions,
    ) -> Result<Response, Error> {
        let started = Instant::now();
        // The server refuses a definition with a body: its messages go on the session
        // socket, sent from here in their turn.
        let (content, messages) = ws_adapter::definition_messages(content, &options.request)?;
        let (handle, opening) =
            self.open_websocket_text(&content, base_path, options, &WsSessionOptions::default()).await?;
        cancellable(options.cancel.clone(), ws_adapter::response(&handle, opening, started, messages)).await
    }

    async fn execute_inner(
        &self,
        content: &str,
        base_path: Option<String>,
        options: &RunOptions,
        kind: Kind,
    ) -> Result<Response, Error> {
        let (session, flow) = self.ensure_session_and_flow().await?;
        self.flush_variables(&session).await?;
        let config = &self.inner.config;
        let defaults = Defaults { profile: config.profile.as_deref(), timeout: config.timeout };
        let mut body = ExecuteBody::new(content, base_path, options, defaults, (&session, &flow));
        let run_timeout = Duration::from_millis(body.timeout_ms.unwrap_or(request::MAX_TIMEOUT_MS)) + RUN_MARGIN;
        // Stopped when the run ends, whichever way.
        let _watch = config
            .auth_prompt
            .clone()
            .filter(|_| device::may_need_a_person(content))
            .map(|prompt| device::watch(&self.inner.server, &flow, prompt, Arc::clone(&self.inner.shown_codes)));
        if kind == Kind::EventStream {
            body.timeout = body.timeout_ms;
            return self.execute_event_stream(&body, options, run_timeout).await;
        }
        let server = &self.inner.server;
        let answer =
            server.call_on(http::Method::POST, &["execute"], Some(&body), Some(run_timeout), Some(content)).await?;
        let bytes = answer.bytes().await.map_err(|error| self.inner.server.transport_error(&error, run_timeout))?;
        answer::response_from_answer(&bytes, Some(content), options.max_body_bytes)
            .map_err(|problem| self.inner.server.unexpected_answer(&problem))
    }

    /// `POST /execute/sse`: the response comes with the head of the server's event
    /// stream, its body the re-emitted events.
    async fn execute_event_stream(
        &self,
        body: &ExecuteBody,
        options: &RunOptions,
        head_timeout: Duration,
    ) -> Result<Response, Error> {
        let started = Instant::now();
        let url = self.inner.server.endpoint(&["execute", "sse"]);
        let request =
            self.inner.server.request(http::Method::POST, url.clone(), Some(body)).header(ACCEPT, "text/event-stream");
        let answer = match tokio::time::timeout(head_timeout, request.send()).await {
            Ok(result) => result.map_err(|error| self.inner.server.transport_error(&error, head_timeout))?,
            Err(_) => return Err(Error::Transport(TransportError::Timeout { after: head_timeout })),
        };
        let answer = self.inner.server.check_execute_status(answer, body.content.as_deref()).await?;
        let ttfb = started.elapsed();
        let version = answer.version();
        let mut headers = answer.headers().clone();
        // The upstream's own headers, when the server relays them.
        let upstream_headers: http::HeaderMap = headers
            .iter()
            .filter_map(|(name, value)| {
                let name = name.as_str().strip_prefix(UPSTREAM_HEADER_PREFIX)?;
                Some((http::HeaderName::from_bytes(name.as_bytes()).ok()?, value.clone()))
            })
            .collect();
        let server_headers = if upstream_headers.is_empty() {
            headers.clone()
        } else {
            std::mem::replace(&mut headers, upstream_headers)
        };
        let header = |name: &str| server_headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
        let status = header(UPSTREAM_STATUS_HEADER)
            .and_then(|status| status.parse::<u16>().ok())
            .and_then(|status| http::StatusCode::from_u16(status).ok())
            .unwrap_or(answer.status());
        let upstream = header(UPSTREAM_URL_HEADER).and_then(|text| url::Url::parse(text).ok()).unwrap_or(url);
        let server = self.inner.server.base().to_string();
        let stream = answer.bytes_stream().map(move |chunk| {
            chunk.map_err(|error| TransportError::Other {
                message: format!(
                    "the event stream of the execution server at {server} failed: {}",
                    server::causes(&error)
                ),
            })
        });
        let stream: BodyStream = match options.cancel.clone() {
            Some(token) => Box::pin(stream.take_until(token.cancelled_owned())),
            None => Box::pin(stream),
        };
        let request = SentRequest {
            method: http::Method::GET,
            url: upstream.clone(),
            headers: http::HeaderMap::new(),
            body: bytes::Bytes::new(),
        };
        let mut response =
            Response::from_parts(status, version, headers, upstream, request, Timing { ttfb, total: ttfb });
        response.body = crate::response::Body::Streaming(Pending::new(stream));
        Ok(response)
    }

    /// Reaches the server now rather than at the first run: creates the session and the
    /// flow the runs go to. A front end calls it first, so that a server that cannot be
    /// reached (or refuses the token) is one error rather than one per request.
    pub async fn connect(&self) -> Result<(), Error> {
        self.ensure_session_and_flow().await.map(|_| ())
    }

    /// Whether the server's configuration for the `.http` file at `path` (relative to
    /// the server's workspace) has `profile`: `Some(false)` when the server says it does
    /// not (`GET /config?profile=` answers 404), `None` when it cannot tell.
    pub async fn has_profile(&self, profile: &str, path: Option<&str>) -> Option<bool> {
        let mut url = self.inner.server.endpoint(&["config"]);
        url.query_pairs_mut().append_pair("profile", profile);
        if let Some(path) = path {
            url.query_pairs_mut().append_pair("path", path);
        }
        let request = self.inner.server.request(http::Method::GET, url, None::<&()>).timeout(CALL_TIMEOUT);
        let answer = request.send().await.ok()?;
        match answer.status() {
            status if status.is_success() => Some(true),
            http::StatusCode::NOT_FOUND => Some(false),
            _ => None,
        }
    }

    /// The session and the flow of the runs, created on the first run (one of each,
    /// however many runs start at once).
    async fn ensure_session_and_flow(&self) -> Result<(String, String), Error> {
        let session = self.inner.session.get_or_try_init(|| self.open_session()).await?.clone();
        let flow = self.inner.flow.get_or_try_init(|| self.open_flow(&session)).await?;
        Ok((session, flow.id.clone()))
    }

    /// `POST /session` with the variables set so far, or, for a given session, `PUT`
    /// them into it.
    async fn open_session(&self) -> Result<String, Error> {
        let snapshot = {
            let mut state = self.inner.variables.lock();
            std::mem::take(&mut state.unsent)
        };
        let result = match &self.inner.config.session_id {
            Some(id) if snapshot.is_empty() => Ok(id.clone()),
            Some(id) => self.put_variables(id, &snapshot).await.map(|()| id.clone()),
            None => self.create_session(&snapshot).await,
        };
        match result {
            Ok(id) => {
                let mut state = self.inner.variables.lock();
                state.session_open = true;
                Ok(id)
            }
            Err(error) => {
                self.restore_unsent(snapshot);
                Err(error)
            }
        }
    }

    async fn create_session(&self, variables: &Map<String, Value>) -> Result<String, Error> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Created {
            session_id: String,
        }
        let body = json!({ "variables": variables });
        let created: Created =
            self.inner.server.call_json(http::Method::POST, &["session"], Some(&body), CALL_TIMEOUT).await?;
        Ok(created.session_id)
    }

    async fn open_flow(&self, session: &str) -> Result<Flow, Error> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Created {
            flow_id: String,
        }
        let config = &self.inner.config;
        let mut body = Map::new();
        body.insert("sessionId".to_owned(), Value::from(session));
        if let Some(label) = &config.flow_label {
            body.insert("label".to_owned(), Value::from(label.as_str()));
        }
        if let Some(meta) = &config.flow_meta {
            body.insert("meta".to_owned(), Value::Object(meta.clone()));
        }
        let created: Created =
            self.inner.server.call_json(http::Method::POST, &["flows"], Some(&body), CALL_TIMEOUT).await?;
        Ok(Flow { id: created.flow_id, created: true })
    }

    /// Sends the variables set while the session was being created, or whose sending
    /// failed.
    async fn flush_variables(&self, session: &str) -> Result<(), Error> {
        let unsent = {
            let mut state = self.inner.variables.lock();
            std::mem::take(&mut state.unsent)
        };
        if unsent.is_empty() {
            return Ok(());
        }
        let result = self.put_variables(session, &unsent).await;
        if result.is_err() {
            self.restore_unsent(unsent);
        }
        result
    }

    /// Puts variables whose sending failed back among the unsent ones, unless a newer
    /// value was set meanwhile.
    fn restore_unsent(&self, variables: Map<String, Value>) {
        let mut state = self.inner.variables.lock();
        for (name, value) in variables {
            if state.all.get(&name) == Some(&value) && !state.unsent.contains_key(&name) {
                state.unsent.insert(name, value);
            }
        }
    }

    async fn put_variables(&self, session: &str, variables: &Map<String, Value>) -> Result<(), Error> {
        let body = json!({ "variables": variables, "mode": "merge" });
        let _: Value = self
            .inner
            .server
            .call_json(http::Method::PUT, &["session", session, "variables"], Some(&body), CALL_TIMEOUT)
            .await?;
        Ok(())
    }
}

/// `work`, unless `cancel` fires first.
async fn cancellable<T>(
    cancel: Option<CancellationToken>,
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match cancel {
        Some(token) => tokio::select! {
            result = work => result,
            () = token.cancelled() => Err(Error::Cancelled),
        },
        None => work.await,
    }
}

/// The text of the `.http` file at `path` (UTF-8).
fn read_text(path: &Path) -> Result<String, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::ReadFile { path: path.to_path_buf(), source })?;
    String::from_utf8(bytes).map_err(|error| Error::ReadFile {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text: {error}")),
    })
}

/// The kind of the selected request, as the text says; `Http` when the selection
/// matches nothing (the server reports that).
fn kind_of(content: &str, selection: &Selection) -> Kind {
    let document = volley_syntax::parse(content);
    let request = match selection {
        Selection::First => document.request(0),
        Selection::Index(index) => document.request(*index),
        Selection::Name(name) => document.request_named(name),
    };
    let Some(request) = request else { return Kind::Http };
    match &request.protocol {
        Protocol::Sse(_) => Kind::EventStream,
        Protocol::WebSocket(_) => Kind::WebSocket,
        Protocol::Grpc(_) => Kind::Http,
        Protocol::Http => {
            let prefix = request.url.literal_prefix().trim_start().to_ascii_lowercase();
            if prefix.starts_with("ws://") || prefix.starts_with("wss://") { Kind::WebSocket } else { Kind::Http }
        }
    }
}
