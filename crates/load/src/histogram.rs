//! Latencies in an HDR histogram (microseconds, three significant digits: a recorded
//! value is within 0.1 % of the true one), written into reports as the list of its
//! buckets so that shards merge exactly: adding two reports' buckets gives the
//! histogram one run of both would have recorded.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The longest latency recorded as itself: an hour. Longer ones are recorded as an hour.
const HIGHEST_MICROS: u64 = 3_600_000_000;

/// A histogram of latencies in microseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Latencies(Histogram<u64>);

impl Default for Latencies {
    fn default() -> Self {
        Latencies::new()
    }
}

impl Latencies {
    /// An empty histogram.
    #[must_use]
    pub fn new() -> Latencies {
        // The bounds are constants that hdrhistogram accepts (1 ≤ low, high ≥ 2·low, 3 digits).
        Latencies(Histogram::new_with_bounds(1, HIGHEST_MICROS, 3).unwrap_or_else(|_| unreachable!("valid bounds")))
    }

    /// An empty histogram of two significant digits (within 1 %), a seventh of the
    /// memory: a second of a run's timeline.
    #[must_use]
    pub fn coarse() -> Latencies {
        Latencies(Histogram::new_with_bounds(1, HIGHEST_MICROS, 2).unwrap_or_else(|_| unreachable!("valid bounds")))
    }

    /// Records one latency.
    pub fn record(&mut self, latency: std::time::Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX).clamp(1, HIGHEST_MICROS);
        self.0.saturating_record(micros);
    }

    /// Adds every latency of `other`.
    pub fn add(&mut self, other: &Latencies) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.0.add(&other.0);
    }

    /// How many latencies were recorded.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// `true` when nothing was recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The latency at `percentile` (0–100), in microseconds; 0 when empty.
    #[must_use]
    pub fn percentile(&self, percentile: f64) -> u64 {
        if self.0.is_empty() { 0 } else { self.0.value_at_percentile(percentile) }
    }

    /// The longest latency, in microseconds (within the precision); 0 when empty.
    #[must_use]
    pub fn max(&self) -> u64 {
        if self.0.is_empty() { 0 } else { self.0.max() }
    }

    /// The shortest latency, in microseconds; 0 when empty.
    #[must_use]
    pub fn min(&self) -> u64 {
        if self.0.is_empty() { 0 } else { self.0.min() }
    }

    /// The mean latency, in microseconds; 0 when empty.
    #[must_use]
    pub fn mean(&self) -> f64 {
        if self.0.is_empty() { 0.0 } else { self.0.mean() }
    }

    /// The buckets recorded, in order: each the highest value the bucket holds and its
    /// count.
    #[must_use]
    pub fn buckets(&self) -> Vec<Bucket> {
        self.0
            .iter_recorded()
            .map(|bucket| Bucket {
                value: self.0.highest_equivalent(bucket.value_iterated_to()),
                count: bucket.count_at_value(),
            })
            .collect()
    }

    /// The histogram of these buckets (as [`Latencies::buckets`] wrote them).
    #[must_use]
    pub fn from_buckets(buckets: &[Bucket]) -> Latencies {
        Latencies::new().with(buckets)
    }

    /// A coarse histogram ([`Latencies::coarse`]) of these buckets.
    #[must_use]
    pub fn coarse_from_buckets(buckets: &[Bucket]) -> Latencies {
        Latencies::coarse().with(buckets)
    }

    fn with(self, buckets: &[Bucket]) -> Latencies {
        let mut latencies = self;
        for bucket in buckets {
            let _ = latencies.0.record_n(bucket.value.clamp(1, HIGHEST_MICROS), bucket.count);
        }
        latencies
    }
}

/// One bucket of a histogram as reports write it: `[value, count]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(u64, u64)", into = "(u64, u64)")]
pub struct Bucket {
    /// The highest latency the bucket holds, in microseconds.
    pub value: u64,
    /// How many latencies fell in it.
    pub count: u64,
}

impl From<(u64, u64)> for Bucket {
    fn from((value, count): (u64, u64)) -> Self {
        Bucket { value, count }
    }
}

impl From<Bucket> for (u64, u64) {
    fn from(bucket: Bucket) -> Self {
        (bucket.value, bucket.count)
    }
}

impl Serialize for Latencies {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.buckets().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Latencies {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Bucket>::deserialize(deserializer).map(|buckets| Latencies::from_buckets(&buckets))
    }
}

/// Reads a coarse histogram (a timeline's second) from its buckets.
///
/// # Errors
/// Not a list of `[value, count]`.
pub fn deserialize_coarse<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Latencies, D::Error> {
    Vec::<Bucket>::deserialize(deserializer).map(|buckets| Latencies::coarse_from_buckets(&buckets))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Latencies;

    #[test]
    fn buckets_give_back_the_same_histogram() {
        let mut latencies = Latencies::new();
        for micros in [1, 7, 999, 1_000, 1_001, 12_345, 250_000, 250_001, 3_000_000] {
            latencies.record(Duration::from_micros(micros));
        }
        let again = Latencies::from_buckets(&latencies.buckets());
        assert_eq!(again, latencies);
        assert_eq!(again.percentile(50.0), latencies.percentile(50.0));
        assert_eq!(again.max(), latencies.max());
        let json = serde_json::to_string(&latencies).unwrap();
        let read: Latencies = serde_json::from_str(&json).unwrap();
        assert_eq!(read, latencies);
    }

    #[test]
    fn adding_two_halves_gives_the_whole() {
        let (mut whole, mut odd, mut even) = (Latencies::new(), Latencies::new(), Latencies::new());
        for micros in 1..5_000u64 {
            let latency = Duration::from_micros(micros * 37 % 100_000 + 1);
            whole.record(latency);
            if micros % 2 == 0 { even.record(latency) } else { odd.record(latency) }
        }
        let mut merged = Latencies::from_buckets(&odd.buckets());
        merged.add(&Latencies::from_buckets(&even.buckets()));
        assert_eq!(merged, whole);
        for percentile in [50.0, 90.0, 99.0, 99.9, 100.0] {
            assert_eq!(merged.percentile(percentile), whole.percentile(percentile));
        }
    }

    #[test]
    fn a_latency_is_recorded_within_a_thousandth() {
        let mut latencies = Latencies::new();
        latencies.record(Duration::from_millis(200));
        let recorded = latencies.percentile(50.0);
        assert!((199_800..=200_200).contains(&recorded), "{recorded}");
        latencies.record(Duration::from_secs(7_200));
        assert_eq!(latencies.max(), latencies.percentile(100.0));
        assert!(latencies.max() >= 3_599_000_000);
    }
}
