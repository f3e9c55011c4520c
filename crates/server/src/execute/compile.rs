//! The compile stage: the prepared request checked against the route it came by
//! (`/execute`, `/execute/sse`, `/execute/ws`) and given the route's settings.

use http::StatusCode;
use serde_json::json;
use volley_engine::stages::{Exchange, PreparedRequest};
use volley_protocol::ErrorCode;

use super::Route;
use crate::error::ApiError;
use crate::wire::ExecuteRequest;

/// Checks the prepared request against the route and applies its settings.
pub(super) fn compile(prepared: &mut PreparedRequest, body: &ExecuteRequest, route: Route) -> Result<(), ApiError> {
    match (&prepared.exchange, route) {
        (Exchange::Http | Exchange::Grpc(_), Route::Execute) | (Exchange::Grpc(_), Route::EventStream) => Ok(()),
        (Exchange::EventStream, Route::Execute) => Err(ApiError::validation(
            "the request is a Server-Sent Events request (`@sse` or `Accept: text/event-stream`): use POST /execute/sse",
        )),
        (Exchange::WebSocket { .. }, Route::Execute) => {
            Err(ApiError::validation("the request is a WebSocket request: use POST /execute/ws"))
        }
        (Exchange::EventStream, Route::EventStream) => {
            if let Some(id) = &body.last_event_id {
                let value = http::HeaderValue::from_str(id)
                    .map_err(|_| ApiError::validation("`lastEventId` contains a control character"))?;
                prepared.headers.insert("last-event-id", value);
            }
            if let Some(timeout) = body.timeout {
                prepared.timeout = std::time::Duration::from_millis(timeout);
            }
            Ok(())
        }
        (Exchange::WebSocket { messages, .. }, Route::WebSocket) => {
            if !messages.is_empty() {
                // SPEC.md: a definition with a body is a validation error here.
                return Err(ApiError::validation(
                    "a WebSocket definition sent to POST /execute/ws cannot have a body: send its messages on the \
                     session socket (`/ws/session/{id}`) once connected",
                )
                .with_details(json!({
                    "code": "websocket-body",
                    "hint": "remove the body from the definition; `volley run --server` sends a definition's messages \
                             on the session socket itself",
                })));
            }
            if prepared.method != http::Method::GET {
                return Err(ApiError::validation(format!(
                    "a WebSocket handshake is a GET, not {}: write `GET ws://…` or `WEBSOCKET ws://…`",
                    prepared.method
                )));
            }
            if let Some(timeout) = body.connect_timeout_ms {
                prepared.timeout = std::time::Duration::from_millis(timeout);
            }
            Ok(())
        }
        (_, Route::WebSocket) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::ExecuteError,
            "the request is not a WebSocket request: mark it `# @ws`, write `WEBSOCKET url`, or use a ws:// URL",
        )
        .with_details(json!({ "kind": "not_websocket" }))),
        (_, Route::EventStream) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::ExecuteError,
            "the request is neither a Server-Sent Events request nor a gRPC call: mark it `# @sse` or send `Accept: \
             text/event-stream`",
        )
        .with_details(json!({ "kind": "not_event_stream" }))),
    }
}
