//! The `@assert` report of an execution: the `assertionReport` event's payload and the
//! `assertions` of the execute answers and of stored executions.
//!
//! Read leniently like the answers (see `answer.rs`): a count or span the client can
//! do without reads as its default, `expected`/`actual` as text whatever JSON they
//! are, and an outcome this version does not know as `invalid`; the `/doc` schema
//! still requires what the server always sends.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// The `@assert` checks of a request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AssertionReport {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub passed: bool,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub total: usize,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub failed: usize,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub checks: Vec<Check>,
}

/// One check: `outcome` is `passed`, `failed` (with `expected`/`actual`) or `invalid`
/// (with `message`/`hint`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Check {
    pub expression: String,
    #[serde(deserialize_with = "outcome")]
    pub outcome: CheckOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "text")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "text")]
    pub actual: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub span: SpanInfo,
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum CheckOutcome {
    Passed,
    Failed,
    /// The assertion could not be evaluated (a bad expression, an unknown function).
    Invalid,
}

/// Byte offsets in the `.http` text, and the 1-based line and column of `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SpanInfo {
    pub start: usize,
    pub end: usize,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub line: u32,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub column: u32,
}

/// An outcome, `invalid` when this version does not know it.
fn outcome<'de, D: Deserializer<'de>>(deserializer: D) -> Result<CheckOutcome, D::Error> {
    Ok(match String::deserialize(deserializer)?.as_str() {
        "passed" => CheckOutcome::Passed,
        "failed" => CheckOutcome::Failed,
        _ => CheckOutcome::Invalid,
    })
}

/// A value as text: strings as they are, other JSON as written, `null` as absent.
fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Null => None,
        Value::String(text) => Some(text),
        other => Some(other.to_string()),
    })
}
