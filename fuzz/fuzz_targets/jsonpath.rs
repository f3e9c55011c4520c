//! JSONPath checks never panic: `cargo +nightly fuzz run jsonpath`. The input is a
//! JSONPath, a NUL byte, then a JSON document; the path is checked as `# @assert jsonpath`
//! and httpyac's `?? body` read it, against the document as a response body.
#![no_main]

use http::HeaderMap;
use libfuzzer_sys::fuzz_target;
use volley_assert::{Assertion, Check, Field, Predicate};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&byte| byte == 0).unwrap_or(data.len());
    let path = String::from_utf8_lossy(&data[..split]);
    let document = data.get(split + 1..).unwrap_or_default();
    let headers = HeaderMap::new();

    // As written in an assertion: the path is checked when parsed.
    for expression in [format!("jsonpath {path} exists"), format!("jsonpath {path} == 1")] {
        if let Ok(assertion) = volley_assert::parse(&expression) {
            let _ = volley_assert::evaluate(&assertion, 200, &headers, document);
        }
    }
    // As a check whose path was never checked (a `??` line's, variables substituted).
    for predicate in [Predicate::Exists, Predicate::Equal, Predicate::Contains, Predicate::IsArray] {
        let check =
            Check { field: Field::JsonPath(path.clone().into_owned()), predicate, expected: Some("1".to_owned()) };
        let _ = volley_assert::evaluate(&Assertion::Check(check), 200, &headers, document);
    }
});
