//! `volley report merge`: the JSON reports of several runs (the shards of a suite, run
//! by parallel CI jobs) as one report, in any format.

use std::path::PathBuf;

use anyhow::Context as _;

use super::{Format, Report};
use crate::exit::Exit;
use crate::render;

/// Arguments of `volley report`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    #[command(subcommand)]
    command: ReportCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ReportCommand {
    /// Merge the JSON reports of several runs into one report (JUnit, JSON, TAP, HTML).
    ///
    /// Reads reports written by `volley run --report json=PATH` (the shards of a suite,
    /// run by parallel jobs) and writes the formats asked for, as one run of all their
    /// files would have: the files sorted by path, each file's requests in the order
    /// they ran, the counts added up. The duration is the sum of the runs' durations
    /// (the time the requests took, not the wall-clock time of parallel jobs).
    /// The exit code says whether the reports could be merged, not whether their
    /// requests passed: each run's own exit code said that. Load reports (`volley
    /// load`) merge into a load report (JSON, HTML) and its summary; --threshold checks
    /// it and exits 1 when one fails.
    #[command(after_long_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
}

const MERGE_EXAMPLES: &str = "\
Examples:
  volley report merge report-1.json report-2.json --junit junit.xml
  volley report merge report-*.json --junit junit.xml --html report.html
  volley report merge shard-*.json --json all.json --tap all.tap
  volley report merge shard-*.json --report junit=out/junit.xml   as `volley run --report` writes
  volley report merge load-*.json --html load.html --threshold 'p99<500ms'   the shards of `volley load`

Load reports (`volley load --report json=PATH`) merge by adding their histograms and
counts, never averaging percentiles: the merged percentiles are those one run of all
the shards' requests would have measured. Their summary is printed; --threshold checks it.";

#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// The JSON reports to merge.
    #[arg(required = true, value_name = "REPORT")]
    reports: Vec<PathBuf>,

    /// Write the merged report as JUnit XML to this file.
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,

    /// Write the merged report as a JSON report to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,

    /// Write the merged report as TAP (version 14) to this file.
    #[arg(long, value_name = "PATH")]
    tap: Option<PathBuf>,

    /// Write the merged report as one self-contained HTML file.
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,

    /// Write the merged report as `volley run --report` writes one: `junit=PATH`,
    /// `json=PATH`, `tap=PATH` or `html=PATH`. Repeatable.
    #[arg(long = "report", value_name = "FORMAT=PATH", value_parser = super::parse_target)]
    report: Vec<(Format, PathBuf)>,

    /// For load reports (`volley load`): a condition the merged load must meet, or the
    /// merge exits 1 (repeatable): `p95<200ms`, `errors<1%`, `rate>5000/s`.
    #[arg(long, value_name = "EXPR", value_parser = crate::load::parse_threshold)]
    threshold: Vec<volley_load::Threshold>,
}

pub(crate) fn run(args: &ReportArgs) -> anyhow::Result<Exit> {
    let ReportCommand::Merge(args) = &args.command;
    if args.junit.is_none()
        && args.json.is_none()
        && args.tap.is_none()
        && args.html.is_none()
        && args.report.is_empty()
        && args.threshold.is_empty()
    {
        return Ok(usage(
            "nothing to write: say which reports to make",
            Some(
                "add --report junit=PATH (json, tap, html), or --junit PATH, --json PATH, --tap PATH, --html PATH; \
                 load reports also take --threshold EXPR",
            ),
        ));
    }
    let mut texts = Vec::with_capacity(args.reports.len());
    for path in &args.reports {
        match std::fs::read_to_string(path) {
            Ok(text) => texts.push(text),
            Err(error) => return Ok(usage(&format!("cannot read `{}`: {error}", path.display()), None)),
        }
    }
    let loads = texts.iter().filter(|text| crate::load::is_load_report(text)).count();
    if loads == texts.len() {
        let targets: Vec<(Format, PathBuf)> = [(Format::Json, &args.json), (Format::Html, &args.html)]
            .into_iter()
            .filter_map(|(format, path)| path.clone().map(|path| (format, path)))
            .chain(args.report.iter().cloned())
            .collect();
        if args.junit.is_some()
            || args.tap.is_some()
            || targets.iter().any(|(format, _)| matches!(format, Format::Junit | Format::Tap))
        {
            return Ok(usage("load reports merge into json or html", Some("--json PATH, --html PATH")));
        }
        return crate::load::merge(&args.reports, &texts, &targets, &args.threshold);
    }
    if loads > 0 {
        return Ok(usage(
            "some of these are load reports (`volley load`) and some run reports (`volley run`): merge each kind apart",
            None,
        ));
    }
    if !args.threshold.is_empty() {
        return Ok(usage("--threshold checks merged load reports (`volley load --report json=PATH`)", None));
    }
    let mut reports = Vec::with_capacity(args.reports.len());
    for (path, text) in args.reports.iter().zip(&texts) {
        match Report::parse(text) {
            Ok(report) => reports.push(report),
            Err(why) => {
                let message = format!("`{}` is not a Volley JSON report: {why}", path.display());
                return Ok(usage(&message, Some("merge the files `volley run --report json=PATH` writes")));
            }
        }
    }
    let merged = merge(reports);
    let named = [
        (Format::Junit, &args.junit),
        (Format::Json, &args.json),
        (Format::Tap, &args.tap),
        (Format::Html, &args.html),
    ];
    let targets = named
        .into_iter()
        .filter_map(|(format, path)| path.as_ref().map(|path| (format, path)))
        .chain(args.report.iter().map(|(format, path)| (*format, path)));
    for (format, path) in targets {
        let text = merged.render(format)?;
        super::create_parent(path)?;
        std::fs::write(path, text).with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    crate::output::error_line(&format!(
        "merged {}: {}: {} passed, {} failed, {}, {} skipped",
        super::counted(args.reports.len(), "report"),
        super::counted(merged.requests.len(), "request"),
        merged.count("passed"),
        merged.count("failed"),
        super::counted(merged.count("error"), "error"),
        merged.count("skipped")
    ));
    Ok(Exit::Success)
}

fn usage(message: &str, hint: Option<&str>) -> Exit {
    crate::output::error_line(&render::plain(message, hint));
    Exit::Usage
}

/// The reports as one: the files sorted by path (a stable order whatever the order of
/// the reports and however the files were spread over them), each file's requests in
/// the order they came (the reports' order, then each report's), the durations added.
pub(crate) fn merge(reports: Vec<Report>) -> Report {
    let duration_ms = reports.iter().map(|report| report.duration_ms).sum();
    // RFC 3339 in UTC compares as text.
    let started_at = reports.iter().filter_map(|report| report.started_at.clone()).min();
    let first = reports.first().and_then(|report| report.profile.clone());
    let profile = first.filter(|first| reports.iter().all(|report| report.profile.as_ref() == Some(first)));
    let mut requests: Vec<_> = reports.into_iter().flat_map(|report| report.requests).collect();
    // A stable sort: within a file, the order of the runs stays.
    requests.sort_by(|(a, _), (b, _)| a.file.cmp(&b.file));
    Report { duration_ms, started_at, profile, requests }
}
