//! The socket of one connection: a TCP stream that tells the connection's [`Activity`]
//! when bytes come in, holds the connection's slot under the cap (and its part of its
//! client's share) for as long as the stream is open (an upgraded WebSocket too), fails
//! a write that cannot proceed for the write timeout, answers `408` when its connection
//! timed out in a request, and closes gracefully when a request's body was left unread.
//!
//! The write timeout lives here, below hyper, so that it holds for every answer alike:
//! a plain one, a Server-Sent Events stream that never ends, an upgraded WebSocket (whose
//! connection hyper has handed over, out of the watchdog's sight). A write that stays
//! blocked (the client stopped reading and the kernel's buffers are full) for that long
//! fails with `TimedOut`; hyper or the WebSocket then ends the connection, and dropping
//! the socket frees its slot. The clock runs only while a write is blocked: a client
//! that reads slowly but reads is never cut off.
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
use tokio::time::{Instant, Sleep};

use super::Slot;
use super::activity::Activity;
use super::answers;

/// The most a lingering close reads of what the client still sends.
const LINGER_BYTES: usize = 1024 * 1024;
/// The longest a lingering close waits for the client to close.
const LINGER_TIME: Duration = Duration::from_secs(2);

/// HTTP/2's connection preface (RFC 9113, section 3.4).
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// How much of the preface tells HTTP/2 apart: no HTTP/1 method is `PRI`.
const HTTP2_SIGN: usize = 3;

/// A connection's stream (see the module documentation).
#[derive(Debug)]
pub(super) struct Socket {
    /// `None` only once dropped.
    stream: Option<TcpStream>,
    slot: Option<Slot>,
    activity: Arc<Activity>,
    write_timeout: Duration,
    /// When a blocked write fails; armed while `write_stalled`.
    write_deadline: Pin<Box<Sleep>>,
    write_stalled: bool,
    /// How many of the first bytes read matched [`HTTP2_PREFACE`]; `None` once decided.
    preface: Option<usize>,
}

impl Socket {
    pub(super) fn new(stream: TcpStream, slot: Slot, activity: Arc<Activity>, write_timeout: Duration) -> Self {
        Self {
            stream: Some(stream),
            slot: Some(slot),
            activity,
            write_timeout,
            write_deadline: Box::pin(tokio::time::sleep(write_timeout)),
            write_stalled: false,
            preface: Some(0),
        }
    }

    fn stream(&mut self) -> io::Result<Pin<&mut TcpStream>> {
        self.stream.as_mut().map(Pin::new).ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }

    /// Follows what a write did: a blocked write starts the clock (or fails when it
    /// ran out), any other outcome stops it.
    fn watch_write<T>(&mut self, cx: &mut Context<'_>, result: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if result.is_ready() {
            if self.write_stalled {
                self.write_stalled = false;
                self.activity.set_write_stalled(false);
            }
            return result;
        }
        if !self.write_stalled {
            self.write_stalled = true;
            self.activity.set_write_stalled(true);
            let deadline = Instant::now() + self.write_timeout;
            self.write_deadline.as_mut().reset(deadline);
        }
        match self.write_deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                tracing::debug!("closing a connection: the client read nothing of its answer for the write timeout");
                Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "the client stopped reading")))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Notes whether the first bytes of the connection are HTTP/2's preface.
    fn watch_preface(&mut self, bytes: &[u8]) {
        let Some(matched) = self.preface else { return };
        let rest = &HTTP2_PREFACE[matched..];
        let length = bytes.len().min(rest.len());
        if bytes[..length] != rest[..length] {
            self.preface = None;
            return;
        }
        let matched = matched + length;
        if matched >= HTTP2_SIGN {
            self.activity.set_http2();
            self.preface = None;
        } else {
            self.preface = Some(matched);
        }
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
            let bytes = &buf.filled()[before..];
            let empty = bytes.iter().all(|byte| matches!(byte, b'\r' | b'\n'));
            self.watch_preface(bytes);
            self.activity.read(Instant::now(), empty);
        }
        result
    }
}

impl AsyncWrite for Socket {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let result = match self.stream() {
            Ok(stream) => stream.poll_write(cx, buf),
            Err(error) => return Poll::Ready(Err(error)),
        };
        self.watch_write(cx, result)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = match self.stream() {
            Ok(stream) => stream.poll_write_vectored(cx, bufs),
            Err(error) => return Poll::Ready(Err(error)),
        };
        self.watch_write(cx, result)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.as_ref().is_some_and(TcpStream::is_write_vectored)
    }

    /// Not watched: a TCP stream has no buffer of its own to flush, its flush is always
    /// ready and says nothing of whether the client reads.
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
        let answer = self.activity.request_timed_out();
        if !answer && !self.activity.lingers() {
            return;
        }
        let (Some(stream), Ok(runtime)) = (self.stream.take(), tokio::runtime::Handle::try_current()) else {
            return;
        };
        // The slot stays taken until the socket is really closed.
        let slot = self.slot.take();
        if answer {
            let write_timeout = self.write_timeout;
            runtime.spawn(async move {
                let mut stream = stream;
                let written = tokio::time::timeout(write_timeout, stream.write_all(&answers::request_timeout())).await;
                if matches!(written, Ok(Ok(()))) {
                    linger(stream, slot).await;
                }
            });
        } else {
            runtime.spawn(linger(stream, slot));
        }
    }
}

/// Half-closes `stream` and reads what the client still sends until it closes, for at
/// most [`LINGER_BYTES`] and [`LINGER_TIME`]; then closes.
pub(super) async fn linger(mut stream: TcpStream, _slot: Option<Slot>) {
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
