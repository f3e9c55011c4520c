//! A request of the run as JSON: one line of `--json` output, one entry of the JSON
//! report. The exchange, its assertions' places, the errors' kinds and places and the
//! places of the reasons a request is refused come from the engine's result model
//! (`volley_engine::report`), redacted by its policy: this maps fields.

use serde::Serialize;
use volley_engine::assert::{Outcome as Check, Place};
use volley_engine::report::{BodySummary, Exchange, PlacedAssertion, PlacedDiagnostic};

use super::outcome::{Outcome, RequestResult};
use super::select::File;

/// One request and what came of it. The shape is documented in docs/cli.md.
#[derive(Debug, Serialize)]
pub(crate) struct Record {
    #[serde(rename = "type")]
    kind: &'static str,
    file: String,
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    /// For a request without a name: its method and URL as written, which reports
    /// show as its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    /// The text of the request's `# @description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    line: u32,
    /// `passed`, `failed` (an assertion), `error` (no response: not sent, or the
    /// exchange failed) or `skipped`.
    outcome: &'static str,
    /// Why a request was skipped: `disabled`, `declined`, `stopped` or `not-sent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request: Option<SentRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<ResponseRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timing: Option<TimingRecord>,
    assertions: Vec<AssertionRecord>,
    /// What the request's scripts logged (`client.log`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    logs: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorRecord>,
    /// An event stream's or a WebSocket's summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<super::stream::StreamSummary>,
    /// How many times it was sent (`--retry`), when more than once.
    #[serde(skip_serializing_if = "is_one")]
    attempts: u32,
    /// Which run of the selection (`--repeat`, from 1), when it ran more than once.
    #[serde(skip_serializing_if = "Option::is_none")]
    repetition: Option<u32>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_one(value: &u32) -> bool {
    *value == 1
}

#[derive(Debug, Serialize)]
struct SentRecord {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    #[serde(flatten)]
    body: BodyRecord,
}

#[derive(Debug, Serialize)]
struct ResponseRecord {
    status: u16,
    status_text: &'static str,
    http_version: String,
    url: String,
    redirected: bool,
    headers: Vec<(String, String)>,
    #[serde(flatten)]
    body: BodyRecord,
    /// How a gRPC call ended (its body is then the messages, one JSON text per line).
    #[serde(skip_serializing_if = "Option::is_none")]
    grpc: Option<GrpcRecord>,
}

#[derive(Debug, Serialize)]
struct GrpcRecord {
    code: String,
    number: u32,
    message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    details: Vec<serde_json::Value>,
    kind: &'static str,
    messages: usize,
}

/// A body as text when it is UTF-8, else in base64.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum BodyRecord {
    Text { body: String },
    Binary { body_base64: String },
}

#[derive(Debug, Serialize)]
struct TimingRecord {
    ttfb_ms: f64,
    total_ms: f64,
}

#[derive(Debug, Serialize)]
pub(crate) struct AssertionRecord {
    pub(crate) expression: String,
    /// Which check did not pass, when it was not an `# @assert`: `test` (a script's
    /// `client.test`) or `handler` (a response handler threw). Reports name failures
    /// by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<&'static str>,
    pub(crate) line: u32,
    pub(crate) column: u32,
    /// `passed`, `failed` or `invalid`.
    pub(crate) outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) actual: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ErrorRecord {
    pub(crate) code: String,
    pub(crate) message: String,
    pub(crate) line: u32,
    pub(crate) column: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hint: Option<String>,
}

