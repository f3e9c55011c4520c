//! `volley load`: the requests of a `.http` file sent under load (crates/load), with a
//! live progress line, a summary, thresholds for CI and JSON or HTML reports.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Map, Value};
use volley_engine::{CancellationToken, Client, ClientConfig, RequestDefaults, RunOptions};
use volley_load::{CheckThreshold as _, Load, LoadReport, Plan, Stop, Threshold, Work};
use volley_syntax::LineIndex;

use crate::args::Format;
use crate::exit::Exit;
use crate::output;
use crate::render;

mod print;

use print::{ProgressLine, describe, summary, what};

const EXAMPLES: &str = "\
Examples:
  volley load api.http --name search -c 64 -d 30s        64 virtual users for 30 seconds
  volley load api.http --name search --rate 2000/s -d 1m  2,000 requests a second (open model)
  volley load api.http --name search:9 --name login:1 -n 10000   a mix, 9 searches to 1 login
  volley load flow.http -c 16 -d 1m                       the whole file in order, per user
  volley load api.http -n search -c 64 -d 30s --threshold 'p95<200ms' --threshold 'errors<1%'
  volley load api.http --name search -d 1m --shard 2/4 --report json=shard-2.json
  volley report merge shard-*.json --html load.html --threshold 'p99<500ms'

Thresholds (--threshold, repeatable, or `# @load p95<200ms, errors<1%` on a request of
the file): METRIC<VALUE, with <, <=, >, >=:
  p50 p90 p95 p99 p99.9 (any pNN) max mean   a latency with ms, s or us   p95<200ms
  errors    a share with % or a count                                  errors<1%
  rate      requests per second                                        rate>5000/s
  requests  requests counted                                           requests>=1000

A request fails when its assertions fail, or, without assertions, when its status is
400 or more; transport errors (timeout, refused, …) and requests that cannot be built
count by kind. Exit codes: 0 the thresholds held (or none were given), 1 one failed,
2 usage error, 3 a request cannot be sent under load, 4 every request failed to connect.";

/// Arguments of `volley load`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = EXAMPLES)]
#[allow(clippy::struct_excessive_bools)] // command-line flags
pub(crate) struct LoadArgs {
    /// The .http file.
    file: PathBuf,

    /// Send the request with this `# @name` (repeatable: a mix). `NAME:WEIGHT` gives its
    /// share of the mix (default 1). Without --name or --index, every request of the
    /// file runs in order by each virtual user (a scenario; responses chain).
    #[arg(long, value_name = "NAME[:WEIGHT]")]
    name: Vec<String>,

    /// Send the request at this position (1-based; repeatable), `INDEX:WEIGHT` as --name.
    #[arg(long, value_name = "INDEX[:WEIGHT]")]
    index: Vec<String>,

    /// Virtual users of the closed model, each sending its next request when its last
    /// one is answered (default 10). With --rate: the most requests under way at once
    /// (default 1000).
    #[arg(short = 'c', long, value_name = "N")]
    connections: Option<usize>,

    /// The open model: this many requests per second (`500`, `2000/s`), whether earlier
    /// ones were answered or not; each latency counts from when its request was due.
    #[arg(long, value_name = "R/s")]
    rate: Option<String>,

    /// How long to send (`30s`, `1m`, `500ms`); default 10s unless --requests.
    #[arg(short = 'd', long, value_name = "TIME", conflicts_with = "requests")]
    duration: Option<String>,

    /// How many requests to count, then stop.
    #[arg(short = 'n', long, value_name = "N")]
    requests: Option<u64>,

    /// Send for this long first without counting (`5s`): connections opened, caches warm.
    #[arg(long, value_name = "TIME")]
    warmup: Option<String>,

    /// The timeout of each request (`2s`), for requests without their own `# @timeout`.
    #[arg(long, value_name = "TIME")]
    timeout: Option<String>,

