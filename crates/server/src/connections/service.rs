//! The router as hyper sees it on one connection: each request marks the connection busy
//! until its answer is sent, and a request body that the answer left unread (a 401 from
//! the authentication layer, an early 413, a route that takes no body) is dealt with so
//! that the answer always reaches the client:
//!
//! - a small rest (at most [`MAX_DRAIN`] announced bytes) is read and discarded beside
//!   the answer, so the connection stays alive for the next request;
//! - anything else (larger, of unknown length, or sent only after `100 Continue`) gets
//!   `Connection: close` on the answer, and the socket closes gracefully after it
//!   (`socket.rs`).
//!
//! Without this, hyper closes such a connection after an answer that announced
//! keep-alive: a client sending its next request on it never gets an answer.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body as AxumBody;
use futures_util::future::BoxFuture;
use http::{HeaderValue, Request, Response, Version, header};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::service::TowerToHyperService;
use parking_lot::Mutex;
use tokio::time::Instant;

use super::activity::Activity;

/// The most bytes of an unread request body read and discarded to keep its connection.
pub(super) const MAX_DRAIN: u64 = 1024 * 1024;

/// The router on one connection.
pub(super) struct ConnectionService {
    router: TowerToHyperService<Router>,
    activity: Arc<Activity>,
    /// How long the rest of an unread body may take to arrive.
    drain_time: Duration,
}

impl ConnectionService {
    pub(super) fn new(router: Router, activity: Arc<Activity>, drain_time: Duration) -> Self {
        Self { router: TowerToHyperService::new(router), activity, drain_time }
    }
}

impl hyper::service::Service<Request<Incoming>> for ConnectionService {
    type Response = Response<Answer>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let busy = Busy::start(self.activity.clone());
        // HTTP/2 ends an unread stream by itself without touching the connection; an
        // empty body has nothing to leave unread.
        let watched = request.version() <= Version::HTTP_11 && !request.body().is_end_stream();
        if !watched {
            let answer = self.router.call(request.map(AxumBody::new));
            return Box::pin(async move {
                let Ok(response) = answer.await;
                Ok(response.map(|body| Answer { body, _busy: busy }))
            });
        }
        let expects_continue = request
            .headers()
            .get(header::EXPECT)
            .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        let left = Arc::new(Left::default());
        let activity = self.activity.clone();
        let request =
            request.map(|body| AxumBody::new(Watched { body: Some(body), ended: false, left: left.clone(), activity }));
        let answer = self.router.call(request);
        let (activity, drain_time) = (self.activity.clone(), self.drain_time);
        Box::pin(async move {
            let Ok(mut response) = answer.await;
            activity.answer_begun();
            if let Some(body) = left.take() {
                let small = body.size_hint().upper().is_some_and(|rest| rest <= MAX_DRAIN);
                if small && !expects_continue {
                    // After the answer was written, hyper reads on only while someone
                    // holds the body.
                    tokio::spawn(drain(body, Busy::start(activity), drain_time));
                } else {
                    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
                    activity.set_linger();
                }
            }
            Ok(response.map(|body| Answer { body, _busy: busy }))
        })
    }
}

/// Reads and discards the rest of a body; one that takes longer than `time` is dropped,
/// and hyper then closes the connection. The connection stays busy meanwhile: its
/// timeouts start from the end of the drain.
async fn drain(mut body: Incoming, busy: Busy, time: Duration) {
    let read_all = async {
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            if frame.is_err() {
                break;
            }
        }
    };
    if tokio::time::timeout(time, read_all).await.is_err() {
        busy.0.set_linger();
    }
}

/// The unread body of a request, handed back when the router drops it.
#[derive(Default)]
struct Left(Mutex<Option<Incoming>>);

impl Left {
    fn put(&self, body: Incoming) {
        *self.0.lock() = Some(body);
    }

    fn take(&self) -> Option<Incoming> {
        self.0.lock().take()
    }
}

/// A request body that tells the connection's [`Activity`] when a handler waits for it,
/// and goes back to [`Left`] when dropped before its end.
struct Watched {
    body: Option<Incoming>,
    ended: bool,
    left: Arc<Left>,
    activity: Arc<Activity>,
}

impl Body for Watched {
    type Data = bytes::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let Some(body) = self.body.as_mut() else { return Poll::Ready(None) };
        let frame = Pin::new(body).poll_frame(cx);
        match &frame {
            Poll::Pending => self.activity.body_waits(Instant::now()),
            Poll::Ready(frame) => {
                self.activity.body_wait_over();
                self.ended = matches!(frame, None | Some(Err(_)));
            }
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.body.as_ref().map(Body::size_hint).unwrap_or_default()
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.activity.body_wait_over();
        if let Some(body) = self.body.take()
            && !self.ended
            && !body.is_end_stream()
        {
            self.left.put(body);
        }
    }
}

/// Marks its connection busy while it lives: from the request's head until its answer
/// was sent (or the request was abandoned), or while a body is drained.
struct Busy(Arc<Activity>);

impl Busy {
    fn start(activity: Arc<Activity>) -> Self {
        activity.request_started();
        Self(activity)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.request_ended(Instant::now());
    }
}

/// The body of an answer; the request is over when it is dropped.
pub(super) struct Answer {
    body: AxumBody,
    _busy: Busy,
}

impl Body for Answer {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
