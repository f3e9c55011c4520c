//! OAuth: `/oauth/token` (client credentials grant) and the token refresh scenario, where
//! `/expiring` accepts only tokens from `/refresh`.

use std::collections::HashMap;

use axum::Form;
use axum::Router;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::json;

use crate::auth::{basic_credentials, bearer_token, unauthorized};
use crate::response;
use crate::state::AppState;
use crate::{CLIENT_ID, CLIENT_SECRET};

/// Lifetime announced for every issued token, in seconds (nothing actually expires).
const EXPIRES_IN_SECONDS: u64 = 3600;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/oauth/token", post(token)).route("/refresh", post(refresh)).route("/expiring", get(expiring))
}

/// A url-encoded form with `grant_type=client_credentials` and the client id and secret,
/// either as `client_id`/`client_secret` fields or as HTTP Basic credentials. Answers 200
/// `{"access_token", "token_type": "Bearer", "expires_in"}`; a wrong client 401
/// `{"error": "invalid_client"}`; another grant type 400 `{"error": "unsupported_grant_type"}`;
/// a body that is not a url-encoded form or has no `grant_type` 400 `{"error": "invalid_request"}`.
async fn token(
    State(state): State<AppState>,
    headers: HeaderMap,
    form: Result<Form<HashMap<String, String>>, FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return response::bad_request("invalid_request");
    };
    match form.get("grant_type").map(String::as_str) {
        Some("client_credentials") => {}
        Some(_) => return response::bad_request("unsupported_grant_type"),
        None => return response::bad_request("invalid_request"),
    }
    let basic = basic_credentials(&headers);
    let (client_id, client_secret) = match &basic {
        Some((id, secret)) => (Some(id.as_str()), Some(secret.as_str())),
        None => (form.get("client_id").map(String::as_str), form.get("client_secret").map(String::as_str)),
    };
    if client_id != Some(CLIENT_ID) || client_secret != Some(CLIENT_SECRET) {
        let body = json!({"error": "invalid_client"});
        return if basic.is_some() {
            unauthorized("Basic realm=\"volley\"", body)
        } else {
            response::json(StatusCode::UNAUTHORIZED, body)
        };
    }
    let token = state.issue_bearer_token();
    response::json(
        StatusCode::OK,
        json!({"access_token": token, "token_type": "Bearer", "expires_in": EXPIRES_IN_SECONDS}),
    )
}

/// 200 `{"access_token": "fresh-<n>", "expires_in"}`; the token is then valid for `/expiring`.
/// The request body is ignored.
async fn refresh(State(state): State<AppState>) -> Response {
    let token = state.issue_fresh_token();
    response::json(StatusCode::OK, json!({"access_token": token, "expires_in": EXPIRES_IN_SECONDS}))
}

/// 200 `{"authenticated": true}` for a bearer token from `/refresh`; any other token 401
/// `{"error": "token expired"}`, no token 401 `{"error": "missing token"}`.
async fn expiring(State(state): State<AppState>, headers: HeaderMap) -> Response {
    match bearer_token(&headers) {
        Some(token) if state.is_fresh_token(token) => response::json(StatusCode::OK, json!({"authenticated": true})),
        Some(_) => unauthorized("Bearer error=\"invalid_token\"", json!({"error": "token expired"})),
        None => unauthorized("Bearer", json!({"error": "missing token"})),
    }
}
