//! Sessions: create, view (secrets redacted), replace or merge variables, delete.

use axum::Json;
use axum::extract::{Extension, Path, State};
use http::StatusCode;
use volley_engine::redact::Redactor;
use volley_protocol::{ObserverEvent, SessionUpdated};

use crate::auth::Access;
use crate::error::ApiError;
use crate::hub::{Emitter, Sequence};
use crate::state::AppState;
use crate::wire::{
    ApiJson, CreateSession, ErrorBody, OptionalJson, SessionCreated, SessionView, UpdateVariables, VariablesMode,
    VariablesUpdated,
};

#[utoipa::path(post, path = "/session", tag = "sessions", request_body = Option<CreateSession>,
    responses((status = 201, body = SessionCreated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 429, description = "SESSION_LIMIT_REACHED", body = ErrorBody)))]
pub(crate) async fn create(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    OptionalJson(body): OptionalJson<CreateSession>,
) -> Result<(StatusCode, Json<SessionCreated>), ApiError> {
    access.require_full()?;
    let variables = body.variables.unwrap_or_default();
    let session = state.sessions.create(state.new_client(variables)).await?;
    tracing::debug!(session = %session.id, "session created");
    Ok((StatusCode::CREATED, Json(SessionCreated { session_id: session.id.clone() })))
}

#[utoipa::path(get, path = "/session/{id}", tag = "sessions", params(("id" = String, Path)),
    responses((status = 200, body = SessionView), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "SESSION_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn view(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<Json<SessionView>, ApiError> {
    access.require_full()?;
    let session = state.sessions.get(&id).await?;
    Ok(Json(SessionView {
        session_id: session.id.clone(),
        variables: Redactor::default().variables(&session.client.get_variables()),
        cookie_count: session.client.cookie_jar().map_or(0, volley_engine::CookieJar::len),
        created_at: session.created_at,
        last_used_at: session.last_used(),
        snapshot_version: session.snapshot_version(),
    }))
}

#[utoipa::path(delete, path = "/session/{id}", tag = "sessions", params(("id" = String, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "SESSION_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn remove(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    access.require_full()?;
    if state.sessions.remove(&id).await? { Ok(StatusCode::NO_CONTENT) } else { Err(ApiError::session_not_found(&id)) }
}

#[utoipa::path(put, path = "/session/{id}/variables", tag = "sessions", params(("id" = String, Path)), request_body = UpdateVariables,
    responses((status = 200, body = VariablesUpdated),
        (status = 400, description = "VALIDATION_ERROR: no `variables`, a `mode` other than `merge` and `replace`", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, description = "SESSION_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn update_variables(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<UpdateVariables>,
) -> Result<Json<VariablesUpdated>, ApiError> {
    if let Some(claims) = access.claims()
        && claims.session_id.as_deref() != Some(id.as_str())
    {
        return Err(ApiError::forbidden("the scoped token may only change the variables of its own session"));
    }
    let replace = body.mode == Some(VariablesMode::Replace);
    let session = state.sessions.get(&id).await?;
    // With `--redis`, in the session's turn: no execution of another instance saves
    // over the change.
    let _turn = state.sessions.turn(&session).await?;
    let changed = session.update_variables(body.variables, replace);
    let snapshot_version = if changed {
        let version = state.sessions.save(&session, true, false).await?;
        let emitter = Emitter {
            hub: state.hub.clone(),
            run_id: None,
            session_id: Some(session.id.clone()),
            flow_id: None,
            req_exec_id: None,
            sequence: Sequence::run(),
        };
        emitter.emit(ObserverEvent::SessionUpdated(SessionUpdated {
            variables_changed: true,
            cookies_changed: false,
            snapshot_version: Some(version),
        }));
        version
    } else {
        session.snapshot_version()
    };
    Ok(Json(VariablesUpdated { session_id: session.id.clone(), snapshot_version }))
}
