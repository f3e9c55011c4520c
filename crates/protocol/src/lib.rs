//! The execution server's wire contract (docs/protocol.md) as types: observer events and
//! their envelope, the kinds of a WebSocket session's envelopes and the commands it
//! takes, error codes, execution statuses and stages, the execute request body and its
//! answers (`/execute`, `/execute/ws`), a stored execution, the assertion report. Types
//! only: no IO, no async. The server serialises them; the remote client (volley-remote)
//! and the terminal observer read (or write) them.

mod answer;
mod error;
mod event;
mod execute;
mod execution;
pub mod number;
mod report;
mod session;
mod stored;

pub use answer::{
    ExecuteResponse, ExecuteWsResponse, GrpcStatus, Header, Limits, RequestInfo, Resolved, ResponseInfo, SessionRef,
    TimingInfo, WsSessionInfo,
};
pub use error::ErrorCode;
pub use event::{
    AssertionSummary, AuthDeviceCode, Direction, Empty, ExecutionFailed, ExecutionFinished, FetchFinished,
    FlowFinished, FlowStarted, GrpcMessage, ObserverEnvelope, ObserverEvent, ParseFinished, ParseSource, ParseStarted,
    PayloadType, RequestLine, RequestQueued, SessionUpdated, WorkspaceFileChanged, WsSessionClosed, WsSessionMessage,
    WsSessionOpened,
};
pub use execute::ExecuteRequest;
pub use execution::{ExecutionStatus, Stage};
pub use report::{AssertionReport, Check, CheckOutcome, SpanInfo};
pub use session::{
    ReplayGap, SessionClosed, SessionCommand, SessionCommandKind, SessionEnvelopeKind, SessionError, SessionOpened,
    SessionReplayEnd,
};
pub use stored::{StageError, StoredExecution, StoredResponse};

#[cfg(test)]
mod tests;
