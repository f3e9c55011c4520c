//! httpyac's `# @ratelimit [slot NAME] [minIdleTime MS] [max N expire MS]`: the requests
//! of one slot (named, else the request's origin) wait until `minIdleTime` has passed
//! since the last one, and until fewer than `max` went in the last `expire` milliseconds.
//! The slots are the client's, shared by its forks.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;
use volley_syntax::Span;

use crate::error::BuildError;

/// What a request's `@ratelimit` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RateLimit {
    /// The slot its requests share.
    pub(crate) slot: String,
    /// The least time between two sends of the slot.
    pub(crate) min_idle: Option<Duration>,
    /// At most `max` sends within `expire`.
    pub(crate) window: Option<(usize, Duration)>,
}

impl RateLimit {
    /// Parses the value of `@ratelimit` (`origin`: the slot when it names none).
    pub(crate) fn parse(text: &str, origin: &str, span: Span) -> Result<Self, BuildError> {
        let invalid =
            |message: String| BuildError::InvalidTimeout { directive: "ratelimit".to_owned(), value: message, span };
        let mut limit = Self { slot: origin.to_owned(), min_idle: None, window: None };
        let (mut max, mut expire) = (None, None);
        let mut words = text.split_whitespace();
        while let Some(word) = words.next() {
            let key = word.trim_end_matches(':');
            let value = words.next().ok_or_else(|| invalid(format!("`{key}` needs a value")))?;
            let number = || value.parse::<u64>().map_err(|_| invalid(format!("`{key} {value}`")));
            match key {
                "slot" => limit.slot = format!("slot {value}"),
                "minIdleTime" => limit.min_idle = Some(Duration::from_millis(number()?)),
                "max" => max = Some(usize::try_from(number()?).unwrap_or(usize::MAX)),
                "expire" => expire = Some(Duration::from_millis(number()?)),
                _ => return Err(invalid(format!("`{key}` (write `slot`, `minIdleTime`, `max`, `expire`)"))),
            }
        }
        limit.window = match (max, expire) {
            (Some(max), Some(expire)) => Some((max.max(1), expire)),
            (None, None) => None,
            _ => return Err(invalid("`max` and `expire` go together".to_owned())),
        };
        Ok(limit)
    }
}

/// The sends of each slot: the times they were let go, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    sends: Mutex<HashMap<String, VecDeque<Instant>>>,
}

/// The most sends one slot remembers.
const REMEMBERED: usize = 10_000;

impl Slots {
    /// When a send under `limit` may go, now reserved for it.
    pub(crate) fn reserve(&self, limit: &RateLimit) -> Instant {
        let mut sends = self.sends.lock();
        let times = sends.entry(limit.slot.clone()).or_default();
        let mut at = Instant::now();
        if let (Some(min_idle), Some(last)) = (limit.min_idle, times.back()) {
            at = at.max(*last + min_idle);
        }
        if let Some((max, expire)) = limit.window {
            // The sends within the window before `at`: the oldest must leave it first.
            let inside: Vec<Instant> = times.iter().copied().filter(|time| *time + expire > at).collect();
            if inside.len() >= max {
                at = at.max(inside[inside.len() - max] + expire);
            }
        }
        times.push_back(at);
        if times.len() > REMEMBERED {
            times.pop_front();
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_httpyac_forms() {
        let span = Span::default();
        let limit = RateLimit::parse("slot foo minIdleTime 10000", "o", span).unwrap();
        assert_eq!((limit.slot.as_str(), limit.min_idle), ("slot foo", Some(Duration::from_secs(10))));
        let limit = RateLimit::parse("max 10 expire: 60000", "origin", span).unwrap();
        assert_eq!((limit.slot.as_str(), limit.window), ("origin", Some((10, Duration::from_secs(60)))));
        assert!(RateLimit::parse("max 10", "o", span).is_err());
        assert!(RateLimit::parse("often", "o", span).is_err());
    }

    #[test]
    fn sends_of_a_slot_are_spaced_and_counted() {
        let slots = Slots::default();
        let idle = RateLimit { slot: "a".to_owned(), min_idle: Some(Duration::from_millis(100)), window: None };
        let first = slots.reserve(&idle);
        assert_eq!(slots.reserve(&idle), first + Duration::from_millis(100));
        let window = RateLimit { slot: "b".to_owned(), min_idle: None, window: Some((2, Duration::from_secs(1))) };
        let opened = slots.reserve(&window);
        assert!(slots.reserve(&window) < opened + Duration::from_millis(500), "two within the window go at once");
        assert_eq!(slots.reserve(&window), opened + Duration::from_secs(1), "the third waits for the first to expire");
    }
}
