//! Authentication routes: HTTP Basic, login with a bearer token and a session cookie, bearer
//! tokens, sessions and API keys.

use std::collections::HashMap;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::header::{AUTHORIZATION, SET_COOKIE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use serde_json::json;

use crate::cookies::request_cookies;
use crate::response;
use crate::state::AppState;
use crate::{API_KEY, PASSWORD, USER};

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/basic-auth", get(basic_auth))
        .route("/login", post(login))
        .route("/bearer", get(bearer))
        .route("/session", get(session))
        .route("/api-key", get(api_key))
        .route("/api-key-query", get(api_key_query))
}

/// The token of `Authorization: Bearer <token>` (scheme case-insensitive).
pub(crate) fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    credentials(headers, "Bearer")
}

/// The user and password of `Authorization: Basic base64(user:password)`.
pub(crate) fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let decoded = BASE64.decode(credentials(headers, "Basic")?).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

/// A 401 with `WWW-Authenticate: challenge` and `body`.
pub(crate) fn unauthorized(challenge: &str, body: serde_json::Value) -> Response {
    response::with_header(response::json(StatusCode::UNAUTHORIZED, body), WWW_AUTHENTICATE, challenge)
}

fn credentials<'h>(headers: &'h HeaderMap, scheme: &str) -> Option<&'h str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
    let (found, credentials) = value.split_once(' ')?;
    found.eq_ignore_ascii_case(scheme).then(|| credentials.trim())
}

/// 200 `{"authenticated": true, "user": USER}` for `USER:PASSWORD`, else 401 with a Basic challenge.
async fn basic_auth(headers: HeaderMap) -> Response {
    match basic_credentials(&headers) {
        Some((user, password)) if user == USER && password == PASSWORD => {
            response::json(StatusCode::OK, json!({"authenticated": true, "user": USER}))
        }
        _ => unauthorized("Basic realm=\"volley\"", json!({"authenticated": false})),
    }
}

#[derive(Deserialize)]
struct Login {
    user: String,
    password: String,
}

/// JSON `{"user", "password"}` (any or no `Content-Type`). On success: 200
/// `{"token", "user"}`, `X-Token: <token>` and `Set-Cookie: session=<id>; Path=/; HttpOnly`.
/// Wrong credentials: 401; a body that is not that JSON: 400.
async fn login(State(state): State<AppState>, body: Bytes) -> Response {
    let login: Login = match serde_json::from_slice(&body) {
        Ok(login) => login,
        Err(error) => return response::bad_request(format!("expected JSON {{\"user\", \"password\"}}: {error}")),
    };
    if login.user != USER || login.password != PASSWORD {
        return response::json(StatusCode::UNAUTHORIZED, json!({"error": "invalid credentials"}));
    }
    let (token, session) = state.issue_login();
    let response = response::json(StatusCode::OK, json!({"token": token, "user": USER}));
    let response = response::with_header(response, HeaderName::from_static("x-token"), &token);
    response::with_header(response, SET_COOKIE, &format!("session={session}; Path=/; HttpOnly"))
}

/// 200 `{"authenticated": true, "token"}` for a token from `/login` or `/oauth/token`, else 401.
async fn bearer(State(state): State<AppState>, headers: HeaderMap) -> Response {
    match bearer_token(&headers) {
        Some(token) if state.is_bearer_token(token) => {
            response::json(StatusCode::OK, json!({"authenticated": true, "token": token}))
        }
        _ => unauthorized("Bearer", json!({"authenticated": false})),
    }
}

/// 200 when a `session` cookie from `/login` is sent, else 401.
async fn session(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let authenticated =
        request_cookies(&headers).iter().any(|(name, value)| name == "session" && state.is_session(value));
    authenticated_response(authenticated)
}

/// 200 for `X-API-Key: API_KEY`, else 401.
async fn api_key(headers: HeaderMap) -> Response {
    authenticated_response(headers.get("x-api-key").is_some_and(|key| key == API_KEY))
}

/// 200 for query `api_key=API_KEY`, else 401.
async fn api_key_query(Query(query): Query<HashMap<String, String>>) -> Response {
    authenticated_response(query.get("api_key").is_some_and(|key| key == API_KEY))
}

fn authenticated_response(authenticated: bool) -> Response {
    let status = if authenticated { StatusCode::OK } else { StatusCode::UNAUTHORIZED };
    response::json(status, json!({"authenticated": authenticated}))
}
