//! Checks the fields of an execution, applies the scope of the caller's token, finds
//! the session and flow, and reads the `.http` text from `content` or `path`.

use std::path::PathBuf;
use std::sync::Arc;

use http::StatusCode;
use serde_json::json;
use volley_protocol::ErrorCode;

use super::Route;
use crate::auth::Access;
use crate::error::ApiError;
use crate::flows::Flow;
use crate::sessions::Session;
use crate::state::AppState;
use crate::wire::ExecuteRequest;

/// Shortest and longest `timeoutMs` (and `timeout`, `connectTimeoutMs`).
pub(crate) const TIMEOUT_RANGE_MS: std::ops::RangeInclusive<u64> = 100..=300_000;
/// Shortest and longest `idleTimeoutMs` of a WebSocket session.
pub(crate) const IDLE_TIMEOUT_RANGE_MS: std::ops::RangeInclusive<u64> = 100..=86_400_000;

/// The `.http` text of an execution and where it lives.
#[derive(Debug)]
pub(crate) struct Source {
    pub(crate) text: String,
    /// The file, for `path`.
    pub(crate) http_file: Option<PathBuf>,
    /// Where references and configuration are found.
    pub(crate) base: PathBuf,
}

impl Source {
    /// The path the engine is told the text comes from (its parent is `base`).
    pub(crate) fn engine_path(&self) -> PathBuf {
        self.http_file.clone().unwrap_or_else(|| self.base.join("(content).http"))
    }
}

/// The session and flow an execution runs in.
pub(crate) type Scope = (Option<Arc<Session>>, Option<Arc<Flow>>);

/// Checks what can be checked without reading anything: the fields every execute route
/// takes, and those of `route` (another route's fields are ignored, as unknown ones are).
/// The `OpenAPI` document states the same rules (`routes/openapi.rs`).
pub(crate) fn validate(body: &ExecuteRequest, max_body_size: usize, route: Route) -> Result<(), ApiError> {
    match (&body.content, &body.path) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                ErrorCode::ContentOrPathRequired,
                "send exactly one of `content` (the .http text) and `path` (a file in the workspace)",
            ));
        }
        (Some(content), None) if content.len() > max_body_size => {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::PayloadTooLarge,
                format!("`content` has {} bytes, more than the {max_body_size} this server accepts", content.len()),
            ));
        }
        (None, Some(_)) if body.base_path.is_some() => {
            return Err(ApiError::validation("`basePath` goes with `content`; a `path` has its own directory"));
        }
        _ => {}
    }
    if body.request_name.is_some() && body.request_index.is_some() {
        return Err(ApiError::validation("send `requestName` or `requestIndex`, not both"));
    }
    if let Some(timeout) = body.timeout_ms
        && !TIMEOUT_RANGE_MS.contains(&timeout)
    {
        return Err(ApiError::validation(format!("`timeoutMs` must be between 100 and 300000, not {timeout}")));
    }
    match route {
        Route::Execute => {}
        Route::EventStream => {
            if body.timeout.is_some_and(|timeout| !TIMEOUT_RANGE_MS.contains(&timeout)) {
                return Err(ApiError::validation("`timeout` must be between 100 and 300000"));
            }
            if body.last_event_id.as_deref().is_some_and(|id| http::HeaderValue::from_str(id).is_err()) {
                return Err(ApiError::validation("`lastEventId` contains a control character"));
            }
        }
        Route::WebSocket => {
            if body.connect_timeout_ms.is_some_and(|timeout| !TIMEOUT_RANGE_MS.contains(&timeout)) {
                return Err(ApiError::validation("`connectTimeoutMs` must be between 100 and 300000"));
            }
            if body.idle_timeout_ms.is_some_and(|idle| !IDLE_TIMEOUT_RANGE_MS.contains(&idle)) {
                return Err(ApiError::validation("`idleTimeoutMs` must be between 100 and 86400000"));
            }
            if let Some(replay) = body.replay_buffer_size
                && !(1..=crate::ws::MAX_REPLAY as u64).contains(&replay)
            {
                return Err(ApiError::validation(format!(
                    "`replayBufferSize` must be between 1 and {}, not {replay}",
                    crate::ws::MAX_REPLAY
                )));
            }
        }
    }
    Ok(())
}

/// The session and flow of an execution after the token's scope: a scoped token runs
/// only inside its own flow or session, and fills in the ids the body leaves out.
pub(crate) async fn scope(state: &AppState, access: &Access, body: &ExecuteRequest) -> Result<Scope, ApiError> {
    let mut flow_id = body.flow_id.clone();
    let mut session_id = body.session_id.clone();
    if let Some(claims) = access.claims() {
        if flow_id.is_none() {
            flow_id.clone_from(&claims.flow_id);
        }
        if session_id.is_none() {
            session_id.clone_from(&claims.session_id);
        }
        let flow_ok = claims.flow_id.is_none() || claims.flow_id == flow_id;
        let session_ok = claims.session_id.is_none() || claims.session_id == session_id;
        if !flow_ok || !session_ok {
            return Err(ApiError::forbidden("the scoped token may only execute in its own flow and session"));
        }
    }
    let flow = match flow_id.as_deref() {
        Some(id) => Some(state.flows.get(id).await?),
        None => None,
    };
    // Before the flow's session is compared with the body's: a scoped token must not
    // learn which session owns a flow outside its scope.
    if let (Some(claims), Some(flow)) = (access.claims(), &flow)
        && claims.flow_id.is_none()
        && flow.session_id != claims.session_id
    {
        return Err(ApiError::forbidden("the scoped token may only execute in flows of its own session"));
    }
    if let Some(flow) = &flow {
        match (&session_id, &flow.session_id) {
            (None, Some(own)) => session_id = Some(own.clone()),
            (Some(given), Some(own)) if given != own => {
                return Err(ApiError::validation(format!(
                    "flow `{}` belongs to session `{own}`, not `{given}`",
                    flow.id
                ))
                .with_details(json!({ "flowId": flow.id, "sessionId": own })));
            }
            _ => {}
        }
    }
    if access.claims().is_some() && flow.is_none() && session_id.is_none() {
        return Err(ApiError::forbidden("a scoped token executes only inside its flow or session"));
    }
    let session = match session_id.as_deref() {
        Some(id) => Some(state.sessions.get(id).await?),
        None => None,
    };
    Ok((session, flow))
}

/// Reads the text to run.
pub(crate) fn read(state: &AppState, body: &ExecuteRequest) -> Result<Source, ApiError> {
    let workspace = &state.workspace;
    if let Some(path) = &body.path {
        let file = workspace.resolve(path)?;
        let bytes = std::fs::read(&file).map_err(|error| {
            tracing::warn!(path = %file.display(), "cannot read: {error}");
            ApiError::new(StatusCode::NOT_FOUND, ErrorCode::FileNotFound, format!("cannot read `{path}`"))
        })?;
        let text = String::from_utf8(bytes).map_err(|_| ApiError::validation(format!("`{path}` is not UTF-8 text")))?;
        let base = file.parent().map_or_else(|| workspace.root.clone(), std::path::Path::to_path_buf);
        return Ok(Source { text, http_file: Some(file), base });
    }
    let base = match body.base_path.as_deref().filter(|path| !path.is_empty() && *path != ".") {
        Some(relative) => {
            let base = workspace.resolve(relative)?;
            if !base.is_dir() {
                return Err(ApiError::validation(format!("`basePath` `{relative}` is not a directory")));
            }
            base
        }
        None => workspace.root.clone(),
    };
    Ok(Source { text: body.content.clone().unwrap_or_default(), http_file: None, base })
}
