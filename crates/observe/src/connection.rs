//! Following `/event/ws`: connect, forward every envelope, reconnect with backoff after a
//! drop or a server restart, resume each known flow with `afterSeq`, and fetch stored
//! executions for the detail pane.

use std::collections::{HashMap, VecDeque};
use std::sync::Once;
use std::time::Duration;

use futures_util::StreamExt as _;
use http::HeaderValue;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use url::Url;
use volley_protocol::ObserverEvent;

use crate::state::Envelope;

/// Reconnection delays, in order; the last repeats.
const BACKOFF: [Duration; 5] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(5),
];
/// How long a backfill socket may stay quiet before its replay counts as done.
const BACKFILL_QUIET: Duration = Duration::from_millis(400);
/// The longest a backfill socket stays open.
const BACKFILL_LIMIT: Duration = Duration::from_secs(5);
/// Flows resumed by backfill after a reconnection without a flow filter (the most recent).
const BACKFILL_FLOWS: usize = 20;
/// Flows whose last `seq` is remembered.
const KNOWN_FLOWS: usize = 1_000;
/// WebSocket sessions remembered as open, to ask about after a reconnection.
const OPEN_SESSIONS: usize = 64;

/// What is followed, and how.
#[derive(Debug, Clone)]
pub struct Target {
    /// The server's base URL (`http://127.0.0.1:4097`).
    pub server: Url,
    pub token: Option<String>,
    pub flow: Option<String>,
    pub session: Option<String>,
}

impl Target {
    /// `/event/ws` with the filters, and `afterSeq` when given.
    fn events_url(&self, flow: Option<&str>, after_seq: Option<u64>) -> Url {
        let mut url = self.server.clone();
        let scheme = if url.scheme() == "https" { "wss" } else { "ws" };
        let _ = url.set_scheme(scheme);
        url.set_path("/event/ws");
        url.set_query(None);
        {
            let mut query = url.query_pairs_mut();
            if let Some(flow) = flow.or(self.flow.as_deref()) {
                query.append_pair("flowId", flow);
            }
            if let Some(session) = &self.session {
                query.append_pair("sessionId", session);
            }
            if let Some(after) = after_seq {
                query.append_pair("afterSeq", &after.to_string());
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
        url
    }

    fn bearer(&self) -> Option<HeaderValue> {
        self.token.as_ref().and_then(|token| HeaderValue::from_str(&format!("Bearer {token}")).ok())
    }

    /// What the status line says is watched.
    #[must_use]
    pub fn scope(&self) -> String {
        match (&self.flow, &self.session) {
            (Some(flow), Some(session)) => format!("flow {flow}, session {session}"),
            (Some(flow), None) => format!("flow {flow}"),
            (None, Some(session)) => format!("session {session}"),
            (None, None) => "everything".to_owned(),
        }
    }
}

/// What the connection tells the screen.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    Connected,
    Event(Envelope),
    Disconnected {
        reason: String,
        retry_in: Duration,
    },
    Notice(String),
    /// The server no longer knows this flow (found after a reconnection).
    FlowGone(String),
    /// The server no longer has this WebSocket session (found after a reconnection).
    SessionGone(String),
    /// A stored execution (or why it could not be read).
    Detail {
        key: String,
        result: Result<Value, String>,
    },
}

/// Why the server cannot be observed as asked; said before any screen opens.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error(
        "the server needs a token: pass --token (or set VOLLEY_TOKEN)\n  hint: observers of a server with a token also pass --flow or --session"
    )]
    TokenMissing,
    #[error("the server refused the token (it answered 401): check --token / VOLLEY_TOKEN")]
    TokenRefused,
    #[error(
        "with a token, observers must watch a flow or a session: pass --flow ID or --session ID\n  hint: the server only streams everything to observers of a server without a token"
    )]
    ScopeNeeded,
    #[error("the server refused to stream: {0}")]
    Other(String),
}

/// Checks, before the screen opens, that the server would stream to this observer.
/// A server that cannot be reached is not an error: the observer waits for it.
///
/// # Errors
/// A [`Refusal`] that no retry would change.
pub async fn preflight(target: &Target) -> Result<(), Refusal> {
    if target.token.is_some() && target.flow.is_none() && target.session.is_none() {
        return Err(Refusal::ScopeNeeded);
    }
    let client = http_client();
    let mut request = client.get(target.server.join("/capabilities").unwrap_or_else(|_| target.server.clone()));
    if let Some(bearer) = target.bearer() {
        request = request.header(http::header::AUTHORIZATION, bearer);
    }
    match request.timeout(Duration::from_secs(5)).send().await {
        Ok(answer) if answer.status() == 401 => {
            Err(if target.token.is_some() { Refusal::TokenRefused } else { Refusal::TokenMissing })
        }
        Ok(answer) if answer.status() == 403 => Err(Refusal::Other(
            "403: this token may not observe what was asked (a scoped token watches its own flow only)".to_owned(),
        )),
        Ok(_) | Err(_) => Ok(()),
    }
}

