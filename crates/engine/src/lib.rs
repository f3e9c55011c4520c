//! Volley's engine and client library: runs `.http` request definitions.
//!
//! One executor behind every front end (the CLI, the execution server, the language
//! server): variables by precedence, resolvers, configuration discovery and profiles,
//! request chaining, cookies, redirects, timeouts and cancellation. The
//! [`Response`] follows the Fetch API's `Response`.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use volley_engine::{Client, ClientConfig, CookieJar, RunOptions};
//!
//! // Once, at start-up: how requests are sent (Volley's HTTP client here).
//! volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
//! let client = Client::new(ClientConfig { cookie_jar: Some(CookieJar::new()), ..ClientConfig::default() });
//! // Runs the request named `login` of the file, with one more variable for this run.
//! let login = client.run("api.http", RunOptions::default().name("login").variable("user", "ada")).await?;
//! let token: serde_json::Value = login.json().await?;
//! client.set_variable("token", token["token"].clone());
//! // Later requests send `Authorization: Bearer {{token}}`.
//! let me = client.run("api.http", RunOptions::default().name("me")).await?;
//! assert!(me.ok());
//! # Ok(())
//! # }
//! ```
//!
//! Files can live in memory ([`io::MemoryFs`]), and a request can be prepared without
//! being sent ([`stages`]): here the configuration's variable, the client's and the
//! file's path come together into a URL.
//!
//! ```
//! # async fn example() -> Result<(), volley_engine::Error> {
//! use std::sync::Arc;
//!
//! use volley_engine::io::MemoryFs;
//! use volley_engine::{Client, ClientConfig, RunOptions, stages};
//!
//! let files = MemoryFs::new();
//! files.insert("/project/volley.jsonc", r#"{ "variables": { "host": "https://api.example.com" } }"#);
//! let client = Client::new(ClientConfig { io: Arc::new(files), ..ClientConfig::default() });
//! client.set_variable("id", 7);
//! let options = RunOptions::default().source_path("/project/users.http");
//! let prepared = stages::prepare(&client, "GET {{host}}/users/{{id}}\n", &options).await?;
//! assert_eq!(prepared.url.as_str(), "https://api.example.com/users/7");
//! # Ok(())
//! # }
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(example()).unwrap();
//! ```
//!
//! Precedence of variables, lowest first: the `.env` files (the nearest wins), the file's
//! `@name = value` lines, the configuration's `variables`, the profile's, the client's
//! ([`Client::set_variable`]), the run's ([`RunOptions::variable`]), and the overrides
//! ([`RunOptions::override_variable`], the CLI's `--var`).
//!
//! The crate root holds the library's calls ([`Client`], [`RemoteClient`] and what they
//! take and return), the traits that extend it ([`Io`], [`Transport`], [`Resolver`],
//! [`Execute`]) and the errors. The rest is grouped by subject: [`stages`] (a run step
//! by step, for front ends), [`analysis`] (diagnostics without sending), [`remote`]
//! (execution-server sessions), [`websocket`] and [`sse`] (open connections and event
//! streams), [`redact`] (keeping secrets out of what is shown), [`resolvers`], [`io`],
//! [`transport`], [`config`], [`assert`](mod@assert), [`curl`] and [`auth`].

pub mod analysis;
pub use volley_assert as assert;
pub use volley_io as io;
pub use volley_transport::{network, sse, websocket};
pub mod auth;
mod body;
mod build;
mod chaining;
mod client;
pub mod compose;
pub mod config;
// The result model of a run (volley-model), under the paths it had here.
use volley_model::cookies;
mod credentials;
pub mod curl;
mod dotenv;
use volley_model::error;
mod execute;
pub mod grpc;
mod interpolate;
mod loops;
mod oauth;
mod parsed_urls;
mod prepare;
mod prepared;
pub mod prompt;
mod ratelimit;
pub use volley_model::redact;
pub use volley_remote as remote;
pub mod report;
pub mod resolvers;
mod run;
pub use volley_model::response;
mod save;
mod script;
pub mod stages;
mod stream_messages;
pub mod transport;
mod url_rule;

pub use client::{Client, ClientConfig, ConfigSource, RequestDefaults, RunOptions, Selection};
pub use cookies::{CookieJar, CookieJarError};
pub use error::{BuildError, ConfigError, Error, SelectionError, TransportError};
pub use execute::Execute;
/// HTTP versions, as [`ClientConfig::http_version`] takes them.
pub use http::Version as HttpVersion;
pub use io::Io;
pub use remote::{RemoteClient, RemoteConfig};
pub use resolvers::Resolver;
pub use response::{BodyError, BodyFile, GrpcResult, Response};
pub use tokio_util::sync::CancellationToken;
pub use transport::Transport;