    /// A condition the run must meet, or it exits 1 (repeatable): `p95<200ms`,
    /// `errors<1%`, `rate>5000/s`. See the list below.
    #[arg(long, value_name = "EXPR", value_parser = parse_threshold)]
    threshold: Vec<Threshold>,

    /// Run the k-th of n shards of the load (`2/4`): its share of the connections, the
    /// rate or the requests; merge the shards' JSON reports with `volley report merge`.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,

    /// Print the report as JSON (its histograms included) instead of the summary.
    #[arg(long)]
    json: bool,

    /// Write a report: `json=load.json` or `html=load.html` (one self-contained page
    /// with the latency over time and its distribution). Repeatable.
    #[arg(long, value_name = "FORMAT=PATH", value_parser = crate::args::parse_target)]
    report: Vec<(Format, PathBuf)>,

    /// Use this profile of volley.jsonc (or environment of http-client.env.json).
    #[arg(short = 'p', long, value_name = "NAME")]
    profile: Option<String>,

    /// Set a variable, above every other (repeatable): `--var host=http://localhost:8080`.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = crate::args::parse_var)]
    vars: Vec<(String, String)>,

    /// Do not check TLS certificates.
    #[arg(short = 'k', long)]
    insecure: bool,

    /// Send over HTTP/2 (prior knowledge for `http://`): one connection multiplexed.
    #[arg(long)]
    http2: bool,

    /// Threads that send (default 1: one core drives thousands of requests a second
    /// and leaves the others to the server when both run on one machine).
    #[arg(long, value_name = "N", default_value_t = 1)]
    threads: usize,

    /// No progress line.
    #[arg(short = 'q', long)]
    quiet: bool,
}

pub(crate) fn parse_threshold(text: &str) -> Result<Threshold, String> {
    text.parse::<Threshold>().map_err(|error| format!("{error}\n  hint: {}", volley_load::ThresholdError::hint()))
}

fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let shape = || format!("expected K/N with 1 ≤ K ≤ N, like 2/4, got `{text}`");
    let (k, n) = text.split_once('/').ok_or_else(shape)?;
    let (k, n) = (k.trim().parse::<usize>().map_err(|_| shape())?, n.trim().parse::<usize>().map_err(|_| shape())?);
    if k == 0 || n == 0 || k > n {
        return Err(shape());
    }
    Ok((k, n))
}

/// `30s`, `1m`, `500ms`, `1h`, `2.5s`.
pub(crate) fn parse_time(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let number: f64 = digits.parse().map_err(|_| format!("`{text}` is not a time: write 30s, 1m, 500ms"))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "s" | "" if !unit.is_empty() || number == 0.0 => number,
        "m" | "min" => number * 60.0,
        "h" => number * 3600.0,
        _ => return Err(format!("`{text}` needs a unit: ms, s, m or h (30s)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("`{text}` is not a time"))
}

fn parse_rate(text: &str) -> Result<f64, String> {
    let digits = text.trim().trim_end_matches("/s").trim();
    match digits.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!("--rate `{text}` is not a rate: write 500 or 500/s")),
    }
}

/// A weighted selection: `NAME:9`, `3:2`.
fn weighted(text: &str) -> (&str, Result<u32, String>) {
    match text.rsplit_once(':') {
        Some((value, weight)) if weight.chars().all(|c| c.is_ascii_digit()) && !weight.is_empty() => {
            let parsed = weight.parse::<u32>().ok().filter(|weight| *weight > 0);
            (value, parsed.ok_or_else(|| format!("the weight of `{text}` must be a whole number from 1")))
        }
        _ => (text, Ok(1)),
    }
}

/// The share of `total` that shard `k` of `n` takes: the remainder to the first ones.
fn share(total: u64, (k, n): (usize, usize)) -> u64 {
    let (k, n) = (k as u64, n as u64);
    total / n + u64::from(k <= total % n)
}

pub(crate) fn run(args: &LoadArgs) -> anyhow::Result<Exit> {
    let runtime = if args.threads <= 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(args.threads).enable_all().build()
    };
    let runtime = runtime.context("cannot start the async runtime")?;
    runtime.block_on(execute(args))
}

