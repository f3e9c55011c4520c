//! The execution server's request bodies never panic its checks: `cargo +nightly fuzz
//! run server_bodies`. The first byte picks the route, the rest is the JSON body; it is
//! read and checked as the route does before it executes anything (`POST /parse` also
//! parses and describes its `content`). Nothing is executed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use volley_server::fuzzing::{self, BodyRoute};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else { return };
    let route = BodyRoute::ALL[usize::from(selector) % BodyRoute::ALL.len()];
    let _ = fuzzing::request_body(route, body);
});
