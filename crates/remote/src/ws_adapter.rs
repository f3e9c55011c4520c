//! A server-owned session as a [`WebSocket`]: what [`RemoteClient::run`](super::RemoteClient::run)
//! returns for a WebSocket definition, so that code written against a local connection
//! (`volley run`'s interactive and piped modes) drives a session unchanged.
//!
//! Mapping: `session.inbound` → [`WsMessage::Text`] (a `json` payload as its text,
//! which is the upstream's own); `session.closed` → [`WsMessage::Close`], then the stream ends;
//! `session.error` → [`WsError::Binary`] for `WS_BINARY_UNSUPPORTED`, else
//! [`WsError::Connection`] (the stream goes on); `session.outbound` (the echo of what
//! was sent), `session.opened` and `session.replay.end` → nothing. A control socket
//! closed without `session.closed` ends the stream with its close frame. Sending:
//! text and JSON → `session.send` (JSON as its text, so the upstream gets the same
//! bytes as from a local run), close → `session.close`, ping → `session.ping`, which
//! only keeps the session from idling: no pong comes back.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};

use super::answer;
use super::ws::{
    Opening, WsEnvelope, WsEnvelopeKind, WsSessionHandle, WsSessionReceiver, WsSessionSender, WsSessionSocket,
};
use crate::error::Error;
use crate::response::{Pending, Response, SentRequest, Timing};
use crate::transport::BoxFuture;
use crate::websocket::{Outgoing, Outlet, WebSocket, WsError, WsMessage};

/// The response of a WebSocket definition run through the server: its control socket
/// opened from the start of the session (nothing that arrived is missed), status 101,
/// the upstream URL, `Sec-WebSocket-Protocol` when the upstream chose a subprotocol,
/// and the assertions and log lines the server reported. `started` is when the run began;
/// `messages`, the definition's, are sent on the session in their turn.
pub(crate) async fn response(
    handle: &WsSessionHandle,
    opening: Opening,
    started: Instant,
    messages: Vec<crate::websocket::WsOutgoing>,
) -> Result<Response, Error> {
    let socket = handle.connect(None).await?;
    let elapsed = started.elapsed();
    let info = handle.info();
    let upstream = url::Url::parse(&info.upstream_url).unwrap_or_else(|_| answer::blank_url());
    let mut headers = http::HeaderMap::new();
    if let Some(value) = info.subprotocol.as_deref().and_then(|protocol| http::HeaderValue::from_str(protocol).ok()) {
        headers.insert(http::header::SEC_WEBSOCKET_PROTOCOL, value);
    }
    let request = SentRequest {
        method: http::Method::GET,
        url: upstream.clone(),
        headers: http::HeaderMap::new(),
        body: Bytes::new(),
    };
    let timing = Timing { ttfb: elapsed, total: elapsed };
    let mut response = Response::from_parts(
        http::StatusCode::SWITCHING_PROTOCOLS,
        http::Version::HTTP_11,
        headers,
        upstream,
        request,
        timing,
    );
    response.assertions = opening.assertions;
    response.logs = opening.logs;
    let socket = websocket(socket, info.subprotocol.clone()).sending(messages);
    response.body = crate::response::Body::WebSocket(Pending::new(socket));
    Ok(response)
}

/// The control socket as a connection whose subprotocol is `protocol`.
pub(crate) fn websocket(socket: WsSessionSocket, protocol: Option<String>) -> WebSocket {
    let (sender, receiver) = socket.split();
    WebSocket::from_backend(Arc::new(SessionOutlet(sender)), Box::pin(Messages { receiver, ended: false }), protocol)
}

/// Sends for the connection through the control socket.
struct SessionOutlet(WsSessionSender);

impl Outlet for SessionOutlet {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), WsError>> {
        Box::pin(async move {
            match message {
                Outgoing::Text(text) => self.0.send_text(text).await,
                Outgoing::Ping(_) => self.0.ping().await,
                Outgoing::Close(code, reason) => self.0.close(code, &reason).await,
            }
        })
    }
}

