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

/// `code` as a status a route may answer with (200–599; hyper cannot send a 1xx as the
/// final response), or what is wrong with it.
pub(crate) fn final_status(code: &str) -> Result<StatusCode, String> {
    code.parse::<u16>()
        .ok()
        .filter(|code| (200..=599).contains(code))
        .and_then(|code| StatusCode::from_u16(code).ok())
        .ok_or_else(|| format!("invalid status code: {code:?}"))
}

/// `status` with `body`, or no body for the statuses that have none (204, 205, 304).
pub(crate) fn json_unless_bodiless(status: StatusCode, body: Value) -> Response {
    match status {
        StatusCode::NO_CONTENT | StatusCode::RESET_CONTENT | StatusCode::NOT_MODIFIED => {
            (status, axum::body::Body::empty()).into_response()
        }
        _ => json(status, body),
    }
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
