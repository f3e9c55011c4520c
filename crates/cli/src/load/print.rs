//! What `volley load` prints: the line that says what is sent, the live progress line
//! and the summary (also of `volley report merge` of load reports).

use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use volley_load::format::{bytes, micros, percent, rate, thousands};
use volley_load::{Load, LoadReport, Plan, Progress, Stop, Work};

use crate::output;

pub(super) fn what(work: &Work<'_>, text: &str) -> String {
    let requests: Vec<&volley_syntax::Request> = work.document.requests().collect();
    if work.scenario {
        return format!("the {} requests in order", requests.len());
    }
    let mut lines: Vec<String> = work
        .picks
        .iter()
        .filter_map(|(index, weight)| {
            let request = requests.iter().find(|request| request.index == *index)?;
            let line = text.get(request.line_span.start..request.line_span.end).unwrap_or_default().trim();
            Some(if work.picks.len() > 1 { format!("{line} (×{weight})") } else { line.to_owned() })
        })
        .collect();
    lines.dedup();
    lines.join(", ")
}

pub(super) fn describe(plan: &Plan) -> String {
    let model = match plan.load {
        Load::Closed { connections } => format!("{connections} connection{}", if connections == 1 { "" } else { "s" }),
        Load::Open { rate: per_second, .. } => format!("{}/s", rate(per_second)),
    };
    let stop = match plan.stop {
        Stop::Duration(duration) => format!("for {}", spoken(duration)),
        Stop::Requests(total) => format!("{} requests", thousands(total)),
    };
    let warmup =
        if plan.warmup.is_zero() { String::new() } else { format!(" after {} of warm-up", spoken(plan.warmup)) };
    let shard = plan.shard.as_ref().map(|shard| format!(" (shard {shard})")).unwrap_or_default();
    format!("{model}, {stop}{warmup}{shard}")
}

/// `30 s`, `2 min`, `500 ms`.
fn spoken(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds < 1.0 {
        format!("{} ms", duration.as_millis())
    } else if seconds >= 60.0 && duration.as_secs().is_multiple_of(60) && duration.subsec_nanos() == 0 {
        format!("{} min", duration.as_secs() / 60)
    } else {
        format!("{} s", (seconds * 10.0).round() / 10.0)
    }
}

/// The live line: redrawn on a terminal, a plain line every 5 seconds otherwise.
pub(super) struct ProgressLine {
    terminal: bool,
    quiet: bool,
    last: Option<(Instant, u64)>,
    rate: f64,
    printed: Option<Instant>,
    drawn: bool,
}

impl ProgressLine {
    pub(super) fn new(quiet: bool, _plan: &Plan) -> ProgressLine {
        ProgressLine {
            terminal: std::io::stderr().is_terminal(),
            quiet,
            last: None,
            rate: 0.0,
            printed: None,
            drawn: false,
        }
    }

    pub(super) fn show(&mut self, progress: Progress) {
        if self.quiet {
            return;
        }
        let now = Instant::now();
        match self.last {
            Some((at, requests)) if now.duration_since(at) >= Duration::from_millis(900) => {
                #[allow(clippy::cast_precision_loss)] // counts far below 2^52
                let done = progress.requests.saturating_sub(requests) as f64;
                self.rate = done / now.duration_since(at).as_secs_f64();
                self.last = Some((now, progress.requests));
            }
            None => self.last = Some((now, progress.requests)),
            _ => {}
        }
        let text = if progress.warming_up {
            "  warming up…".to_owned()
        } else {
            #[allow(clippy::cast_precision_loss)] // microseconds far below 2^52
            let (p50, p99) = (micros(progress.p50 as f64), micros(progress.p99 as f64));
            format!(
                "  {:>6.1} s  {} requests  {}/s  {} errors  p50 {p50}  p99 {p99}",
                progress.elapsed.as_secs_f64(),
                thousands(progress.requests),
                rate(self.rate),
                thousands(progress.errors),
            )
        };
        if self.terminal {
            anstream::eprint!("\r\x1b[2K{text}");
            self.drawn = true;
        } else if self.printed.is_none_or(|printed| now.duration_since(printed) >= Duration::from_secs(5)) {
            if self.printed.is_some() {
                output::error_line(&text);
            }
            self.printed = Some(now);
        }
    }

    pub(super) fn finish(&mut self) {
        if self.drawn {
            anstream::eprint!("\r\x1b[2K");
        }
    }
}

/// The summary printed at the end.
pub(super) fn summary(report: &LoadReport) -> String {
    use std::fmt::Write as _;
    let summary = report.summary();
    let mut out = String::new();
    let latency = &report.latency;
    #[allow(clippy::cast_precision_loss)] // microseconds far below 2^52
    let at = |percentile: f64| micros(latency.percentile(percentile) as f64);
    let _ = writeln!(
        out,
        "requests   {} in {:.2} s, {}/s",
        thousands(report.requests),
        report.duration_ms / 1000.0,
        rate(summary.rate)
    );
    #[allow(clippy::cast_precision_loss)]
    let max = micros(latency.max() as f64);
    let _ = writeln!(
        out,
        "latency    p50 {}  p90 {}  p95 {}  p99 {}  p99.9 {}  max {max}  (mean {})",
        at(50.0),
        at(90.0),
        at(95.0),
        at(99.0),
        at(99.9),
        micros(latency.mean()),
    );
    let statuses: Vec<String> =
        report.statuses.iter().map(|(status, count)| format!("{status} ×{}", thousands(*count))).collect();
    let _ = writeln!(out, "status     {}", if statuses.is_empty() { "none".to_owned() } else { statuses.join("  ") });
    if summary.errors == 0 {
        let _ = writeln!(out, "errors     0");
    } else {
        let kinds: Vec<String> =
            report.errors.iter().map(|(kind, count)| format!("{kind} ×{}", thousands(*count))).collect();
        let _ = writeln!(
            out,
            "errors     {} ({}): {}",
            thousands(summary.errors),
            percent(summary.error_ratio),
            kinds.join("  ")
        );
        for (kind, message) in &report.samples {
            let _ = writeln!(out, "           {kind}: {message}");
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let seconds = (report.duration_ms / 1000.0).max(1e-9);
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let per_second = (report.bytes_received as f64 / seconds) as u64;
    let _ = writeln!(
        out,
        "bytes      {} received ({}/s), {} sent",
        bytes(report.bytes_received),
        bytes(per_second),
        bytes(report.bytes_sent)
    );
    #[allow(clippy::cast_precision_loss)]
    let build_p99 = micros(report.build.percentile(99.0) as f64);
    let _ = write!(
        out,
        "build      {} per request (p99 {build_p99}): variables, resolvers, body",
        micros(report.build.mean())
    );
    if !report.thresholds.is_empty() {
        let _ = write!(out, "\nthresholds");
        for checked in &report.thresholds {
            let mark = if checked.passed { "✓" } else { "✗ FAILED" };
            let _ = write!(out, "\n  {mark} {}  ({})", checked.threshold, checked.actual);
        }
    }
    out
}
