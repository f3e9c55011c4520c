//! Scoped tokens: issue (main token only) and revoke.

use axum::Json;
use axum::extract::{Extension, Path, State};
use http::StatusCode;
use volley_protocol::ErrorCode;

use crate::auth::Access;
use crate::error::ApiError;
use crate::state::AppState;
use crate::tokens::{DEFAULT_TTL_MS, MAX_TTL_MS};
use crate::wire::{ApiJson, CreateToken, ErrorBody, TokenCreated};

#[utoipa::path(post, path = "/tokens", tag = "tokens", request_body = CreateToken,
    responses((status = 201, body = TokenCreated),
        (status = 400, description = "VALIDATION_ERROR: `ttlMs` out of range, neither `flowId` nor `sessionId`, a flow of another session, or a server without --token", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, description = "FLOW_NOT_FOUND, SESSION_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn create(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    ApiJson(body): ApiJson<CreateToken>,
) -> Result<(StatusCode, Json<TokenCreated>), ApiError> {
    if !matches!(access, Access::Main) {
        return match access {
            Access::Open => Err(ApiError::validation(
                "the server runs without --token: scoped tokens are signed with it, start the server with --token",
            )),
            _ => Err(ApiError::forbidden("only the main token issues scoped tokens")),
        };
    }
    let ttl = body.ttl_ms.unwrap_or(DEFAULT_TTL_MS);
    if ttl == 0 || ttl > MAX_TTL_MS {
        return Err(ApiError::validation(format!("`ttlMs` must be between 1 and {MAX_TTL_MS}, not {ttl}")));
    }
    if body.flow_id.is_none() && body.session_id.is_none() {
        return Err(ApiError::validation("a scoped token needs a `flowId` or a `sessionId` to be scoped to"));
    }
    if let Some(id) = &body.flow_id {
        let flow = state.flows.get(id).await?;
        if let (Some(session), Some(own)) = (&body.session_id, &flow.session_id)
            && session != own
        {
            return Err(ApiError::validation(format!("flow `{id}` belongs to session `{own}`, not `{session}`")));
        }
    }
    if let Some(id) = &body.session_id {
        state.sessions.get(id).await?;
    }
    let (token, claims) = state
        .tokens
        .issue(body.flow_id, body.session_id, ttl)
        .await?
        .ok_or_else(|| ApiError::internal(&"cannot sign a token"))?;
    Ok((StatusCode::CREATED, Json(TokenCreated { token, jti: claims.jti, expires_at: claims.expires_at })))
}

#[utoipa::path(delete, path = "/tokens/{jti}", tag = "tokens", params(("jti" = String, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "NOT_FOUND: no live token has this id", body = ErrorBody)))]
pub(crate) async fn revoke(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(jti): Path<String>,
) -> Result<StatusCode, ApiError> {
    if !matches!(access, Access::Main | Access::Open) {
        return Err(ApiError::forbidden("only the main token revokes scoped tokens"));
    }
    if state.tokens.revoke(&jti).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::new(StatusCode::NOT_FOUND, ErrorCode::NotFound, format!("no live token `{jti}`")))
    }
}
