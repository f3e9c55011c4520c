//! The task that owns a session's upstream connection: it turns upstream frames into
//! envelopes, carries out the control socket's commands, and ends the session on an
//! upstream close, an idle timeout or shutdown.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use volley_engine::websocket::{WebSocket, WsError, WsMessage};
use volley_protocol::{ErrorCode, SessionEnvelopeKind, SessionError};

use super::{WsSession, WsSessions};
use crate::clock::now_ms;

/// What a control socket asks of the upstream connection.
#[derive(Debug)]
pub(crate) enum Command {
    /// Send a text frame.
    Send(Outbound),
    /// Close the upstream connection.
    Close { code: u16, reason: String },
    /// Keep the session from idling.
    Ping,
    /// With `--redis`: a control socket on another instance heard the session close;
    /// the closed session is removed at once (never sent to the upstream task).
    Forget,
}

/// A message for the upstream, as the client's `session.send` gave it.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// A `text` payload.
    Text(String),
    /// A `json` payload, as the client wrote it: its text is the frame.
    Json(Box<RawValue>),
}

impl Outbound {
    /// The text of the frame.
    fn text(&self) -> &str {
        match self {
            Outbound::Text(text) => text,
            Outbound::Json(json) => json.get(),
        }
    }

    /// The JSON of a `json` payload, for its envelope.
    fn json(&self) -> Option<&RawValue> {
        match self {
            Outbound::Text(_) => None,
            Outbound::Json(json) => Some(json),
        }
    }
}

/// Starts the task of `session` over `socket`, a session of `sessions`; a closed session
/// stays findable for `grace`, unless the server shuts down.
pub(crate) fn spawn_upstream(
    sessions: Arc<WsSessions>,
    session: Arc<WsSession>,
    socket: WebSocket,
    commands: mpsc::Receiver<Command>,
    (grace, shutdown): (Duration, CancellationToken),
) {
    tokio::spawn(async move {
        let closing = run(&session, socket, commands, shutdown.clone()).await;
        // Nobody attached heard the close: the session stays findable, closed, for the
        // grace period, so that a client connecting late reads the last messages and the
        // close code. A session whose control socket hears it is gone at once.
        let kept = closing.is_some() && !shutdown.is_cancelled() && !session.has_control();
        // The slot is free (and, unless kept, the id unknown) before anyone hears of the
        // close: a client that opens a new session on `session.closed` is not refused at
        // the cap.
        sessions.release(&session.id, kept);
        if let Some(Closing { code, reason, was_clean, socket_code }) = closing {
            session.close(code, &reason, was_clean, socket_code).await;
        }
        if kept {
            tokio::select! {
                () = tokio::time::sleep(grace) => {}
                () = shutdown.cancelled() => {}
            }
            sessions.forget(&session.id);
        }
    });
}

/// How a session ended: the `session.closed` payload and the control socket's close code.
#[derive(Debug)]
struct Closing {
    code: u16,
    reason: String,
    was_clean: bool,
    socket_code: u16,
}

impl Closing {
    fn new(code: u16, reason: impl Into<String>, was_clean: bool, socket_code: u16) -> Self {
        Self { code, reason: reason.into(), was_clean, socket_code }
    }
}

/// A text frame that is a JSON object or array, as JSON to relay in its envelope (its
/// payload is then `json`); only text that starts like one is checked. The relayed
/// JSON is the frame's own text, key order and spacing kept, without its surrounding
/// whitespace.
pub(crate) fn json_payload(text: &str) -> Option<&RawValue> {
    let first = text.trim_start().as_bytes().first()?;
    if !matches!(first, b'{' | b'[') {
        return None;
    }
    serde_json::from_str(text).ok()
}

fn error_fields(code: ErrorCode, message: &str) -> Value {
    json!({ "error": SessionError { code, message: message.to_owned() } })
}

async fn run(
    session: &WsSession,
    socket: WebSocket,
    mut commands: mpsc::Receiver<Command>,
    shutdown: CancellationToken,
) -> Option<Closing> {
    let (sender, mut receiver) = socket.split();
    let tick = (session.idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
    let mut idle = tokio::time::interval(tick);
    loop {
        tokio::select! {
            biased;
            () = shutdown.cancelled() => {
                let _ = sender.close(1001, "server shutdown").await;
                return Some(Closing::new(1001, "server shutdown", true, 1001));
            }
            command = commands.recv() => match command {
                Some(Command::Send(message)) => {
                    session.touch();
                    match sender.send_text(message.text().to_owned()).await {
                        Ok(()) => session.publish_message(SessionEnvelopeKind::Outbound, message.text(), message.json()).await,
                        Err(error) => session.publish(SessionEnvelopeKind::Error, error_fields(ErrorCode::WsSendFailed, &error.to_string())).await,
                    }
                }
                Some(Command::Close { code, reason }) => {
                    let _ = sender.close(code, &reason).await;
                    return Some(Closing::new(code, reason, true, 1000));
                }
                Some(Command::Ping) => session.touch(),
                Some(Command::Forget) => {}
                None => return None,
            },
            message = receiver.next() => match message {
                Some(Ok(WsMessage::Text(text))) => {
                    session.touch();
                    if text.len() > session.max_frame {
                        let message = format!("an upstream message of {} bytes is over the {} byte limit", text.len(), session.max_frame);
                        let mut fields = error_fields(ErrorCode::WsFrameTooLarge, &message);
                        fields["byteLength"] = json!(text.len());
                        session.publish(SessionEnvelopeKind::Error, fields).await;
                    } else {
                        session.publish_message(SessionEnvelopeKind::Inbound, &text, json_payload(&text)).await;
                    }
                }
                // `/execute/ws` refuses a definition with messages: none are sent here.
                Some(Ok(WsMessage::Pong(_) | WsMessage::Sent(_))) => {}
                Some(Ok(WsMessage::Close(frame))) => {
                    let (code, reason) = frame.map_or((1005, String::new()), |frame| (frame.code, frame.reason));
                    return Some(Closing::new(code, reason, true, 1000));
                }
                Some(Err(WsError::Binary { len })) => {
                    let mut fields = error_fields(ErrorCode::WsBinaryUnsupported, "the upstream sent a binary message; protocol 1.1 carries text only");
                    fields["byteLength"] = json!(len);
                    session.publish(SessionEnvelopeKind::Error, fields).await;
                }
                Some(Err(error)) => {
                    session.publish(SessionEnvelopeKind::Error, error_fields(ErrorCode::WsUpstreamError, &error.to_string())).await;
                    return Some(Closing::new(1006, "the upstream connection failed", false, 1000));
                }
                None => {
                    return Some(Closing::new(1006, "the upstream connection ended without a close frame", false, 1000));
                }
            },
            _ = idle.tick() => {
                if session.idle_for(now_ms()) >= session.idle_timeout {
                    let _ = sender.close(1001, "idle timeout").await;
                    return Some(Closing::new(1001, "idle timeout", true, 1001));
                }
            }
        }
    }
}
