//! WebSocket sessions across instances. The upstream connection lives on the instance
//! that opened it (its owner); every envelope is also written to the session's
//! stream (`ws:{id}:envelopes`, as many as its replay buffer keeps), so that a control
//! socket on another instance replays it and follows it live. That socket's commands
//! go to the owner through the owner's command stream (`instance:{id}:commands`).
//! When the owner stops refreshing its liveness key, the first control socket that
//! notices writes `session.error` and `session.closed` to the stream: every client
//! hears the end, none waits on a socket nobody serves.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::ws::Message;
use futures_util::future::BoxFuture;
use futures_util::{Sink, SinkExt as _, Stream, StreamExt as _};
use redis::streams::{StreamRangeReply, StreamReadOptions, StreamReadReply};
use serde_json::json;
use volley_protocol::{ErrorCode, SessionEnvelopeKind, SessionError, SessionReplayEnd};

use super::{Cluster, scripts, text};
use crate::error::ApiError;
use crate::store::{Elsewhere, Ledger, Owned, WsStore};
use crate::ws::{Command, Outbound, WsSessions, binary_refused, close_message, envelope, merge, parse_command};

/// How often a control socket on another instance checks that the owner is alive.
const OWNER_CHECK: Duration = Duration::from_secs(1);
/// Commands kept in an instance's command stream (it reads them as they come).
const COMMANDS_KEPT: usize = 10_000;

/// Mirrors an envelope. KEYS: the session, its envelopes. ARGV: seq, the envelope,
/// envelopes kept, lifetime (ms), kind.
const ENVELOPE: &str = r"
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[3], '*', 'q', ARGV[1], 'k', ARGV[5], 'e', ARGV[2])
redis.call('HSET', KEYS[1], 'lastSeq', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
";

/// Ends a session whose owner is gone, once. KEYS: the session, its envelopes, the
/// owner's liveness key. ARGV: the error envelope before and after its seq, the
/// closed one likewise, how long the ended session is kept (ms).
const ORPHANED: &str = r"
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'closed') == 1 then return 0 end
local seq = tonumber(redis.call('HGET', KEYS[1], 'lastSeq') or '0')
redis.call('XADD', KEYS[2], '*', 'q', seq + 1, 'k', 'session.error', 'e', ARGV[1] .. (seq + 1) .. ARGV[2])
redis.call('XADD', KEYS[2], '*', 'q', seq + 2, 'k', 'session.closed', 'e', ARGV[3] .. (seq + 2) .. ARGV[4])
redis.call('HSET', KEYS[1], 'lastSeq', seq + 2, 'closed', 1000)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1
";

/// The control sockets attached on this instance to sessions others own, by session:
/// an id, and the signal that replaces it.
#[derive(Debug, Default)]
pub(crate) struct RemoteControls {
    attached: parking_lot::Mutex<HashMap<String, (u64, tokio::sync::oneshot::Sender<()>)>>,
    next: std::sync::atomic::AtomicU64,
}

impl RemoteControls {
    /// Attaches a new control socket to `session`; the previous one here is told to go.
    fn attach(&self, session: &str) -> (u64, tokio::sync::oneshot::Receiver<()>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (replace, replaced) = tokio::sync::oneshot::channel();
        if let Some((_, previous)) = self.attached.lock().insert(session.to_owned(), (id, replace)) {
            let _ = previous.send(());
        }
        (id, replaced)
    }

    fn detach(&self, session: &str, id: u64) {
        let mut attached = self.attached.lock();
        if attached.get(session).is_some_and(|(attached, _)| *attached == id) {
            attached.remove(session);
        }
    }
}

/// A session owned by another instance, as Redis describes it.
#[derive(Debug, Clone)]
struct RemoteSession {
    id: String,
    owner: String,
    flow_id: Option<String>,
    session_id: Option<String>,
    req_exec_id: Option<String>,
    max_frame: usize,
    /// The close code of its control sockets, once closed.
    closed: Option<u16>,
}

impl RemoteSession {
    /// Whether its `session.closed` is published.
    fn is_closed(&self) -> bool {
        self.closed.is_some()
    }
}

