//! Reports of a run: JUnit, TAP and HTML, all made from the JSON report, whether
//! `volley run --report` writes them or `volley report merge` does from the JSON
//! reports of several runs.

mod html;
mod junit;
pub(crate) mod merge;
mod model;
mod tap;

use serde::Deserialize;
use serde_json::value::RawValue;

pub(crate) use model::Entry;

/// The one version of the JSON report this build writes and reads.
pub(crate) const VERSION: u32 = 1;

pub(crate) use crate::args::{Format, create_parent, parse_target};

/// A JSON report read back: its requests typed for rendering, and each as its text
/// (so that a merged JSON report keeps them as written, fields this build does not
/// know included).
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) duration_ms: f64,
    /// When the run started (RFC 3339, UTC); for a merge, the earliest run's.
    pub(crate) started_at: Option<String>,
    /// The profile of the run (`-p`); for a merge, when every run had the same.
    pub(crate) profile: Option<String>,
    pub(crate) requests: Vec<(Entry, Box<RawValue>)>,
}

#[derive(Deserialize)]
struct Document {
    version: Option<u32>,
    summary: Option<DocumentSummary>,
    requests: Option<Vec<Box<RawValue>>>,
}

#[derive(Deserialize)]
struct DocumentSummary {
    #[serde(default)]
    duration_ms: f64,
    #[serde(default)]
    started_at: Option<String>,
    #[serde(default)]
    profile: Option<String>,
}

impl Report {
    /// Reads a JSON report; the error says why `text` is not one.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let document: Document =
            serde_json::from_str(text).map_err(|error| format!("it is not a JSON object ({error})"))?;
        match document.version {
            None => return Err("it has no `version` field".to_owned()),
            Some(VERSION) => {}
            Some(other) => {
                return Err(format!("it is version {other}, and this volley reads version {VERSION}"));
            }
        }
        let summary = document.summary.ok_or("it has no `summary` field")?;
        let raw = document.requests.ok_or("it has no `requests` field")?;
        let mut requests = Vec::with_capacity(raw.len());
        for (position, value) in raw.into_iter().enumerate() {
            let entry: Entry = serde_json::from_str(value.get())
                .map_err(|error| format!("its request {} is not a request record ({error})", position + 1))?;
            requests.push((entry, value));
        }
        Ok(Self {
            duration_ms: summary.duration_ms,
            started_at: summary.started_at,
            profile: summary.profile,
            requests,
        })
    }

    /// The typed requests, in order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.requests.iter().map(|(entry, _)| entry)
    }

    /// The files of the report, in the order their first request comes.
    pub(crate) fn files(&self) -> Vec<&str> {
        let mut files: Vec<&str> = Vec::new();
        for entry in self.entries() {
            if !files.contains(&entry.file.as_str()) {
                files.push(&entry.file);
            }
        }
        files
    }

    /// How many requests have `outcome` (`passed`, `failed`, `error`, `skipped`).
    pub(crate) fn count(&self, outcome: &str) -> usize {
        self.entries().filter(|entry| entry.outcome == outcome).count()
    }

    /// The sends beyond the first of each request (`--retry`).
    pub(crate) fn retries(&self) -> u32 {
        self.entries().map(|entry| entry.attempts.saturating_sub(1)).sum()
    }

    /// The report in `format`.
    pub(crate) fn render(&self, format: Format) -> anyhow::Result<String> {
        match format {
            Format::Junit => junit::render(self),
            Format::Json => self.json(),
            Format::Tap => Ok(tap::render(self)),
            Format::Html => Ok(html::render(self)),
        }
    }

    /// The JSON report: `{"version": 1, "summary": {…}, "requests": [records…]}`.
    fn json(&self) -> anyhow::Result<String> {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            version: u32,
            summary: Summary,
            requests: Vec<&'a RawValue>,
        }
        let out = Out {
            version: VERSION,
            summary: Summary {
                requests: self.requests.len(),
                passed: self.count("passed"),
                failed: self.count("failed"),
                errors: self.count("error"),
                skipped: self.count("skipped"),
                retries: self.retries(),
                duration_ms: self.duration_ms,
                started_at: self.started_at.clone(),
                profile: self.profile.clone(),
            },
            requests: self.requests.iter().map(|(_, raw)| raw.as_ref()).collect(),
        };
        Ok(serde_json::to_string_pretty(&out)? + "\n")
    }
}

/// The `summary` of a JSON report.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Summary {
    pub(crate) requests: usize,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) errors: usize,
    pub(crate) skipped: usize,
    /// The sends beyond the first of each request (`--retry`), when there were any.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) retries: u32,
    pub(crate) duration_ms: f64,
    /// When the run started, RFC 3339 in UTC (`2026-11-28T18:30:05.123Z`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) started_at: Option<String>,
    /// The run's profile, when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) profile: Option<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_zero(value: &u32) -> bool {
    *value == 0
}

/// `1 request`, `2 requests`.
pub(crate) fn counted(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

/// `0.012`: seconds with milliseconds, from milliseconds.
pub(crate) fn seconds(millis: f64) -> String {
    format!("{:.3}", millis / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::{Format, Report, parse_target};

    #[test]
    fn parses_report_targets() {
        assert_eq!(parse_target("tap=out.tap").map(|(format, _)| format), Ok(Format::Tap));
        assert_eq!(parse_target("html=r.html").map(|(format, _)| format), Ok(Format::Html));
        assert!(parse_target("xml=r.xml").is_err_and(|error| error.contains("unknown report format `xml`")));
        assert!(parse_target("junit=").is_err());
    }

    #[test]
    fn says_why_a_document_is_not_a_report() {
        let why = |text: &str| Report::parse(text).err().unwrap_or_default();
        assert!(why("<xml/>").starts_with("it is not a JSON object"));
        assert_eq!(why("{}"), "it has no `version` field");
        assert_eq!(why(r#"{"version": 7}"#), "it is version 7, and this volley reads version 1");
        assert_eq!(why(r#"{"version": 1, "summary": {}}"#), "it has no `requests` field");
        assert!(why(r#"{"version": 1, "summary": {}, "requests": [{"file": "a"}]}"#).starts_with("its request 1"));
    }
}
