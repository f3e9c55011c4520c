//! Server-owned WebSocket sessions: the server holds the upstream connection, numbers
//! everything that happens on it as envelopes, keeps the last ones for replay, and
//! lets one control socket at a time follow and drive it. A session that closes while
//! no control socket is attached is kept, closed, for a grace period, so that a client
//! connecting late still reads its last messages and its close.
//!
//! With `--redis` the upstream connection still lives on the instance that opened it;
//! every envelope is also written to the session's Redis stream, so that a control
//! socket on another instance replays and follows it and sends its commands through
//! Redis (`cluster/ws.rs`).

mod control;
mod registry;
mod upstream;

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use volley_protocol::{
    Direction, ObserverEvent, PayloadType, SessionClosed, SessionEnvelopeKind, WsSessionClosed, WsSessionMessage,
};

use crate::clock::now_ms;

use crate::hub::Emitter;
use crate::store::{Ledger, Writes, WsStore};

pub(crate) use control::{binary_refused, close as close_message, parse_command, serve_control};
pub(crate) use registry::WsSessions;
pub(crate) use upstream::{Command, Outbound, spawn_upstream};

/// Default number of envelopes kept for replay.
pub(crate) const DEFAULT_REPLAY: usize = 500;
/// Largest replay buffer a session may ask for.
pub(crate) const MAX_REPLAY: usize = 5000;
/// Bytes of envelopes kept for replay per session, whatever their number: 500
/// envelopes of the largest frame would otherwise hold 128 MiB.
pub(crate) const REPLAY_BYTES: usize = 4 * 1024 * 1024;
/// Bytes of a message the observer stream's `wsSessionMessage` event carries.
pub(crate) const OBSERVER_PREVIEW: usize = 4096;
/// Envelopes queued for a control socket; when it is full the upstream task waits.
const CONTROL_QUEUE: usize = 1024;
/// How long a control socket may keep its queue full before it is detached.
const CONTROL_PATIENCE: Duration = Duration::from_secs(5);

/// What a control socket is told to do besides sending envelopes.
#[derive(Debug)]
pub(crate) enum ToControl {
    /// A serialised envelope.
    Envelope(Arc<str>),
    /// Close the socket with this code and reason.
    Close(u16, &'static str),
}

/// A control socket attached to a session.
#[derive(Debug)]
struct Attached {
    id: u64,
    sender: mpsc::Sender<ToControl>,
}

#[derive(Debug, Default)]
struct Buffer {
    /// `(seq, envelope)`, oldest first.
    retained: VecDeque<(u64, Arc<str>)>,
    bytes: usize,
    last_seq: u64,
    control: Option<Attached>,
    /// Set once `session.closed` is published: the code a control socket closes with.
    closed: Option<u16>,
}

/// One session.
#[derive(Debug)]
pub(crate) struct WsSession {
    pub(crate) id: String,
    pub(crate) flow_id: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) req_exec_id: Option<String>,
    pub(crate) replay_capacity: usize,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_frame: usize,
    /// Where the upstream task takes its orders.
    pub(crate) commands: mpsc::Sender<Command>,
    pub(crate) emitter: Emitter,
    /// Hides the execution's secrets from the previews observers get.
    redactor: volley_engine::redact::Redactor,
    last_activity: AtomicU64,
    next_control: AtomicU64,
    buffer: Mutex<Buffer>,
    /// Where its envelopes are mirrored for other instances (with `--redis`).
    mirror: Mirror,
    /// The mirror's writes that found the write queue full wait here, in order, and the
    /// session waits for them (`Writes::settle`) before it goes on.
    mirrored: Arc<Ledger>,
}

/// The replay a new control socket gets.
#[derive(Debug)]
pub(crate) struct Replay {
    pub(crate) envelopes: Vec<Arc<str>>,
    pub(crate) gap: Option<u64>,
}

impl WsSession {
    /// A new session of `new`, taking its orders from `commands`.
    fn new(new: NewSession, commands: mpsc::Sender<Command>) -> Self {
        WsSession {
            id: format!("ws_{}", uuid::Uuid::new_v4()),
            flow_id: new.flow_id,
            session_id: new.session_id,
            req_exec_id: new.req_exec_id,
            replay_capacity: new.replay_capacity,
            idle_timeout: new.idle_timeout,
            max_frame: new.max_frame,
            commands,
            emitter: new.emitter,
            redactor: new.redactor,
            last_activity: AtomicU64::new(now_ms()),
            next_control: AtomicU64::new(1),
            buffer: Mutex::default(),
            mirror: new.mirror,
            mirrored: Arc::default(),
        }
    }

