//! Numbers from query strings: a default when absent, an upper bound, and the message of the
//! 400 answer (`response::bad_request`) for a value that is not a number or is too large.

use std::collections::HashMap;
use std::time::Duration;

/// The largest `interval_ms` the streaming routes accept: one hour.
const MAX_INTERVAL_MS: u64 = 60 * 60 * 1000;

/// The query's `name` as a number ≤ `max`, or `default` when absent.
pub(crate) fn number(query: &HashMap<String, String>, name: &str, default: u64, max: u64) -> Result<u64, String> {
    let Some(value) = query.get(name) else {
        return Ok(default);
    };
    match value.parse::<u64>() {
        Ok(number) if number <= max => Ok(number),
        Ok(number) => Err(format!("{name} must be at most {max}, got {number}")),
        Err(_) => Err(format!("invalid {name}: {value:?}")),
    }
}

/// The query's `name` as milliseconds (at most one hour), or `default_ms` when absent.
pub(crate) fn milliseconds(query: &HashMap<String, String>, name: &str, default_ms: u64) -> Result<Duration, String> {
    number(query, name, default_ms, MAX_INTERVAL_MS).map(Duration::from_millis)
}
