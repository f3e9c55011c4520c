//! Flows: create, finish, list, and read their stored executions.

use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use http::StatusCode;
use volley_protocol::{ErrorCode, FlowStarted, ObserverEvent};

use crate::auth::Access;
use crate::error::ApiError;
use crate::flows::StoredExecution;
use crate::hub::Emitter;
use crate::state::AppState;
use crate::wire::{
    CreateFlow, ErrorBody, ExecutionList, FlowCreated, FlowFinished, FlowList, MAX_META_KEYS, OptionalJson,
};

/// Longest flow label, in characters.
const MAX_LABEL: usize = 256;

#[utoipa::path(post, path = "/flows", tag = "flows", request_body = Option<CreateFlow>,
    responses((status = 201, body = FlowCreated),
        (status = 400, description = "VALIDATION_ERROR: a `label` over 256 characters, a `meta` over 10 keys, a body that is not the schema's", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, description = "SESSION_NOT_FOUND", body = ErrorBody),
        (status = 429, description = "FLOW_LIMIT_REACHED", body = ErrorBody)))]
pub(crate) async fn create(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    OptionalJson(body): OptionalJson<CreateFlow>,
) -> Result<(StatusCode, Json<FlowCreated>), ApiError> {
    access.require_full()?;
    if body.label.as_ref().is_some_and(|label| label.chars().count() > MAX_LABEL) {
        return Err(ApiError::validation(format!("`label` is longer than {MAX_LABEL} characters")));
    }
    if body.meta.as_ref().is_some_and(|meta| meta.len() > MAX_META_KEYS) {
        return Err(ApiError::validation(format!("`meta` has more than {MAX_META_KEYS} keys")));
    }
    if let Some(id) = &body.session_id {
        state.sessions.get(id).await?;
    }
    let (flow, evicted) = state.flows.create(body.session_id, body.label, body.meta).await?;
    if let Some(evicted) = evicted {
        state.hub.forget_flow(&evicted);
    }
    // The hub keeps the flow's events from here until the flow is evicted or expires.
    state.hub.open_flow(&flow.id);
    let emitter = flow_emitter(&state, &flow);
    emitter.emit(ObserverEvent::FlowStarted(FlowStarted { label: flow.label.clone(), meta: flow.meta.clone() }));
    Ok((StatusCode::CREATED, Json(FlowCreated { flow_id: flow.id.clone() })))
}

#[utoipa::path(post, path = "/flows/{id}/finish", tag = "flows", params(("id" = String, Path)),
    responses((status = 200, body = FlowFinished), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "FLOW_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn finish(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<Json<FlowFinished>, ApiError> {
    access.require_full()?;
    let flow = state.flows.get(&id).await?;
    let (summary, first) = flow.finish().await?;
    if first {
        flow_emitter(&state, &flow).emit(ObserverEvent::FlowFinished(volley_protocol::FlowFinished {
            total: summary.total,
            succeeded: summary.succeeded,
            failed: summary.failed,
            duration_ms: summary.duration_ms,
        }));
    }
    Ok(Json(FlowFinished { flow_id: flow.id.clone(), summary }))
}

/// The query of `GET /flows`.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ListFlows {
    /// Only the flows of this session.
    session_id: Option<String>,
}

#[utoipa::path(get, path = "/flows", tag = "flows", params(ListFlows),
    responses((status = 200, body = FlowList, description = "The live flows, newest first"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub(crate) async fn list(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Query(query): Query<ListFlows>,
) -> Result<Json<FlowList>, ApiError> {
    access.require_full()?;
    Ok(Json(FlowList { flows: state.flows.list(query.session_id.as_deref()).await? }))
}

#[utoipa::path(get, path = "/flows/{id}/executions", tag = "flows", params(("id" = String, Path)),
    responses((status = 200, body = ExecutionList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "FLOW_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn executions(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<Json<ExecutionList>, ApiError> {
    own_flow(&access, &id)?;
    let flow = state.flows.peek(&id).await?.ok_or_else(|| ApiError::flow_not_found(&id))?;
    Ok(Json(ExecutionList { executions: flow.executions().await? }))
}

/// A scoped token reads only its own flow.
fn own_flow(access: &Access, id: &str) -> Result<(), ApiError> {
    match access.claims() {
        Some(claims) if claims.flow_id.as_deref() != Some(id) => {
            Err(ApiError::forbidden("the scoped token may only read executions of its own flow"))
        }
        _ => Ok(()),
    }
}

#[utoipa::path(get, path = "/flows/{id}/executions/{exec}", tag = "flows",
    params(("id" = String, Path), ("exec" = String, Path, description = "reqExecId")),
    responses((status = 200, body = StoredExecution), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "FLOW_NOT_FOUND, EXECUTION_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn execution(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path((id, exec)): Path<(String, String)>,
) -> Result<Json<StoredExecution>, ApiError> {
    own_flow(&access, &id)?;
    let flow = state.flows.peek(&id).await?.ok_or_else(|| ApiError::flow_not_found(&id))?;
    flow.execution(&exec).await?.map(Json).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::ExecutionNotFound,
            format!(
                "flow `{id}` has no execution `{exec}` (a flow keeps its last {} executions)",
                state.config.max_executions_per_flow
            ),
        )
    })
}

fn flow_emitter(state: &AppState, flow: &crate::flows::Flow) -> Emitter {
    Emitter {
        hub: state.hub.clone(),
        run_id: None,
        session_id: flow.session_id.clone(),
        flow_id: Some(flow.id.clone()),
        req_exec_id: None,
        sequence: flow.sequence(),
    }
}