impl Cluster {
    /// The session `id` as Redis describes it, `None` when unknown.
    async fn ws_session(&self, id: &str) -> Result<Option<RemoteSession>, ApiError> {
        let fields: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(self.keys.ws(id))
            .query_async(&mut self.connection())
            .await
            .map_err(|error| super::store::unavailable(&error))?;
        let Some(owner) = fields.get("owner").cloned() else { return Ok(None) };
        Ok(Some(RemoteSession {
            id: id.to_owned(),
            owner,
            flow_id: fields.get("flowId").cloned(),
            session_id: fields.get("sessionId").cloned(),
            req_exec_id: fields.get("reqExecId").cloned(),
            max_frame: fields.get("maxFrame").and_then(|value| value.parse().ok()).unwrap_or(256 * 1024),
            closed: fields.get("closed").and_then(|value| value.parse().ok()),
        }))
    }

    /// Hands a control socket's command to the session's owner.
    async fn ws_command(&self, session: &RemoteSession, command: &Command) -> Result<(), ApiError> {
        let mut entry = redis::cmd("XADD");
        entry
            .arg(self.keys.commands(&session.owner))
            .arg("MAXLEN")
            .arg("~")
            .arg(COMMANDS_KEPT)
            .arg("*")
            .arg("w")
            .arg(&session.id);
        match command {
            Command::Send(Outbound::Text(text)) => entry.arg("t").arg("text").arg("p").arg(text),
            Command::Send(Outbound::Json(json)) => entry.arg("t").arg("json").arg("p").arg(json.get()),
            Command::Close { code, reason } => entry.arg("t").arg("close").arg("c").arg(*code).arg("r").arg(reason),
            Command::Ping => entry.arg("t").arg("ping"),
            Command::Forget => entry.arg("t").arg("forget"),
        };
        entry.query_async::<()>(&mut self.connection()).await.map_err(|error| super::store::unavailable(&error))
    }

    /// A control socket here heard the session close: it goes at once, here, in Redis
    /// and on its owner, as it does when the owner's own control socket hears it.
    async fn heard_close(&self, session: &RemoteSession) {
        let mut connection = self.connection();
        let removed: redis::RedisResult<()> = redis::pipe()
            .del(self.keys.ws(&session.id))
            .del(self.keys.ws_part(&session.id, "envelopes"))
            .query_async(&mut connection)
            .await;
        if let Err(error) = removed {
            tracing::warn!("cannot remove a closed WebSocket session from Redis: {error}");
        }
        let _ = self.ws_command(session, &Command::Forget).await;
    }

    /// Whether the instance `owner` is alive.
    async fn alive(&self, owner: &str) -> bool {
        let alive: redis::RedisResult<bool> =
            redis::cmd("EXISTS").arg(self.keys.instance(owner)).query_async(&mut self.connection()).await;
        alive.unwrap_or(true)
    }

    /// Ends `session` for every client when its owner is gone.
    async fn end_orphaned(&self, session: &RemoteSession, grace: Duration) {
        let envelope_of = |kind: SessionEnvelopeKind, fields: serde_json::Value| {
            let mut value = envelope(
                kind,
                crate::hub::SEQ_PLACEHOLDER,
                &session.id,
                session.flow_id.as_deref(),
                session.req_exec_id.as_deref(),
            );
            merge(&mut value, fields);
            let text = value.to_string();
            super::events::split_at_seq(&text)
                .map(|(head, tail)| (head.to_owned(), tail.to_owned()))
                .unwrap_or_default()
        };
        let message = "the instance that held the upstream connection is gone";
        let (error_head, error_tail) = envelope_of(
            SessionEnvelopeKind::Error,
            json!({ "error": SessionError { code: ErrorCode::WsUpstreamError, message: message.to_owned() } }),
        );
        let (closed_head, closed_tail) = envelope_of(
            SessionEnvelopeKind::Closed,
            json!({ "payload": volley_protocol::SessionClosed { code: 1006, reason: message.to_owned(), was_clean: false } }),
        );
        let keys = [
            self.keys.ws(&session.id),
            self.keys.ws_part(&session.id, "envelopes"),
            self.keys.instance(&session.owner),
        ];
        let grace = grace.as_millis().to_string();
        let args =
            [error_head.as_str(), error_tail.as_str(), closed_head.as_str(), closed_tail.as_str(), grace.as_str()];
        let ended: redis::RedisResult<i64> =
            scripts::eval(ORPHANED, &keys, &args).query_async(&mut self.connection()).await;
        match ended {
            Ok(1) => {
                tracing::info!(ws_session = %session.id, owner = %session.owner, "ended a WebSocket session whose instance is gone");
            }
            Ok(_) => {}
            Err(error) => tracing::warn!("cannot end a WebSocket session whose instance is gone: {error}"),
        }
    }
}

