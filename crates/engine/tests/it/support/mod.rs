//! Helpers shared by the engine's integration tests.
#![allow(dead_code)] // Each test file uses a different part.

use std::path::PathBuf;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::Value;
use volley_engine::io::MemoryFs;
use volley_engine::resolvers::Environment;
use volley_engine::{Client, ClientConfig, ConfigSource, Response, RunOptions};

/// A client with no configuration discovery and a fixed environment.
pub(crate) fn client() -> Client {
    Client::new(config())
}

pub(crate) fn config() -> ClientConfig {
    ClientConfig {
        // Volley's HTTP client, as the binary installs it.
        transport: Some(volley_http::transport::HttpTransport::shared()),
        config: ConfigSource::Disabled,
        environment: Environment::fixed([
            ("HOME".to_owned(), "/home/ada".to_owned()),
            ("API_KEY".to_owned(), volley_echo_server::API_KEY.to_owned()),
        ]),
        ..ClientConfig::default()
    }
}

/// A client over an in-memory filesystem (files under `/project`).
pub(crate) fn client_with_files(files: &MemoryFs) -> Client {
    Client::new(ClientConfig { io: Arc::new(files.clone()), ..config() })
}

/// Run options for text that belongs to `/project/requests.http`.
pub(crate) fn in_project() -> RunOptions {
    RunOptions::default().source_path(PathBuf::from("/project/requests.http"))
}

/// The JSON of an `/echo` response.
pub(crate) async fn echo(response: &Response) -> Value {
    assert_eq!(response.status(), 200, "echo answered {}", response.status());
    response.json::<Value>().await.expect("echo answers JSON")
}

/// The exact body bytes the echo server received.
pub(crate) fn echoed_body(echo: &Value) -> Vec<u8> {
    let encoded = echo["body_base64"].as_str().expect("body_base64");
    base64::engine::general_purpose::STANDARD.decode(encoded).expect("valid base64")
}

/// The first value of a header the echo server received (names are lowercase).
pub(crate) fn echoed_header<'a>(echo: &'a Value, name: &str) -> Option<&'a str> {
    echo["headers"].as_array()?.iter().find(|pair| pair[0].as_str() == Some(name)).and_then(|pair| pair[1].as_str())
}

/// Every value of a header the echo server received.
pub(crate) fn echoed_headers<'a>(echo: &'a Value, name: &str) -> Vec<&'a str> {
    echo["headers"]
        .as_array()
        .map(|pairs| {
            pairs.iter().filter(|pair| pair[0].as_str() == Some(name)).filter_map(|pair| pair[1].as_str()).collect()
        })
        .unwrap_or_default()
}
