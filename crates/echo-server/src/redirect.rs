//! Redirects: `/redirect/{n}` walks a chain of `n` redirects; `/redirect-to` redirects anywhere.

use std::collections::HashMap;

use axum::Router;
use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{any, get};
use serde_json::json;

use crate::response;
use crate::state::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/redirect/{n}", get(redirect_chain)).route("/redirect-to", any(redirect_to))
}

/// n > 0: 302 to `/redirect/{n-1}`; n == 0: 200 `{"redirected": true}`.
async fn redirect_chain(Path(n): Path<String>) -> Response {
    match n.parse::<u32>() {
        Ok(0) => response::json(StatusCode::OK, json!({"redirected": true})),
        Ok(n) => response::redirect(StatusCode::FOUND, &format!("/redirect/{}", n - 1)),
        Err(_) => response::bad_request(format!("invalid redirect count: {n:?}")),
    }
}

/// Query `url` (required) and `status` (a 3xx, default 302): that status with `Location: url`.
async fn redirect_to(Query(query): Query<HashMap<String, String>>) -> Response {
    let Some(url) = query.get("url") else {
        return response::bad_request("missing query parameter: url");
    };
    let status = match query.get("status") {
        None => StatusCode::FOUND,
        Some(status) => {
            match status.parse::<u16>().ok().filter(|code| (300..=399).contains(code)).map(StatusCode::from_u16) {
                Some(Ok(status)) => status,
                _ => return response::bad_request(format!("invalid redirect status: {status:?}")),
            }
        }
    };
    response::redirect(status, url)
}
