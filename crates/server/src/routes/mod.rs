//! The router: every route registered in one place, the layers around them (CORS,
//! authentication, body limits) and the fallbacks that keep the error shape.

mod discovery;
mod events;
mod execute;
mod flows;
mod import;
pub(crate) mod openapi;
mod parse;
mod project;
mod runners;
mod sessions;
mod tokens;
mod ui;
mod workspace;
mod ws;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse as _, Response};
use axum::routing::{delete, get, post, put};
use http::{HeaderValue, Method, StatusCode, header};
use tower_http::cors::{AllowOrigin, CorsLayer};
use volley_protocol::ErrorCode;

use crate::auth;
use crate::error::ApiError;
use crate::state::AppState;

pub(crate) use discovery::ApiDoc;
#[cfg(feature = "fuzzing")]
pub(crate) use parse::{ParseRequest, describe};
#[cfg(feature = "fuzzing")]
pub(crate) use workspace::parse as workspace_parse;

/// Room for the JSON around a `content` of the largest accepted size.
const ENVELOPE_SLACK: usize = 1024 * 1024;

pub(crate) fn router(state: AppState) -> Router {
    let limit = state.config.max_body_size.saturating_add(ENVELOPE_SLACK);
    let cors = cors(&state.config.cors);
    Router::new()
        .route("/health", get(discovery::health))
        .route("/capabilities", get(discovery::capabilities))
        .route("/doc", get(discovery::doc))
        .route("/execute", post(execute::execute))
        .route("/execute/sse", post(execute::execute_sse))
        .route("/execute/ws", post(ws::execute_ws))
        .route("/ws/session/{id}", get(ws::session_socket).delete(ws::close_session))
        .route("/event/ws", get(ws::observe))
        .route("/session", post(sessions::create))
        .route("/session/{id}", get(sessions::view).delete(sessions::remove))
        .route("/session/{id}/variables", put(sessions::update_variables))
        .route("/flows", post(flows::create).get(flows::list))
        .route("/flows/{id}/finish", post(flows::finish))
        .route("/flows/{id}/executions", get(flows::executions))
        .route("/flows/{id}/executions/{exec}", get(flows::execution))
        .route("/event", get(events::subscribe))
        .route("/tokens", post(tokens::create))
        .route("/tokens/{jti}", delete(tokens::revoke))
        .route("/config", get(project::config))
        .route("/plugins", get(project::plugins))
        .route("/parse", post(parse::parse))
        .route("/workspace/files", get(workspace::files))
        .route("/workspace/requests", get(workspace::requests))
        .route(
            "/workspace/file",
            get(workspace::read).post(workspace::create).put(workspace::update).delete(workspace::remove),
        )
        .route("/import/{source}/preview", post(import::preview))
        .route("/import/{source}/apply", post(import::apply))
        .route("/script", post(runners::run_script))
        .route("/script/runners", get(runners::script_runners))
        .route("/script/{run_id}", delete(runners::cancel_script))
        .route("/test", post(runners::run_test))
        .route("/test/frameworks", get(runners::test_frameworks))
        .route("/test/{run_id}", delete(runners::cancel_test))
        .fallback(|| async { ApiError::not_found() })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                ErrorCode::MethodNotAllowed,
                "the route does not take this method",
            )
        })
        .layer(middleware::from_fn_with_state(state.clone(), auth::authenticate))
        // After the authentication layer, so outside it: the page holds no data.
        .merge(ui::router())
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn(move |request, next| refuse_announced_over(limit, request, next)))
        // Outermost: preflight requests are answered before authentication.
        .layer(cors)
        .with_state(state)
}

/// A body whose `Content-Length` is over the limit is refused before a byte of it is
/// read (the connection then closes: `connections/service.rs`).
async fn refuse_announced_over(limit: usize, request: Request, next: Next) -> Response {
    let announced = request.headers().get(header::CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse().ok());
    if let Some(length) = announced.filter(|length: &u64| *length > u64::try_from(limit).unwrap_or(u64::MAX)) {
        return ApiError::payload_too_large(format!(
            "the request announces a body of {length} bytes, more than the {limit} this server reads"
        ))
        .into_response();
    }
    next.run(request).await
}

/// `http://localhost:*`, `http://127.0.0.1:*` and the configured origins.
fn cors(extra: &[String]) -> CorsLayer {
    let extra: Vec<String> = extra.iter().map(|origin| origin.trim_end_matches('/').to_owned()).collect();
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin: &HeaderValue, _| {
            let Ok(origin) = origin.to_str() else { return false };
            is_local_origin(origin) || extra.iter().any(|allowed| allowed == origin)
        }))
        .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
        .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE, header::HeaderName::from_static("last-event-id")])
        .expose_headers([
            header::HeaderName::from_static("x-volley-upstream-status"),
            header::HeaderName::from_static("x-volley-upstream-url"),
            header::HeaderName::from_static("x-volley-run-id"),
            header::HeaderName::from_static("x-volley-req-exec-id"),
        ])
}

fn is_local_origin(origin: &str) -> bool {
    ["http://localhost", "http://127.0.0.1", "http://[::1]"].iter().any(|host| {
        origin.strip_prefix(host).is_some_and(|rest| {
            rest.is_empty()
                || rest
                    .strip_prefix(':')
                    .is_some_and(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::is_local_origin;

    #[test]
    fn local_origins() {
        for origin in ["http://localhost", "http://localhost:3000", "http://127.0.0.1:8080", "http://[::1]:5173"] {
            assert!(is_local_origin(origin), "{origin}");
        }
        for origin in [
            "https://localhost:3000",
            "http://localhost.evil.com",
            "http://localhost:",
            "http://127.0.0.1:80x",
            "http://evil.com",
        ] {
            assert!(!is_local_origin(origin), "{origin}");
        }
    }
}
