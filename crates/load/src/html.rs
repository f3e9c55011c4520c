//! The HTML report of a load run: one self-contained page (inline CSS and SVG, no
//! script, nothing fetched) to open from a CI artifact. A header saying what ran and
//! how, the summary figures, the thresholds, then two charts: the latency over time
//! (p50, p99 and max of each timeline entry, with the requests per second as bars)
//! and the latency distribution (the percentile curve on the log scale of
//! `HdrHistogram`'s plots). Every text is escaped, since request lines, names and error
//! messages come from files and servers nobody vetted.

use std::fmt::Write as _;

use crate::format;
use crate::histogram::Latencies;
use crate::report::{LoadReport, Second};

/// The percentiles the summary shows.
const PERCENTILES: [(&str, f64); 5] = [("p50", 50.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p99.9", 99.9)];

/// The size of a chart, in SVG units (it scales down with the page).
const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 300.0;

/// The plot area inside a chart: room left and right for the axes' labels, above for
/// the legend, below for the x axis.
const PLOT: Plot = Plot { left: 64.0, right: WIDTH - 70.0, top: 36.0, bottom: HEIGHT - 44.0 };

/// How many points the percentile curve is drawn with, whatever the histogram holds.
const CURVE_POINTS: u32 = 360;

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

/// The chart of the timeline: per entry, lines for p50, p99 and (faint) max on the
/// left scale, the requests per second as bars on the right scale, errors in red.
fn latency_over_time(html: &mut String, report: &LoadReport) {
    let step = report.timeline_step.max(1);
    let measured = report.duration_ms / 1000.0;
    let points: Vec<Point> = report.timeline.iter().map(|entry| Point::of(entry, step, measured)).collect();
    let end = points.iter().map(|point| point.second + point.length).fold(measured, f64::max);
    let span = if end > 0.0 { end } else { 1.0 };
    // The latency scale fits the highest max, unless one outlier would flatten the
    // other lines: then it fits p99 and the max line is cut at the top.
    let highest_p99 = points.iter().map(|point| point.p99).fold(0.0, f64::max);
    let highest_max = points.iter().map(|point| point.max).fold(0.0, f64::max);
    let cut = highest_max > 3.0 * highest_p99;
    let latency = Axis::fitting(if cut { highest_p99 * 1.5 } else { highest_max });
    let rate = Axis::fitting(points.iter().map(|point| point.rate).fold(0.0, f64::max));
    let seconds = Axis::ending_at(span);
    let x = Scale::new(seconds.top, PLOT.left, PLOT.right);
    let y = Scale::new(latency.top, PLOT.bottom, PLOT.top);
    let y_rate = Scale::new(rate.top, PLOT.bottom, PLOT.top);

    open_chart(
        html,
        "latency-over-time",
        "Latency over time: p50, p99 and max per second, requests per second as bars",
    );
    let _ = writeln!(
        html,
        "<clipPath id=\"latency-over-time-plot\"><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/></clipPath>",
        PLOT.left,
        PLOT.top,
        PLOT.right - PLOT.left,
        PLOT.bottom - PLOT.top
    );
    for tick in latency.ticks() {
        let at = y.at(tick);
        let _ = writeln!(
            html,
            "<line class=\"grid\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{at:.1}\" y2=\"{at:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            PLOT.left,
            PLOT.right,
            PLOT.left - 6.0,
            at + 4.0,
            latency.label(tick)
        );
    }
    for tick in rate.ticks() {
        let _ = writeln!(
            html,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            PLOT.right + 6.0,
            y_rate.at(tick) + 4.0,
            rate.label(tick)
        );
    }
    x_axis(html, &seconds, &x, |tick| format!("{}s", seconds.label(tick)));
    let _ = writeln!(
        html,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">ms</text><text x=\"{:.1}\" y=\"{:.1}\">requests/s</text>",
        PLOT.left - 6.0,
        PLOT.top - 12.0,
        PLOT.right + 6.0,
        PLOT.top - 12.0
    );
    if points.is_empty() {
        empty(html, "no requests in the measured time");
    } else {
        let bars = |value: fn(&Point) -> f64| {
            let mut path = String::new();
            for point in points.iter().filter(|point| value(point) > 0.0) {
                let (start, end) = (x.at(point.second), x.at(point.second + point.length));
                // A gap between wide bars; thin ones touch.
                let inset = ((end - start) * 0.1).min(2.0);
                let _ = write!(
                    path,
                    "M{:.1} {:.1}V{:.1}H{:.1}V{:.1}Z",
                    start + inset,
                    PLOT.bottom,
                    y_rate.at(value(point)),
                    end - inset,
                    PLOT.bottom
                );
            }
            path
        };
        let _ = writeln!(
            html,
            "<path class=\"rate\" d=\"{}\"><title>requests per second</title></path>",
            bars(|point| point.rate)
        );
        let _ = writeln!(
            html,
            "<path class=\"errors\" d=\"{}\"><title>errors per second</title></path>",
            bars(|point| point.errors)
        );
        let line = |value: fn(&Point) -> f64| {
            // The entries with latencies, in runs: an entry without any breaks the line.
            let runs = points.split(|point| !point.measured).filter(|run| !run.is_empty());
            let mut path = String::new();
            for run in runs {
                let (first_x, first_y) = (x.at(run[0].middle()), y.at(value(&run[0])));
                if run.len() == 1 {
                    // A lone entry as a small ring, which the line's stroke fills.
                    let _ = write!(path, "M{:.1} {first_y:.1}a2 2 0 1 0 4 0a2 2 0 1 0 -4 0", first_x - 2.0);
                    continue;
                }
                let _ = write!(path, "M{first_x:.1} {first_y:.1}");
                for point in &run[1..] {
                    let _ = write!(path, "L{:.1} {:.1}", x.at(point.middle()), y.at(value(point)));
                }
            }
            path
        };
        let _ = writeln!(
            html,
            "<g class=\"lines\" clip-path=\"url(#latency-over-time-plot)\">\
             <path class=\"line max\" d=\"{}\"><title>max</title></path>\n\
             <path class=\"line p99\" d=\"{}\"><title>p99</title></path>\n\
             <path class=\"line p50\" d=\"{}\"><title>p50</title></path></g>",
            line(|point| point.max),
            line(|point| point.p99),
            line(|point| point.p50)
        );
    }
    axes(html);
    let max_label = if cut { "max (cut at the top)" } else { "max" };
    legend(
        html,
        &[
            ("line p50", "p50"),
            ("line p99", "p99"),
            ("line max", max_label),
            ("rate", "requests/s"),
            ("errors", "errors/s"),
        ],
    );
    html.push_str("</svg>\n");
    if step > 1 {
        let _ = writeln!(html, "<p class=\"note\">each entry of the timeline is {step} seconds</p>");
    }
}

/// One entry of the timeline, in the chart's units: seconds, milliseconds, per second.
struct Point {
    second: f64,
    /// The seconds it covers: the timeline's step, less for the run's last, cut short.
    length: f64,
    /// Whether the entry has latencies (a second with nothing ended has none).
    measured: bool,
    p50: f64,
    p99: f64,
    max: f64,
    rate: f64,
    errors: f64,
}

impl Point {
    #[allow(clippy::cast_precision_loss)] // seconds, counts and microseconds far below 2^52
    fn of(entry: &Second, step: u64, measured: f64) -> Point {
        let millis = |micros: u64| micros as f64 / 1000.0;
        let second = entry.second as f64;
        // The last entry ends with the run: 200 requests in its first 0.25 s are 800/s.
        let left = measured - second;
        let length = if left > 0.0 { left.min(step as f64) } else { step as f64 };
        Point {
            second,
            length,
            measured: !entry.latency.is_empty(),
            p50: millis(entry.latency.percentile(50.0)),
            p99: millis(entry.latency.percentile(99.0)),
            max: millis(entry.latency.max()),
            rate: entry.requests as f64 / length,
            errors: entry.errors as f64 / length,
        }
    }

    fn middle(&self) -> f64 {
        self.second + self.length / 2.0
    }
}

/// The chart of the latency distribution: the latency at each percentile, the
/// percentiles on a log scale of 1/(1-p) as `HdrHistogram`'s plots have them (0, 90, 99, 99.9,
/// …), with dots at the summary's percentiles.
fn distribution(html: &mut String, latency: &Latencies) {
    // As many nines as the count can tell apart: 200 requests say nothing past p99.9.
    #[allow(clippy::cast_precision_loss, clippy::cast_sign_loss)] // a small count of decades
    let decades = ((latency.len().max(1) as f64).log10().ceil().clamp(2.0, 6.0)) as u32;
    let nines = f64::from(decades);
    let millis_at = |percentile: f64| {
        #[allow(clippy::cast_precision_loss)] // microseconds far below 2^52
        let micros = latency.percentile(percentile) as f64;
        micros / 1000.0
    };
    // The percentile at a distance of `nines` along the axis: 1 → 90, 2 → 99, …
    let percentile_at = |along: f64| 100.0 * (1.0 - 10f64.powf(-along));
    let curve: Vec<(f64, f64)> = (0..=CURVE_POINTS)
        .map(|index| {
            let along = nines * f64::from(index) / f64::from(CURVE_POINTS);
            (along, millis_at(percentile_at(along)))
        })
        .collect();
    let millis = Axis::fitting(curve.iter().map(|(_, millis)| *millis).fold(0.0, f64::max));
    let x = Scale::new(nines, PLOT.left, PLOT.right);
    let y = Scale::new(millis.top, PLOT.bottom, PLOT.top);

    open_chart(html, "distribution", "Latency distribution: the latency at each percentile");
    for tick in millis.ticks() {
        let at = y.at(tick);
        let _ = writeln!(
            html,
            "<line class=\"grid\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{at:.1}\" y2=\"{at:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            PLOT.left,
            PLOT.right,
            PLOT.left - 6.0,
            at + 4.0,
            millis.label(tick)
        );
    }
    for decade in 0..=decades {
        let at = x.at(f64::from(decade));
        // 0 %, 90 %, 99 %, 99.9 %: one decimal more for each nine past the second.
        let decimals = decade.saturating_sub(2) as usize;
        let _ = writeln!(
            html,
            "<line class=\"grid\" x1=\"{at:.1}\" x2=\"{at:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\
             <text x=\"{at:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{:.decimals$}%</text>",
            PLOT.top,
            PLOT.bottom,
            PLOT.bottom + 16.0,
            percentile_at(f64::from(decade))
        );
    }
    let _ = writeln!(
        html,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">ms</text>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">percentile</text>",
        PLOT.left - 6.0,
        PLOT.top - 12.0,
        f64::midpoint(PLOT.left, PLOT.right),
        HEIGHT - 6.0
    );
    if latency.is_empty() {
        empty(html, "no latencies recorded");
    } else {
        let mut path = String::new();
        for (index, (along, millis)) in curve.iter().enumerate() {
            let _ = write!(path, "{}{:.1} {:.1}", if index == 0 { 'M' } else { 'L' }, x.at(*along), y.at(*millis));
        }
        let _ = writeln!(
            html,
            "<g class=\"lines\"><path class=\"line curve\" d=\"{path}\"><title>latency by percentile</title></path></g>"
        );
        for (name, percentile) in PERCENTILES {
            let along = -(1.0 - percentile / 100.0).log10();
            if along <= nines {
                let millis = millis_at(percentile);
                let _ = writeln!(
                    html,
                    "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\"><title>{name}: {}</title></circle>",
                    x.at(along),
                    y.at(millis),
                    format::micros(millis * 1000.0)
                );
            }
        }
    }
    axes(html);
    legend(html, &[("line curve", "latency at the percentile")]);
    html.push_str("</svg>\n");
}

/// Opens a chart's `<svg>` with its class and title.
fn open_chart(html: &mut String, class: &str, title: &str) {
    let _ = writeln!(
        html,
        "<svg class=\"chart {class}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\">\n<title>{}</title>",
        escape(title)
    );
}

/// The x axis's ticks and labels.
fn x_axis(html: &mut String, axis: &Axis, x: &Scale, label: impl Fn(f64) -> String) {
    for tick in axis.ticks() {
        let at = x.at(tick);
        let _ = writeln!(
            html,
            "<line class=\"axis\" x1=\"{at:.1}\" x2=\"{at:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\
             <text x=\"{at:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            PLOT.bottom,
            PLOT.bottom + 4.0,
            PLOT.bottom + 16.0,
            label(tick)
        );
    }
}

/// The two axis lines, left and bottom.
fn axes(html: &mut String) {
    let _ = writeln!(
        html,
        "<path class=\"axis\" fill=\"none\" d=\"M{:.1} {:.1}V{:.1}H{:.1}\"/>",
        PLOT.left, PLOT.top, PLOT.bottom, PLOT.right
    );
}

/// A message in the middle of an empty chart.
fn empty(html: &mut String, message: &str) {
    let _ = writeln!(
        html,
        "<text class=\"empty\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        f64::midpoint(PLOT.left, PLOT.right),
        f64::midpoint(PLOT.top, PLOT.bottom),
        escape(message)
    );
}

/// A legend above the plot: a swatch in each entry's class, then its name.
fn legend(html: &mut String, entries: &[(&str, &str)]) {
    let mut at = PLOT.left;
    html.push_str("<g class=\"legend\">");
    for (class, name) in entries {
        if class.starts_with("line") {
            let _ = write!(html, "<path class=\"{class}\" d=\"M{at:.1} 14h16\"/>");
        } else {
            let _ = write!(html, "<rect class=\"{class}\" x=\"{at:.1}\" y=\"9\" width=\"16\" height=\"10\"/>");
        }
        let _ = write!(html, "<text x=\"{:.1}\" y=\"18\">{}</text>", at + 20.0, escape(name));
        // About 7 units a character at 12px.
        #[allow(clippy::cast_precision_loss)] // a short name
        let width = name.chars().count() as f64 * 7.0;
        at += 20.0 + width + 18.0;
    }
    html.push_str("</g>\n");
}

/// The plot area of a chart, in SVG units.
#[derive(Debug, Clone, Copy)]
struct Plot {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

/// A linear map from `0..=top` in data to `start..=end` in SVG units.
struct Scale {
    top: f64,
    start: f64,
    end: f64,
}

impl Scale {
    fn new(top: f64, start: f64, end: f64) -> Scale {
        Scale { top, start, end }
    }

    fn at(&self, value: f64) -> f64 {
        self.start + (self.end - self.start) * (value / self.top)
    }
}

/// An axis from 0 to a round top, with ticks at round steps (1, 2 or 5 times a power
/// of ten), about five of them.
struct Axis {
    top: f64,
    step: f64,
}

impl Axis {
    /// The axis that holds values up to `highest` (1 when there are none).
    fn fitting(highest: f64) -> Axis {
        let highest = if highest.is_finite() && highest > 0.0 { highest } else { 1.0 };
        let rough = highest / 5.0;
        let power = 10f64.powf(rough.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|times| times * power)
            .find(|step| *step >= rough)
            .unwrap_or(10.0 * power);
        Axis { top: (highest / step).ceil() * step, step }
    }

    /// The axis from 0 to `end` itself, with round ticks up to it: the time of a run.
    fn ending_at(end: f64) -> Axis {
        let round = Axis::fitting(end);
        Axis { top: if end.is_finite() && end > 0.0 { end } else { round.top }, step: round.step }
    }

    fn ticks(&self) -> impl Iterator<Item = f64> + '_ {
        // A hair over for the rounding of a top that is a multiple of the step.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // about five, positive
        let count = (self.top / self.step + 1e-9).floor() as u32;
        (0..=count).map(|index| f64::from(index) * self.step)
    }

    /// A tick's value with as many decimals as the step needs: `0.5`, `20`.
    fn label(&self, value: f64) -> String {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a few decimals
        let decimals = if self.step >= 1.0 { 0 } else { (-self.step.log10().floor()) as usize };
        format!("{value:.decimals$}")
    }
}

/// Text for HTML content and quoted attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::{Axis, render};
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
