//! What an execution is doing (`status` of the execution store) and the stage an
//! execution fails at (`executionFailed`'s `stage`).

use serde::{Deserialize, Serialize};

/// The stages of an execution, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Reading and parsing the `.http` text, selecting the request.
    #[default]
    Parse,
    /// Substituting variables.
    Interpolate,
    /// Checking the request against the route, applying settings.
    Compile,
    /// Sending it and reading the answer.
    Fetch,
}

impl Stage {
    /// The wire name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Parse => "parse",
            Self::Interpolate => "interpolate",
            Self::Compile => "compile",
            Self::Fetch => "fetch",
        }
    }
}

/// The status of a stored execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ExecutionStatus {
    /// Queued, not started.
    #[default]
    Pending,
    /// Between parsing and the answer.
    Running,
    /// Answered, every assertion passed.
    Success,
    /// A stage failed, or an assertion did.
    Failed,
}

impl ExecutionStatus {
    /// The wire name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Success => "success",
            Self::Failed => "failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_and_statuses_are_their_lowercase_names() {
        for stage in [Stage::Parse, Stage::Interpolate, Stage::Compile, Stage::Fetch] {
            let json = serde_json::to_string(&stage).expect("serialise");
            assert_eq!(json, format!("\"{}\"", stage.as_str()));
            assert_eq!(serde_json::from_str::<Stage>(&json).expect("deserialise"), stage);
        }
        for status in
            [ExecutionStatus::Pending, ExecutionStatus::Running, ExecutionStatus::Success, ExecutionStatus::Failed]
        {
            let json = serde_json::to_string(&status).expect("serialise");
            assert_eq!(json, format!("\"{}\"", status.as_str()));
            assert_eq!(serde_json::from_str::<ExecutionStatus>(&json).expect("deserialise"), status);
        }
    }
}