/// The WebSocket sessions of every instance: the mirrors in Redis, the commands through
/// each owner's stream.
#[derive(Debug)]
pub(super) struct ClusterWs(pub(super) Arc<Cluster>);

impl WsStore for ClusterWs {
    /// The session's hash, which every instance finds it by.
    fn opened(&self, mirrored: &Arc<Ledger>, session: &Owned<'_>) {
        let cluster = &self.0;
        let mut command = redis::cmd("HSET");
        command.arg(cluster.keys.ws(session.id)).arg("owner").arg(&cluster.instance);
        command.arg("maxFrame").arg(session.max_frame).arg("lastSeq").arg(0);
        if let Some(flow) = session.flow_id {
            command.arg("flowId").arg(flow);
        }
        if let Some(id) = session.session_id {
            command.arg("sessionId").arg(id);
        }
        if let Some(exec) = session.req_exec_id {
            command.arg("reqExecId").arg(exec);
        }
        cluster.keep(mirrored, command);
    }

    /// The envelope added to the session's stream, which keeps as many as its replay
    /// buffer (at least one).
    fn envelope(
        &self,
        mirrored: &Arc<Ledger>,
        id: &str,
        seq: u64,
        kind: SessionEnvelopeKind,
        envelope: &str,
        kept: usize,
        lifetime: Duration,
    ) {
        let cluster = &self.0;
        let keys = [cluster.keys.ws(id), cluster.keys.ws_part(id, "envelopes")];
        let kind = kind.as_str();
        let (seq, kept, lifetime) = (seq.to_string(), kept.max(1).to_string(), lifetime.as_millis().to_string());
        cluster.keep(
            mirrored,
            scripts::eval(ENVELOPE, &keys, &[seq.as_str(), envelope, kept.as_str(), lifetime.as_str(), kind]),
        );
    }

    fn closed(&self, mirrored: &Arc<Ledger>, id: &str, socket_code: u16) {
        let mut command = redis::cmd("HSET");
        command.arg(self.0.keys.ws(id)).arg("closed").arg(socket_code);
        self.0.keep(mirrored, command);
    }

    fn elsewhere<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Box<dyn Elsewhere>>, ApiError>> {
        Box::pin(async move {
            let session = self.0.ws_session(id).await?;
            Ok(session.map(|session| Box::new(Remote { cluster: Arc::clone(&self.0), session }) as Box<dyn Elsewhere>))
        })
    }
}

/// A session another instance owns, reached through Redis.
struct Remote {
    cluster: Arc<Cluster>,
    session: RemoteSession,
}

impl Elsewhere for Remote {
    fn flow_id(&self) -> Option<&str> {
        self.session.flow_id.as_deref()
    }

