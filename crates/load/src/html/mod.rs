//! The HTML report of a load run: one self-contained page (inline CSS and SVG, no
//! script, nothing fetched) to open from a CI artifact. A header saying what ran and
//! how, the summary figures, the thresholds, then two charts: the latency over time
//! (p50, p99 and max of each timeline entry, with the requests per second as bars)
//! and the latency distribution (the percentile curve on the log scale of
//! `HdrHistogram`'s plots). Every text is escaped, since request lines, names and error
//! messages come from files and servers nobody vetted.

use std::fmt::Write as _;

use crate::format;
use crate::report::LoadReport;

mod chart;

use chart::{distribution, latency_over_time};
use volley_engine::report::escape_html as escape;

/// The percentiles the summary shows.
const PERCENTILES: [(&str, f64); 5] = [("p50", 50.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p99.9", 99.9)];

const STYLE: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 2rem;color:#1f2328}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:.3rem 0}td,th{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left;vertical-align:top}
th{font-weight:600;background:#f6f8fa}td.number{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1a7f37}.ko{color:#cf222e}.muted{color:#57606a}.note{color:#57606a;font-style:italic}
.passed .mark{color:#1a7f37}.failed .mark{color:#cf222e}
svg.chart{display:block;width:100%;max-width:860px;height:auto;margin:.5rem 0;font:12px system-ui,sans-serif}
svg.chart text{fill:#57606a}svg.chart .axis{stroke:#8c959f}svg.chart .grid{stroke:#eaeef2}
svg.chart .line{fill:none;stroke-width:1.6;stroke-linejoin:round;stroke-linecap:round}
svg.chart .p50{stroke:#0969da}svg.chart .p99{stroke:#bf8700}svg.chart .max{stroke:#cf222e;opacity:.4}
svg.chart .curve{stroke:#8250df}svg.chart .rate{fill:#e3e8ee}svg.chart .errors{fill:#ff8182}svg.chart .dot{fill:#8250df}
";

/// The HTML page of a load report.
#[must_use]
pub fn render(report: &LoadReport) -> String {
    let mut html = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(html, "<title>Volley load report: {}</title>", escape(&report.file));
    let _ = writeln!(html, "<style>{STYLE}</style>\n</head>\n<body>\n<h1>Volley load report</h1>");
    header(&mut html, report);
    summary(&mut html, report);
    thresholds(&mut html, report);
    html.push_str("<h2>Latency over time</h2>\n");
    latency_over_time(&mut html, report);
    html.push_str("<h2>Latency distribution</h2>\n");
    distribution(&mut html, &report.latency);
    html.push_str("</body>\n</html>\n");
    html
}

/// What ran, when and how: the file, the start, the model, the duration, the requests.
fn header(html: &mut String, report: &LoadReport) {
    // `2026-11-28T18:30:05.123Z` → `2026-11-28 18:30:05 UTC`.
    let started = report.started_at.get(..19).unwrap_or(&report.started_at).replace('T', " ");
    let _ = writeln!(
        html,
        "<p class=\"note\"><code>{}</code> · run on {} UTC · {}</p>",
        escape(&report.file),
        escape(&started),
        escape(&report.tool)
    );
    let mut how = vec![escape(&report.model.describe())];
    how.push(format!("for {}", format::micros(report.duration_ms * 1000.0)));
    if report.warmup_ms > 0.0 {
        how.push(format!("after a warm-up of {}", format::micros(report.warmup_ms * 1000.0)));
    }
    if let Some(shard) = &report.shard {
        how.push(format!("shard {}", escape(shard)));
    } else if report.runs > 1 {
        how.push(format!("{} runs merged", report.runs));
    }
    let _ = writeln!(html, "<p class=\"model\">{}</p>", how.join(" · "));
    if report.requests_sent.is_empty() {
        html.push_str("<p class=\"note\">no requests were sent</p>\n");
        return;
    }
    let total: u32 = report.requests_sent.iter().map(|target| target.weight).sum();
    html.push_str("<table class=\"requests-sent\">\n<tr><th>#</th><th>request</th><th>name</th><th>weight</th></tr>\n");
    for target in &report.requests_sent {
        let share = if total == 0 { 0.0 } else { f64::from(target.weight) / f64::from(total) };
        let _ = writeln!(
            html,
            "<tr><td class=\"number\">{}</td><td><code>{}</code></td><td>{}</td><td class=\"number\">{} ({})</td></tr>",
            target.index,
            escape(&target.line),
            target.name.as_deref().map(escape).unwrap_or_default(),
            target.weight,
            format::percent(share)
        );
    }
    html.push_str("</table>\n");
}

/// The figures: requests, rate, errors, statuses, bytes, latency percentiles, build time.
fn summary(html: &mut String, report: &LoadReport) {
    let summary = report.summary();
    html.push_str("<h2>Summary</h2>\n<table class=\"summary\">\n");
    let row = |html: &mut String, class: &str, name: &str, value: &str| {
        let _ = writeln!(html, "<tr class=\"{class}\"><th>{name}</th><td>{value}</td></tr>");
    };
    row(html, "requests", "requests", &format::thousands(report.requests));
    row(html, "rate", "rate", &format!("{}/s", format::rate(summary.rate)));
    let mut errors = format!(
        "<span class=\"{}\">{} ({})</span>",
        if summary.errors > 0 { "ko" } else { "muted" },
        format::thousands(summary.errors),
        format::percent(summary.error_ratio)
    );
    if !report.errors.is_empty() {
        let kinds: Vec<String> = report
            .errors
            .iter()
            .map(|(kind, count)| format!("{} {}", escape(kind), format::thousands(*count)))
            .collect();
        let _ = write!(errors, ": {}", kinds.join(" · "));
    }
    row(html, "errors", "errors", &errors);
    // What went wrong, in the words of the first error of each kind.
    for (kind, message) in &report.samples {
        row(html, "sample", &format!("first {}", escape(kind)), &format!("<code>{}</code>", escape(message)));
    }
    let statuses: Vec<String> = report
        .statuses
        .iter()
        .map(|(status, count)| {
            let class = if *status >= 400 { "ko" } else { "ok" };
            format!("<span class=\"{class}\">{status}</span> × {}", format::thousands(*count))
        })
        .collect();
    row(html, "statuses", "statuses", &statuses.join(" · "));
    row(html, "received", "received", &format::bytes(report.bytes_received));
    row(html, "sent", "sent", &format::bytes(report.bytes_sent));
    #[allow(clippy::cast_precision_loss)] // microseconds far below 2^52
    let build = format!(
        "mean {} · p99 {}",
        format::micros(report.build.mean()),
        format::micros(report.build.percentile(99.0) as f64)
    );
    row(html, "build", "build per request", &build);
    html.push_str("</table>\n");

    html.push_str("<table class=\"latency\">\n<tr><th>latency</th>");
    for (name, _) in PERCENTILES {
        let _ = write!(html, "<th>{name}</th>");
    }
    html.push_str("<th>max</th><th>mean</th></tr>\n<tr><th>all requests</th>");
    for (name, percentile) in PERCENTILES {
        #[allow(clippy::cast_precision_loss)] // microseconds far below 2^52
        let micros = report.latency.percentile(percentile) as f64;
        let _ = write!(html, "<td class=\"number {}\">{}</td>", name.replace('.', "-"), format::micros(micros));
    }
    #[allow(clippy::cast_precision_loss)] // microseconds far below 2^52
    let max = report.latency.max() as f64;
    let _ = writeln!(
        html,
        "<td class=\"number max\">{}</td><td class=\"number mean\">{}</td></tr>\n</table>",
        format::micros(max),
        format::micros(report.latency.mean())
    );
}

/// The thresholds checked, each with its mark and what the run measured.
fn thresholds(html: &mut String, report: &LoadReport) {
    if report.thresholds.is_empty() {
        return;
    }
    let failed = report.thresholds.iter().filter(|checked| !checked.passed).count();
    let _ = writeln!(
        html,
        "<h2>Thresholds</h2>\n<p class=\"{}\">{} of {} held</p>\n<table class=\"thresholds\">",
        if failed > 0 { "ko" } else { "ok" },
        report.thresholds.len() - failed,
        report.thresholds.len()
    );
    for checked in &report.thresholds {
        let (class, mark) = if checked.passed { ("passed", "✓") } else { ("failed", "✗") };
        let _ = writeln!(
            html,
            "<tr class=\"{class}\"><td class=\"mark\">{mark}</td><td><code>{}</code></td><td>{}</td></tr>",
            escape(&checked.threshold),
            escape(&checked.actual)
        );
    }
    html.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::chart::Axis;
    use super::render;
    use crate::histogram::Latencies;
    use crate::report::{KIND, LoadReport, ModelInfo, Second, Target};
    use crate::threshold::Checked;

    /// A report of `seconds` entries, each with `per_second` requests of latencies
    /// spread from 1 ms to about 1 s.
    fn report(seconds: u64, per_second: u64) -> LoadReport {
        let mut latency = Latencies::new();
        let mut timeline = Vec::new();
        for second in 0..seconds {
            let mut entry = Latencies::coarse();
            for index in 0..per_second {
                let micros = 1_000 + (index * 7_919 + second * 104_729) % 1_000_000;
                entry.record(Duration::from_micros(micros));
                latency.record(Duration::from_micros(micros));
            }
            timeline.push(Second { second, requests: per_second, errors: second % 3, latency: entry });
        }
        #[allow(clippy::cast_precision_loss)] // a test's small count
        let duration_ms = (seconds * 1000) as f64;
        LoadReport {
            kind: KIND.to_owned(),
            tool: "volley 0.1.0".to_owned(),
            started_at: "2026-11-29T10:00:00.000Z".to_owned(),
            file: "api.http".to_owned(),
            requests_sent: vec![Target {
                index: 1,
                name: Some("list".to_owned()),
                line: "GET http://localhost/items".to_owned(),
                weight: 1,
            }],
            model: ModelInfo::Closed { connections: 4 },
            shard: None,
            runs: 1,
            duration_ms,
            warmup_ms: 1000.0,
            requests: seconds * per_second,
            errors: BTreeMap::from([("status".to_owned(), seconds)]),
            samples: BTreeMap::new(),
            statuses: BTreeMap::from([(200, seconds * per_second - seconds), (500, seconds)]),
            bytes_received: 123_456,
            bytes_sent: 0,
            latency,
            build: Latencies::new(),
            timeline_step: 1,
            timeline,
            thresholds: Vec::new(),
        }
    }

    #[test]
    fn every_text_from_the_file_is_escaped() {
        let mut report = report(3, 10);
        report.file = "<b>file</b>.http".to_owned();
        report.requests_sent[0].line = "GET http://x/<script>alert('x')</script>".to_owned();
        report.requests_sent[0].name = Some("\"><img src=x onerror=alert(1)>".to_owned());
        report.errors.insert("<i>kind</i>".to_owned(), 1);
        report.samples.insert("<i>kind</i>".to_owned(), "<em>refused</em>".to_owned());
        let html = render(&report);
        assert!(!html.contains("<script"), "no script element");
        assert!(!html.contains("<img"), "no image element");
        assert!(!html.contains("<b>file"));
        assert!(!html.contains("<i>kind"));
        assert!(!html.contains("<em>"));
        assert!(
            html.contains("<th>first &lt;i&gt;kind&lt;/i&gt;</th><td><code>&lt;em&gt;refused&lt;/em&gt;</code></td>")
        );
        assert!(html.contains("GET http://x/&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
        assert!(html.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
    }

    #[test]
    fn an_empty_report_renders() {
        let mut report = report(0, 0);
        report.requests_sent.clear();
        report.duration_ms = 0.0;
        let html = render(&report);
        assert!(html.contains("<svg class=\"chart latency-over-time\""));
        assert!(html.contains("<svg class=\"chart distribution\""));
        assert!(html.contains("no requests in the measured time"));
        assert!(html.contains("no latencies recorded"));
        assert!(html.contains("<tr class=\"requests\"><th>requests</th><td>0</td></tr>"));
        assert!(!html.contains("NaN") && !html.contains("inf"), "every coordinate a number");
    }

    #[test]
    fn a_single_entry_draws_dots() {
        let html = render(&report(1, 20));
        assert!(html.contains("a2 2 0 1 0 -4 0\"><title>p50</title>"), "a lone point is drawn as a ring");
        assert!(!html.contains("NaN"));
    }

    #[test]
    fn a_long_run_stays_small() {
        let html = render(&report(900, 50));
        assert!(html.len() < 1_000_000, "{} bytes", html.len());
        assert!(!html.contains("NaN"));
        // Long runs are drawn with as many points as entries, not more.
        let p50 = html.split("class=\"line p50\"").nth(1).unwrap_or_default();
        let points = p50.split("</path>").next().unwrap_or_default().matches('L').count();
        assert_eq!(points, 899);
    }

    #[test]
    fn thresholds_show_their_marks() {
        let plain = report(3, 10);
        assert!(!render(&plain).contains("class=\"thresholds\""), "no table without thresholds");
        let mut report = plain;
        report.thresholds = vec![
            Checked { threshold: "p95<200ms".to_owned(), actual: "p95 = 12.0 ms".to_owned(), passed: true },
            Checked { threshold: "errors<1%".to_owned(), actual: "errors = 10.0 %".to_owned(), passed: false },
        ];
        let html = render(&report);
        assert!(html.contains("<tr class=\"passed\"><td class=\"mark\">✓</td><td><code>p95&lt;200ms</code></td><td>p95 = 12.0 ms</td></tr>"));
        assert!(html.contains("<tr class=\"failed\"><td class=\"mark\">✗</td><td><code>errors&lt;1%</code></td>"));
        assert!(html.contains("1 of 2 held"));
    }

    #[test]
    fn the_summary_shows_the_figures() {
        let html = render(&report(10, 20));
        assert!(html.contains("<tr class=\"requests\"><th>requests</th><td>200</td></tr>"));
        assert!(html.contains("<tr class=\"rate\"><th>rate</th><td>20.00/s</td></tr>"));
        assert!(html.contains("status 10"));
        assert!(html.contains("4 connections (closed model)"));
        assert!(html.contains("after a warm-up of 1.00 s"));
    }

    #[test]
    fn a_second_without_answers_breaks_the_lines() {
        let mut report = report(5, 10);
        report.timeline[2].requests = 0;
        report.timeline[2].latency = Latencies::coarse();
        let html = render(&report);
        let p50 = html.split("class=\"line p50\" d=\"").nth(1).unwrap_or_default();
        let path = p50.split('"').next().unwrap_or_default();
        assert_eq!(path.matches('M').count(), 2, "two lines: {path}");
        assert_eq!(path.matches('L').count(), 2, "of two points each: {path}");
    }

    #[test]
    fn a_run_shorter_than_a_second_has_its_own_rate() {
        let mut report = report(1, 200);
        report.duration_ms = 250.0;
        let html = render(&report);
        // 200 requests in 0.25 s: the rate axis goes to 800/s, the time axis to 0.25 s.
        assert!(html.contains(">800</text>"), "the rate scale fits 800/s");
        assert!(html.contains(">0.20s</text>") && !html.contains(">1.0s</text>"));
    }

    #[test]
    fn axes_take_round_steps() {
        let axis = Axis::fitting(7.3);
        assert_eq!((axis.top, axis.step), (8.0, 2.0));
        assert!((Axis::fitting(0.0).top - 1.0).abs() < 1e-9, "an empty axis goes to 1");
        let small = Axis::fitting(0.42);
        assert_eq!(small.label(0.1 * 3.0), "0.3");
        assert_eq!(Axis::fitting(930.0).ticks().count(), 6);
        let time = Axis::ending_at(900.0);
        assert_eq!((time.top, time.step), (900.0, 200.0));
        assert_eq!(time.ticks().last(), Some(800.0));
    }
}
