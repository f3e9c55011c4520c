//! The report of a load run: what was sent, how, and what came back, with the
//! latencies as histograms (the whole run and each second of it) so that the reports
//! of shards merge exactly ([`LoadReport::merge`]). `volley load --json` prints it,
//! `--report json=PATH` writes it, `volley report merge` reads it back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::histogram::Latencies;

/// What a JSON load report says it is (`"kind": "load"`), beside the run reports of
/// `volley run`.
pub const KIND: &str = "load";

/// The report of a load run, or of several merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadReport {
    /// Always [`KIND`].
    pub kind: String,
    /// The program that made it (`volley 0.1.0`).
    pub tool: String,
    /// When the measured part started (RFC 3339, UTC); for a merge, the earliest.
    pub started_at: String,
    /// The file the requests came from.
    pub file: String,
    /// The requests sent, with their weights.
    pub requests_sent: Vec<Target>,
    /// How the load was made.
    pub model: ModelInfo,
    /// The shard this run was (`1/4`), or how many runs a merge holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// How many runs the report holds (1, or the shards merged).
    pub runs: u32,
    /// The measured time, in milliseconds (the warm-up left out); for a merge, the
    /// longest run's (the shards run at the same time).
    pub duration_ms: f64,
    /// The warm-up, in milliseconds: its requests are not counted.
    pub warmup_ms: f64,
    /// Requests answered or failed in the measured time.
    pub requests: u64,
    /// The failed requests by kind: `status` (an answer of 400 or more to a request
    /// without assertions), `assertion`, `build` (a variable or resolver failed), and
    /// the transport's kinds (`timeout`, `connection_refused`, `tls`, …).
    pub errors: BTreeMap<String, u64>,
    /// The first message of each kind of error without an answer (`timeout`: what
    /// timed out), to tell what went wrong.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub samples: BTreeMap<String, String>,
    /// The answers by status code.
    pub statuses: BTreeMap<u16, u64>,
    /// Response body bytes received.
    pub bytes_received: u64,
    /// Request body bytes sent.
    pub bytes_sent: u64,
    /// Every request's latency, in microseconds: from the send (the closed model) or
    /// from the time it was due (the open model) to the whole response read and checked.
    pub latency: Latencies,
    /// The time spent making each request before its send (variables, resolvers,
    /// the body), in microseconds.
    pub build: Latencies,
    /// Seconds per entry of the timeline: 1, doubled while a long run's timeline
    /// grows past 900 entries.
    pub timeline_step: u64,
    /// The run second by second (or step by step), from its start.
    pub timeline: Vec<Second>,
    /// The thresholds checked and what they found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<Checked>,
}

/// A request of the load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// Its index in the file (1-based).
    pub index: usize,
    /// Its name, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `METHOD url` as written (variables not substituted).
    pub line: String,
    /// Its share of the mix (every request of a scenario has weight 1).
    pub weight: u32,
}

/// How the load was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", tag = "kind")]
pub enum ModelInfo {
    /// `connections` virtual users, each sending its next request when its last one is
    /// answered.
    Closed {
        /// How many.
        connections: usize,
    },
    /// Requests due at a constant rate, whether the earlier ones were answered or not.
    Open {
        /// Requests per second.
        rate: f64,
        /// The most requests under way at once.
        max_in_flight: usize,
    },
    /// The file's requests in order, by each virtual user (closed model).
    Scenario {
        /// How many virtual users.
        connections: usize,
    },
}

/// One second of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Second {
    /// Seconds from the start of the measured time.
    pub second: u64,
    /// Requests that ended in this second.
    pub requests: u64,
    /// Of them, failed.
    pub errors: u64,
    /// Their latencies (two significant digits).
    #[serde(deserialize_with = "crate::histogram::deserialize_coarse")]
    pub latency: Latencies,
}

/// The figures people read, computed from a report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Requests per second over the measured time.
    pub rate: f64,
    /// Failed requests.
    pub errors: u64,
    /// Failed requests per request, 0–1.
    pub error_ratio: f64,
}

impl LoadReport {
    /// The figures people read.
    #[must_use]
    pub fn summary(&self) -> Summary {
        let seconds = self.duration_ms / 1000.0;
        let errors: u64 = self.errors.values().sum();
        #[allow(clippy::cast_precision_loss)] // counts far below 2^52
        let (requests, failed) = (self.requests as f64, errors as f64);
        Summary {
            rate: if seconds > 0.0 { requests / seconds } else { 0.0 },
            errors,
            error_ratio: if self.requests == 0 { 0.0 } else { failed / requests },
        }
    }