fn usage(message: &str, hint: Option<&str>) -> Exit {
    output::error_line(&render::plain(message, hint));
    Exit::Usage
}

#[allow(clippy::too_many_lines)] // one straight line: read, check, run, print
async fn execute(args: &LoadArgs) -> anyhow::Result<Exit> {
    let text = match std::fs::read_to_string(&args.file) {
        Ok(text) => text,
        Err(error) => return Ok(usage(&format!("cannot read `{}`: {error}", args.file.display()), None)),
    };
    let shown = args.file.display().to_string();
    let source = std::path::absolute(&args.file).unwrap_or_else(|_| args.file.clone());
    let document = volley_syntax::parse(&text);
    let requests: Vec<&volley_syntax::Request> = document.requests().collect();
    if requests.is_empty() {
        return Ok(usage(&format!("`{shown}` has no request"), None));
    }
    // What to send.
    let mut picks = Vec::new();
    for selected in &args.name {
        let (name, weight) = weighted(selected);
        let weight = match weight {
            Ok(weight) => weight,
            Err(problem) => return Ok(usage(&problem, None)),
        };
        let Some(request) = requests.iter().find(|request| request.name.as_ref().is_some_and(|n| n.value == name))
        else {
            let names: Vec<&str> =
                requests.iter().filter_map(|request| request.name.as_ref().map(|name| name.value.as_str())).collect();
            let hint = if names.is_empty() {
                "the file has no named request; select by position with --index".to_owned()
            } else {
                format!("the file's names: {}", names.join(", "))
            };
            return Ok(usage(&format!("`{shown}` has no request named `{name}`"), Some(&hint)));
        };
        picks.push((request.index, weight));
    }
    for selected in &args.index {
        let (index, weight) = weighted(selected);
        let weight = match weight {
            Ok(weight) => weight,
            Err(problem) => return Ok(usage(&problem, None)),
        };
        match index.parse::<usize>() {
            Ok(index) if (1..=requests.len()).contains(&index) => picks.push((requests[index - 1].index, weight)),
            _ => {
                return Ok(usage(&format!("--index {index}: `{shown}` has requests 1 to {}", requests.len()), None));
            }
        }
    }
    // A file of one request is that request, not a scenario of one.
    if picks.is_empty() && requests.len() == 1 {
        picks.push((requests[0].index, 1));
    }
    let scenario = picks.is_empty();
    // How.
    let times = |value: &Option<String>, flag: &str| -> Result<Option<Duration>, String> {
        value.as_deref().map(parse_time).transpose().map_err(|problem| format!("{flag}: {problem}"))
    };
    let (duration, warmup, timeout) =
        match (times(&args.duration, "--duration"), times(&args.warmup, "--warmup"), times(&args.timeout, "--timeout"))
        {
            (Ok(duration), Ok(warmup), Ok(timeout)) => (duration, warmup, timeout),
            (Err(problem), ..) | (_, Err(problem), _) | (.., Err(problem)) => return Ok(usage(&problem, None)),
        };
    let shard = args.shard.unwrap_or((1, 1));
    let stop = match (duration, args.requests) {
        (_, Some(0)) => return Ok(usage("--requests must be at least 1", None)),
        (_, Some(total)) => Stop::Requests(share(total, shard)),
        (Some(duration), None) if duration.is_zero() => return Ok(usage("--duration must be longer than 0", None)),
        (Some(duration), None) => Stop::Duration(duration),
        (None, None) => Stop::Duration(Duration::from_secs(10)),
    };
    if stop == Stop::Requests(0) {
        return Ok(usage("--requests is smaller than the number of shards: this shard would send nothing", None));
    }
    let load = if let Some(written) = &args.rate {
        match parse_rate(written) {
            Ok(total) => {
                #[allow(clippy::cast_precision_loss)] // shard counts are small
                let rate = total / shard.1 as f64;
                let max_in_flight = args.connections.unwrap_or(1000);
                Load::Open {
                    rate,
                    max_in_flight: usize::try_from(share(max_in_flight as u64, shard)).unwrap_or(1).max(1),
                }
            }
            Err(problem) => return Ok(usage(&problem, None)),
        }
    } else {
        let connections = share(args.connections.unwrap_or(10) as u64, shard);
        if connections == 0 {
            return Ok(usage(
                "fewer connections than shards: this shard would have none",
                Some("give each shard at least one: -c N with N ≥ the shards"),
            ));
        }
        Load::Closed { connections: usize::try_from(connections).unwrap_or(usize::MAX) }
    };
    if args.connections == Some(0) {
        return Ok(usage("--connections must be at least 1", None));
    }
    for (format, _) in &args.report {
        if !matches!(format, Format::Json | Format::Html) {
            return Ok(usage(
                "a load report is written as json or html",
                Some("--report json=load.json or --report html=load.html"),
            ));
        }
    }
    let overrides: Map<String, Value> =
        args.vars.iter().map(|(name, value)| (name.clone(), Value::String(value.clone()))).collect();
    let mut options = RunOptions::default().overrides(overrides).without_prompts().timeout(timeout);
    if let Some(profile) = &args.profile {
        options = options.profile(profile.clone());
    }
    let client = Client::new(ClientConfig {
        profile: args.profile.clone(),
        defaults: RequestDefaults { validate_ssl: args.insecure.then_some(false), ..RequestDefaults::default() },
        http_version: args.http2.then_some(volley_engine::HttpVersion::HTTP_2),
        // An edit of volley.jsonc or `.env` counts within a second, not on every send.
        recheck_files: Duration::from_secs(1),
        ..ClientConfig::default()
    });
    let work = Work { document: &document, text: &text, source: &source, picks, scenario };
    let lines = LineIndex::new(&text);
    // The thresholds: --threshold, then the `# @load` lines of the requests sent.
    let mut thresholds = args.threshold.clone();
    for (span, threshold) in volley_load::file_thresholds(&work) {
        match threshold {
            Ok(threshold) if thresholds.iter().any(|known| known.text == threshold.text) => {}
            Ok(threshold) => thresholds.push(threshold),
            Err(error) => {
                // The parser's diagnostic, drawn as `volley check` draws it.
                output::error_line(&render::human(&shown, &text, &lines, &error.diagnostic(span)));
                return Ok(Exit::Usage);
            }
        }
    }
    if let Err(error) = volley_load::prepare(&client, &work, &options).await {
        let rendered = match &error {
            volley_load::LoadError::Unsupported { span, reason, .. } => render::report(
                &shown,
                &text,
                &lines,
                &render::Report {
                    severity: volley_syntax::Severity::Error,
                    code: "not-under-load",
                    message: reason,
                    span: *span,
                    label: None,
                    notes: Vec::new(),
                    hint: None,
                },
            ),
            volley_load::LoadError::Build { span, source, .. } => {
                let placed = volley_engine::report::PlacedError::new(source, *span, &text);
                render::placed_error(&shown, &text, &lines, &placed)
            }
        };
        output::error_line(&rendered);
        return Ok(Exit::Invalid);
    }
    let plan = Plan {
        load,
        stop,
        warmup: warmup.unwrap_or_default(),
        options,
        shard: args.shard.map(|(k, n)| format!("{k}/{n}")),
    };
    // Ctrl-C: the load stops, what was measured is reported; a second one exits.
    let cancel = CancellationToken::new();
    let watcher = cancel.clone();
    let signals = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            watcher.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(i32::from(Exit::INTERRUPTED));
            }
        }
    });
    let mut line = ProgressLine::new(args.quiet, &plan);
    if !args.json && !args.quiet {
        output::error_line(&format!("load: {} from {shown}, {}", what(&work, &text), describe(&plan)));
    }
    let mut report = volley_load::run(&client, &work, &plan, cancel.clone(), |progress| line.show(progress)).await;
    line.finish();
    signals.abort();
    report.thresholds = thresholds.iter().map(|threshold| threshold.check(&report)).collect();
    let mut exit = if report.thresholds.iter().all(|checked| checked.passed) { Exit::Success } else { Exit::Failed };
    let connected = report.statuses.values().sum::<u64>() > 0;
    let refused: u64 =
        ["connection_refused", "dns", "tls", "timeout"].iter().filter_map(|kind| report.errors.get(*kind)).sum();
    if !connected && refused > 0 {
        exit = exit.worst(Exit::Transport);
    }
    write_reports(&report, &args.report)?;
    if args.json {
        output::line(&serde_json::to_string_pretty(&report).context("cannot write the report as JSON")?);
    } else {
        output::line(&summary(&report));
    }
    if !connected && refused > 0 {
        output::error_line(&render::plain(
            "no request was answered: every one failed to connect",
            Some("is the server running? check the URL and the profile (-p)"),
        ));
    }
    if cancel.is_cancelled() {
        return Ok(Exit::Code(Exit::INTERRUPTED).worst(exit));
    }
    Ok(exit)
}

