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
//! Precedence of variables, lowest first: the `.env` files (the nearest wins), the file's
//! `@name = value` lines, the configuration's `variables`, the profile's, the client's
//! ([`Client::set_variable`]), the run's ([`RunOptions::variables`]), and
//! [`RunOptions::overrides`] (the CLI's `--var`).

pub mod analysis;
pub mod assert;
mod auth;
mod body;
mod build;
mod chaining;
mod client;
pub mod config;
mod cookies;
mod credentials;
pub mod curl;
mod digest;
mod dotenv;
mod error;
mod interpolate;

pub use interpolate::{MAX_RENDERED_BYTES, MAX_REQUEST_BYTES};
mod io;
mod redact;
mod remote;
mod resolvers;
mod response;
mod sse;
mod transport;
mod websocket;

pub use analysis::{AnalysisContext, analyze};
pub use assert::{AssertionResult, Outcome, PendingAssertion, Place};
pub use auth::TokenRefresh;
pub use build::DEFAULT_USER_AGENT;
pub use client::{
    Analysis, Client, ClientConfig, ConfigSource, DEFAULT_TIMEOUT, Exchange, MAX_REDIRECTS, PreparedRequest,
    RequestDefaults, RunOptions, Selection,
};
pub use config::Config;
pub use cookies::{CookieJar, CookieJarError};
pub use credentials::redact_url_password;
pub use error::{BuildError, ConfigError, Error, SelectionError, TransportError};
pub use io::{Io, MemoryFs, RealFs, normalize};
pub use redact::{REDACTED, Redactor, Secrets, is_sensitive_header, is_sensitive_variable};
pub use remote::{
    RemoteClient, RemoteConfig, WsEnvelope, WsEnvelopeError, WsEnvelopeKind, WsSessionHandle, WsSessionInfo,
    WsSessionOptions, WsSessionReceiver, WsSessionSender, WsSessionSocket,
};
pub use resolvers::{
    BuiltinResolver, CommandResolver, DEFAULT_COMMAND_TIMEOUT, Environment, KnownResolver, Resolver, ResolverResult,
    async_resolver, builtin_resolvers, known_resolver, resolver,
};
pub use response::{BodyError, Response, SentRequest, Timing};
pub use sse::{EventStream, SseEvent, SseParser};
pub use tokio_util::sync::CancellationToken;
pub use transport::{BodyStream, BoxFuture, HttpTransport, Transport, TransportRequest, TransportResponse};
pub use websocket::{WebSocket, WsClose, WsError, WsMessage, WsReceiver, WsSender};
