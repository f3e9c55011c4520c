//! An execution as a flow's store keeps it: the answer of
//! `GET /flows/{flowId}/executions/{reqExecId}`, which the server writes and the
//! terminal observer reads for its detail pane. Written and read like the execute
//! answer (see `answer.rs`): what the server always sends is required in `/doc` and
//! read with its default when missing.

use serde::{Deserialize, Serialize};

use crate::answer::{Word, encoding, utf_8};
use crate::{AssertionReport, ExecutionStatus, Header, Stage, TimingInfo};

/// An execution as the store keeps it (`GET /flows/{flowId}/executions/{reqExecId}`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StoredExecution {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub req_exec_id: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub flow_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub req_label: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub method: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub url_template: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub url_resolved: String,
    /// The request headers as sent, sensitive values redacted.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub headers: Vec<Header>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_preview: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub timing: TimingInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<StoredResponse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertions: Option<AssertionReport>,
    /// The `client.log` lines of the request's scripts, secrets redacted, the first
    /// 8 KiB of them (cut on a character boundary); left out when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
    /// The scripts logged more than `logs` holds; left out when they did not.
    #[serde(default, skip_serializing_if = "is_false")]
    pub logs_truncated: bool,
    /// `pending`, `running`, `success` or `failed` (an error, or a failed assertion).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub status: ExecutionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<StageError>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_false(value: &bool) -> bool {
    !*value
}

/// The response of a stored execution (its body cut at 8 KiB).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StoredResponse {
    // The one part a stored response cannot be read without.
    pub status: u16,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub status_text: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub headers: Vec<Header>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    // `utf-8` or `base64`, read as `utf-8` when absent (`utf8` too), refused when another word.
    #[serde(default = "utf_8", deserialize_with = "encoding")]
    #[cfg_attr(feature = "openapi", schema(required = true, value_type = String))]
    pub encoding: Word,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub truncated: bool,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub body_bytes: usize,
    /// How a gRPC call ended (absent for other requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<crate::GrpcStatus>,
}

/// Where an execution failed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StageError {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub stage: Stage,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub message: String,
    /// What ended it, in a word, as `executionFailed` says it (`timeout`,
    /// `connection_refused`, `undefined-variable`, …), when the error says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}