/// `true` for the JSON report of a load run (`"kind": "load"`).
pub(crate) fn is_load_report(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Kind {
        kind: Option<String>,
    }
    serde_json::from_str::<Kind>(text).ok().and_then(|kind| kind.kind).as_deref() == Some(volley_load::report::KIND)
}

/// `volley report merge` of load reports: the summary of the merged load, its
/// thresholds checked, the reports asked for written.
pub(crate) fn merge(
    paths: &[PathBuf],
    texts: &[String],
    targets: &[(Format, PathBuf)],
    thresholds: &[Threshold],
) -> anyhow::Result<Exit> {
    let mut reports = Vec::with_capacity(texts.len());
    for (path, text) in paths.iter().zip(texts) {
        match serde_json::from_str::<LoadReport>(text) {
            Ok(report) => reports.push(report),
            Err(error) => {
                return Ok(usage(&format!("`{}` is not a Volley load report: {error}", path.display()), None));
            }
        }
    }
    let mut merged = match LoadReport::merge(reports) {
        Ok(merged) => merged,
        Err(error) => return Ok(usage(&error.to_string(), Some("merge the shards of one `volley load` of one file"))),
    };
    merged.thresholds = thresholds.iter().map(|threshold| threshold.check(&merged)).collect();
    write_reports(&merged, targets)?;
    output::line(&summary(&merged));
    Ok(if merged.thresholds.iter().all(|checked| checked.passed) { Exit::Success } else { Exit::Failed })
}

