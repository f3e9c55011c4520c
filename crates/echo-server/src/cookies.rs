//! Cookies: `/cookies/set` and `/cookies/set-and-redirect` set them, `/cookies` shows what the
//! client sent, `/cookies/secure` sets a `Secure` cookie.

use axum::Router;
use axum::extract::Query;
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Map, Value, json};

use crate::response;
use crate::state::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/cookies", get(show))
        .route("/cookies/set", get(set))
        .route("/cookies/set-and-redirect", get(set_and_redirect))
        .route("/cookies/secure", get(secure))
}

/// The `name=value` pairs of every `Cookie` header, in order.
pub(crate) fn request_cookies(headers: &HeaderMap) -> Vec<(String, String)> {
    let mut cookies = Vec::new();
    for header in headers.get_all(COOKIE) {
        for pair in String::from_utf8_lossy(header.as_bytes()).split(';') {
            if let Some((name, value)) = pair.split_once('=')
                && !name.trim().is_empty()
            {
                cookies.push((name.trim().to_owned(), value.trim().to_owned()));
            }
        }
    }
    cookies
}

/// `{"cookies": {name: value, …}}` from the request's `Cookie` headers.
async fn show(headers: HeaderMap) -> Response {
    let cookies: Map<String, Value> =
        request_cookies(&headers).into_iter().map(|(name, value)| (name, Value::String(value))).collect();
    response::json(StatusCode::OK, json!({"cookies": cookies}))
}

/// `Set-Cookie: name=value; Path=/` per query pair; 200 `{"set": {name: value, …}}`.
async fn set(Query(pairs): Query<Vec<(String, String)>>) -> Response {
    let set: Map<String, Value> =
        pairs.iter().map(|(name, value)| (name.clone(), Value::String(value.clone()))).collect();
    with_set_cookies(response::json(StatusCode::OK, json!({"set": set})), &pairs)
}

/// Like `/cookies/set`, but answers 302 to `/cookies`.
async fn set_and_redirect(Query(pairs): Query<Vec<(String, String)>>) -> Response {
    with_set_cookies(response::redirect(StatusCode::FOUND, "/cookies"), &pairs)
}

/// `Set-Cookie: secure_cookie=1; Path=/; Secure`.
async fn secure() -> Response {
    response::with_header(
        response::json(StatusCode::OK, json!({"set": {"secure_cookie": "1"}})),
        SET_COOKIE,
        "secure_cookie=1; Path=/; Secure",
    )
}

fn with_set_cookies(response: Response, pairs: &[(String, String)]) -> Response {
    pairs.iter().fold(response, |response, (name, value)| {
        if !response.status().is_success() && !response.status().is_redirection() {
            return response;
        }
        response::with_header(response, SET_COOKIE, &format!("{name}={value}; Path=/"))
    })
}
