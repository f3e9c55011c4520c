//! `/health`, `/capabilities` and `/doc` (the `OpenAPI` document, generated from the
//! route annotations).

use axum::Json;
use axum::extract::{Extension, State};
use utoipa::OpenApi;

use crate::auth::Access;
use crate::error::ApiError;
use crate::routes::openapi::Constraints;
use crate::state::AppState;
use crate::wire::{Capabilities, Features, Health};

/// The server's version.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The protocol this server speaks.
pub(crate) const PROTOCOL_VERSION: &str = "1.1";

#[utoipa::path(get, path = "/health", tag = "discovery",
    responses((status = 200, body = Health), (status = 401, body = crate::wire::ErrorBody)))]
pub(crate) async fn health() -> Json<Health> {
    Json(Health { healthy: true, version: VERSION })
}

#[utoipa::path(get, path = "/capabilities", tag = "discovery",
    responses((status = 200, body = Capabilities), (status = 401, body = crate::wire::ErrorBody)))]
pub(crate) async fn capabilities() -> Json<Capabilities> {
    Json(Capabilities {
        protocol_version: PROTOCOL_VERSION,
        version: VERSION,
        features: Features {
            sessions: true,
            diagnostics: true,
            streaming_bodies: false,
            observer_web_socket: true,
            request_web_socket: true,
            replay_buffer: true,
            binary_payloads: false,
        },
    })
}

#[utoipa::path(get, path = "/doc", tag = "discovery",
    responses((status = 200, description = "This OpenAPI 3 document"), (status = 403, body = crate::wire::ErrorBody)))]
pub(crate) async fn doc(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
) -> Result<Json<utoipa::openapi::OpenApi>, ApiError> {
    access.require_full()?;
    Ok(Json(crate::routes::openapi::document(state.config.token.is_some(), state.config.redis.is_some())))
}

/// The `OpenAPI` document of every route, before `openapi::document` fits it to the
/// server's authentication.
#[derive(OpenApi)]
#[openapi(
    info(title = "Volley execution server", description = "Runs .http request definitions for remote clients and streams events to observers (protocol 1.1)."),
    paths(
        health,
        capabilities,
        doc,
        super::execute::execute,
        super::execute::execute_sse,
        super::ws::execute_ws,
        super::ws::session_socket,
        super::ws::close_session,
        super::ws::observe,
        super::sessions::create,
        super::sessions::view,
        super::sessions::remove,
        super::sessions::update_variables,
        super::flows::create,
        super::flows::finish,
        super::flows::list,
        super::flows::executions,
        super::flows::execution,
        super::events::subscribe,
        super::tokens::create,
        super::tokens::revoke,
        super::project::config,
        super::project::plugins,
        super::parse::parse,
        super::workspace::files,
        super::workspace::requests,
        super::workspace::read,
        super::workspace::create,
        super::workspace::update,
        super::workspace::remove,
        super::import::preview,
        super::import::apply,
        super::runners::run_script,
        super::runners::script_runners,
        super::runners::cancel_script,
        super::runners::run_test,
        super::runners::test_frameworks,
        super::runners::cancel_test,
    ),
    modifiers(&Constraints)
)]
pub(crate) struct ApiDoc;
