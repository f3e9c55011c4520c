//! The connections of `volley serve`: accepted up to a cap, served over HTTP/1.1 (with
//! upgrades, for WebSockets) and HTTP/2 by hyper, closed when they send their head too
//! slowly, idle too long or stop reading their answers, and shut down gracefully.
//! (`axum::serve` has no timeouts and no cap, so the server drives hyper itself, the way
//! `axum::serve` does otherwise.)
//!
//! - The cap: a connection is accepted only when a slot is free; the others wait in the
//!   kernel's listen backlog, and are served in order as slots free up. Waiting rather
//!   than refusing keeps a full server answering everyone eventually: slots held by
//!   clients that send nothing free up within the header timeout, and slots held by
//!   clients that read nothing within the write timeout. A slot is held until the socket
//!   is closed, so WebSockets count too.
//! - The share of one client (`clients.rs`): one client address holds at most
//!   `max_connections_per_client` connections (half the cap by default); one more is
//!   answered `429` at once and closed, without taking a slot.
//! - The timeouts of requests (`activity.rs`): a connection must finish a request head
//!   within the header timeout of opening, or of the first byte of a later request, may
//!   pause no longer than that in a request body the server waits for, and may idle
//!   between requests for the keep-alive timeout.
//! - What the client is told then: over HTTP/1, a connection that timed out in a
//!   request (a part of its head came, or its body stopped arriving before its answer
//!   began) is answered `408 Request Timeout` with `Connection: close` (`answers.rs`),
//!   then closed gracefully. One that sent nothing, or only the empty lines allowed
//!   between requests, or idled after its answers, is closed without a word: RFC 9110
//!   allows a 408 there too, but clients cannot tell an unasked-for 408 on an idle
//!   connection from the answer to the request they were sending at that moment, and
//!   browsers log it as an error. A body that stopped after its answer began cannot
//!   get another answer: the connection just closes. Over HTTP/2 every timeout sends
//!   `GOAWAY` (hyper's graceful shutdown), and the connection closes after at most the
//!   write timeout, ending any stream left open.
//! - The write timeout (`socket.rs`): a write that stays blocked that long, because the
//!   client stopped reading, fails and ends the connection, whatever the answer: a
//!   plain one, a Server-Sent Events stream that never ends, a WebSocket.
//! - Early answers (`service.rs`, `socket.rs`): a request body that the answer left
//!   unread is drained, or the answer says `Connection: close` and the socket lingers,
//!   so that the answer is never lost.

mod activity;
mod answers;
mod clients;
mod service;
mod socket;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use self::activity::{Activity, Expired};
use self::clients::{ClientShare, Clients};
use self::service::ConnectionService;
use self::socket::Socket;

/// The limits of the connections of a server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_connections: usize,
    pub(crate) max_connections_per_client: usize,
    pub(crate) header_read_timeout: Duration,
    pub(crate) keep_alive_timeout: Duration,
    pub(crate) write_timeout: Duration,
}

/// Serves `router` on the connections of `listener` until `stop` is cancelled; then
/// stops accepting, lets every connection finish its requests under way, and returns
/// when they all did.
pub(crate) async fn serve(listener: TcpListener, router: Router, limits: Limits, stop: CancellationToken) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // WebSockets over HTTP/2 (RFC 8441), as axum enables them.
    builder.http2().enable_connect_protocol();
    let builder = Arc::new(builder);
    let clients = Clients::new(limits.max_connections_per_client, limits.max_connections);
    // Each connection's task holds a sender: when all are gone, every task ended.
    let (running, mut all_ended) = mpsc::channel::<()>(1);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = stop.cancelled() => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(&error).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let Some(share) = clients.admit(peer.ip()) else {
            drop(slot);
            clients.refuse(stream, limits.write_timeout);
            continue;
        };
        let connection = Connection {
            stream,
            slot: Slot { _cap: slot, _share: share },
            router: router.clone(),
            builder: builder.clone(),
            limits,
            stop: stop.clone(),
            _running: running.clone(),
        };
        tokio::spawn(connection.serve());
    }
    // New connections are refused from here on.
    drop(listener);
    drop(running);
    let _ = all_ended.recv().await;
}

/// What an open connection holds: its slot under the cap and its part of its client's
/// share, both given back when the socket closes.
#[derive(Debug)]
pub(super) struct Slot {
    _cap: OwnedSemaphorePermit,
    _share: ClientShare,
}

/// An accepted connection, ready to be served.
struct Connection {
    stream: TcpStream,
    slot: Slot,
    router: Router,
    builder: Arc<auto::Builder<TokioExecutor>>,
    limits: Limits,
    stop: CancellationToken,
    _running: mpsc::Sender<()>,
}

impl Connection {
    async fn serve(self) {
        // Small messages (envelopes, events) go out at once, not after Nagle's delay.
        let _ = self.stream.set_nodelay(true);
        let limits = self.limits;
        let activity = Arc::new(Activity::new(Instant::now(), limits.header_read_timeout, limits.keep_alive_timeout));
        let socket = Socket::new(self.stream, self.slot, activity.clone(), limits.write_timeout);
        let service = ConnectionService::new(self.router, activity.clone(), limits.header_read_timeout);
        let connection = self.builder.serve_connection_with_upgrades(TokioIo::new(socket), service);
        let mut connection = std::pin::pin!(connection);
        // The watchdog looks at the activity at its deadline, and at least every `check`:
        // a deadline that appears meanwhile is never nearer than that, so it is never
        // missed, and requests need not wake the watchdog.
        let check = limits.header_read_timeout.min(limits.keep_alive_timeout);
        let mut watchdog = std::pin::pin!(tokio::time::sleep(check));
        let mut stopping = false;
        loop {
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::trace!("connection ended: {error}");
                    }
                    return;
                }
                () = self.stop.cancelled(), if !stopping => {
                    // Idle connections close now, the others after their answer.
                    connection.as_mut().graceful_shutdown();
                    stopping = true;
                }
                () = watchdog.as_mut() => {
                    let now = Instant::now();
                    match activity.deadline() {
                        Some(deadline) if deadline <= now => {
                            let expired = activity.expired();
                            tracing::debug!(?expired, "closing a connection: a head or body too slow, or idle too long");
                            if activity.is_http2() {
                                // GOAWAY, which hyper sends on a graceful shutdown; the
                                // streams still open end with the connection.
                                connection.as_mut().graceful_shutdown();
                                let _ = tokio::time::timeout(limits.write_timeout, connection.as_mut()).await;
                            } else if expired == Expired::InRequest {
                                activity.set_request_timed_out();
                            }
                            return;
                        }
                        deadline => watchdog.as_mut().reset(deadline.unwrap_or(now + check).min(now + check)),
                    }
                }
            }
        }
    }
}

/// A connection that failed before it was accepted is the client's business; anything
/// else (out of file descriptors) is logged, and accepting pauses for a moment.
async fn accept_failed(error: &io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(error.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!("cannot accept a connection: {error}");
    tokio::time::sleep(Duration::from_millis(250)).await;
}
