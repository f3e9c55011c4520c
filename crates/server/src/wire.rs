//! The wire types of the API (PROTOCOL.md), with their `OpenAPI` schemas, and the JSON
//! extractor that turns every malformed body into the API's error shape.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use volley_protocol::ErrorCode;

use crate::error::ApiError;

/// The most keys a flow's `meta` holds.
pub(crate) const MAX_META_KEYS: usize = 10;

/// A flow's `meta` in the OpenAPI document: an object of at most [`MAX_META_KEYS`] keys,
/// or null (utoipa's field attributes have no `maxProperties`).
fn flow_meta() -> utoipa::openapi::schema::ObjectBuilder {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Object, Type::Null]))
        .max_properties(Some(MAX_META_KEYS))
        .description(Some("At most 10 keys."))
}

/// A JSON body; malformed JSON, wrong types and oversized bodies become API errors.
#[derive(Debug)]
pub(crate) struct ApiJson<T>(pub(crate) T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(json_rejection(&rejection)),
        }
    }
}

/// A JSON body that may be left out (an empty body, or `null`, is `T::default()`).
#[derive(Debug)]
pub(crate) struct OptionalJson<T>(pub(crate) T);

impl<T: DeserializeOwned + Default, S: Send + Sync> FromRequest<S> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = axum::body::Bytes::from_request(request, state).await.map_err(|rejection| {
            if rejection.status() == http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    http::StatusCode::PAYLOAD_TOO_LARGE,
                    ErrorCode::PayloadTooLarge,
                    "the request body is too large",
                )
            } else {
                ApiError::validation(rejection.body_text())
            }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self(T::default()));
        }
        serde_json::from_slice::<Option<T>>(&bytes)
            .map(|body| Self(body.unwrap_or_default()))
            .map_err(|error| ApiError::validation(format!("invalid JSON body: {error}")))
    }
}

fn json_rejection(rejection: &JsonRejection) -> ApiError {
    if rejection.status() == http::StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::new(
            http::StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            "the request body is too large",
        )
        .with_details(
            serde_json::json!({ "hint": "send a smaller body, or start the server with a larger --max-body-size" }),
        );
    }
    let message = match rejection {
        JsonRejection::MissingJsonContentType(_) => {
            "send the body as JSON with `Content-Type: application/json`".to_owned()
        }
        other => other.body_text(),
    };
    ApiError::validation(message)
}

pub(crate) use volley_protocol::ExecuteRequest;

/// The answer of `POST /execute` and its parts, shared with the remote client.
pub(crate) use volley_protocol::{
    ExecuteResponse, Header, Limits, RequestInfo, Resolved, ResponseInfo, SessionRef, TimingInfo,
};

/// The `@assert` report, shared with observers (the `assertionReport` event).
pub(crate) use volley_protocol::{AssertionReport, Check, SpanInfo};

/// `POST /session`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub(crate) struct CreateSession {
    #[schema(value_type = Option<Object>)]
    pub(crate) variables: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionCreated {
    pub(crate) session_id: String,
}

/// `GET /session/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionView {
    pub(crate) session_id: String,
    /// Secrets redacted.
    #[schema(value_type = Object)]
    pub(crate) variables: Map<String, Value>,
    pub(crate) cookie_count: usize,
    pub(crate) created_at: u64,
    pub(crate) last_used_at: u64,
    pub(crate) snapshot_version: u64,
}

/// `PUT /session/{id}/variables`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub(crate) struct UpdateVariables {
    #[schema(value_type = Object)]
    pub(crate) variables: Map<String, Value>,
    /// `merge` (default) or `replace`.
    pub(crate) mode: Option<VariablesMode>,
}

/// How `PUT /session/{id}/variables` applies its variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum VariablesMode {
    /// Set these, keep the others.
    Merge,
    /// These instead of all current ones.
    Replace,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VariablesUpdated {
    pub(crate) session_id: String,
    pub(crate) snapshot_version: u64,
}

/// `POST /flows`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateFlow {
    pub(crate) session_id: Option<String>,
    /// At most 256 characters.
    #[schema(max_length = 256)]
    pub(crate) label: Option<String>,
    /// At most 10 keys.
    #[schema(schema_with = flow_meta)]
    pub(crate) meta: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FlowCreated {
    pub(crate) flow_id: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FlowFinished {
    pub(crate) flow_id: String,
    pub(crate) summary: FlowSummary,
}

#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FlowSummary {
    pub(crate) total: u64,
    pub(crate) succeeded: u64,
    pub(crate) failed: u64,
    pub(crate) duration_ms: u64,
}

/// One flow of `GET /flows`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FlowListing {
    pub(crate) flow_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = flow_meta)]
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) created_at: u64,
    /// Counted so far (`durationMs` is the time since the flow began until it finishes).
    pub(crate) summary: FlowSummary,
    pub(crate) finished: bool,
}

/// `GET /flows`: the live flows, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct FlowList {
    pub(crate) flows: Vec<FlowListing>,
}

/// `GET /flows/{id}/executions`: a flow's stored executions, oldest first, without
/// bodies and logs (`GET /flows/{id}/executions/{reqExecId}` has them).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ExecutionList {
    pub(crate) executions: Vec<volley_protocol::StoredExecution>,
}

/// `POST /tokens`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateToken {
    pub(crate) flow_id: Option<String>,
    pub(crate) session_id: Option<String>,
    /// 1..86400000 ms (a day), default 900000 (15 min).
    #[schema(minimum = 1, maximum = 86_400_000)]
    #[serde(default, deserialize_with = "volley_protocol::number::optional_whole")]
    pub(crate) ttl_ms: Option<u64>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TokenCreated {
    pub(crate) token: String,
    pub(crate) jti: String,
    pub(crate) expires_at: u64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Health {
    pub(crate) healthy: bool,
    pub(crate) version: &'static str,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Capabilities {
    pub(crate) protocol_version: &'static str,
    pub(crate) version: &'static str,
    pub(crate) features: Features,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::struct_excessive_bools)] // The wire's feature flags.
pub(crate) struct Features {
    pub(crate) sessions: bool,
    pub(crate) diagnostics: bool,
    pub(crate) streaming_bodies: bool,
    pub(crate) observer_web_socket: bool,
    pub(crate) request_web_socket: bool,
    pub(crate) replay_buffer: bool,
    pub(crate) binary_payloads: bool,
}

/// The error body of every non-2xx answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    pub(crate) error: ErrorInfo,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct ErrorInfo {
    /// A stable code (`VALIDATION_ERROR`, `UNAUTHORIZED`, …).
    pub(crate) code: String,
    pub(crate) message: String,
    #[schema(value_type = Option<Object>)]
    pub(crate) details: Option<Value>,
}
