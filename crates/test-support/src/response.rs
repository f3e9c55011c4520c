//! Small response builders shared by the route modules.

use axum::Json;
use axum::http::header::{HeaderName, LOCATION};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// `body` as `application/json` with `status`.
pub(crate) fn json(status: StatusCode, body: Value) -> Response {
    (status, Json(body)).into_response()
}

/// 400 `{"error": message}`.
pub(crate) fn bad_request(message: impl Into<String>) -> Response {
    json(StatusCode::BAD_REQUEST, json!({"error": message.into()}))
}

/// A redirect with `status` to `location` and an empty body; 400 when `location` cannot be a
/// header value.
pub(crate) fn redirect(status: StatusCode, location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(location) => (status, [(LOCATION, location)]).into_response(),
        Err(_) => bad_request(format!("invalid redirect location: {location:?}")),
    }
}

/// Appends `name: value` to `response`; 400 when `value` cannot be a header value.
pub(crate) fn with_header(mut response: Response, name: HeaderName, value: &str) -> Response {
    match HeaderValue::from_str(value) {
        Ok(value) => {
            response.headers_mut().append(name, value);
            response
        }
        Err(_) => bad_request(format!("invalid value for header {name}: {value:?}")),
    }
}