    fn session_id(&self) -> Option<&str> {
        self.session.session_id.as_deref()
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, Result<(), ApiError>> {
        Box::pin(async move {
            let order = Command::Close { code: 1000, reason: "closed by DELETE /ws/session".to_owned() };
            self.cluster.ws_command(&self.session, &order).await?;
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            while tokio::time::Instant::now() < deadline {
                let now = self.cluster.ws_session(&self.session.id).await?;
                if now.is_none_or(|session| session.is_closed()) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(())
        })
    }

    fn control(
        self: Box<Self>,
        socket: axum::extract::ws::WebSocket,
        after_seq: u64,
        grace: Duration,
    ) -> BoxFuture<'static, ()> {
        let Remote { cluster, session } = *self;
        Box::pin(serve_remote_control(socket, cluster, session, after_seq, grace))
    }
}

/// One envelope read from a session's stream.
struct Read {
    id: String,
    seq: u64,
    kind: String,
    envelope: String,
}

fn read_entries(ids: Vec<redis::streams::StreamId>) -> Vec<Read> {
    ids.into_iter()
        .filter_map(|entry| {
            Some(Read {
                seq: text(&entry.map, "q")?.parse().ok()?,
                kind: text(&entry.map, "k").unwrap_or_default(),
                envelope: text(&entry.map, "e")?,
                id: entry.id,
            })
        })
        .collect()
}

/// Serves a control socket for a session another instance owns: the stream's replay
/// from `after_seq`, then its envelopes live; commands go to the owner.
async fn serve_remote_control<S>(
    socket: S,
    cluster: Arc<Cluster>,
    session: RemoteSession,
    after_seq: u64,
    grace: Duration,
) where
    S: Sink<Message> + Stream<Item = Result<Message, axum::Error>> + Unpin,
{
    let (mut sink, mut stream) = socket.split();
    let last_seq = std::sync::atomic::AtomicU64::new(0);
    let local = |kind: SessionEnvelopeKind, seq: u64, fields: serde_json::Value| {
        let mut value = envelope(kind, seq, &session.id, session.flow_id.as_deref(), session.req_exec_id.as_deref());
        merge(&mut value, fields);
        value.to_string()
    };
    let key = cluster.keys.ws_part(&session.id, "envelopes");
    let Ok(mut connection) = cluster.blocking_connection().await else {
        let _ = sink.send(close_message(1011, "the shared store (Redis) is unavailable")).await;
        return;
    };
    let kept: redis::RedisResult<StreamRangeReply> =
        redis::cmd("XRANGE").arg(&key).arg("-").arg("+").query_async(&mut connection).await;
    let kept = kept.map(|reply| read_entries(reply.ids)).unwrap_or_default();
    let mut last_id = kept.last().map_or_else(|| "0-0".to_owned(), |read| read.id.clone());
    last_seq.store(kept.last().map_or(0, |read| read.seq), Ordering::Relaxed);
    let oldest = kept.first().map(|read| read.seq);
    let gap = oldest.filter(|oldest| *oldest > after_seq.saturating_add(1));
    let mut closed = session.closed;
    let mut first = Vec::new();
    if let Some(oldest) = gap {
        first.push(local(
            SessionEnvelopeKind::Error,
            last_seq.load(Ordering::Relaxed),
            json!({
                "error": SessionError {
                    code: ErrorCode::WsReplayGap,
                    message: format!("envelopes after {after_seq} are no longer kept; the oldest is {oldest}"),
                },
                "payload": volley_protocol::ReplayGap { after_seq, oldest_available_seq: oldest },
            }),
        ));
    }
    let replayed: Vec<&Read> =
        if gap.is_some() { Vec::new() } else { kept.iter().filter(|read| read.seq > after_seq).collect() };
    for read in &replayed {
        if sink.send(Message::Text(read.envelope.as_str().into())).await.is_err() {
            return;
        }
        if read.kind == SessionEnvelopeKind::Closed.as_str() {
            closed = closed.or(Some(1000));
        }
    }
    first.push(local(
        SessionEnvelopeKind::ReplayEnd,
        last_seq.load(Ordering::Relaxed),
        json!({ "payload": SessionReplayEnd { after_seq, replayed: replayed.len(), gap: gap.is_some() } }),
    ));
    for text in first {
        if sink.send(Message::Text(text.into())).await.is_err() {
            return;
        }
    }
    if let Some(code) = closed {
        let _ = sink.send(close_message(code, "session closed")).await;
        return;
    }
    let (control, mut superseded) = cluster.remote_controls.attach(&session.id);
    let (answers, mut answer_queue) = tokio::sync::mpsc::channel::<String>(64);
    let reader = async {
        while let Some(incoming) = stream.next().await {
            let reply = match incoming {
                Ok(Message::Text(text)) => match parse_command(text.as_str(), session.max_frame) {
                    Ok(command) => cluster.ws_command(&session, &command).await.err().map(|error| {
                        local(
                            SessionEnvelopeKind::Error,
                            last_seq.load(Ordering::Relaxed),
                            json!({ "error": SessionError { code: ErrorCode::WsUpstreamNotOpen, message: error.message } }),
                        )
                    }),
                    Err((code, message)) => {
                        Some(local(SessionEnvelopeKind::Error, last_seq.load(Ordering::Relaxed), json!({ "error": SessionError { code, message } })))
                    }
                },
                Ok(Message::Binary(bytes)) => {
                    Some(local(SessionEnvelopeKind::Error, last_seq.load(Ordering::Relaxed), binary_refused(bytes.len())))
                }
                Ok(Message::Ping(_) | Message::Pong(_)) => None,
                Ok(Message::Close(_)) | Err(_) => break,
            };
            if let Some(reply) = reply
                && answers.send(reply).await.is_err()
            {
                break;
            }
        }
    };
    let writer = async {
        let mut owner_checked = tokio::time::Instant::now();
        let mut read = Box::pin(next_envelopes(connection.clone(), key.clone(), last_id.clone()));
        loop {
            tokio::select! {
                reply = &mut read => {
                    let Ok(entries) = reply else {
                        let _ = sink.send(close_message(1011, "the shared store (Redis) is unavailable")).await;
                        return;
                    };
                    for entry in entries {
                        last_id.clone_from(&entry.id);
                        last_seq.store(entry.seq, Ordering::Relaxed);
                        if sink.send(Message::Text(entry.envelope.into())).await.is_err() {
                            return;
                        }
                        if entry.kind == SessionEnvelopeKind::Closed.as_str() {
                            let code = cluster.ws_session(&session.id).await.ok().flatten().and_then(|now| now.closed).unwrap_or(1000);
                            let reason = if code == 1001 { "session closed (idle or shutdown)" } else { "session closed" };
                            let _ = sink.send(close_message(code, reason)).await;
                            cluster.heard_close(&session).await;
                            return;
                        }
                    }
                    if owner_checked.elapsed() >= OWNER_CHECK {
                        owner_checked = tokio::time::Instant::now();
                        if !cluster.alive(&session.owner).await {
                            cluster.end_orphaned(&session, grace).await;
                        }
                    }
                    read = Box::pin(next_envelopes(connection.clone(), key.clone(), last_id.clone()));
                }
                Some(reply) = answer_queue.recv() => {
                    if sink.send(Message::Text(reply.into())).await.is_err() {
                        return;
                    }
                }
                _ = &mut superseded => {
                    let _ = sink.send(close_message(1000, "replaced by a new control socket")).await;
                    return;
                }
                () = cluster.stop.cancelled() => {
                    let _ = sink.send(close_message(1001, "server shutdown")).await;
                    return;
                }
            }
        }
    };
    tokio::select! {
        () = reader => {}
        () = writer => {}
    }
    cluster.remote_controls.detach(&session.id, control);
}

/// The envelopes after `last_id` (waiting up to the owner check's period).
async fn next_envelopes(
    mut connection: redis::aio::MultiplexedConnection,
    key: String,
    last_id: String,
) -> redis::RedisResult<Vec<Read>> {
    let options = StreamReadOptions::default().block(OWNER_CHECK.as_millis() as usize).count(256);
    let reply: Option<StreamReadReply> =
        redis::cmd("XREAD").arg(&options).arg("STREAMS").arg(&key).arg(&last_id).query_async(&mut connection).await?;
    Ok(reply
        .map(|reply| read_entries(reply.keys.into_iter().flat_map(|stream| stream.ids).collect()))
        .unwrap_or_default())
}

/// Carries the commands other instances' control sockets send to the sessions this
/// instance owns.
pub(crate) async fn receive_commands(cluster: Arc<Cluster>, sessions: Arc<WsSessions>) {
    let key = cluster.keys.commands(&cluster.instance);
    let mut last = "0-0".to_owned();
    loop {
        let Ok(mut connection) = cluster.blocking_connection().await else {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                () = cluster.stop.cancelled() => return,
            }
        };
        loop {
            let options = StreamReadOptions::default().block(2000).count(256);
            let mut command = redis::cmd("XREAD");
            command.arg(&options).arg("STREAMS").arg(&key).arg(&last);
            let read = command.query_async::<Option<StreamReadReply>>(&mut connection);
            let reply = tokio::select! {
                reply = read => reply,
                () = cluster.stop.cancelled() => return,
            };
            let Ok(reply) = reply else { break };
            for entry in reply.into_iter().flat_map(|reply| reply.keys).flat_map(|stream| stream.ids) {
                last.clone_from(&entry.id);
                let Some(order) = decode_command(&entry.map) else { continue };
                let Some(id) = text(&entry.map, "w") else { continue };
                if matches!(order, Command::Forget) {
                    sessions.forget(&id);
                } else if let Ok(session) = sessions.get(&id) {
                    session.touch();
                    let _ = session.commands.send(order).await;
                }
            }
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
            () = cluster.stop.cancelled() => return,
        }
    }
}

fn decode_command(map: &HashMap<String, redis::Value>) -> Option<Command> {
    match text(map, "t")?.as_str() {
        "text" => Some(Command::Send(Outbound::Text(text(map, "p").unwrap_or_default()))),
        "json" => serde_json::value::RawValue::from_string(text(map, "p")?)
            .ok()
            .map(|json| Command::Send(Outbound::Json(json))),
        "close" => Some(Command::Close {
            code: text(map, "c").and_then(|code| code.parse().ok()).unwrap_or(1000),
            reason: text(map, "r").unwrap_or_default(),
        }),
        "ping" => Some(Command::Ping),
        "forget" => Some(Command::Forget),
        _ => None,
    }
}
