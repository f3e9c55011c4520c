//! Thresholds a load run must hold: `p95<200ms`, `errors<1%`, `rate>5000/s`, read from
//! `volley load --threshold` and from `# @load` directives alike. Each is a metric, a
//! comparison and a value with its unit; `volley-load` checks them against a run.

use std::fmt;

/// A threshold as written on the command line or in a `# @load` directive.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As written, spaces removed.
    pub text: String,
    /// What it measures.
    pub metric: Metric,
    /// How the measure compares with the value.
    pub comparison: Comparison,
    /// The value, in microseconds for latencies and as a ratio for `errors<1%`.
    pub value: f64,
}

/// What a threshold measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
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

/// How a threshold compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `<`.
    Less,
    /// `<=`.
    LessOrEqual,
    /// `>`.
    Greater,
    /// `>=`.
    GreaterOrEqual,
}

/// Why a threshold could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThresholdError {
    text: String,
    problem: String,
}

impl fmt::Display for ThresholdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid threshold `{}`: {}", self.text, self.problem)
    }
}

impl std::error::Error for ThresholdError {}

impl ThresholdError {
    /// The `invalid-threshold` diagnostic of this error at `span` (a `# @load` value).
    #[must_use]
    pub fn diagnostic(&self, span: crate::Span) -> crate::Diagnostic {
        crate::Diagnostic::new(crate::Code::InvalidThreshold, span, self.to_string()).with_hint(Self::hint())
    }

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

/// The thresholds of a `# @load` directive's value: comma-separated, each read alone.
#[must_use]
pub fn of_directive(value: &str) -> Vec<Result<Threshold, ThresholdError>> {
    value.split(',').filter(|part| !part.trim().is_empty()).map(str::parse).collect()
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
