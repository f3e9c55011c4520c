//! `/script` and `/test`: t-req runs the workspace's JavaScript, TypeScript and Python
//! scripts and test suites as server-side processes. Volley does not: running programs
//! of the workspace on behalf of a remote caller needs a sandbox (time, output and file
//! limits, no way out of the workspace, no token to reach back with) that this server
//! does not have. The listing routes answer that no runner is available; the run and
//! cancel routes answer `501 NOT_IMPLEMENTED` in the error shape of every route.

use axum::Json;
use axum::extract::{Extension, Path};
use http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;
use volley_protocol::ErrorCode;

use crate::auth::Access;
use crate::error::ApiError;
use crate::wire::ErrorBody;

/// `GET /script/runners` and `GET /test/frameworks`: none.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Runners {
    /// Always `null`.
    #[schema(value_type = Option<String>)]
    pub(crate) detected: Option<String>,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub(crate) options: Vec<serde_json::Value>,
}

fn not_implemented(what: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        ErrorCode::NotImplemented,
        format!("this server does not run {what}: it runs .http requests only (docs/protocol.md)"),
    )
}

fn none(access: &Access) -> Result<Json<Runners>, ApiError> {
    access.require_full()?;
    Ok(Json(Runners { detected: None, options: Vec::new() }))
}

#[utoipa::path(get, path = "/script/runners", tag = "runners",
    responses((status = 200, description = "No runner: this server does not run scripts", body = Runners),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub(crate) async fn script_runners(Extension(access): Extension<Access>) -> Result<Json<Runners>, ApiError> {
    none(&access)
}

#[utoipa::path(get, path = "/test/frameworks", tag = "runners",
    responses((status = 200, description = "No framework: this server does not run tests", body = Runners),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub(crate) async fn test_frameworks(Extension(access): Extension<Access>) -> Result<Json<Runners>, ApiError> {
    none(&access)
}

#[utoipa::path(post, path = "/script", tag = "runners",
    responses((status = 501, description = "NOT_IMPLEMENTED: this server does not run scripts", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub(crate) async fn run_script(Extension(access): Extension<Access>) -> ApiError {
    access.require_full().err().unwrap_or_else(|| not_implemented("scripts"))
}

#[utoipa::path(delete, path = "/script/{runId}", tag = "runners", params(("runId" = String, Path)),
    responses((status = 501, description = "NOT_IMPLEMENTED: this server does not run scripts", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub(crate) async fn cancel_script(Extension(access): Extension<Access>, Path(_run): Path<String>) -> ApiError {
    access.require_full().err().unwrap_or_else(|| not_implemented("scripts"))
}

#[utoipa::path(post, path = "/test", tag = "runners",
    responses((status = 501, description = "NOT_IMPLEMENTED: this server does not run test suites", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub(crate) async fn run_test(Extension(access): Extension<Access>) -> ApiError {
    access.require_full().err().unwrap_or_else(|| not_implemented("test suites"))
}

#[utoipa::path(delete, path = "/test/{runId}", tag = "runners", params(("runId" = String, Path)),
    responses((status = 501, description = "NOT_IMPLEMENTED: this server does not run test suites", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub(crate) async fn cancel_test(Extension(access): Extension<Access>, Path(_run): Path<String>) -> ApiError {
    access.require_full().err().unwrap_or_else(|| not_implemented("test suites"))
}
