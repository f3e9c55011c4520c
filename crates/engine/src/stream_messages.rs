//! The messages of a body that is a stream of them (`===` between messages,
//! `=== wait-for-server` before one that waits for the server's next message), rendered:
//! one syntax for gRPC calls and WebSocket requests (`volley_syntax::split_messages`).

use volley_syntax::{Body, Part, Request, Spanned, Template};

use crate::body::{Files, build_body};
use crate::error::BuildError;
use crate::interpolate::Renderer;
use volley_syntax::Span;

/// A message of a stream, rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamMessage {
    /// How many messages of the server to wait for before sending it.
    pub(crate) wait_for_server: usize,
    /// Its text; `None` for waits after the last message.
    pub(crate) text: Option<String>,
    pub(crate) span: Span,
}

/// The messages of `body`: inline text, or a file (`< ./messages.txt`) cut the same way.
/// `refuse` says why another kind of body (form fields, GraphQL) is not one.
pub(crate) async fn render(
    body: &Body,
    renderer: &mut Renderer<'_>,
    files: &Files<'_>,
    refuse: impl FnOnce(Span) -> BuildError,
) -> Result<Vec<StreamMessage>, BuildError> {
    let stream = match body {
        Body::None => Vec::new(),
        Body::Inline(template) => volley_syntax::split_messages(template),
        Body::File(file) => {
            let built = build_body(body, renderer, files, None).await?;
            let text = String::from_utf8_lossy(&built.bytes).into_owned();
            let whole = Template { span: file.span, parts: vec![Part::Text(Spanned::new(text, file.span))] };
            volley_syntax::split_messages(&whole)
        }
        Body::Form(_) | Body::Parts(_) | Body::GraphQl(_) => {
            return Err(refuse(body.span().unwrap_or_default()));
        }
    };
    let mut messages = Vec::with_capacity(stream.len());
    for message in stream {
        let text = if message.is_blank() { None } else { Some(renderer.render(&message.body).await?) };
        messages.push(StreamMessage { wait_for_server: message.wait_for_server, text, span: message.body.span });
    }
    Ok(messages)
}

/// Moved to volley-syntax, beside `split_messages`, for the remote client too.
pub(crate) use volley_syntax::without_separator;

/// The messages a WebSocket request's body holds (`===` between them), rendered; the
/// built body becomes their text, one after another, as a run shows what it sent.
pub(crate) async fn websocket(
    request: &Request,
    built: &mut crate::build::BuiltRequest,
    renderer: &mut Renderer<'_>,
    files: &Files<'_>,
) -> Result<Vec<crate::websocket::WsOutgoing>, crate::error::Error> {
    let refuse = |span| BuildError::Interpolation {
        message: "the body of a WebSocket request is its messages, as text".to_owned(),
        span,
    };
    let mut messages = render(&request.body, renderer, files, refuse).await?;
    for message in &mut messages {
        message.text = message.text.take().map(without_separator);
    }
    let shown: Vec<&str> = messages.iter().filter_map(|message| message.text.as_deref()).collect();
    built.body = bytes::Bytes::from(shown.join("\n"));
    Ok(messages
        .into_iter()
        .map(|message| crate::websocket::WsOutgoing { wait_for_server: message.wait_for_server, text: message.text })
        .collect())
}
