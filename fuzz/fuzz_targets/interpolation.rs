//! Substituting `{{ }}` never panics and stays within its bounds: `cargo +nightly fuzz
//! run interpolation`. The input's first line is a file variable used in the URL and a
//! header, the rest is the body; the request is prepared (substituted and built, never
//! sent) with a few client variables, an in-memory file system, a fixed environment and
//! no configuration files, prompts or commands, so nothing outside the process is read.
#![no_main]

use std::path::Path;
use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use volley_engine::config::Config;
use volley_engine::io::{Io, MemoryFs};
use volley_engine::resolvers::Environment;
use volley_engine::stages::{self, MAX_RENDERED_BYTES};
use volley_engine::{Client, ClientConfig, ConfigSource, RunOptions};

struct Fixture {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let files = MemoryFs::new();
    files.insert("/fuzz/data.json", r#"{"from": "a file", "n": 1}"#);
    // Scripts (`{{ expression }}`) are cut short, so that a loop costs a fifth of a second.
    files.insert("/fuzz/volley.jsonc", r#"{"scripts": {"timeoutMs": 200, "memoryMb": 32}}"#);
    let environment = Environment::fixed([("HOME".to_owned(), "/home/fuzz".to_owned())]);
    let config = Config::load(&files, Path::new("/fuzz/volley.jsonc"), &environment).expect("the fixed configuration");
    let variables = json!({
        "host": "example.test",
        "user": "ada",
        "count": 3,
        "price": 9.5,
        "flags": [true, false, null],
        "nested": {"a": {"b": "{{user}}"}},
        "token": "secret-{{count}}",
    });
    let client = Client::new(ClientConfig {
        io: Arc::new(files) as Arc<dyn Io>,
        variables: variables.as_object().cloned().unwrap_or_default(),
        config: ConfigSource::Given(Arc::new(config)),
        environment,
        ..ClientConfig::default()
    });
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    Fixture { runtime, client }
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (line, body) = text.split_once('\n').unwrap_or((&text, ""));
    let content = format!("@input = {line}\nPOST https://{{{{host}}}}/{{{{input}}}}\nX-Input: {{{{input}}}}\n\n{body}");
    let fixture = &*FIXTURE;
    let options = RunOptions::default().index(0).source_path("/fuzz/case.http");
    if let Ok(prepared) = fixture.runtime.block_on(stages::prepare(&fixture.client, &content, &options)) {
        assert!(prepared.body.len() <= MAX_RENDERED_BYTES);
        assert!(prepared.url.as_str().len() <= MAX_RENDERED_BYTES);
    }
});
