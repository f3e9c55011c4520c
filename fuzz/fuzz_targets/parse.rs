//! Parsing never panics, whatever the input: `cargo +nightly fuzz run parse`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let document = volley_syntax::parse(&text);
    for diagnostic in &document.diagnostics {
        assert!(diagnostic.span.end <= text.len());
    }
    // Rendering every template back must not panic either.
    for request in document.requests() {
        let _ = request.url.to_source();
    }
});