    pub(crate) fn touch(&self) {
        self.last_activity.store(now_ms(), Ordering::Relaxed);
    }

    pub(crate) fn idle_for(&self, now: u64) -> Duration {
        Duration::from_millis(now.saturating_sub(self.last_activity.load(Ordering::Relaxed)))
    }

    pub(crate) fn last_seq(&self) -> u64 {
        self.buffer.lock().last_seq
    }

    /// The envelope fields every message carries.
    fn envelope(&self, kind: SessionEnvelopeKind, seq: u64) -> Value {
        envelope(kind, seq, &self.id, self.flow_id.as_deref(), self.req_exec_id.as_deref())
    }

    /// Numbers, keeps and forwards an envelope: `fields` are merged into it. Only the
    /// session's upstream task publishes (and the opening, before it starts), so the
    /// order of `seq` is the order of delivery. A control socket that has had no room
    /// for [`CONTROL_PATIENCE`] is detached (it reconnects with `afterSeq`); until then
    /// the upstream task waits, and with it the reading of the upstream.
    pub(crate) async fn publish(&self, kind: SessionEnvelopeKind, fields: Value) {
        self.publish_with(kind, |seq| {
            let mut envelope = self.envelope(kind, seq);
            merge(&mut envelope, fields);
            envelope.to_string()
        })
        .await;
    }

    /// Publishes a message that went upstream (`session.outbound`) or came from it
    /// (`session.inbound`): the hot path, serialised without building a JSON tree.
    /// Observers of the hub hear of it too, as a `wsSessionMessage` event with a preview.
    pub(crate) async fn publish_message(&self, kind: SessionEnvelopeKind, text: &str, json: Option<&RawValue>) {
        let payload_type = if json.is_some() { PayloadType::Json } else { PayloadType::Text };
        let seq = self
            .publish_with(kind, |seq| {
                let envelope = MessageEnvelope {
                    kind,
                    ts: now_ms(),
                    seq,
                    ws_session_id: &self.id,
                    flow_id: self.flow_id.as_deref(),
                    req_exec_id: self.req_exec_id.as_deref(),
                    payload_type,
                    encoding: "utf-8",
                    byte_length: text.len(),
                    payload: json.map_or(Payload::Text(text), Payload::Json),
                };
                serde_json::to_string(&envelope).unwrap_or_default()
            })
            .await;
        if let Some(seq) = seq
            && self.emitter.is_heard()
        {
            let direction = if kind == SessionEnvelopeKind::Inbound { Direction::Inbound } else { Direction::Outbound };
            let shown = self.redactor.redact(text);
            let preview = cut(&shown, OBSERVER_PREVIEW);
            self.emitter.emit(ObserverEvent::WsSessionMessage(WsSessionMessage {
                ws_session_id: self.id.clone(),
                direction,
                ws_seq: seq,
                payload_type,
                byte_length: text.len(),
                preview: preview.to_owned(),
                truncated: preview.len() < shown.len(),
            }));
        }
    }