/// The connection's messages, from the control socket's envelopes.
struct Messages {
    receiver: WsSessionReceiver,
    ended: bool,
}

impl Stream for Messages {
    type Item = Result<WsMessage, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if self.ended {
                return Poll::Ready(None);
            }
            let envelope = match self.receiver.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    // Closed without `session.closed` (replaced, too slow, gone): the
                    // socket's close frame says why.
                    self.ended = true;
                    let close = self.receiver.close_frame().cloned();
                    return Poll::Ready(close.map(|close| Ok(WsMessage::Close(Some(close)))));
                }
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Some(Err(error))),
                Poll::Ready(Some(Ok(envelope))) => envelope,
            };
            match message_of(&envelope) {
                Mapped::Skip => {}
                Mapped::Item(item) => return Poll::Ready(Some(item)),
                Mapped::Last(message) => {
                    self.ended = true;
                    return Poll::Ready(Some(Ok(message)));
                }
            }
        }
    }
}

/// What an envelope is for the connection's reader.
#[derive(Debug)]
enum Mapped {
    /// Nothing.
    Skip,
    /// A message or a problem; more follow.
    Item(Result<WsMessage, WsError>),
    /// The last message.
    Last(WsMessage),
}

fn message_of(envelope: &WsEnvelope) -> Mapped {
    match &envelope.kind {
        WsEnvelopeKind::Inbound => envelope.text().map_or(Mapped::Skip, |text| Mapped::Item(Ok(WsMessage::Text(text)))),
        WsEnvelopeKind::Closed => Mapped::Last(WsMessage::Close(envelope.closed())),
        WsEnvelopeKind::Error => {
            let (code, message) =
                envelope.error.as_ref().map_or(("WS_UPSTREAM_ERROR", ""), |error| (&error.code, &error.message));
            if code == "WS_BINARY_UNSUPPORTED" {
                let len = envelope.byte_length.and_then(|len| usize::try_from(len).ok()).unwrap_or(0);
                return Mapped::Item(Err(WsError::Binary { len }));
            }
            let text = if message.is_empty() { code.to_owned() } else { format!("{code}: {message}") };
            Mapped::Item(Err(WsError::Connection(text)))
        }
        WsEnvelopeKind::Outbound | WsEnvelopeKind::Opened | WsEnvelopeKind::ReplayEnd | WsEnvelopeKind::Other(_) => {
            Mapped::Skip
        }
    }
}

/// The selected WebSocket definition's messages, and `content` without them (what
/// `POST /execute/ws` accepts). Through a server, messages are sent as written: one with
/// `{{ }}` (the variables are the server's) or read from a file is refused by name.
pub(crate) fn definition_messages(
    content: &str,
    selection: &volley_model::Selection,
) -> Result<(String, Vec<crate::websocket::WsOutgoing>), Error> {
    let document = volley_syntax::parse(content);
    let Ok(request) = selection.find(&document) else { return Ok((content.to_owned(), Vec::new())) };
    let refuse = |message: &str, span: volley_syntax::Span| {
        Error::Build(crate::error::BuildError::Interpolation { message: message.to_owned(), span })
    };
    let stream = match &request.body {
        volley_syntax::Body::Inline(template) => volley_syntax::split_messages(template),
        volley_syntax::Body::None => return Ok((content.to_owned(), Vec::new())),
        other => {
            return Err(refuse(
                "through an execution server, a WebSocket definition's messages are sent as written: write them in \
                 the file rather than `< ./file` (or run without --server)",
                other.span().unwrap_or(request.line_span),
            ));
        }
    };
    let mut messages = Vec::with_capacity(stream.len());
    for message in stream {
        if message.body.parts.iter().any(|part| matches!(part, volley_syntax::Part::Interpolation(_))) {
            return Err(refuse(
                "through an execution server, a WebSocket message with `{{ }}` cannot be sent: its variables are the \
                 server session's (write the value, or run without --server)",
                message.body.span,
            ));
        }
        let text = (!message.is_blank()).then(|| volley_syntax::without_separator(message.body.to_source()));
        messages.push(crate::websocket::WsOutgoing { wait_for_server: message.wait_for_server, text });
    }
    let span = request.body.span().unwrap_or(request.line_span);
    let without = format!("{}{}", &content[..span.start], &content[span.end..]);
    Ok((without, messages))
}

