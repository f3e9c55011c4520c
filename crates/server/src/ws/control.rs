//! The control socket of a session: replay on connect, then envelopes out and the
//! client's commands in. Written against `Sink`/`Stream` of axum messages so tests can
//! drive it; the upgrade handler only hands the socket over.

use std::sync::Arc;

use axum::extract::ws::{CloseFrame, Message};
use futures_util::{Sink, SinkExt as _, Stream, StreamExt as _};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use volley_protocol::{ErrorCode, ReplayGap, SessionCommandKind, SessionEnvelopeKind, SessionError, SessionReplayEnd};

use super::{Command, Outbound, ToControl, WsSession};

/// Serves a control socket attached with `after_seq` until either side ends it.
pub(crate) async fn serve_control<S>(socket: S, session: Arc<WsSession>, after_seq: u64)
where
    S: Sink<Message> + Stream<Item = Result<Message, axum::Error>> + Unpin,
{
    let (mut sink, mut stream) = socket.split();
    let (id, mut outgoing, history) = session.attach(after_seq);
    let mut first = Vec::new();
    if let Some(oldest) = history.gap {
        first.push(session.local_envelope(
            SessionEnvelopeKind::Error,
            json!({
                "error": SessionError {
                    code: ErrorCode::WsReplayGap,
                    message: format!("envelopes after {after_seq} are no longer kept; the oldest is {oldest}"),
                },
                "payload": ReplayGap { after_seq, oldest_available_seq: oldest },
            }),
        ));
    }
    let replayed = history.envelopes.len();
    for envelope in history.envelopes {
        if sink.send(Message::Text(envelope.as_ref().into())).await.is_err() {
            session.detach(id);
            return;
        }
    }
    first.push(session.local_envelope(
        SessionEnvelopeKind::ReplayEnd,
        json!({ "payload": SessionReplayEnd { after_seq, replayed, gap: history.gap.is_some() } }),
    ));
    for text in first {
        if sink.send(Message::Text(text.into())).await.is_err() {
            session.detach(id);
            return;
        }
    }
    // Reading and writing run side by side: a reader waiting for the upstream task to
    // take a command never holds up the envelopes going out.
    let (answers, mut answer_queue) = tokio::sync::mpsc::channel::<String>(64);
    let reader = async {
        while let Some(incoming) = stream.next().await {
            let reply = match incoming {
                Ok(Message::Text(text)) => {
                    session.touch();
                    command(&session, text.as_str()).await
                }
                Ok(Message::Binary(bytes)) => {
                    Some(session.local_envelope(SessionEnvelopeKind::Error, binary_refused(bytes.len())))
                }
                Ok(Message::Ping(_) | Message::Pong(_)) => {
                    session.touch();
                    None
                }
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
        loop {
            tokio::select! {
                biased;
                out = outgoing.recv() => match out {
                    Some(ToControl::Envelope(text)) => {
                        // What is queued goes out in one write.
                        if sink.feed(Message::Text(text.as_ref().into())).await.is_err() {
                            return;
                        }
                        let mut closing = None;
                        for _ in 0..256 {
                            match outgoing.try_recv() {
                                Ok(ToControl::Envelope(text)) => {
                                    if sink.feed(Message::Text(text.as_ref().into())).await.is_err() {
                                        return;
                                    }
                                }
                                Ok(ToControl::Close(code, reason)) => {
                                    closing = Some((code, reason));
                                    break;
                                }
                                Err(_) => break,
                            }
                        }
                        if sink.flush().await.is_err() {
                            return;
                        }
                        if let Some((code, reason)) = closing {
                            let _ = sink.send(close(code, reason)).await;
                            return;
                        }
                    }
                    Some(ToControl::Close(code, reason)) => {
                        let _ = sink.send(close(code, reason)).await;
                        return;
                    }
                    // Detached without a word: its queue was full (a client that does not read).
                    None => {
                        let _ = sink.send(close(1013, "too slow: reconnect with afterSeq")).await;
                        return;
                    }
                },
                Some(reply) = answer_queue.recv() => {
                    if sink.send(Message::Text(reply.into())).await.is_err() {
                        return;
                    }
                }
            }
        }
    };
    tokio::select! {
        () = reader => {}
        () = writer => {}
    }
    session.detach(id);
}

pub(crate) fn close(code: u16, reason: &'static str) -> Message {
    Message::Close(Some(CloseFrame { code, reason: reason.into() }))
}

/// The fields of the error a binary message from a control socket is answered with.
pub(crate) fn binary_refused(byte_length: usize) -> Value {
    json!({
        "error": SessionError {
            code: ErrorCode::WsBinaryUnsupported,
            message: "binary messages are not supported; send session.send with a text or json payload".to_owned(),
        },
        "byteLength": byte_length,
    })
}

/// Carries out one client message; the answer for this socket only, if any.
async fn command(session: &WsSession, text: &str) -> Option<String> {
    let order = match parse_command(text, session.max_frame) {
        Ok(order) => order,
        Err((code, message)) => return Some(error(session, code, &message)),
    };
    if session.commands.send(order).await.is_err() {
        return Some(error(session, ErrorCode::WsUpstreamNotOpen, "the upstream connection is closed"));
    }
    None
}

/// The command a client message asks for, or the error to answer it with; the same
/// rules for a control socket on the session's own instance and on another.
pub(crate) fn parse_command(text: &str, max_frame: usize) -> Result<Command, (ErrorCode, String)> {
    let refuse = |code: ErrorCode, message: &str| Err((code, message.to_owned()));
    if text.len() > max_frame {
        let message = format!("a message of {} bytes is over the {max_frame} byte limit", text.len());
        return refuse(ErrorCode::WsFrameTooLarge, &message);
    }
    let message = match serde_json::from_str::<ClientMessage<'_>>(text) {
        Ok(message) => message,
        Err(_) if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => {
            return refuse(ErrorCode::WsProtocolError, "the message is not an object with a string `type`");
        }
        Err(_) => return refuse(ErrorCode::WsInvalidJson, "the message is not JSON"),
    };
    let Some(kind) = message.kind.as_deref() else {
        return refuse(ErrorCode::WsProtocolError, "the message has no `type`");
    };
    match SessionCommandKind::from_name(kind) {
        Some(SessionCommandKind::Send) => {
            send_command(&message).map_err(|problem| (ErrorCode::WsProtocolError, problem))
        }
        Some(SessionCommandKind::Close) => {
            let code = message.code.as_ref().and_then(Value::as_u64).unwrap_or(1000);
            let Some(code) = u16::try_from(code).ok().filter(|code| sendable_close_code(*code)) else {
                return refuse(
                    ErrorCode::WsProtocolError,
                    "`code` must be one a close frame may carry: 1000-1003, 1007-1014 or 3000-4999",
                );
            };
            let reason = message.reason.as_ref().and_then(Value::as_str).unwrap_or_default().to_owned();
            Ok(Command::Close { code, reason })
        }
        Some(SessionCommandKind::Ping) => Ok(Command::Ping),
        None => refuse(
            ErrorCode::WsProtocolError,
            &format!("unknown message type `{kind}` (session.send, session.close, session.ping)"),
        ),
    }
}

/// A message of the client. Its payload is kept as the client wrote it, so that a `json`
/// payload goes upstream with its keys in their order and its numbers as written.
#[derive(serde::Deserialize)]
struct ClientMessage<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(rename = "payloadType", default)]
    payload_type: Option<String>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    reason: Option<Value>,
}

fn send_command(message: &ClientMessage<'_>) -> Result<Command, String> {
    let payload = message.payload.ok_or("`session.send` needs a `payload`")?;
    let is_string = payload.get().starts_with('"');
    let json = match message.payload_type.as_deref() {
        Some("text") => false,
        Some("json") => true,
        Some(other) => return Err(format!("`payloadType` is `text` or `json`, not `{other}`")),
        None => !is_string,
    };
    let message = if json {
        Outbound::Json(payload.to_owned())
    } else if is_string {
        let text = serde_json::from_str(payload.get()).map_err(|problem| format!("the text payload: {problem}"))?;
        Outbound::Text(text)
    } else {
        return Err("a `text` payload is a string".to_owned());
    };
    Ok(Command::Send(message))
}

fn error(session: &WsSession, code: ErrorCode, message: &str) -> String {
    session.local_envelope(
        SessionEnvelopeKind::Error,
        json!({ "error": SessionError { code, message: message.to_owned() } }),
    )
}

/// Close codes an endpoint may send (RFC 6455 7.4; 1004-1006 and 1015 are reserved).
fn sendable_close_code(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}
