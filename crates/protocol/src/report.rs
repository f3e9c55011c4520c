//! The `@assert` report of an execution: the `assertionReport` event's payload and the
//! `assertions` of the execute answers and of stored executions.

use serde::{Deserialize, Serialize};

/// The `@assert` checks of a request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AssertionReport {
    pub passed: bool,
    pub total: usize,
    pub failed: usize,
    pub checks: Vec<Check>,
}

/// One check: `outcome` is `passed`, `failed` (with `expected`/`actual`) or `invalid`
/// (with `message`/`hint`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Check {
    pub expression: String,
    pub outcome: CheckOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
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
    pub line: u32,
    pub column: u32,
}
