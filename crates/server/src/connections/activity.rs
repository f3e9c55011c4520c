//! What a connection is doing, as far as its timeouts care: waiting for a request head
//! (since it opened, or since the first byte of a later request), idle between requests,
//! busy with requests, or waiting for the rest of a request body. Bytes read, requests
//! started and answered, and reads of a body update it; the connection's watchdog asks
//! it when the connection must be closed, and what the client is told then
//! ([`Expired`]); the socket asks it how to close.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use tokio::time::Instant;

/// The shared state of one connection.
#[derive(Debug)]
pub(super) struct Activity {
    header_read_timeout: Duration,
    keep_alive_timeout: Duration,
    /// The client speaks HTTP/2 (it sent the beginning of the connection preface).
    http2: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// Requests whose answer has not been sent yet.
    in_flight: usize,
    /// When the connection went idle (its last answer was sent).
    idle_since: Instant,
    /// When the head being read began: the connection's opening, or the first byte
    /// read while idle.
    head_since: Option<Instant>,
    /// Since when a handler has been waiting for more of a request body.
    body_since: Option<Instant>,
    /// Bytes of the head being read came, other than the empty lines a client may send
    /// between requests.
    head_begun: bool,
    /// The answer of the request under way has begun (its head went to hyper).
    answer_begun: bool,
    /// The socket could not write at its last try.
    write_stalled: bool,
    /// How the socket closes.
    closing: Closing,
}

/// How a connection's socket closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closing {
    /// At once.
    Now,
    /// A request body was left unread on a connection that closes: the socket reads
    /// on for a while before it closes, so that the answer is not destroyed by a reset.
    Linger,
    /// The connection timed out in a request: the socket answers `408`, then lingers.
    AnswerTimeout,
}

/// What a connection's expired timeout means for its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expired {
    /// Nothing of a request came (a silent connection, or an idle keep-alive one):
    /// closed without a word.
    Quietly,
    /// Part of a request head came, or a request body stopped arriving before its
    /// answer began: an HTTP/1 client is answered `408`.
    InRequest,
    /// A request body stopped arriving after its answer began, or a write is stuck:
    /// an answer cannot be added, the connection just closes.
    MidAnswer,
}

