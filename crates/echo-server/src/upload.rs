//! `/upload` describes each part of a `multipart/form-data` body.

use axum::Router;
use axum::extract::Multipart;
use axum::extract::multipart::MultipartRejection;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use crate::response;
use crate::state::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/upload", post(upload))
}

/// 200 `{"parts": [{"name", "filename", "content_type", "size", "text", "base64"}]}` in order;
/// `filename`, `content_type` and `text` (content not UTF-8) may be null. A request that is not
/// well-formed multipart: 400 `{"error": …}`.
async fn upload(multipart: Result<Multipart, MultipartRejection>) -> Response {
    let mut multipart = match multipart {
        Ok(multipart) => multipart,
        Err(rejection) => return response::bad_request(rejection.body_text()),
    };
    let mut parts: Vec<Value> = Vec::new();
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(error) => return response::bad_request(format!("malformed multipart body: {}", error.body_text())),
        };
        let name = field.name().map(str::to_owned);
        let filename = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(str::to_owned);
        let content = match field.bytes().await {
            Ok(content) => content,
            Err(error) => return response::bad_request(format!("malformed multipart body: {}", error.body_text())),
        };
        parts.push(json!({
            "name": name,
            "filename": filename,
            "content_type": content_type,
            "size": content.len(),
            "text": std::str::from_utf8(&content).ok(),
            "base64": BASE64.encode(&content),
        }));
    }
    response::json(StatusCode::OK, json!({"parts": parts}))
}
