//! The body of `POST /execute`, `/execute/sse` and `/execute/ws`: what the server
//! reads and the remote client writes (fields left out when unset).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The fields that select and parameterise a request, read by the three execute routes;
/// the `OpenAPI` document gives each route its own fields (`openapi.rs`), and a route
/// checks only its own (another route's are unknown fields there, and ignored).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExecuteRequest {
    /// The `.http` text (exactly one of `content` and `path`), at most `--max-body-size`
    /// bytes (10 MiB by default; larger is 413).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// A `.http` file relative to the workspace (exactly one of `content` and `path`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// With `content` only: where `< file` references and the configuration are found,
    /// relative to the workspace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_path: Option<String>,
    /// The request named so (`# @name` or `### Name`); not with `requestIndex`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_name: Option<String>,
    /// The request at this 0-based position (default 0); not with `requestName`.
    #[serde(default, deserialize_with = "crate::number::optional_whole", skip_serializing_if = "Option::is_none")]
    pub request_index: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<String>,
    /// A configuration profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Variables of this execution (above the session's).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<Map<String, Value>>,
    /// A label shown to observers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub req_label: Option<String>,
    /// Request timeout, 100..300000 ms.
    #[cfg_attr(feature = "openapi", schema(minimum = 100, maximum = 300_000))]
    #[serde(default, deserialize_with = "crate::number::optional_whole", skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow_redirects: Option<bool>,
    #[serde(rename = "validateSSL", skip_serializing_if = "Option::is_none")]
    pub validate_ssl: Option<bool>,
    /// `/execute/sse` only: connection timeout, 100..300000 ms (default 30000).
    #[cfg_attr(feature = "openapi", schema(minimum = 100, maximum = 300_000))]
    #[serde(default, deserialize_with = "crate::number::optional_whole", skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// `/execute/sse` only: sent as `Last-Event-ID` (no control characters but tab).
    #[cfg_attr(feature = "openapi", schema(pattern = "^[^\\u0000-\\u0008\\u000A-\\u001F\\u007F]*$"))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_event_id: Option<String>,
    /// `/execute/ws` only: upstream connect timeout, 100..300000 ms (default: the
    /// definition's `@ws-connect-timeout`, else 30000).
    #[cfg_attr(feature = "openapi", schema(minimum = 100, maximum = 300_000))]
    #[serde(default, deserialize_with = "crate::number::optional_whole", skip_serializing_if = "Option::is_none")]
    pub connect_timeout_ms: Option<u64>,
    /// `/execute/ws` only: the session closes after this long without traffic,
    /// 100..86400000 ms (default 300000).
    #[cfg_attr(feature = "openapi", schema(minimum = 100, maximum = 86_400_000))]
    #[serde(default, deserialize_with = "crate::number::optional_whole", skip_serializing_if = "Option::is_none")]
    pub idle_timeout_ms: Option<u64>,
    /// `/execute/ws` only: envelopes kept for replay, 1..5000 (default 500).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 5000))]
    #[serde(default, deserialize_with = "crate::number::optional_whole", skip_serializing_if = "Option::is_none")]
    pub replay_buffer_size: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_writes_only_its_fields_and_reads_back() {
        let text = r#"{"content":"GET http://x/\n","basePath":"api","requestName":"login","sessionId":"ses_1","flowId":"flow_1","variables":{"user":"ada"},"timeoutMs":5000,"validateSSL":false}"#;
        let body: ExecuteRequest = serde_json::from_str(text).expect("reads");
        assert_eq!(body.validate_ssl, Some(false));
        assert_eq!(body.request_index, None);
        assert_eq!(serde_json::to_string(&body).expect("writes"), text);
        let ws: ExecuteRequest =
            serde_json::from_str(r#"{"path":"chat.http","requestIndex":2,"connectTimeoutMs":100,"idleTimeoutMs":86400000,"replayBufferSize":5000}"#)
                .expect("reads");
        assert_eq!((ws.request_index, ws.replay_buffer_size), (Some(2), Some(5000)));
        assert_eq!(serde_json::to_string(&ExecuteRequest::default()).expect("writes"), "{}");
    }
}