/// Follows the server until `updates` is closed: connects, forwards, reconnects.
pub async fn follow(target: Target, updates: mpsc::Sender<Update>) {
    let mut positions = Positions::default();
    let mut attempt = 0usize;
    let mut was_connected = false;
    loop {
        let resume = target.flow.as_deref().map(|flow| positions.get(flow));
        let reason = match connect(&target, target.flow.as_deref(), resume).await {
            Ok(mut socket) => {
                attempt = 0;
                if updates.send(Update::Connected).await.is_err() {
                    return;
                }
                if was_connected {
                    probe_sessions(&target, &positions, &updates);
                }
                if let Some(flow) = target.flow.as_deref()
                    && !flow_exists(&target, flow).await
                {
                    // A silent stream would look like a flow with nothing to show.
                    let _ = updates.send(Update::FlowGone(flow.to_owned())).await;
                    let notice = format!(
                        "the server knows no flow `{flow}` (it expired, or the server restarted): nothing more \
                         will arrive for it"
                    );
                    let _ = updates.send(Update::Notice(notice)).await;
                } else if was_connected {
                    if target.flow.is_none() {
                        backfill(&target, &positions, &updates);
                        let notice = "reconnected: events of runs outside flows, and of flows that started while \
                                      disconnected, may be missing";
                        let _ = updates.send(Update::Notice(notice.to_owned())).await;
                    } else {
                        let _ = updates
                            .send(Update::Notice("reconnected: resumed the flow where it was left".to_owned()))
                            .await;
                    }
                }
                was_connected = true;
                match forward(&mut socket, &mut positions, &updates).await {
                    Some(reason) => reason,
                    None => return,
                }
            }
            Err(reason) => reason,
        };
        let retry_in = BACKOFF[attempt.min(BACKOFF.len() - 1)];
        attempt += 1;
        if updates.send(Update::Disconnected { reason, retry_in }).await.is_err() {
            return;
        }
        tokio::time::sleep(retry_in).await;
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(target: &Target, flow: Option<&str>, after_seq: Option<u64>) -> Result<Socket, String> {
    install_crypto();
    let url = target.events_url(flow, after_seq);
    let mut request = url.as_str().into_client_request().map_err(|error| error.to_string())?;
    if let Some(bearer) = target.bearer() {
        request.headers_mut().insert(http::header::AUTHORIZATION, bearer);
    }
    match tokio::time::timeout(Duration::from_secs(10), tokio_tungstenite::connect_async(request)).await {
        Ok(Ok((socket, _))) => Ok(socket),
        Ok(Err(tungstenite::Error::Http(answer))) => {
            let body = answer.body().as_deref().map(String::from_utf8_lossy).unwrap_or_default();
            let message = serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|value| value["error"]["message"].as_str().map(str::to_owned))
                .unwrap_or_default();
            Err(format!(
                "the server answered {}{}",
                answer.status(),
                if message.is_empty() { String::new() } else { format!(": {message}") }
            ))
        }
        Ok(Err(error)) => Err(describe(&error)),
        Err(_) => Err("no answer within 10 s".to_owned()),
    }
}

fn describe(error: &tungstenite::Error) -> String {
    match error {
        tungstenite::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "connection refused".to_owned()
        }
        other => other.to_string(),
    }
}

/// Forwards envelopes until the socket ends: why it ended, or `None` when the screen is gone.
async fn forward(socket: &mut Socket, positions: &mut Positions, updates: &mpsc::Sender<Update>) -> Option<String> {
    while let Some(frame) = socket.next().await {
        match frame {
            Ok(tungstenite::Message::Text(text)) => {
                let Ok(event) = Envelope::parse(&text) else { continue };
                positions.note(&event);
                if updates.send(Update::Event(event)).await.is_err() {
                    return None;
                }
            }
            Ok(tungstenite::Message::Close(frame)) => {
                let reason = frame.map_or_else(
                    || "the server closed the stream".to_owned(),
                    |frame| format!("the server closed the stream ({} {})", u16::from(frame.code), frame.reason),
                );
                return Some(reason.trim_end().to_owned());
            }
            Ok(_) => {}
            Err(error) => return Some(format!("the stream broke: {}", describe(&error))),
        }
    }
    Some("the server went away".to_owned())
}

