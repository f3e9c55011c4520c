//! The JSON report as read back: what the JUnit, TAP and HTML reports are made of,
//! whether they are written by `volley run` or by `volley report merge`. Reading the
//! report (instead of the run's results) keeps both paths to one renderer per format.
//!
//! Fields that are not needed here (`stream`, what later versions add) are ignored on
//! reading; the merged JSON report keeps each request's text as it was.

use serde::Deserialize;

/// One request of a report (`requests[i]`); see docs/cli.md for the shape.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Entry {
    pub(crate) file: String,
    pub(crate) index: usize,
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) title: Option<String>,
    #[serde(default)]
    pub(crate) description: Option<String>,
    pub(crate) line: u32,
    /// `passed`, `failed`, `error` or `skipped`.
    pub(crate) outcome: String,
    #[serde(default)]
    pub(crate) reason: Option<String>,
    #[serde(default)]
    pub(crate) request: Option<Sent>,
    #[serde(default)]
    pub(crate) response: Option<Received>,
    #[serde(default)]
    pub(crate) timing: Option<Timing>,
    #[serde(default)]
    pub(crate) assertions: Vec<Assertion>,
    #[serde(default)]
    pub(crate) logs: Vec<String>,
    #[serde(default)]
    pub(crate) error: Option<Problem>,
    #[serde(default)]
    pub(crate) stream: Option<Stream>,
    /// How many times it was sent (`--retry`); absent means once.
    #[serde(default = "once")]
    pub(crate) attempts: u32,
    /// Which run of the selection it belongs to (`--repeat`, from 1).
    #[serde(default)]
    pub(crate) repetition: Option<u32>,
}

fn once() -> u32 {
    1
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Sent {
    pub(crate) method: String,
    pub(crate) url: String,
    #[serde(default)]
    pub(crate) headers: Vec<(String, String)>,
    #[serde(flatten)]
    pub(crate) body: Body,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Received {
    pub(crate) status: u16,
    #[serde(default)]
    pub(crate) status_text: String,
    #[serde(default)]
    pub(crate) http_version: String,
    #[serde(default)]
    pub(crate) headers: Vec<(String, String)>,
    #[serde(flatten)]
    pub(crate) body: Body,
    #[serde(default)]
    pub(crate) grpc: Option<GrpcStatus>,
}

/// How a gRPC call ended.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct GrpcStatus {
    pub(crate) code: String,
    pub(crate) number: u32,
    #[serde(default)]
    pub(crate) message: String,
}

/// A body: `body` (text) or `body_base64` (bytes that are not UTF-8).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Body {
    #[serde(default)]
    pub(crate) body: Option<String>,
    #[serde(default)]
    pub(crate) body_base64: Option<String>,
}

impl Body {
    /// The size of the body in bytes (of its redacted text, for a text body).
    pub(crate) fn size(&self) -> usize {
        match (&self.body, &self.body_base64) {
            (Some(text), _) => text.len(),
            // Four base64 characters carry three bytes, less the padding.
            (None, Some(base64)) => base64.len() / 4 * 3 - base64.chars().rev().take_while(|c| *c == '=').count(),
            (None, None) => 0,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct Timing {
    pub(crate) total_ms: f64,
    #[serde(default)]
    pub(crate) ttfb_ms: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Assertion {
    pub(crate) expression: String,
    #[serde(default)]
    pub(crate) kind: Option<String>,
    pub(crate) line: u32,
    pub(crate) column: u32,
    /// `passed`, `failed` or `invalid`.
    pub(crate) outcome: String,
    #[serde(default)]
    pub(crate) expected: Option<String>,
    #[serde(default)]
    pub(crate) actual: Option<String>,
    #[serde(default)]
    pub(crate) message: Option<String>,
}

impl Assertion {
    pub(crate) fn passed(&self) -> bool {
        self.outcome == "passed"
    }

    /// What did not pass: `assertion`, `test`, `handler` or `invalid-assertion`.
    pub(crate) fn failure_kind(&self) -> &str {
        match (self.kind.as_deref(), self.outcome.as_str()) {
            (Some(kind), _) => kind,
            (None, "invalid") => "invalid-assertion",
            (None, _) => "assertion",
        }
    }

    /// `expected: …` and `actual: …`, or the message: why it did not pass.
    pub(crate) fn detail(&self) -> String {
        match (&self.expected, &self.actual) {
            (Some(expected), Some(actual)) => format!("expected: {expected}\nactual: {actual}"),
            _ => self.message.clone().unwrap_or_default(),
        }
    }
}

/// What came through an event stream or a WebSocket.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Stream {
    /// `events` or `websocket`.
    pub(crate) kind: String,
    pub(crate) received: usize,
    #[serde(default)]
    pub(crate) sent: usize,
    /// Why it ended (`server_closed`, `max_events`, …).
    pub(crate) ended: String,
    #[serde(default)]
    pub(crate) errors: Vec<String>,
    #[serde(default)]
    pub(crate) duration_ms: f64,
}

/// An error of a request without a response (or whose stream broke).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Problem {
    pub(crate) code: String,
    pub(crate) message: String,
    pub(crate) line: u32,
    pub(crate) column: u32,
    #[serde(default)]
    pub(crate) hint: Option<String>,
}

impl Entry {
    /// The name, else the method and URL as written (reports of older versions have
    /// no `title`: the URL as sent, else the position); `(run N)` after it for a run
    /// of `--repeat`.
    pub(crate) fn title(&self) -> String {
        let title = match (self.name.as_ref().or(self.title.as_ref()), &self.request) {
            (Some(title), _) => title.clone(),
            (None, Some(sent)) => format!("{} {}", sent.method, sent.url),
            (None, None) => format!("request {} of {}", self.index, self.file),
        };
        match self.repetition {
            Some(run) => format!("{title} (run {run})"),
            None => title,
        }
    }

    /// The total time of the exchange, in milliseconds (0 without a response).
    pub(crate) fn millis(&self) -> f64 {
        self.timing.map_or(0.0, |timing| timing.total_ms)
    }

    /// Why it was skipped, in words.
    pub(crate) fn skip_reason(&self) -> &'static str {
        match self.reason.as_deref() {
            Some("stopped") => "not run: the run stopped before it (--fail-fast or Ctrl-C)",
            Some("disabled") => "not run: the request is disabled (`# @disabled`)",
            Some("declined") => "not run: its `# @note` was not confirmed",
            Some("not-sent") => "not sent: a request of the run has errors (--strict)",
            _ => "not run",
        }
    }

    /// The assertions that passed, and how many there are.
    pub(crate) fn assertion_counts(&self) -> (usize, usize) {
        (self.assertions.iter().filter(|assertion| assertion.passed()).count(), self.assertions.len())
    }
}
