//! The request side of a call: its messages (proto3 JSON) checked against the method's
//! input type, encoded and framed, and written into the request stream as the server's
//! answers allow (`=== wait-for-server`).

use bytes::{BufMut as _, Bytes, BytesMut};
use prost::Message as _;
use prost_reflect::{DeserializeOptions, DynamicMessage, MessageDescriptor};

use crate::error::CallError;

/// A request message, and how many messages of the server to wait for before it is
/// sent (`=== wait-for-server`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outgoing {
    /// Wait until the server has sent this many more messages first.
    pub wait_for_server: usize,
    /// The message as proto3 JSON; `None` for waits after the last message.
    pub json: Option<String>,
}

impl Outgoing {
    /// A message sent without waiting.
    #[must_use]
    pub fn message(json: impl Into<String>) -> Self {
        Self { wait_for_server: 0, json: Some(json.into()) }
    }
}

/// The request messages of a call, encoded: each frame with the number of server messages
/// received that must be reached before it goes.
pub(crate) struct Frames(pub(crate) Vec<(usize, Option<Bytes>)>);

impl Frames {
    /// Frames sent at once, in order.
    pub(crate) fn at_once(bytes: Bytes) -> Self {
        Self(vec![(0, Some(bytes))])
    }
}

/// `messages` framed as gRPC writes them: a flag byte, a 4-byte length, the bytes.
pub(crate) fn framed(messages: impl IntoIterator<Item = Vec<u8>>) -> Result<Bytes, CallError> {
    let mut body = BytesMut::new();
    for bytes in messages {
        let length = u32::try_from(bytes.len()).map_err(|_| CallError::TooLarge(4096))?;
        body.put_u8(0);
        body.put_u32(length);
        body.put_slice(&bytes);
    }
    Ok(body.freeze())
}

/// The request messages, encoded and framed (a flag byte, a 4-byte length, the bytes),
/// each with the count of server messages to wait for.
pub(crate) fn frames(
    input: &MessageDescriptor,
    messages: &[Outgoing],
    one_at_least: bool,
) -> Result<Frames, CallError> {
    let empty = [Outgoing::message("{}")];
    let none_written = messages.iter().all(|message| message.json.is_none());
    let messages = if none_written && one_at_least { &empty[..] } else { messages };
    let mut frames = Vec::with_capacity(messages.len());
    let mut waits = 0;
    let mut number = 0;
    for outgoing in messages {
        waits += outgoing.wait_for_server;
        let Some(json) = &outgoing.json else {
            frames.push((waits, None));
            continue;
        };
        number += 1;
        let failed = |reason: String| CallError::Json { number, message: input.full_name().to_owned(), reason };
        let mut reader = serde_json::Deserializer::from_str(json);
        let options = DeserializeOptions::new().deny_unknown_fields(true);
        let message = DynamicMessage::deserialize_with_options(input.clone(), &mut reader, &options)
            .map_err(|error| failed(error.to_string()))?;
        reader.end().map_err(|error| failed(error.to_string()))?;
        frames.push((waits, Some(framed([message.encode_to_vec()])?)));
    }
    Ok(Frames(frames))
}

/// The request body of a call: frames from the writer of the call, as they come.
pub(crate) struct RequestBody {
    receiver: tokio::sync::mpsc::Receiver<Bytes>,
}

impl RequestBody {
    pub(crate) fn new(receiver: tokio::sync::mpsc::Receiver<Bytes>) -> Self {
        Self { receiver }
    }
}

impl hyper::body::Body for RequestBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        self.receiver.poll_recv(context).map(|bytes| bytes.map(|bytes| Ok(hyper::body::Frame::data(bytes))))
    }
}

/// Sends the frames of a call as the server's messages come: each once the server has
/// sent as many messages as it waits for. Ends the request stream after the last (or
/// when the answer ends first).
pub(crate) async fn write(
    frames: Frames,
    sender: tokio::sync::mpsc::Sender<Bytes>,
    mut received: tokio::sync::watch::Receiver<usize>,
) {
    for (waits, frame) in frames.0 {
        if received.wait_for(|count| *count >= waits).await.is_err() {
            return;
        }
        if let Some(frame) = frame
            && sender.send(frame).await.is_err()
        {
            return;
        }
    }
}