    /// The reports of several runs as one: counts and histograms added (never
    /// percentiles averaged), the timelines added second by second from each run's
    /// start, the duration the longest run's (shards run at the same time), the start
    /// the earliest. The runs must be of the same file; their thresholds are dropped
    /// (check the merged report's: `volley report merge --threshold`).
    ///
    /// # Errors
    /// No reports, or reports of different files.
    pub fn merge(reports: Vec<LoadReport>) -> Result<LoadReport, MergeError> {
        let mut reports = reports.into_iter();
        let Some(mut merged) = reports.next() else { return Err(MergeError::None) };
        merged.thresholds.clear();
        for report in reports {
            if report.file != merged.file {
                return Err(MergeError::Files { first: merged.file, other: report.file });
            }
            merged.started_at = merged.started_at.min(report.started_at);
            merged.runs += report.runs;
            merged.duration_ms = merged.duration_ms.max(report.duration_ms);
            merged.warmup_ms = merged.warmup_ms.max(report.warmup_ms);
            merged.requests += report.requests;
            for (kind, count) in report.errors {
                *merged.errors.entry(kind).or_default() += count;
            }
            for (kind, message) in report.samples {
                merged.samples.entry(kind).or_insert(message);
            }
            for (status, count) in report.statuses {
                *merged.statuses.entry(status).or_default() += count;
            }
            merged.bytes_received += report.bytes_received;
            merged.bytes_sent += report.bytes_sent;
            merged.latency.add(&report.latency);
            merged.build.add(&report.build);
            merged.model = merged.model.merge(&report.model);
            let step = merged.timeline_step.max(report.timeline_step);
            if step != merged.timeline_step {
                merged.timeline_step = step;
                for second in std::mem::take(&mut merged.timeline) {
                    add_second(&mut merged.timeline, step, second);
                }
            }
            for second in report.timeline {
                add_second(&mut merged.timeline, step, second);
            }
        }
        merged.timeline.sort_by_key(|second| second.second);
        if merged.runs > 1 {
            merged.shard = Some(format!("{} runs merged", merged.runs));
        }
        Ok(merged)
    }
}

/// Adds an entry to a timeline of `step` seconds per entry.
fn add_second(timeline: &mut Vec<Second>, step: u64, second: Second) {
    let slot = second.second / step * step;
    match timeline.iter_mut().find(|kept| kept.second == slot) {
        Some(kept) => {
            kept.requests += second.requests;
            kept.errors += second.errors;
            kept.latency.add(&second.latency);
        }
        None => timeline.push(Second { second: slot, ..second }),
    }
}

impl ModelInfo {
    /// The load of two shards run together: their connections or rates added.
    fn merge(&self, other: &ModelInfo) -> ModelInfo {
        match (self, other) {
            (ModelInfo::Closed { connections: a }, ModelInfo::Closed { connections: b }) => {
                ModelInfo::Closed { connections: a + b }
            }
            (ModelInfo::Scenario { connections: a }, ModelInfo::Scenario { connections: b }) => {
                ModelInfo::Scenario { connections: a + b }
            }
            (ModelInfo::Open { rate: a, max_in_flight: x }, ModelInfo::Open { rate: b, max_in_flight: y }) => {
                ModelInfo::Open { rate: a + b, max_in_flight: x + y }
            }
            _ => self.clone(),
        }
    }

    /// In words: `64 connections (closed model)`, `5000/s (open model)`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            ModelInfo::Closed { connections } => {
                format!("{connections} connection{} (closed model)", plural(*connections))
            }
            ModelInfo::Open { rate, max_in_flight } => {
                format!("{} requests/s (open model, at most {max_in_flight} under way)", crate::format::rate(*rate))
            }
            ModelInfo::Scenario { connections } => {
                format!("{connections} virtual user{} running the file in order", plural(*connections))
            }
        }
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// Why reports could not be merged.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no load reports to merge")]
    None,
    /// Runs of different files.
    #[error("the reports are of different files: `{first}` and `{other}`")]
    Files {
        /// The first report's.
        first: String,
        /// Another's.
        other: String,
    },
}

/// A threshold checked against a report (`volley_load::CheckThreshold`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    /// The threshold as written.
    pub threshold: String,
    /// What the run measured, in the threshold's unit (`p95 = 182.3 ms`).
    pub actual: String,
    /// Whether the run held it.
    pub passed: bool,
}
