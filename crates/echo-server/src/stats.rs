//! Request counting: a middleware that counts every request by path, and `/stats` to read the
//! counts (handy for "retried exactly once").

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

/// `{"requests": {"<path>": count, …}}`.
async fn stats(State(state): State<AppState>) -> Response {
    response::json(StatusCode::OK, json!({"requests": state.request_counts()}))
}