pub(crate) fn record(result: &RequestResult, file: &File) -> Record {
    let mut record = Record {
        kind: "request",
        file: result.file.clone(),
        index: result.index,
        name: result.name.clone(),
        title: result.name.is_none().then(|| result.title.clone()),
        description: result.description.clone(),
        line: result.line_span.start_position.line + 1,
        outcome: outcome_name(result),
        reason: match &result.outcome {
            Outcome::Skipped(why) => Some(why.name()),
            _ => None,
        },
        request: None,
        response: None,
        timing: None,
        assertions: Vec::new(),
        logs: Vec::new(),
        error: None,
        stream: result.stream.clone(),
        attempts: result.attempts,
        repetition: result.repetition,
    };
    match &result.outcome {
        Outcome::Skipped(_) => {}
        Outcome::Error(_) | Outcome::Refused(_) => record.error = error_record(result, file),
        Outcome::Response { response, .. } => {
            record.error = error_record(result, file);
            let Exchange { request: sent, response: received, timing, assertions, logs } =
                Exchange::new(response, &file.text);
            record.request =
                Some(SentRecord { method: sent.method, url: sent.url, headers: sent.headers, body: body(sent.body) });
            record.response = Some(ResponseRecord {
                status: received.status,
                status_text: received.status_text,
                http_version: received.http_version,
                url: received.url,
                redirected: received.redirected,
                headers: received.headers,
                body: body(received.body),
                grpc: received.grpc.map(|grpc| GrpcRecord {
                    code: grpc.code,
                    number: grpc.number,
                    message: grpc.message,
                    details: grpc.details,
                    kind: grpc.kind,
                    messages: grpc.messages,
                }),
            });
            record.timing = Some(TimingRecord { ttfb_ms: millis(timing.ttfb), total_ms: millis(timing.total) });
            record.assertions = assertion_records(assertions);
            record.logs = logs;
        }
    }
    record
}

pub(crate) fn outcome_name(result: &RequestResult) -> &'static str {
    match &result.outcome {
        Outcome::Skipped(_) => "skipped",
        Outcome::Error(_) | Outcome::Refused(_) => "error",
        Outcome::Response { .. } if result.stream_failed() => "error",
        Outcome::Response { .. } if result.passed() => "passed",
        Outcome::Response { .. } => "failed",
    }
}

pub(crate) fn error_record(result: &RequestResult, file: &File) -> Option<ErrorRecord> {
    if result.stream_failed() {
        let message = result.stream.as_ref().and_then(|stream| stream.errors.last().cloned()).unwrap_or_default();
        let broken = PlacedDiagnostic::new("stream-broken", message, None, result.line_span, &file.text);
        return Some(error_of(broken));
    }
    match &result.outcome {
        Outcome::Error(error) => {
            let placed = result.error_parts(error, &file.text);
            let Place { line, column } = placed.place;
            Some(ErrorRecord { code: placed.kind.name(), message: placed.message, line, column, hint: placed.hint })
        }
        Outcome::Refused(refusal) => refusal.problems(&file.text).into_iter().next().map(error_of),
        Outcome::Response { .. } | Outcome::Skipped(_) => None,
    }
}

/// A placed problem (a refusal's first reason, a broken stream) as a JSON error.
fn error_of(problem: PlacedDiagnostic) -> ErrorRecord {
    let Place { line, column } = problem.place;
    ErrorRecord { code: problem.code.to_owned(), message: problem.message, line, column, hint: problem.hint }
}

fn assertion_records(assertions: Vec<PlacedAssertion>) -> Vec<AssertionRecord> {
    assertions
        .into_iter()
        .map(|PlacedAssertion { result: assertion, place: Place { line, column } }| {
            let (outcome, expected, actual, message) = match &assertion.outcome {
                Check::Passed => ("passed", None, None, None),
                Check::Failed { expected, actual } => ("failed", Some(expected.clone()), Some(actual.clone()), None),
                Check::ScriptFailed { message } => ("failed", None, None, Some(message.clone())),
                Check::HandlerFailed { message, .. } => ("invalid", None, None, Some(message.clone())),
                Check::Invalid { message, .. } => ("invalid", None, None, Some(message.clone())),
            };
            let kind = match &assertion.outcome {
                Check::HandlerFailed { .. } => Some("handler"),
                Check::ScriptFailed { .. } => Some("test"),
                _ => None,
            };
            AssertionRecord { expression: assertion.expression, kind, line, column, outcome, expected, actual, message }
        })
        .collect()
}

fn body(body: BodySummary) -> BodyRecord {
    match body.base64() {
        Some(body_base64) => BodyRecord::Binary { body_base64 },
        None => BodyRecord::Text { body: body.into_text() },
    }
}

fn millis(duration: std::time::Duration) -> f64 {
    (duration.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// The summary of a run, as the JSON report has it.
pub(crate) fn summary(
    results: &[RequestResult],
    elapsed: std::time::Duration,
    started_at: Option<String>,
    profile: Option<String>,
) -> crate::report::Summary {
    let tally = super::outcome::Tally::of(results);
    crate::report::Summary {
        requests: tally.requests,
        passed: tally.passed,
        failed: tally.failed,
        errors: tally.errors,
        skipped: tally.skipped,
        retries: tally.retries,
        duration_ms: millis(elapsed),
        started_at,
        profile,
    }
}
