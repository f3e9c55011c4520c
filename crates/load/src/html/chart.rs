//! The report page's two charts as inline SVG: the latency over time (p50, p99 and the
//! maximum of each timeline entry, the rate as bars) and the latency distribution (the
//! percentile curve on the scale of 1/(1-p)), with their axes, ticks and legends.

use std::fmt::Write as _;

use super::{PERCENTILES, escape};
use crate::format;
use crate::histogram::Latencies;
use crate::report::{LoadReport, Second};

/// The size of a chart, in SVG units (it scales down with the page).
const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 300.0;

/// The plot area inside a chart: room left and right for the axes' labels, above for
/// the legend, below for the x axis.
const PLOT: Plot = Plot { left: 64.0, right: WIDTH - 70.0, top: 36.0, bottom: HEIGHT - 44.0 };

/// How many points the percentile curve is drawn with, whatever the histogram holds.
const CURVE_POINTS: u32 = 360;

/// The chart of the timeline: per entry, lines for p50, p99 and (faint) max on the
/// left scale, the requests per second as bars on the right scale, errors in red.
pub(super) fn latency_over_time(html: &mut String, report: &LoadReport) {
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
    y_axis(html, &latency, &y);
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
pub(super) fn distribution(html: &mut String, latency: &Latencies) {
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
    y_axis(html, &millis, &y);
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

/// The grid lines of a chart's latency axis, each labelled on the left.
fn y_axis(html: &mut String, axis: &Axis, y: &Scale) {
    for tick in axis.ticks() {
        let at = y.at(tick);
        let _ = writeln!(
            html,
            "<line class=\"grid\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{at:.1}\" y2=\"{at:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            PLOT.left,
            PLOT.right,
            PLOT.left - 6.0,
            at + 4.0,
            axis.label(tick)
        );
    }
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
pub(super) struct Axis {
    pub(super) top: f64,
    pub(super) step: f64,
}

impl Axis {
    /// The axis that holds values up to `highest` (1 when there are none).
    pub(super) fn fitting(highest: f64) -> Axis {
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
    pub(super) fn ending_at(end: f64) -> Axis {
        let round = Axis::fitting(end);
        Axis { top: if end.is_finite() && end > 0.0 { end } else { round.top }, step: round.step }
    }

    pub(super) fn ticks(&self) -> impl Iterator<Item = f64> + '_ {
        // A hair over for the rounding of a top that is a multiple of the step.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // about five, positive
        let count = (self.top / self.step + 1e-9).floor() as u32;
        (0..=count).map(|index| f64::from(index) * self.step)
    }

    /// A tick's value with as many decimals as the step needs: `0.5`, `20`.
    pub(super) fn label(&self, value: f64) -> String {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a few decimals
        let decimals = if self.step >= 1.0 { 0 } else { (-self.step.log10().floor()) as usize };
        format!("{value:.decimals$}")
    }
}
