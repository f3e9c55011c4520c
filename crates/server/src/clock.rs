//! Wall-clock time as the wire speaks it: epoch milliseconds.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis() as u64)
}

/// A new opaque id: `prefix` and a random (version 4) UUID without dashes. The bytes
/// come from the thread's cryptographic generator (seeded from the system's), not from
/// a `getrandom` call per id: every execution takes two ids.
pub(crate) fn new_id(prefix: &str) -> String {
    let uuid = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
    format!("{prefix}_{}", uuid.simple())
}

/// Removes the entries of `map` that `expired` picks; returns their keys.
pub(crate) fn remove_where<V>(
    map: &mut std::collections::HashMap<String, V>,
    expired: impl Fn(&V) -> bool,
) -> Vec<String> {
    let keys: Vec<String> = map.iter().filter(|(_, value)| expired(value)).map(|(key, _)| key.clone()).collect();
    for key in &keys {
        map.remove(key);
    }
    keys
}
