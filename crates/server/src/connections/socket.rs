//! The socket of one connection: a TCP stream that tells the connection's [`Activity`]
//! when bytes come in, holds the connection's slot under the cap for as long as the
//! stream is open (an upgraded WebSocket too), and closes gracefully when a request's
//! body was left unread.
//!
//! Closing a socket with unread bytes makes the kernel answer with a reset, and a reset
//! can destroy the answer the client has not read yet. So when the server answered
//! without reading a body and closes, the socket (already half-closed: the answer ends
//! with a FIN) reads and discards what the client still sends, until the client closes
//! or a bound in bytes and time is reached, and only then closes ("lingering close").

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use super::activity::Activity;

/// The most a lingering close reads of what the client still sends.
const LINGER_BYTES: usize = 1024 * 1024;
/// The longest a lingering close waits for the client to close.
const LINGER_TIME: Duration = Duration::from_secs(2);

/// A connection's stream (see the module documentation).
#[derive(Debug)]
pub(super) struct Socket {
    /// `None` only once dropped.
    stream: Option<TcpStream>,
    slot: Option<OwnedSemaphorePermit>,
    activity: Arc<Activity>,
}

impl Socket {
    pub(super) fn new(stream: TcpStream, slot: OwnedSemaphorePermit, activity: Arc<Activity>) -> Self {
        Self { stream: Some(stream), slot: Some(slot), activity }
    }

    fn stream(&mut self) -> io::Result<Pin<&mut TcpStream>> {
        self.stream.as_mut().map(Pin::new).ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }
}

impl AsyncRead for Socket {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let result = match self.stream() {
            Ok(stream) => stream.poll_read(cx, buf),
            Err(error) => return Poll::Ready(Err(error)),
        };
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read(Instant::now());
        }
        result
    }
}

impl AsyncWrite for Socket {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.stream() {
            Ok(stream) => stream.poll_write(cx, buf),
            Err(error) => Poll::Ready(Err(error)),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.stream() {
            Ok(stream) => stream.poll_write_vectored(cx, bufs),
            Err(error) => Poll::Ready(Err(error)),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.as_ref().is_some_and(TcpStream::is_write_vectored)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => stream.poll_flush(cx),
            Err(error) => Poll::Ready(Err(error)),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => stream.poll_shutdown(cx),
            Err(error) => Poll::Ready(Err(error)),
        }
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        if !self.activity.lingers() {
            return;
        }
        let (Some(stream), Ok(runtime)) = (self.stream.take(), tokio::runtime::Handle::try_current()) else {
            return;
        };
        // The slot stays taken until the socket is really closed.
        runtime.spawn(linger(stream, self.slot.take()));
    }
}

/// Half-closes `stream` and reads what the client still sends until it closes, for at
/// most [`LINGER_BYTES`] and [`LINGER_TIME`]; then closes.
async fn linger(mut stream: TcpStream, _slot: Option<OwnedSemaphorePermit>) {
    let _ = tokio::time::timeout(LINGER_TIME, async {
        let _ = stream.shutdown().await;
        let mut buffer = vec![0u8; 16 * 1024];
        let mut read = 0;
        while read < LINGER_BYTES {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(count) => read += count,
            }
        }
    })
    .await;
}
