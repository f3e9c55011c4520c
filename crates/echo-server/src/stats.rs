//! Request counting: a middleware that counts every request by path, and `/stats` to read the
//! counts (handy for "retried exactly once") and how many event streams are still open (handy
//! for "the stream stopped when the client cancelled it").

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::get;
use serde_json::json;

use crate::response;
use crate::state::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/stats", get(stats))
}

/// Counts the request under its path (without query) before handing it on. Applies to every
/// route, unknown paths and `/stats` itself included.
pub(crate) async fn count_requests(State(state): State<AppState>, request: Request, next: Next) -> Response {
    state.record_request(request.uri().path());
    next.run(request).await
}

/// `{"requests": {"<path>": count, …}, "open_event_streams": n}`: `n` counts the `/sse/*`
/// streams whose body is still being sent (not ended, and the client still there).
async fn stats(State(state): State<AppState>) -> Response {
    response::json(
        StatusCode::OK,
        json!({"requests": state.request_counts(), "open_event_streams": state.open_event_streams()}),
    )
}
