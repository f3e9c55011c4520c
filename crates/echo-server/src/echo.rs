//! `/echo` reflects the request back as JSON; `/status/{code}` answers with any status
//! code; `/drain` reads the body and says how long it was.

use axum::Router;
use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{HeaderMap, Method, StatusCode, Uri, Version};
use axum::response::Response;
use axum::routing::any;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::json;

use crate::response;
use crate::state::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/echo", any(echo))
        .route("/echo/{*rest}", any(echo))
        .route("/status/{code}", any(status))
        .route("/drain", any(drain))
}

/// `{"received": <body length>}`: for large uploads, without echoing them back.
async fn drain(body: Bytes) -> Response {
    response::json(StatusCode::OK, json!({"received": body.len()}))
}

/// `{"method", "path", "query", "url", "version", "headers", "body", "body_base64", "body_len"}`.
///
/// `headers` lists `[name, value]` pairs as hyper parsed them: names lowercase, a repeated
/// header once per occurrence. The order is the order of arrival, except that repeated
/// occurrences of one name are listed together at its first position (`HeaderMap` groups them).
async fn echo(method: Method, uri: Uri, version: Version, headers: HeaderMap, body: Bytes) -> Response {
    let path = uri.path();
    let query = uri.query();
    let url = match query {
        Some(query) => format!("{path}?{query}"),
        None => path.to_owned(),
    };
    let headers: Vec<(&str, String)> = headers
        .iter()
        .map(|(name, value)| (name.as_str(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    response::json(
        StatusCode::OK,
        json!({
            "method": method.as_str(),
            "path": path,
            "query": query,
            "url": url,
            "version": format!("{version:?}"),
            "headers": headers,
            "body": String::from_utf8_lossy(&body),
            "body_base64": BASE64.encode(&body),
            "body_len": body.len(),
        }),
    )
}

/// Answers with `code` and `{"status": code}`, or no body for 204, 205 and 304. Codes outside
/// 200–599 get 400: hyper cannot send a 1xx as the final response.
async fn status(Path(code): Path<String>) -> Response {
    match response::final_status(&code) {
        Ok(status) => response::json_unless_bodiless(status, json!({"status": status.as_u16()})),
        Err(message) => response::json(StatusCode::BAD_REQUEST, json!({"status": 400, "error": message})),
    }
}
