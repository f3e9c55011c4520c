//! The one error type of the API: every non-2xx response is
//! `{"error": {"code", "message", "details"?}}` with a stable code. Internals go to the
//! log, never to the client.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};
use volley_protocol::ErrorCode;

/// An error answered to a client.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
    pub(crate) details: Option<Value>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), details: None }
    }

    pub(crate) fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// `503`: the shared store (Redis, with `--redis`) could not be asked.
    pub(crate) fn store_unavailable() -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, ErrorCode::InternalError, "the shared store (Redis) is unavailable")
            .with_details(json!({ "hint": "check that redis-server is running and reachable from every instance" }))
    }

    /// `503`: the execution ran (its request may have been sent), but what it stored
    /// did not reach the shared store: its flow does not hold it, or not as it ended.
    pub(crate) fn not_stored(req_exec_id: &str, flow_id: &str, lost_writes: usize) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::InternalError,
            "the execution ran, but the shared store (Redis) did not take its stored state: its flow may miss it",
        )
        .with_details(json!({
            "kind": "not_stored",
            "reqExecId": req_exec_id,
            "flowId": flow_id,
            "writes": lost_writes,
            "hint": "check that redis-server is running and reachable from every instance; the request itself may have been sent",
        }))
    }

    pub(crate) fn validation(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::ValidationError, message)
    }

    pub(crate) fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "missing or invalid bearer token: send `Authorization: Bearer <token>`",
        )
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, ErrorCode::Forbidden, message)
    }

    pub(crate) fn outside_workspace(path: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, ErrorCode::PathOutsideWorkspace, format!("`{path}` is outside the workspace"))
    }

    pub(crate) fn session_not_found(id: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, ErrorCode::SessionNotFound, format!("no session `{id}` (it may have expired)"))
    }

    pub(crate) fn flow_not_found(id: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, ErrorCode::FlowNotFound, format!("no flow `{id}` (it may have expired)"))
    }

    /// A request body over the server's limit.
    pub(crate) fn payload_too_large(message: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::PayloadTooLarge, message)
            .with_details(json!({ "hint": "send a smaller body, or start the server with a larger --max-body-size" }))
    }

    pub(crate) fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, ErrorCode::NotFound, "no such route")
    }

    /// Something went wrong inside: logged with its cause, answered without it.
    pub(crate) fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!("internal error: {cause}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::InternalError,
            "internal error (details are in the server log)",
        )
    }

    /// The JSON body.
    pub(crate) fn body(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(details) = &self.details {
            error["details"] = details.clone();
        }
        json!({ "error": error })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::warn!(code = self.code.as_str(), "{}", self.message);
        } else {
            tracing::debug!(code = self.code.as_str(), status = self.status.as_u16(), "{}", self.message);
        }
        (self.status, axum::Json(self.body())).into_response()
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.code, self.message)
    }
}
