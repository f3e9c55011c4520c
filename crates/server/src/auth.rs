//! Authentication: who is calling (nobody checked, the main token, a scoped token) and
//! the scope rules of scoped tokens.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::header::{AUTHORIZATION, SEC_WEBSOCKET_PROTOCOL};

use crate::error::ApiError;
use crate::state::AppState;
use crate::tokens::{Claims, Rejected};

/// The `Sec-WebSocket-Protocol` entry that carries a token from a browser.
pub(crate) const BEARER_SUBPROTOCOL: &str = "volley.bearer.";
/// The subprotocol the server answers on its WebSockets (a browser that sends its token
/// as a subprotocol offers this one beside it).
pub(crate) const ANSWER_SUBPROTOCOL: &str = "volley.v1";

/// Who is calling.
#[derive(Debug, Clone)]
pub(crate) enum Access {
    /// The server has no token: everything is allowed.
    Open,
    /// The main token.
    Main,
    /// A scoped token.
    Scoped(Arc<Claims>),
}

impl Access {
    pub(crate) fn auth_enabled(&self) -> bool {
        !matches!(self, Self::Open)
    }

    /// Routes that only the main token (or an open server) may call.
    pub(crate) fn require_full(&self) -> Result<(), ApiError> {
        match self {
            Self::Open | Self::Main => Ok(()),
            Self::Scoped(_) => Err(ApiError::forbidden("a scoped token cannot use this route")),
        }
    }

    pub(crate) fn claims(&self) -> Option<&Claims> {
        match self {
            Self::Scoped(claims) => Some(claims),
            Self::Open | Self::Main => None,
        }
    }
}

/// Checks the bearer token of every request (when the server has one) and leaves the
/// [`Access`] for the handlers.
pub(crate) async fn authenticate(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    // Read before the await: a request is not `Sync`.
    let presented = bearer(&request);
    let access = match access_of(&state, presented).await {
        Ok(access) => access,
        Err((error, rejected)) => {
            if let Some(reason) = rejected {
                tracing::info!(path = %request.uri().path(), "rejected a {reason} token");
            }
            return error.into_response();
        }
    };
    request.extensions_mut().insert(access);
    next.run(request).await
}

/// Who is calling; else the answer, and why a scoped token was rejected (for the log).
async fn access_of(state: &AppState, presented: Option<String>) -> Result<Access, (ApiError, Option<&'static str>)> {
    let tokens = &state.tokens;
    if !tokens.enabled() {
        return Ok(Access::Open);
    }
    let presented = presented.ok_or_else(|| (ApiError::unauthorized(), None))?;
    if tokens.is_main(&presented) {
        return Ok(Access::Main);
    }
    match tokens.verify(&presented).await {
        Ok(claims) => Ok(Access::Scoped(Arc::new(claims))),
        Err(rejected) => {
            let reason = match rejected {
                Rejected::Invalid => "invalid",
                Rejected::Expired => "expired",
                Rejected::Revoked => "revoked",
                Rejected::Unavailable => return Err((ApiError::store_unavailable(), None)),
            };
            let mut error = ApiError::unauthorized();
            if rejected != Rejected::Invalid {
                error.message = format!("the scoped token is {reason}");
            }
            Err((error, Some(reason)))
        }
    }
}

/// The token of `Authorization: Bearer …`, else of a `volley.bearer.<base64url>`
/// WebSocket subprotocol entry. Never from the query string.
fn bearer(request: &Request) -> Option<String> {
    let headers = request.headers();
    if let Some(value) = headers.get(AUTHORIZATION).and_then(|value| value.to_str().ok()) {
        let (scheme, token) = value.trim().split_once(' ')?;
        return scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned());
    }
    headers
        .get_all(SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .find_map(|entry| entry.trim().strip_prefix(BEARER_SUBPROTOCOL).map(str::to_owned))
        .and_then(|encoded| URL_SAFE_NO_PAD.decode(encoded).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
}
