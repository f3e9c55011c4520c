//! Assertions never panic: `cargo +nightly fuzz run assertions`. The first byte picks the
//! flavour (`# @assert` or httpyac's `??`) and the response's body; the rest is the
//! expression, parsed and evaluated against a fixed response (whole, streamed, gRPC).
#![no_main]

use std::time::Duration;

use http::{HeaderMap, HeaderValue, header};
use libfuzzer_sys::fuzz_target;
use volley_assert::{Flavour, ResponseParts, Timing};

const BODIES: [&[u8]; 4] = [
    br#"{"id": 42, "name": "Ada", "items": [{"id": 1, "tags": ["a", "b"]}, {"id": 2}], "price": 9.5, "ok": true, "none": null}"#,
    b"<html><body>plain text, not JSON</body></html>",
    b"",
    b"[1, 2.5, -3e2, \"\xc3\xa9\", [], {}]",
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, expression)) = data.split_first() else { return };
    let expression = String::from_utf8_lossy(expression);
    let flavour = if selector & 1 == 0 { Flavour::Volley } else { Flavour::Httpyac };
    let Ok(assertion) = volley_assert::parse_as(&expression, flavour) else { return };

    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
    headers.append(header::SET_COOKIE, HeaderValue::from_static("a=1; Path=/"));
    headers.append(header::SET_COOKIE, HeaderValue::from_static("b=2"));
    headers.insert("x-id", HeaderValue::from_static("42"));
    let body = BODIES[usize::from(selector >> 1) % BODIES.len()];
    let whole = ResponseParts {
        status: 200,
        headers: &headers,
        body: Some(body),
        timing: Some(Timing { ttfb: Duration::from_millis(12), total: Duration::from_millis(40) }),
        grpc_status: None,
        redactor: None,
        javascript: None,
    };
    let _ = volley_assert::evaluate_parts(&assertion, &whole);
    let streamed = ResponseParts { body: None, timing: None, ..whole };
    let _ = volley_assert::evaluate_parts(&assertion, &streamed);
    let grpc = ResponseParts { status: 200, grpc_status: Some((5, "NOT_FOUND")), ..whole };
    let _ = volley_assert::evaluate_parts(&assertion, &grpc);
});