fn write_reports(report: &LoadReport, targets: &[(Format, PathBuf)]) -> anyhow::Result<()> {
    for (format, path) in targets {
        let written = match format {
            Format::Html => volley_load::html::render(report),
            _ => serde_json::to_string_pretty(report).context("cannot write the report as JSON")?,
        };
        crate::args::create_parent(path)?;
        std::fs::write(path, written).with_context(|| format!("cannot write the report to `{}`", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn times_and_shares() {
        assert_eq!(super::parse_time("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(super::parse_time("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(super::parse_time("250ms"), Ok(Duration::from_millis(250)));
        assert!(super::parse_time("30").unwrap_err().contains("needs a unit"));
        assert!(super::parse_time("soon").is_err());
        assert_eq!(super::parse_rate("2000/s"), Ok(2000.0));
        assert_eq!(super::weighted("search:9").0, "search");
        assert_eq!(super::weighted("search:9").1, Ok(9));
        assert_eq!(super::weighted("a:b").0, "a:b");
        assert_eq!((1..=3).map(|k| super::share(10, (k, 3))).collect::<Vec<_>>(), [4, 3, 3]);
        assert_eq!(super::parse_shard("2/4"), Ok((2, 4)));
        assert!(super::parse_shard("5/4").is_err());
    }
}
