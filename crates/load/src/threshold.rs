//! Thresholds a load run must hold for CI (read by `volley_syntax::threshold`, from
//! `--threshold` and `# @load` directives): a run whose report breaks one fails
//! (`volley load` exits 1 and names it).

use volley_syntax::threshold::{Comparison, Metric};
pub use volley_syntax::threshold::{Threshold, ThresholdError};

pub use crate::report::Checked;
use crate::report::LoadReport;

/// Checking a threshold against a load report.
pub trait CheckThreshold {
    /// Checks the threshold against a report.
    fn check(&self, report: &LoadReport) -> Checked;
}

impl CheckThreshold for Threshold {
    fn check(&self, report: &LoadReport) -> Checked {
        let summary = report.summary();
        #[allow(clippy::cast_precision_loss)] // counts and microseconds far below 2^52
        let (actual, shown) = match self.metric {
            Metric::Percentile(percentile) => {
                let micros = report.latency.percentile(percentile) as f64;
                (micros, format!("{} = {}", name(self), crate::format::micros(micros)))
            }
            Metric::Mean => {
                let micros = report.latency.mean();
                (micros, format!("mean = {}", crate::format::micros(micros)))
            }
            Metric::ErrorRatio => {
                (summary.error_ratio, format!("errors = {}", crate::format::percent(summary.error_ratio)))
            }
            Metric::Errors => (summary.errors as f64, format!("errors = {}", summary.errors)),
            Metric::Rate => (summary.rate, format!("rate = {}/s", crate::format::rate(summary.rate))),
            Metric::Requests => (report.requests as f64, format!("requests = {}", report.requests)),
        };
        let passed = match self.comparison {
            Comparison::Less => actual < self.value,
            Comparison::LessOrEqual => actual <= self.value,
            Comparison::Greater => actual > self.value,
            Comparison::GreaterOrEqual => actual >= self.value,
        };
        Checked { threshold: self.text.clone(), actual: shown, passed }
    }
}

/// The metric's name as shown (`p95`, `max`, `errors`).
fn name(threshold: &Threshold) -> String {
    match threshold.metric {
        Metric::Percentile(percentile) if percentile >= 100.0 => "max".to_owned(),
        Metric::Percentile(percentile) => format!("p{percentile}"),
        _ => threshold.text.split(['<', '>']).next().unwrap_or_default().to_owned(),
    }
}