/// After a reconnection without a flow filter (where `afterSeq` is not allowed), asks
/// for what each recently seen flow missed on sockets of its own. Their replays overlap
/// what the main socket delivers; the screen's reducer drops the repeats. A flow the
/// server no longer knows (a restart, an expiry) is reported instead: an `afterSeq`
/// socket for it would stay silent, so the execution store is asked first.
fn backfill(target: &Target, positions: &Positions, updates: &mpsc::Sender<Update>) {
    for (flow, after) in positions.recent(BACKFILL_FLOWS) {
        let target = target.clone();
        let updates = updates.clone();
        tokio::spawn(async move {
            if !flow_exists(&target, &flow).await {
                let _ = updates.send(Update::FlowGone(flow)).await;
                return;
            }
            let Ok(mut socket) = connect(&target, Some(&flow), Some(after)).await else { return };
            let deadline = tokio::time::Instant::now() + BACKFILL_LIMIT;
            loop {
                let quiet = tokio::time::Instant::now() + BACKFILL_QUIET;
                let next = tokio::select! {
                    next = socket.next() => next,
                    () = tokio::time::sleep_until(quiet.min(deadline)) => break,
                };
                match next {
                    Some(Ok(tungstenite::Message::Text(text))) => {
                        let Ok(event) = Envelope::parse(&text) else { continue };
                        if updates.send(Update::Event(event)).await.is_err() {
                            return;
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => break,
                }
            }
            let _ = socket.close(None).await;
        });
    }
}

/// The last `seq` seen per flow, the most recent flows last, and the WebSocket sessions
/// seen opening and not closing (both bounded).
#[derive(Debug, Default)]
struct Positions {
    last: HashMap<String, u64>,
    order: VecDeque<String>,
    open_sessions: VecDeque<String>,
}

impl Positions {
    fn note(&mut self, event: &Envelope) {
        self.note_session(event);
        let (Some(flow), Some(seq)) = (&event.flow_id, event.seq) else { return };
        if let Some(last) = self.last.get_mut(flow) {
            *last = (*last).max(seq);
            return;
        }
        self.last.insert(flow.clone(), seq);
        self.order.push_back(flow.clone());
        if self.order.len() > KNOWN_FLOWS
            && let Some(oldest) = self.order.pop_front()
        {
            self.last.remove(&oldest);
        }
    }

    fn note_session(&mut self, event: &Envelope) {
        if let Some(ObserverEvent::WsSessionOpened(opened)) = &event.event {
            let id = &opened.ws_session_id;
            if !id.is_empty() && !self.open_sessions.contains(id) {
                self.open_sessions.push_back(id.clone());
                if self.open_sessions.len() > OPEN_SESSIONS {
                    self.open_sessions.pop_front();
                }
            }
        } else if let Some(ObserverEvent::WsSessionClosed(closed)) = &event.event {
            self.open_sessions.retain(|open| *open != closed.ws_session_id);
        }
    }

    fn get(&self, flow: &str) -> u64 {
        self.last.get(flow).copied().unwrap_or_default()
    }

    fn recent(&self, count: usize) -> Vec<(String, u64)> {
        self.order.iter().rev().take(count).map(|flow| (flow.clone(), self.get(flow))).collect()
    }
}

/// Whether the server still knows `flow`: the execution store answers `FLOW_NOT_FOUND`
/// for an unknown flow and `EXECUTION_NOT_FOUND` for an unknown execution of a known one,
/// so asking for an execution id no flow has tells them apart. Any other answer (an
/// error, a refusal) counts as known: only a clear "no such flow" marks it gone.
async fn flow_exists(target: &Target, flow: &str) -> bool {
    match fetch_execution_answer(target, flow, "-").await {
        Ok((status, body)) => !(status == 404 && body["error"]["code"] == "FLOW_NOT_FOUND"),
        Err(_) => true,
    }
}

/// Reads `GET /flows/{flow}/executions/{exec}` for the detail pane.
pub async fn fetch_execution(target: &Target, flow: &str, exec: &str) -> Result<Value, String> {
    let (status, body) = fetch_execution_answer(target, flow, exec).await?;
    if status.is_success() {
        Ok(body)
    } else {
        Err(body["error"]["message"]
            .as_str()
            .map_or_else(|| format!("the execution store answered {status}"), str::to_owned))
    }
}

/// `GET /flows/{flow}/executions/{exec}`: the status and the JSON body, whatever the status.
async fn fetch_execution_answer(
    target: &Target,
    flow: &str,
    exec: &str,
) -> Result<(reqwest::StatusCode, Value), String> {
    get_json(target, &["flows", flow, "executions", exec], "the execution store").await
}

/// `GET` of the server path made of `segments`: the status and the JSON body, whatever
/// the status. `what` names the answering part in errors.
async fn get_json(target: &Target, segments: &[&str], what: &str) -> Result<(reqwest::StatusCode, Value), String> {
    let mut url = target.server.clone();
    url.path_segments_mut().map_err(|()| "the server URL cannot have a path".to_owned())?.clear().extend(segments);
    let mut request = http_client().get(url).timeout(Duration::from_secs(10));
    if let Some(bearer) = target.bearer() {
        request = request.header(http::header::AUTHORIZATION, bearer);
    }
    let answer = request.send().await.map_err(|error| format!("{what} did not answer: {error}"))?;
    let status = answer.status();
    let bytes = answer.bytes().await.map_err(|error| format!("{what} answered {status}: {error}"))?;
    let body: Value = serde_json::from_slice(&bytes)
        .map_err(|error| format!("{what} answered {status} with something else than JSON: {error}"))?;
    Ok((status, body))
}

/// Whether the server still has the WebSocket session `id`: a `GET` of its control path
/// without an upgrade answers `WS_SESSION_NOT_FOUND` for an unknown session and leaves a
/// known one alone (docs/protocol.md). Any other answer counts as known.
async fn session_exists(target: &Target, id: &str) -> bool {
    match get_json(target, &["ws", "session", id], "the server").await {
        Ok((status, body)) => !(status == 404 && body["error"]["code"] == "WS_SESSION_NOT_FOUND"),
        Err(_) => true,
    }
}

/// After a reconnection, asks about every session shown as open: the ones the server
/// no longer has (a restart, an expiry while disconnected) would otherwise stay "open".
fn probe_sessions(target: &Target, positions: &Positions, updates: &mpsc::Sender<Update>) {
    for id in positions.open_sessions.iter().cloned() {
        let target = target.clone();
        let updates = updates.clone();
        tokio::spawn(async move {
            if !session_exists(&target, &id).await {
                let _ = updates.send(Update::SessionGone(id)).await;
            }
        });
    }
}

/// One client for every request of the observer (building one loads the TLS roots). Its
/// pooled connections belong to the runtime that opened them: the observer runs on one.
fn http_client() -> &'static reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(|| {
        install_crypto();
        reqwest::Client::builder().build().unwrap_or_default()
    })
}

