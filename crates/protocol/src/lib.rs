//! The execution server's wire contract (docs/protocol.md) as types: observer events and
//! their envelope, the WebSocket session envelopes both ways, error codes, execution
//! statuses and stages, and the assertion report. Types only: no IO, no async. The
//! server serialises them; the engine's remote client and the terminal observer read them.

mod error;
mod event;
mod execution;
mod report;
mod session;

pub use error::ErrorCode;
pub use event::{
    AssertionSummary, Direction, Empty, ExecutionFailed, ExecutionFinished, FetchFinished, FlowFinished, FlowStarted,
    ObserverEnvelope, ObserverEvent, ParseFinished, ParseSource, ParseStarted, PayloadType, RequestLine, RequestQueued,
    SessionUpdated, WsSessionClosed, WsSessionMessage, WsSessionOpened,
};
pub use execution::{ExecutionStatus, Stage};
pub use report::{AssertionReport, Check, CheckOutcome, SpanInfo};
pub use session::{SessionCommand, SessionCommandKind, SessionEnvelopeKind};

#[cfg(test)]
mod tests;
