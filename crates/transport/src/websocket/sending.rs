//! A WebSocket request's own messages (its body, `===` between them) sent on the
//! connection in their turn: one task reads the other end and counts what a
//! `=== wait-for-server` waits for, one sends, and both feed the stream the caller reads.

use std::sync::Arc;

use futures_util::StreamExt as _;

use super::{MessageStream, WebSocket, WsError, WsMessage, WsReceiver};

/// A message of a WebSocket request's definition, rendered: sent once connected, after
/// `wait_for_server` more messages of the server (`=== wait-for-server` before it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsOutgoing {
    pub wait_for_server: usize,
    /// `None` for waits after the last message.
    pub text: Option<String>,
}

/// How many messages a connection keeps for its reader while it does not read.
const RELAYED_MESSAGES: usize = 1024;

impl WebSocket {
    /// The connection with `messages` sent on it in order: each once the other end has
    /// sent the messages it waits for (counted from the first, text and binary alike),
    /// each told as [`WsMessage::Sent`] in its place among the other end's. The other
    /// end's messages are read as they come, whether or not the reader keeps up (up to
    /// 1,024 kept); a connection that ends stops the sending.
    #[must_use]
    pub fn sending(self, messages: Vec<WsOutgoing>) -> WebSocket {
        if messages.is_empty() {
            return self;
        }
        let WebSocket { sender, mut receiver, protocol } = self;
        let (relay, relayed) = tokio::sync::mpsc::channel(RELAYED_MESSAGES);
        let heard = Arc::new(tokio::sync::watch::Sender::new((0_usize, false)));
        // The other end's messages, counted.
        let counted = Arc::clone(&heard);
        let inbound = relay.clone();
        tokio::spawn(async move {
            while let Some(item) = receiver.next().await {
                let counts = matches!(item, Ok(WsMessage::Text(_)) | Err(WsError::Binary { .. }));
                if inbound.send(item).await.is_err() {
                    break;
                }
                if counts {
                    counted.send_modify(|(count, _)| *count += 1);
                }
            }
            counted.send_modify(|(_, ended)| *ended = true);
        });
        // The definition's messages, each when its waits are over.
        let outbound = sender.clone();
        tokio::spawn(async move {
            let mut waited = 0;
            let mut heard = heard.subscribe();
            for message in messages {
                waited += message.wait_for_server;
                let reached = match heard.wait_for(|(count, ended)| *count >= waited || *ended).await {
                    Ok(state) => state.0 >= waited,
                    Err(_) => false,
                };
                if !reached {
                    return;
                }
                let Some(text) = message.text else { continue };
                // Told first, so that it comes before what the other end answers to it.
                if relay.send(Ok(WsMessage::Sent(text.clone()))).await.is_err()
                    || outbound.send_text(text).await.is_err()
                {
                    return;
                }
            }
        });
        let messages: MessageStream = Box::pin(futures_util::stream::unfold(relayed, |mut relayed| async move {
            relayed.recv().await.map(|item| (item, relayed))
        }));
        WebSocket { sender, receiver: WsReceiver { messages }, protocol }
    }
}
