//! The stable error codes of the API (`{"error": {"code", …}}`), of WebSocket session
//! envelopes (`session.error`) and of observer streams (`OBSERVER_LAGGED`).

use serde::{Deserialize, Serialize};

/// An error code, serialised as its SCREAMING name (`SESSION_NOT_FOUND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    ValidationError,
    ContentOrPathRequired,
    RequestIndexOutOfRange,
    NoRequestsFound,
    ParseError,
    ExecuteError,
    Unauthorized,
    Forbidden,
    PathOutsideWorkspace,
    SessionNotFound,
    FlowNotFound,
    ExecutionNotFound,
    RequestNotFound,
    FileNotFound,
    WsSessionNotFound,
    NotFound,
    MethodNotAllowed,
    PayloadTooLarge,
    ParseBudgetExceeded,
    SessionLimitReached,
    FlowLimitReached,
    WsSessionLimitReached,
    /// What a payload that names no code is read as.
    #[default]
    InternalError,
    /// An observer stream's subscriber fell behind; the stream ends.
    ObserverLagged,
    /// The upstream connection of a WebSocket session failed.
    WsUpstreamError,
    WsUpstreamNotOpen,
    WsSendFailed,
    WsInvalidJson,
    WsProtocolError,
    WsBinaryUnsupported,
    WsFrameTooLarge,
    WsReplayGap,
    /// A route of the protocol this server deliberately does not serve (`501`).
    NotImplemented,
    /// A file to create exists already (`409`).
    FileExists,
    /// A connection's request head or body stopped arriving (`408`, from the connection
    /// layer, not a route).
    RequestTimeout,
    /// A client address holds its share of the server's connections (`429`, from the
    /// connection layer, not a route).
    ConnectionLimitReached,
}

impl ErrorCode {
    /// Every code, in the order of the declaration.
    pub const ALL: [ErrorCode; 36] = [
        Self::ValidationError,
        Self::ContentOrPathRequired,
        Self::RequestIndexOutOfRange,
        Self::NoRequestsFound,
        Self::ParseError,
        Self::ExecuteError,
        Self::Unauthorized,
        Self::Forbidden,
        Self::PathOutsideWorkspace,
        Self::SessionNotFound,
        Self::FlowNotFound,
        Self::ExecutionNotFound,
        Self::RequestNotFound,
        Self::FileNotFound,
        Self::WsSessionNotFound,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::PayloadTooLarge,
        Self::ParseBudgetExceeded,
        Self::SessionLimitReached,
        Self::FlowLimitReached,
        Self::WsSessionLimitReached,
        Self::InternalError,
        Self::ObserverLagged,
        Self::WsUpstreamError,
        Self::WsUpstreamNotOpen,
        Self::WsSendFailed,
        Self::WsInvalidJson,
        Self::WsProtocolError,
        Self::WsBinaryUnsupported,
        Self::WsFrameTooLarge,
        Self::WsReplayGap,
        Self::NotImplemented,
        Self::FileExists,
        Self::RequestTimeout,
        Self::ConnectionLimitReached,
    ];

    /// The wire name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ValidationError => "VALIDATION_ERROR",
            Self::ContentOrPathRequired => "CONTENT_OR_PATH_REQUIRED",
            Self::RequestIndexOutOfRange => "REQUEST_INDEX_OUT_OF_RANGE",
            Self::NoRequestsFound => "NO_REQUESTS_FOUND",
            Self::ParseError => "PARSE_ERROR",
            Self::ExecuteError => "EXECUTE_ERROR",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::Forbidden => "FORBIDDEN",
            Self::PathOutsideWorkspace => "PATH_OUTSIDE_WORKSPACE",
            Self::SessionNotFound => "SESSION_NOT_FOUND",
            Self::FlowNotFound => "FLOW_NOT_FOUND",
            Self::ExecutionNotFound => "EXECUTION_NOT_FOUND",
            Self::RequestNotFound => "REQUEST_NOT_FOUND",
            Self::FileNotFound => "FILE_NOT_FOUND",
            Self::WsSessionNotFound => "WS_SESSION_NOT_FOUND",
            Self::NotFound => "NOT_FOUND",
            Self::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Self::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Self::ParseBudgetExceeded => "PARSE_BUDGET_EXCEEDED",
            Self::SessionLimitReached => "SESSION_LIMIT_REACHED",
            Self::FlowLimitReached => "FLOW_LIMIT_REACHED",
            Self::WsSessionLimitReached => "WS_SESSION_LIMIT_REACHED",
            Self::InternalError => "INTERNAL_ERROR",
            Self::ObserverLagged => "OBSERVER_LAGGED",
            Self::WsUpstreamError => "WS_UPSTREAM_ERROR",
            Self::WsUpstreamNotOpen => "WS_UPSTREAM_NOT_OPEN",
            Self::WsSendFailed => "WS_SEND_FAILED",
            Self::WsInvalidJson => "WS_INVALID_JSON",
            Self::WsProtocolError => "WS_PROTOCOL_ERROR",
            Self::WsBinaryUnsupported => "WS_BINARY_UNSUPPORTED",
            Self::WsFrameTooLarge => "WS_FRAME_TOO_LARGE",
            Self::WsReplayGap => "WS_REPLAY_GAP",
            Self::NotImplemented => "NOT_IMPLEMENTED",
            Self::FileExists => "FILE_EXISTS",
            Self::RequestTimeout => "REQUEST_TIMEOUT",
            Self::ConnectionLimitReached => "CONNECTION_LIMIT_REACHED",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A code equals its wire name.
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_serialises_as_its_wire_name_and_back() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(&code).expect("serialise");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            assert_eq!(serde_json::from_str::<ErrorCode>(&json).expect("deserialise"), code);
        }
        assert_eq!(ErrorCode::WsSessionNotFound.to_string(), "WS_SESSION_NOT_FOUND");
        assert_eq!(ErrorCode::RequestIndexOutOfRange.as_str(), "REQUEST_INDEX_OUT_OF_RANGE");
        assert_eq!(ErrorCode::FileNotFound, "FILE_NOT_FOUND");
    }
}