    /// Numbers and keeps an envelope and hands it to the control socket; its `seq`, or
    /// `None` when the session is closed.
    async fn publish_with(&self, kind: SessionEnvelopeKind, build: impl FnOnce(u64) -> String) -> Option<u64> {
        let (text, control, seq) = {
            let mut buffer = self.buffer.lock();
            if buffer.closed.is_some() {
                return None;
            }
            buffer.last_seq += 1;
            let seq = buffer.last_seq;
            let text: Arc<str> = build(seq).into();
            buffer.bytes += text.len();
            buffer.retained.push_back((seq, Arc::clone(&text)));
            while buffer.retained.len() > self.replay_capacity
                || (buffer.bytes > REPLAY_BYTES && buffer.retained.len() > 1)
            {
                if let Some((_, old)) = buffer.retained.pop_front() {
                    buffer.bytes -= old.len();
                }
            }
            let control = buffer.control.as_ref().map(|control| (control.id, control.sender.clone()));
            // In the order of `seq`: the lock is held.
            let Mirror { store, lifetime, .. } = &self.mirror;
            store.envelope(&self.mirrored, &self.id, seq, kind, &text, buffer.retained.len(), *lifetime);
            (text, control, seq)
        };
        self.mirror_written().await;
        let Some((id, sender)) = control else { return Some(seq) };
        let delivered = match sender.try_send(ToControl::Envelope(Arc::clone(&text))) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(message)) => {
                sender.send_timeout(message, CONTROL_PATIENCE).await.is_ok()
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        };
        if !delivered {
            // Gone or too slow: dropping its queue ends it with 1013.
            self.detach(id);
        }
        Some(seq)
    }

    /// With the mirror's write queue full: waits until its writes are queued (a bounded
    /// wait), as the session waits for a slow control socket; one the store refused or
    /// that found no room is logged and counted.
    async fn mirror_written(&self) {
        if self.mirrored.has_waiting()
            && let Err(lost) = self.mirror.writes.settle(&self.mirrored).await
        {
            tracing::warn!(ws_session = %self.id, writes = lost.writes, "envelopes were not mirrored to Redis");
        }
    }

    /// An envelope for the current control socket only (replay ends, errors about what
    /// it sent): it carries the session's last `seq` and is not kept.
    pub(crate) fn local_envelope(&self, kind: SessionEnvelopeKind, fields: Value) -> String {
        let mut envelope = self.envelope(kind, self.last_seq());
        merge(&mut envelope, fields);
        envelope.to_string()
    }

    /// Attaches a control socket (the previous one is closed with 1000) and returns
    /// what it must replay, atomically with the attachment: nothing published in
    /// between is lost or sent twice. A closed session (kept for its grace period)
    /// gives its replay, then the socket is closed.
    pub(crate) fn attach(&self, after_seq: u64) -> (u64, mpsc::Receiver<ToControl>, Replay) {
        let mut buffer = self.buffer.lock();
        let (sender, receiver) = mpsc::channel(CONTROL_QUEUE);
        let id = self.next_control.fetch_add(1, Ordering::Relaxed);
        if let Some(code) = buffer.closed {
            // Nothing more will come: the socket closes after the replay.
            let _ = sender.try_send(ToControl::Close(code, "session closed"));
        } else if let Some(old) = buffer.control.replace(Attached { id, sender }) {
            let _ = old.sender.try_send(ToControl::Close(1000, "replaced by a new control socket"));
        }
        let oldest = buffer.retained.front().map(|(seq, _)| *seq);
        let gap = oldest.filter(|oldest| *oldest > after_seq.saturating_add(1));
        let envelopes = if gap.is_some() {
            Vec::new()
        } else {
            buffer.retained.iter().filter(|(seq, _)| *seq > after_seq).map(|(_, text)| Arc::clone(text)).collect()
        };
        (id, receiver, Replay { envelopes, gap })
    }

    /// Detaches control socket `id` if it is still the attached one.
    pub(crate) fn detach(&self, id: u64) {
        let mut buffer = self.buffer.lock();
        if buffer.control.as_ref().is_some_and(|control| control.id == id) {
            buffer.control = None;
        }
    }

    /// Whether a control socket is attached.
    pub(crate) fn has_control(&self) -> bool {
        self.buffer.lock().control.is_some()
    }

    /// Whether `session.closed` was published.
    pub(crate) fn is_closed(&self) -> bool {
        self.buffer.lock().closed.is_some()
    }

    /// Publishes `session.closed`, closes the control socket and refuses more.
    pub(crate) async fn close(&self, code: u16, reason: &str, was_clean: bool, socket_code: u16) {
        self.publish(
            SessionEnvelopeKind::Closed,
            json!({ "payload": SessionClosed { code, reason: reason.to_owned(), was_clean } }),
        )
        .await;
        {
            let mut buffer = self.buffer.lock();
            buffer.closed = Some(socket_code);
            self.mirror.store.closed(&self.mirrored, &self.id, socket_code);
            if let Some(control) = buffer.control.take() {
                let reason = if socket_code == 1001 { "session closed (idle or shutdown)" } else { "session closed" };
                let _ = control.sender.try_send(ToControl::Close(socket_code, reason));
            }
        }
        self.mirror_written().await;
        self.emitter.emit(ObserverEvent::WsSessionClosed(WsSessionClosed {
            ws_session_id: self.id.clone(),
            code,
            reason: reason.to_owned(),
            was_clean,
        }));
    }
}

