//! The stages of a run, for front ends that show or change a request between them: a
//! run is [`prepare_request`] (select, resolve, build) then [`send`] (the exchange,
//! assertions, chaining, the cookie jar saved). [`Client::run`] does both; the CLI's
//! `--verbose`, the language server's preview and the execution server's per-stage
//! reports call them one by one. Also here: the client plumbing those front ends need
//! (a configuration's lookup and reload, forks per session) and the defaults and limits
//! a prepared request is built with.
//!
//! ```
//! # async fn example() -> Result<(), volley_engine::Error> {
//! use volley_engine::{Client, ClientConfig, ConfigSource, RunOptions, stages};
//!
//! let client = Client::new(ClientConfig { config: ConfigSource::Disabled, ..ClientConfig::default() });
//! let prepared = stages::prepare(&client, "GET https://example.com/users/1\n", &RunOptions::default()).await?;
//! assert_eq!(prepared.url.as_str(), "https://example.com/users/1");
//! assert_eq!(prepared.timeout, stages::DEFAULT_TIMEOUT);
//! # Ok(())
//! # }
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(example()).unwrap();
//! ```

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use volley_syntax::{Document, Request};

use crate::client::{Client, RunOptions};
use crate::config::{Config, Profile};
use crate::cookies::CookieJar;
use crate::error::{ConfigError, Error};
use crate::resolvers::Environment;
use crate::response::Response;

pub use crate::build::DEFAULT_USER_AGENT;
pub use crate::chaining::{MAX_CHAINED_BYTES, MAX_CHAINED_RESPONSES};
pub use crate::client::{DEFAULT_TIMEOUT, MAX_REDIRECTS};
pub use crate::interpolate::{MAX_RENDERED_BYTES, MAX_REQUEST_BYTES};
pub use crate::prepared::{Exchange, Exchanged, PreparedRequest};

/// Resolves and builds the selected request of `content` (`.http` text) without sending
/// it: the request a run would send (cookies aside).
pub async fn prepare(client: &Client, content: &str, options: &RunOptions) -> Result<PreparedRequest, Error> {
    client.prepare(content, options).await
}

/// Resolves and builds `request` of a parsed `document` (read from `source_path`)
/// without sending it. The options' selection is ignored.
pub async fn prepare_request(
    client: &Client,
    document: &Document,
    request: &Request,
    source_path: Option<&Path>,
    options: &RunOptions,
) -> Result<PreparedRequest, Error> {
    client.prepare_request(document, request, source_path, options).await
}

/// Sends a prepared request (perhaps changed since it was prepared): the exchange, its
/// assertions, the response kept for chaining under the request's name, the cookie jar
/// saved.
pub async fn send(
    client: &Client,
    prepared: PreparedRequest,
    cancel: Option<&CancellationToken>,
) -> Result<Response, Error> {
    client.send(prepared, cancel).await
}

/// [`send`] in two halves, for a front end that sends the next request before it
/// checks this one's response: the request's tokens, its turn and its exchange, up to
/// the response read and its cookies kept in the jar.
pub async fn transmit(
    client: &Client,
    prepared: PreparedRequest,
    cancel: Option<&CancellationToken>,
) -> Result<Exchanged, Error> {
    client.transmit(prepared, cancel).await
}

/// The second half of [`send`]: the response of [`transmit`] checked (assertions,
/// response handlers), kept for chaining under the request's names, the cookie jar
/// saved and the `>>` files written.
#[must_use]
pub fn finish(client: &Client, exchanged: Exchanged) -> Response {
    client.finish(exchanged)
}

/// `request` prepared ahead of its turn (while the request before it is under way),
/// for [`transmit`] once that one's response is read. `None` when its preparation could
/// act or read what the requests before it leave: `@ref` and `run` lines, scripts,
/// prompts, custom and command resolvers, OAuth tokens, named responses; when it takes
/// the time (`$timestamp`, `$datetime`, an AWS signature), which is the send's; or when
/// it fails. Prepare it in its turn then ([`run_request`]).
///
/// The state it was prepared with is the client's at the call: a request whose
/// [`finish`] is still to come and [`writes`](Exchanged::finish_writes) variables or
/// files must be finished, and this one prepared again, before it is sent.
pub async fn prepare_ahead(
    client: &Client,
    document: &Document,
    request: &Request,
    source_path: Option<&Path>,
    options: &RunOptions,
) -> Option<PreparedRequest> {
    client.prepare_ahead(document, request, source_path, options).await
}

/// Runs the requests `request`'s `@ref` and `@forceRef` directives name, before it
/// (httpyac): what [`run_request`] does first. Front ends that run the two steps
/// themselves ([`prepare_request`], then [`send`]) call this before them.
pub async fn run_references(
    client: &Client,
    document: &Document,
    request: &Request,
    source_path: Option<&Path>,
    options: &RunOptions,
) -> Result<(), Error> {
    client.run_references(document, request, source_path, options).await
}

/// The iterations of `request`'s `# @loop` (httpyac), each the variables it sets
/// (`$index`, the element's name), for [`RunOptions::command_variables`]; `None` without
/// one. Run each with [`RunOptions::also_named`] `name{index}` as httpyac keeps them.
pub async fn loop_iterations(
    client: &Client,
    document: &Document,
    request: &Request,
    source_path: Option<&Path>,
    options: &RunOptions,
) -> Result<Option<Vec<serde_json::Map<String, serde_json::Value>>>, Error> {
    client.loop_iterations(document, request, source_path, options).await
}