#[cfg(test)]
mod tests {
    use crate::websocket::WsClose;

    use super::*;

    fn map(text: &str) -> Mapped {
        message_of(&WsEnvelope::parse(text).expect("an envelope"))
    }

    #[test]
    fn a_session_connection_is_shareable_like_a_socket() {
        fn shareable<T: Send + Sync>() {}
        shareable::<WebSocket>();
        shareable::<WsSessionSocket>();
        shareable::<Response>();
    }

    #[test]
    fn inbound_messages_are_text() {
        let text = map(r#"{"type":"session.inbound","seq":2,"payloadType":"text","payload":"hello"}"#);
        assert!(matches!(&text, Mapped::Item(Ok(WsMessage::Text(text))) if text == "hello"), "{text:?}");
        let json = map(r#"{"type":"session.inbound","seq":3,"payloadType":"json","payload":{"n":1,"list":[true]}}"#);
        assert!(
            matches!(&json, Mapped::Item(Ok(WsMessage::Text(text))) if text == r#"{"n":1,"list":[true]}"#),
            "{json:?}"
        );
        // A JSON text that is not an object or an array stays a string.
        let quoted = map(r#"{"type":"session.inbound","seq":4,"payloadType":"text","payload":"\"q\""}"#);
        assert!(matches!(&quoted, Mapped::Item(Ok(WsMessage::Text(text))) if text == "\"q\""), "{quoted:?}");
        let empty = map(r#"{"type":"session.inbound","seq":5}"#);
        assert!(matches!(empty, Mapped::Skip));
    }

    #[test]
    fn echoes_and_bookkeeping_are_skipped() {
        for text in [
            r#"{"type":"session.outbound","seq":2,"payloadType":"text","payload":"sent"}"#,
            r#"{"type":"session.opened","seq":1,"payload":{"upstreamUrl":"ws://up/"}}"#,
            r#"{"type":"session.replay.end","seq":2,"payload":{"afterSeq":0,"replayed":2,"gap":false}}"#,
            r#"{"type":"session.someday","seq":2}"#,
        ] {
            assert!(matches!(map(text), Mapped::Skip), "{text}");
        }
    }

    #[test]
    fn closed_is_the_last_message() {
        let closed =
            map(r#"{"type":"session.closed","seq":6,"payload":{"code":4000,"reason":"asked to","wasClean":true}}"#);
        let expected = WsClose { code: 4000, reason: "asked to".to_owned() };
        assert!(matches!(&closed, Mapped::Last(WsMessage::Close(Some(close))) if *close == expected), "{closed:?}");
    }

    #[test]
    fn errors() {
        let binary = map(r#"{"type":"session.error","seq":3,"byteLength":3,
                "error":{"code":"WS_BINARY_UNSUPPORTED","message":"binary"}}"#);
        assert!(matches!(binary, Mapped::Item(Err(WsError::Binary { len: 3 }))), "{binary:?}");
        let failed =
            map(r#"{"type":"session.error","seq":3,"error":{"code":"WS_SEND_FAILED","message":"broken pipe"}}"#);
        assert!(
            matches!(&failed, Mapped::Item(Err(WsError::Connection(text))) if text == "WS_SEND_FAILED: broken pipe"),
            "{failed:?}"
        );
        let bare = map(r#"{"type":"session.error","seq":3}"#);
        assert!(
            matches!(&bare, Mapped::Item(Err(WsError::Connection(text))) if text == "WS_UPSTREAM_ERROR"),
            "{bare:?}"
        );
    }
}