/// The envelope of a message, as it goes on the wire.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct MessageEnvelope<'a> {
    #[serde(rename = "type")]
    kind: SessionEnvelopeKind,
    ts: u64,
    seq: u64,
    ws_session_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    flow_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    req_exec_id: Option<&'a str>,
    payload_type: PayloadType,
    encoding: &'static str,
    byte_length: usize,
    payload: Payload<'a>,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum Payload<'a> {
    Text(&'a str),
    /// The message's own JSON text.
    Json(&'a RawValue),
}

/// The fields every envelope of a session carries.
pub(crate) fn envelope(
    kind: SessionEnvelopeKind,
    seq: u64,
    ws_session_id: &str,
    flow_id: Option<&str>,
    req_exec_id: Option<&str>,
) -> Value {
    let mut envelope = json!({ "type": kind, "ts": now_ms(), "seq": seq, "wsSessionId": ws_session_id });
    if let Some(flow) = flow_id {
        envelope["flowId"] = json!(flow);
    }
    if let Some(exec) = req_exec_id {
        envelope["reqExecId"] = json!(exec);
    }
    envelope
}

pub(crate) fn merge(envelope: &mut Value, fields: Value) {
    if let (Value::Object(envelope), Value::Object(fields)) = (envelope, fields) {
        envelope.extend(fields);
    }
}

/// Where a session's envelopes are mirrored for other instances: the store, the writes
/// it waits for when the queue is full, and how long the mirror stays after the last
/// envelope (the idle timeout and the closed grace period).
#[derive(Debug)]
pub(crate) struct Mirror {
    pub(crate) store: Arc<dyn WsStore>,
    pub(crate) writes: Arc<dyn Writes>,
    pub(crate) lifetime: Duration,
}

/// What a new session is made of.
#[derive(Debug)]
pub(crate) struct NewSession {
    pub(crate) flow_id: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) req_exec_id: Option<String>,
    pub(crate) replay_capacity: usize,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_frame: usize,
    pub(crate) emitter: Emitter,
    pub(crate) redactor: volley_engine::redact::Redactor,
    /// Where its envelopes are mirrored.
    pub(crate) mirror: Mirror,
}

/// The first `limit` bytes of `text`, cut on a character boundary.
pub(crate) fn cut(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::{Hub, Sequence};

    fn new_session(sessions: &WsSessions) -> Arc<WsSession> {
        let slot = sessions.reserve().expect("a slot");
        let emitter = Emitter {
            hub: Arc::new(Hub::default()),
            run_id: None,
            session_id: None,
            flow_id: None,
            req_exec_id: None,
            sequence: Sequence::run(),
        };
        let new = NewSession {
            flow_id: None,
            session_id: None,
            req_exec_id: None,
            replay_capacity: DEFAULT_REPLAY,
            idle_timeout: Duration::from_secs(60),
            max_frame: 1024,
            emitter,
            redactor: volley_engine::redact::Redactor::default(),
            mirror: Mirror {
                store: Arc::new(crate::store::MemoryWs),
                writes: Arc::new(crate::store::Immediate),
                lifetime: Duration::ZERO,
            },
        };
        sessions.add(slot, new, mpsc::channel(1).0)
    }

    #[tokio::test]
    async fn a_replay_after_the_largest_seq_is_empty_and_has_no_gap() {
        let sessions = WsSessions::new(1);
        let session = new_session(&sessions);
        session.publish(SessionEnvelopeKind::Opened, json!({})).await;
        let (_, _, replay) = session.attach(u64::MAX);
        assert!(replay.envelopes.is_empty());
        assert_eq!(replay.gap, None);
    }

    #[tokio::test]
    async fn closed_sessions_free_their_slot_and_are_kept_within_the_cap() {
        let sessions = WsSessions::new(2);
        let first = new_session(&sessions);
        let second = new_session(&sessions);
        assert!(sessions.reserve().is_err(), "two live sessions fill the cap");
        // An open session is left to its upstream task.
        sessions.forget(&first.id);
        assert_eq!(sessions.counts(), (2, 2));

        for session in [&first, &second] {
            sessions.release(&session.id, true);
            session.close(1000, "done", true, 1000).await;
        }
        assert_eq!(sessions.counts(), (2, 0), "kept, without a slot");
        sessions.release(&first.id, true);
        assert_eq!(sessions.counts(), (2, 0), "a slot is freed once");

        // A third closed session pushes the oldest out: no more closed than live ones.
        let third = new_session(&sessions);
        sessions.release(&third.id, true);
        third.close(1000, "done", true, 1000).await;
        assert!(sessions.get(&first.id).is_err());
        assert!(sessions.get(&second.id).is_ok() && sessions.get(&third.id).is_ok());
        sessions.forget(&second.id);
        assert_eq!(sessions.counts(), (1, 0));

        // Not kept: gone with its slot.
        let fourth = new_session(&sessions);
        sessions.release(&fourth.id, false);
        assert_eq!(sessions.counts(), (1, 0));
    }
}