/// rustls needs a crypto provider before any client is built.
fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(flow: Option<&str>) -> Target {
        Target {
            server: Url::parse("http://127.0.0.1:4097").expect("url"),
            token: None,
            flow: flow.map(str::to_owned),
            session: Some("s 1".to_owned()),
        }
    }

    #[test]
    fn the_events_url_carries_the_filters_and_the_resume_point() {
        assert_eq!(target(None).events_url(None, None).as_str(), "ws://127.0.0.1:4097/event/ws?sessionId=s+1");
        assert_eq!(
            target(Some("f")).events_url(None, Some(7)).as_str(),
            "ws://127.0.0.1:4097/event/ws?flowId=f&sessionId=s+1&afterSeq=7"
        );
        let mut https = target(None);
        https.server = Url::parse("https://example.test/").expect("url");
        https.session = None;
        assert_eq!(https.events_url(Some("g"), Some(0)).as_str(), "wss://example.test/event/ws?flowId=g&afterSeq=0");
        assert_eq!(https.events_url(None, None).as_str(), "wss://example.test/event/ws");
    }

    #[test]
    fn positions_remember_the_highest_seq_of_recent_flows() {
        let mut positions = Positions::default();
        for (flow, seq) in [("a", 3), ("b", 1), ("a", 2), ("a", 9)] {
            let event = Envelope::parse(&format!(r#"{{"type":"x","flowId":"{flow}","seq":{seq}}}"#)).expect("event");
            positions.note(&event);
        }
        assert_eq!(positions.get("a"), 9);
        assert_eq!(positions.recent(1), [("b".to_owned(), 1)]);
        assert_eq!(positions.get("unknown"), 0);
    }
}
