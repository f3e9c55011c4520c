//! Thresholds a load run must hold for CI: `p95<200ms`, `errors<1%`, `rate>5000/s`.
//! Each is a metric, a comparison and a value with its unit; a run whose report breaks
//! one fails (`volley load` exits 1 and names it).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::report::LoadReport;

/// A threshold as written on the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As written, spaces removed.
    pub text: String,
    metric: Metric,
    comparison: Comparison,
    value: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    /// A latency percentile (`max` is 100), compared in microseconds.
    Percentile(f64),
    Mean,
    /// Failed requests per request (`errors<1%`).
    ErrorRatio,
    /// Failed requests (`errors<10`).
    Errors,
    /// Requests per second.
    Rate,
    /// Requests counted.
    Requests,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparison {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

/// A threshold checked against a report.
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

/// Why a threshold could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid threshold `{text}`: {problem}")]
pub struct ThresholdError {
    text: String,
    problem: String,
}

impl ThresholdError {
    /// A hint for the user.
    #[must_use]
    pub fn hint() -> &'static str {
        "write METRIC<VALUE: p50 p90 p95 p99 p99.9 max mean with ms, s or us (p95<200ms); \
         errors with % or a count (errors<1%); rate with /s (rate>5000/s); requests (requests>=1000); \
         comparisons <, <=, >, >="
    }
}

impl std::str::FromStr for Threshold {
    type Err = ThresholdError;

    fn from_str(written: &str) -> Result<Self, Self::Err> {
        let text: String = written.chars().filter(|c| !c.is_whitespace()).collect();
        let problem = |problem: &str| ThresholdError { text: text.clone(), problem: problem.to_owned() };
        let Some(at) = text.find(['<', '>']) else {
            return Err(problem("no comparison (<, <=, >, >=)"));
        };
        let (name, rest) = text.split_at(at);
        let (comparison, value) = if let Some(value) = rest.strip_prefix("<=") {
            (Comparison::LessOrEqual, value)
        } else if let Some(value) = rest.strip_prefix(">=") {
            (Comparison::GreaterOrEqual, value)
        } else if let Some(value) = rest.strip_prefix('<') {
            (Comparison::Less, value)
        } else {
            (Comparison::Greater, &rest[1..])
        };
        let name = name.to_ascii_lowercase();
        let (metric, value) = match name.as_str() {
            "max" => (Metric::Percentile(100.0), latency(value).map_err(|p| problem(&p))?),
            "mean" | "avg" => (Metric::Mean, latency(value).map_err(|p| problem(&p))?),
            "errors" | "error" => {
                if let Some(percent) = value.strip_suffix('%') {
                    let ratio = number(percent).map_err(|p| problem(&p))? / 100.0;
                    (Metric::ErrorRatio, ratio)
                } else {
                    (Metric::Errors, number(value).map_err(|p| problem(&p))?)
                }
            }
            "rate" | "rps" => {
                let value = value.strip_suffix("/s").unwrap_or(value);
                (Metric::Rate, number(value).map_err(|p| problem(&p))?)
            }
            "requests" => (Metric::Requests, number(value).map_err(|p| problem(&p))?),
            percentile => {
                let Some(digits) = percentile.strip_prefix('p') else {
                    return Err(problem(&format!(
                        "unknown metric `{name}`: known are p50, p90, p95, p99, p99.9 (any pNN), max, mean, errors, rate, requests"
                    )));
                };
                let percentile = number(digits).map_err(|_| problem(&format!("unknown metric `{name}`")))?;
                if !(0.0..=100.0).contains(&percentile) {
                    return Err(problem("a percentile is between p0 and p100"));
                }
                (Metric::Percentile(percentile), latency(value).map_err(|p| problem(&p))?)
            }
        };
        Ok(Threshold { text, metric, comparison, value })
    }
}

/// A latency with its unit, in microseconds.
fn latency(value: &str) -> Result<f64, String> {
    let (digits, scale) = if let Some(digits) = value.strip_suffix("ms") {
        (digits, 1_000.0)
    } else if let Some(digits) = value.strip_suffix("us").or_else(|| value.strip_suffix("µs")) {
        (digits, 1.0)
    } else if let Some(digits) = value.strip_suffix('s') {
        (digits, 1_000_000.0)
    } else {
        return Err(format!("`{value}` needs a unit: ms, s or us (200ms)"));
    };
    Ok(number(digits)? * scale)
}

fn number(digits: &str) -> Result<f64, String> {
    match digits.parse::<f64>() {
        Ok(number) if number.is_finite() && number >= 0.0 => Ok(number),
        _ => Err(format!("`{digits}` is not a number")),
    }
}

impl Threshold {
    /// Checks the threshold against a report.
    #[must_use]
    pub fn check(&self, report: &LoadReport) -> Checked {
        let summary = report.summary();
        #[allow(clippy::cast_precision_loss)] // counts and microseconds far below 2^52
        let (actual, shown) = match self.metric {
            Metric::Percentile(percentile) => {
                let micros = report.latency.percentile(percentile) as f64;
                (micros, format!("{} = {}", self.name(), crate::format::micros(micros)))
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

    fn name(&self) -> String {
        match self.metric {
            Metric::Percentile(percentile) if percentile >= 100.0 => "max".to_owned(),
            Metric::Percentile(percentile) => format!("p{percentile}"),
            _ => self.text.split(['<', '>']).next().unwrap_or_default().to_owned(),
        }
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::Threshold;

    #[test]
    fn thresholds_read_as_written() {
        for good in [
            "p95<200ms",
            "p99.9 <= 1s",
            "max<2s",
            "mean<500us",
            "errors<1%",
            "errors<=0",
            "rate>5000/s",
            "rate>=10",
            "requests>=1000",
            "P50<3ms",
        ] {
            assert!(good.parse::<Threshold>().is_ok(), "{good}");
        }
        for (bad, says) in [
            ("p95 200ms", "no comparison"),
            ("p95<200", "needs a unit"),
            ("latency<2ms", "unknown metric `latency`"),
            ("p101<1s", "between p0 and p100"),
            ("rate>fast", "not a number"),
            ("errors<-1%", "not a number"),
        ] {
            let error = bad.parse::<Threshold>().unwrap_err().to_string();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
