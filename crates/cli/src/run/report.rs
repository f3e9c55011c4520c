//! `--report FORMAT=PATH`: the JSON report of the run, and from it the others (JUnit,
//! TAP, HTML; see `crate::report`), so that a run's reports and those `volley report
//! merge` makes of several runs are written by the same code.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;

use super::outcome::RequestResult;
use super::record;
use super::select::File;
use crate::report::{Format, Report};

/// Writes each report asked for; the error names every report that could not be
/// written (the others are written).
pub(crate) fn write(
    targets: &[(Format, PathBuf)],
    results: &[RequestResult],
    files: &[File],
    elapsed: Duration,
    profile: Option<&str>,
) -> anyhow::Result<()> {
    if targets.is_empty() {
        return Ok(());
    }
    let json = json(results, files, elapsed, profile)?;
    let report =
        Report::parse(&json).map_err(|why| anyhow::anyhow!("the run's JSON report does not read back: {why}"))?;
    let mut failures = Vec::new();
    for (format, path) in targets {
        let written = match format {
            Format::Json => Ok(json.clone()),
            other => report.render(*other),
        }
        .and_then(|text| {
            std::fs::write(path, text).with_context(|| format!("cannot write the report `{}`", path.display()))
        });
        if let Err(error) = written {
            failures.push(format!("{error:#}"));
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(anyhow::anyhow!(failures.join("\n"))) }
}

/// The JSON report: `{"version": 1, "summary": {…}, "requests": [records…]}`.
pub(crate) fn json(
    results: &[RequestResult],
    files: &[File],
    elapsed: Duration,
    profile: Option<&str>,
) -> anyhow::Result<String> {
    let records: Vec<_> = results
        .iter()
        .filter_map(|result| {
            files.iter().find(|file| file.shown == result.file).map(|file| record::record(result, file))
        })
        .collect();
    let started = time::OffsetDateTime::now_utc() - elapsed;
    let started_at = started.format(&time::format_description::well_known::Rfc3339).ok();
    let summary = record::summary(results, elapsed, started_at, profile.map(str::to_owned));
    let report = JsonReport { version: crate::report::VERSION, summary, requests: records };
    Ok(serde_json::to_string_pretty(&report)? + "\n")
}

#[derive(serde::Serialize)]
struct JsonReport {
    version: u32,
    summary: crate::report::Summary,
    requests: Vec<record::Record>,
}