/// The files `document` imports (`# @import`, `import`), directly and through each
/// other, in order, each once: what their named requests and file variables add.
pub fn imports(
    client: &Client,
    document: &Document,
    source_path: Option<&Path>,
) -> Result<Vec<std::sync::Arc<crate::compose::Linked>>, Error> {
    client.imports_of(document, source_path)
}

/// The requests the `run` lines of `document`'s block `block` run, in order
/// (JetBrains' and Kulala's `run #name`, `run ./file.http (@name=value)`): each front end
/// runs them as its own, with [`RunStep::variables`](crate::compose::RunStep) as the
/// run's [`RunOptions::command_variables`]. A name no file has, a missing file and a
/// cycle are errors at the line.
pub fn run_steps(
    client: &Client,
    document: &Document,
    source_path: Option<&Path>,
    block: usize,
) -> Result<Vec<crate::compose::RunStep>, Error> {
    client.run_steps(document, source_path, block)
}

/// Runs `request` of an already parsed `document` (the CLI runs every request of a file
/// this way): [`prepare_request`] then [`send`]. The options' selection is ignored.
pub async fn run_request(
    client: &Client,
    document: &Document,
    request: &Request,
    source_path: Option<&Path>,
    options: RunOptions,
) -> Result<Response, Error> {
    client.run_request(document, request, source_path, options).await
}

/// The configuration that applies to `.http` files in `directory`, as the client's runs
/// see it. Kept while its files are unchanged (see [`reload_config`] for a
/// configuration created where there was none).
pub fn config_for(client: &Client, directory: &Path) -> Result<Option<Config>, ConfigError> {
    client.config_for(directory)
}

/// The profiles runs of `.http` files in `directory` may select: the configuration's
/// (its environments, for other tools' files) and those httpyac's `.env` files name
/// (`dev.env`, `.env.dev`, in `env/` or beside), sorted.
pub fn profiles_for(client: &Client, directory: &Path) -> Result<Vec<String>, ConfigError> {
    let config = client.config_for(directory)?;
    Ok(client.profile_names(directory, config.as_ref()))
}

/// The profile `name` of runs in `directory` ([`profiles_for`]): its configuration's
/// entry, an empty one when only `.env` files name it, or the error a run would give
/// (an unknown profile, with the closest name and the profiles there are).
pub fn profile_for(client: &Client, directory: &Path, name: &str) -> Result<Profile, ConfigError> {
    let config = client.config_for(directory)?;
    client.profile_of(directory, config.as_ref(), name)
}

/// Forgets the configurations, settings and `.env` files the client found: the next run
/// looks for them again. A configuration file created where there was none is only
/// seen after this call (the language server calls it when the editor reports a new
/// `volley.jsonc`); changed files are seen without it.
pub fn reload_config(client: &Client) {
    client.reload_config();
}

/// A client with the same setup as `client` (files, transport, resolvers, defaults,
/// profile, configuration and its cache) and state of its own: `variables`,
/// `cookie_jar` and no request history. The execution server forks one per session, so
/// that sessions share the configuration found on disk but nothing else.
#[must_use]
pub fn fork(client: &Client, variables: Map<String, Value>, cookie_jar: Option<CookieJar>) -> Client {
    client.fork(variables, cookie_jar)
}

/// Replaces every client variable with `variables`.
pub fn replace_variables(client: &Client, variables: Map<String, Value>) {
    client.replace_variables(variables);
}

/// What `{{name.response…}}` reads of the last response of the request named `name`
/// in the client's runs: its status, headers and body. A front end that shares a
/// session between processes (the execution server with `--redis`) copies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainedResponse {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: http::HeaderMap,
    /// The body as received (cut at the run's body limit).
    pub body: bytes::Bytes,
}

/// The last response of the request named `name`, kept for chaining.
#[must_use]
pub fn chained_response(client: &Client, name: &str) -> Option<ChainedResponse> {
    let chain = Arc::clone(&client.inner.chain.lock());
    chain.get(name).map(|stored| ChainedResponse {
        status: stored.status,
        headers: stored.headers.clone(),
        body: stored.body.clone(),
    })
}

/// Replaces every response kept for chaining with `responses`, by request name.
pub fn replace_chained_responses(client: &Client, responses: impl IntoIterator<Item = (String, ChainedResponse)>) {
    let chain = responses
        .into_iter()
        .map(|(name, response)| {
            let stored = crate::chaining::StoredResponse {
                status: response.status,
                headers: response.headers,
                body: response.body,
            };
            (name, stored)
        })
        .collect();
    *client.inner.chain.lock() = Arc::new(chain);
}

/// The client variables as they are now, shared rather than copied: a front end that
/// keeps them (the execution server's sessions) tells from it whether a run changed them
/// (`client.global.set` in a script).
#[must_use]
pub fn variables(client: &Client) -> Arc<Map<String, Value>> {
    Arc::clone(&client.inner.variables.read())
}

/// What `$env`, `$processEnv` and `$secret` read for the client's runs.
#[must_use]
pub fn environment(client: &Client) -> Environment {
    client.environment()
}
