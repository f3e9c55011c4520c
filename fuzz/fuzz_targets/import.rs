//! Importing never panics, whatever the source: `cargo +nightly fuzz run import`. The
//! first byte picks the format (cURL, HAR, Postman, Insomnia, OpenAPI), the rest is the
//! source; the `.http` files made of it are parsed again, as `volley import` writes them
//! for the editor to read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use volley_convert::Format;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, source)) = data.split_first() else { return };
    let format = Format::ALL[usize::from(selector) % Format::ALL.len()];
    let source = String::from_utf8_lossy(source);
    let Ok(conversion) = volley_convert::import(format, &source, "fuzz") else { return };
    for text in conversion.files.values() {
        let document = volley_syntax::parse(text);
        for diagnostic in &document.diagnostics {
            assert!(diagnostic.span.end <= text.len());
        }
    }
    if format == Format::Curl {
        let _ = volley_convert::curl::parse_curl(&source).map(|parsed| parsed.to_http());
    }
});
