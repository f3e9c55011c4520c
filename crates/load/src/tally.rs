//! What a run counts as its requests end: shared by the virtual users (one lock per
//! request, held for a few hundred nanoseconds), read by the progress line, turned
//! into the report at the end.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::histogram::Latencies;
use crate::report::Second;

/// After this many entries the timeline's step doubles (neighbours merged), so that a
/// long run's memory stays bounded: about 26 kB per entry.
const MAX_TIMELINE: usize = 900;

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum End {
    /// Answered, and its checks (or, without assertions, its status) passed.
    Passed { status: u16 },
    /// Answered, and failed: `status` (400 or more, without assertions) or `assertion`.
    Failed { status: u16, kind: &'static str },
    /// No answer: the transport's kind (`timeout`, …), or `build`; and what happened.
    Error { kind: String, message: String },
}

/// The counts of a run so far.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) requests: u64,
    pub(crate) errors: BTreeMap<String, u64>,
    /// The first message of each kind of error that has one.
    pub(crate) samples: BTreeMap<String, String>,
    pub(crate) error_count: u64,
    pub(crate) statuses: BTreeMap<u16, u64>,
    pub(crate) bytes_received: u64,
    pub(crate) bytes_sent: u64,
    pub(crate) latency: Latencies,
    pub(crate) build: Latencies,
    /// Seconds per timeline entry.
    pub(crate) step: u64,
    pub(crate) timeline: Vec<Second>,
}

/// One request's figures.
pub(crate) struct Ended {
    pub(crate) end: End,
    pub(crate) latency: Duration,
    pub(crate) build: Duration,
    pub(crate) received: u64,
    pub(crate) sent: u64,
    /// When it ended, from the start of the measured time.
    pub(crate) at: Duration,
}

impl Tally {
    pub(crate) fn new() -> Tally {
        Tally { step: 1, ..Tally::default() }
    }

    pub(crate) fn record(&mut self, ended: &Ended) {
        self.requests += 1;
        let failed = match &ended.end {
            End::Passed { status } => {
                *self.statuses.entry(*status).or_default() += 1;
                false
            }
            End::Failed { status, kind } => {
                *self.statuses.entry(*status).or_default() += 1;
                self.count_error(kind);
                true
            }
            End::Error { kind, message } => {
                self.count_error(kind);
                if !self.samples.contains_key(kind) {
                    self.samples.insert(kind.clone(), message.clone());
                }
                true
            }
        };
        self.bytes_received += ended.received;
        self.bytes_sent += ended.sent;
        self.latency.record(ended.latency);
        self.build.record(ended.build);
        let slot = ended.at.as_secs() / self.step * self.step;
        let second = match self.timeline.last_mut() {
            Some(last) if last.second == slot => last,
            _ => {
                // Requests end in order of time, nearly: one that ended in an earlier
                // entry (its lock taken late) goes there.
                let position = self.timeline.iter().rposition(|entry| entry.second <= slot);
                match position {
                    Some(position) if self.timeline[position].second == slot => &mut self.timeline[position],
                    _ => {
                        let at = position.map_or(0, |position| position + 1);
                        self.timeline
                            .insert(at, Second { second: slot, requests: 0, errors: 0, latency: Latencies::coarse() });
                        self.coarsen_if_long();
                        let slot = ended.at.as_secs() / self.step * self.step;
                        let at = self.timeline.iter().position(|entry| entry.second == slot).unwrap_or(0);
                        &mut self.timeline[at]
                    }
                }
            }
        };
        second.requests += 1;
        second.errors += u64::from(failed);
        second.latency.record(ended.latency);
    }

    fn count_error(&mut self, kind: &str) {
        self.error_count += 1;
        match self.errors.get_mut(kind) {
            Some(count) => *count += 1,
            None => {
                self.errors.insert(kind.to_owned(), 1);
            }
        }
    }

    /// Doubles the step when the timeline grows long, merging neighbours.
    fn coarsen_if_long(&mut self) {
        if self.timeline.len() <= MAX_TIMELINE {
            return;
        }
        self.step *= 2;
        let mut merged: Vec<Second> = Vec::with_capacity(self.timeline.len() / 2 + 1);
        for entry in std::mem::take(&mut self.timeline) {
            let slot = entry.second / self.step * self.step;
            match merged.last_mut() {
                Some(last) if last.second == slot => {
                    last.requests += entry.requests;
                    last.errors += entry.errors;
                    last.latency.add(&entry.latency);
                }
                _ => merged.push(Second { second: slot, ..entry }),
            }
        }
        self.timeline = merged;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{End, Ended, Tally};

    fn ended(at_millis: u64) -> Ended {
        Ended {
            end: End::Passed { status: 200 },
            latency: Duration::from_millis(3),
            build: Duration::from_micros(5),
            received: 10,
            sent: 0,
            at: Duration::from_millis(at_millis),
        }
    }

    #[test]
    fn requests_land_in_their_second_even_out_of_order() {
        let mut tally = Tally::new();
        for at in [10, 1_500, 900, 2_100, 1_999, 5_000] {
            tally.record(&ended(at));
        }
        let seconds: Vec<(u64, u64)> = tally.timeline.iter().map(|second| (second.second, second.requests)).collect();
        assert_eq!(seconds, [(0, 2), (1, 2), (2, 1), (5, 1)]);
        assert_eq!(tally.requests, 6);
        assert_eq!(tally.statuses[&200], 6);
    }

    #[test]
    fn a_long_run_keeps_a_bounded_timeline() {
        let mut tally = Tally::new();
        for second in 0..4_000 {
            tally.record(&ended(second * 1_000));
        }
        assert!(tally.timeline.len() <= super::MAX_TIMELINE, "{}", tally.timeline.len());
        assert_eq!(tally.step, 8);
        assert_eq!(tally.timeline.iter().map(|second| second.requests).sum::<u64>(), 4_000);
        assert!(tally.timeline.windows(2).all(|pair| pair[0].second < pair[1].second));
    }
}
