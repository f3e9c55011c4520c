//! Timeouts: `/slow` answers late, `/slow-body` sends its head at once and its body late.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Query;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::response;
use crate::state::AppState;

/// The delay when the query has no `ms`.
const DEFAULT_DELAY_MS: u64 = 1000;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/slow", get(slow)).route("/slow-body", get(slow_body))
}

/// Waits `ms` milliseconds (default 1000), then 200 `{"slept_ms": ms}`.
async fn slow(Query(query): Query<HashMap<String, String>>) -> Response {
    let ms = match delay_ms(&query) {
        Ok(ms) => ms,
        Err(message) => return response::bad_request(message),
    };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    response::json(StatusCode::OK, json!({"slept_ms": ms}))
}

/// Sends 200 and the headers at once, then the body `{"slow": true}` after `ms` milliseconds
/// (default 1000), chunked.
async fn slow_body(Query(query): Query<HashMap<String, String>>) -> Response {
    let ms = match delay_ms(&query) {
        Ok(ms) => ms,
        Err(message) => return response::bad_request(message),
    };
    let body = futures_util::stream::once(async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, Infallible>(Bytes::from_static(br#"{"slow":true}"#))
    });
    (StatusCode::OK, [(CONTENT_TYPE, HeaderValue::from_static("application/json"))], Body::from_stream(body))
        .into_response()
}

/// The query's `ms`, or the default; an error message when it is not a number.
fn delay_ms(query: &HashMap<String, String>) -> Result<u64, String> {
    match query.get("ms") {
        None => Ok(DEFAULT_DELAY_MS),
        Some(ms) => ms.parse().map_err(|_| format!("invalid ms: {ms:?}")),
    }
}