impl Activity {
    /// A connection opened at `now`: its first head is due within the header timeout.
    pub(super) fn new(now: Instant, header_read_timeout: Duration, keep_alive_timeout: Duration) -> Self {
        Self {
            header_read_timeout,
            keep_alive_timeout,
            http2: AtomicBool::new(false),
            state: Mutex::new(State {
                in_flight: 0,
                idle_since: now,
                head_since: Some(now),
                body_since: None,
                head_begun: false,
                answer_begun: false,
                write_stalled: false,
                closing: Closing::Now,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Bytes came in at `now`. While idle, they are the beginning of a head; `empty`
    /// when they were only line ends (which a client may send between requests).
    pub(super) fn read(&self, now: Instant, empty: bool) {
        let mut state = self.state();
        if state.in_flight == 0 {
            if state.head_since.is_none() {
                state.head_since = Some(now);
            }
            state.head_begun |= !empty;
        }
    }

    /// A request's head was read: no timeout applies until its answer is sent.
    pub(super) fn request_started(&self) {
        let mut state = self.state();
        state.in_flight += 1;
        state.head_since = None;
        state.head_begun = false;
    }

    /// The answer of the request under way began: a timeout can no longer answer.
    pub(super) fn answer_begun(&self) {
        self.state().answer_begun = true;
    }

    /// A request's answer was sent (or abandoned) at `now`.
    pub(super) fn request_ended(&self, now: Instant) {
        let mut state = self.state();
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.in_flight == 0 {
            state.idle_since = now;
            state.head_since = None;
            state.head_begun = false;
            state.body_since = None;
            state.answer_begun = false;
        }
    }

    /// A handler waits for more of a request body from `now` on.
    pub(super) fn body_waits(&self, now: Instant) {
        let mut state = self.state();
        if state.body_since.is_none() {
            state.body_since = Some(now);
        }
    }

    /// The body's next part came, or nobody waits for it any more.
    pub(super) fn body_wait_over(&self) {
        self.state().body_since = None;
    }

    /// When the connection must be closed if nothing changes: a request under way has
    /// none, unless its body stopped arriving (the header timeout bounds that pause).
    pub(super) fn deadline(&self) -> Option<Instant> {
        let state = self.state();
        if state.in_flight > 0 {
            return state.body_since.map(|since| since + self.header_read_timeout);
        }
        Some(match state.head_since {
            Some(since) => since + self.header_read_timeout,
            None => state.idle_since + self.keep_alive_timeout,
        })
    }

    /// What the client is told when the deadline of [`deadline`](Self::deadline) passed.
    pub(super) fn expired(&self) -> Expired {
        let state = self.state();
        if state.write_stalled {
            return Expired::MidAnswer;
        }
        if state.in_flight > 0 {
            return if state.answer_begun { Expired::MidAnswer } else { Expired::InRequest };
        }
        if state.head_since.is_some() && state.head_begun { Expired::InRequest } else { Expired::Quietly }
    }

    /// Whether the socket's last write could not proceed.
    pub(super) fn set_write_stalled(&self, stalled: bool) {
        self.state().write_stalled = stalled;
    }

    /// The client sent the beginning of HTTP/2's connection preface.
    pub(super) fn set_http2(&self) {
        self.http2.store(true, Ordering::Relaxed);
    }

    pub(super) fn is_http2(&self) -> bool {
        self.http2.load(Ordering::Relaxed)
    }

    /// The socket answers `408 Request Timeout` as it closes (see `socket.rs`).
    pub(super) fn set_request_timed_out(&self) {
        self.state().closing = Closing::AnswerTimeout;
    }

    pub(super) fn request_timed_out(&self) -> bool {
        self.state().closing == Closing::AnswerTimeout
    }

    /// The socket should read on for a while before it closes (see [`Closing::Linger`]).
    pub(super) fn set_linger(&self) {
        let mut state = self.state();
        if state.closing == Closing::Now {
            state.closing = Closing::Linger;
        }
    }

    pub(super) fn lingers(&self) -> bool {
        self.state().closing != Closing::Now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: Duration = Duration::from_secs(10);
    const IDLE: Duration = Duration::from_secs(60);

    #[test]
    fn a_new_connection_has_the_header_timeout() {
        let opened = Instant::now();
        let activity = Activity::new(opened, HEAD, IDLE);
        assert_eq!(activity.deadline(), Some(opened + HEAD));
        // Bytes of the first head do not extend it.
        activity.read(opened + Duration::from_secs(5), false);
        assert_eq!(activity.deadline(), Some(opened + HEAD));
    }

    #[test]
    fn requests_under_way_have_no_deadline() {
        let opened = Instant::now();
        let activity = Activity::new(opened, HEAD, IDLE);
        activity.request_started();
        activity.request_started();
        assert_eq!(activity.deadline(), None);
        activity.request_ended(opened + Duration::from_secs(100));
        assert_eq!(activity.deadline(), None, "one of two is still under way");
        let answered = opened + Duration::from_secs(200);
        activity.request_ended(answered);
        assert_eq!(activity.deadline(), Some(answered + IDLE));
    }

    #[test]
    fn the_first_byte_after_idling_starts_the_header_timeout() {
        let opened = Instant::now();
        let activity = Activity::new(opened, HEAD, IDLE);
        activity.request_started();
        let answered = opened + Duration::from_secs(1);
        activity.request_ended(answered);
        let first_byte = answered + Duration::from_secs(30);
        activity.read(first_byte, false);
        assert_eq!(activity.deadline(), Some(first_byte + HEAD));
        // Later bytes of the same head do not extend it.
        activity.read(first_byte + Duration::from_secs(9), false);
        assert_eq!(activity.deadline(), Some(first_byte + HEAD));
        // Bytes read while a request is under way (its body) are not a head.
        activity.request_started();
        activity.read(first_byte + Duration::from_secs(20), false);
        let done = first_byte + Duration::from_secs(21);
        activity.request_ended(done);
        assert_eq!(activity.deadline(), Some(done + IDLE));
    }

    #[test]
    fn a_body_that_stops_arriving_has_the_header_timeout() {
        let opened = Instant::now();
        let activity = Activity::new(opened, HEAD, IDLE);
        activity.request_started();
        let waits = opened + Duration::from_secs(1);
        activity.body_waits(waits);
        activity.body_waits(waits + Duration::from_secs(1));
        assert_eq!(activity.deadline(), Some(waits + HEAD));
        activity.body_wait_over();
        assert_eq!(activity.deadline(), None);
        // An answer ends the wait.
        activity.body_waits(waits + Duration::from_secs(2));
        let answered = waits + Duration::from_secs(3);
        activity.request_ended(answered);
        assert_eq!(activity.deadline(), Some(answered + IDLE));
    }

    #[test]
    fn what_an_expired_timeout_tells_the_client() {
        let opened = Instant::now();
        let activity = Activity::new(opened, HEAD, IDLE);
        assert_eq!(activity.expired(), Expired::Quietly, "nothing came");
        activity.read(opened, true);
        assert_eq!(activity.expired(), Expired::Quietly, "only empty lines came");
        activity.read(opened, false);
        assert_eq!(activity.expired(), Expired::InRequest, "a part of a head came");
        activity.request_started();
        activity.body_waits(opened);
        assert_eq!(activity.expired(), Expired::InRequest, "a body stopped before the answer");
        activity.answer_begun();
        assert_eq!(activity.expired(), Expired::MidAnswer, "a body stopped after the answer began");
        activity.request_ended(opened);
        assert_eq!(activity.expired(), Expired::Quietly, "idle between requests");
        activity.read(opened, false);
        activity.set_write_stalled(true);
        assert_eq!(activity.expired(), Expired::MidAnswer, "an answer is stuck in the socket");
    }
}
