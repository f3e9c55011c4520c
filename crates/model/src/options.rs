//! The options of one run ([`RunOptions`]), which every executor takes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::cookies::CookieJar;
use crate::environment::Environment;
use crate::select::Selection;

/// Options of one run, each set with its builder method (the optional ones take a value
/// or `None`, which keeps what the client and the configuration say).
///
/// ```
/// use std::time::Duration;
/// use volley_model::RunOptions;
///
/// let options = RunOptions::default().name("login").variable("user", "ada").timeout(Duration::from_secs(5));
/// assert_eq!(options.selection(), &volley_model::Selection::Name("login".to_owned()));
/// ```
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Variables for this run (above the client's).
    #[doc(hidden)]
    pub variables: Map<String, Value>,
    /// Variables above everything else (the CLI's `--var`).
    #[doc(hidden)]
    pub overrides: Map<String, Value>,
    /// Timeout for this run (a request's `@timeout` still wins).
    #[doc(hidden)]
    pub timeout: Option<Duration>,
    /// Cancels the run when triggered (the Fetch API's `AbortSignal`).
    #[doc(hidden)]
    pub cancel: Option<CancellationToken>,
    /// Which request to run.
    #[doc(hidden)]
    pub request: Selection,
    /// For `Client::run_string` (volley-engine): the file the text belongs to, for relative paths
    /// and configuration discovery (default: the working directory).
    #[doc(hidden)]
    pub source_path: Option<PathBuf>,
    /// The configuration profile of this run (instead of the client's).
    #[doc(hidden)]
    pub profile: Option<String>,
    /// Follow redirects (above the configuration's and the client's defaults; a
    /// request's `@no-redirect` still wins).
    #[doc(hidden)]
    pub follow_redirects: Option<bool>,
    /// Check TLS certificates (above the configuration's and the client's defaults).
    #[doc(hidden)]
    pub validate_ssl: Option<bool>,
    /// Keep at most this many bytes of a response body; the rest is not read and
    /// [`Response::truncated`](crate::Response::truncated) says so.
    #[doc(hidden)]
    pub max_body_bytes: Option<usize>,
    /// Where a body longer than `max_body_bytes` is written whole as it arrives (see
    /// [`RunOptions::spill_body_to`]).
    #[doc(hidden)]
    pub spill_dir: Option<std::path::PathBuf>,
    /// What `$env`, `$processEnv` and `$secret` read for this run, instead of the
    /// client's environment (an execution server narrows it for scoped callers).
    #[doc(hidden)]
    pub environment: Option<Environment>,
    /// Hide nothing: the run's errors, assertion results and
    /// [`Response::redactor`](crate::Response::redactor) show its secrets as they are (`volley run
    /// --show-secrets`, on the user's own terminal). Off by default.
    #[doc(hidden)]
    pub show_secrets: bool,
    /// The cookie jar of this run, instead of the client's (the language server keeps
    /// one per workspace folder). A request's `@no-cookie-jar` still wins.
    #[doc(hidden)]
    pub cookie_jar: Option<CookieJar>,
    /// Told each response message of a streaming gRPC call as it arrives.
    #[doc(hidden)]
    pub grpc_messages: Option<Listener>,
    /// The requests whose `@ref` led to this run, outermost first (a cycle is an error).
    #[doc(hidden)]
    pub references: Vec<String>,
    /// What a `run` line sets (`run #login (@user={{admin}})`): above every other
    /// variable, `{{ }}` in a value resolved where the request runs.
    #[doc(hidden)]
    pub command_variables: Map<String, Value>,
    /// More names the response is kept under (`login0` for a `@loop`'s first iteration).
    #[doc(hidden)]
    pub also_named: Vec<String>,
    /// Ask no one: prompts stay unanswered (a hover's preview must not ask).
    #[doc(hidden)]
    pub without_prompts: bool,
}

impl RunOptions {
    /// Selects the request named `name`.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.request = Selection::Name(name.into());
        self
    }

    /// Selects the request at `index` (0-based).
    #[must_use]
    pub fn index(mut self, index: usize) -> Self {
        self.request = Selection::Index(index);
        self
    }

    /// Adds a run variable.
    #[must_use]
    pub fn variable(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.variables.insert(name.into(), value.into());
        self
    }

    /// Sets the timeout of the run (`None`: the client's; a request's `@timeout` still
    /// wins).
    #[must_use]
    pub fn timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.timeout = timeout.into();
        self
    }

    /// Sets the cancellation token of the run.
    #[must_use]
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Sets the file the text of `Client::run_string` (volley-engine) belongs to.
    #[must_use]
    pub fn source_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.source_path = Some(path.into());
        self
    }

    /// Uses the configuration profile `name` for this run.
    #[must_use]
    pub fn profile(mut self, name: impl Into<String>) -> Self {
        self.profile = Some(name.into());
        self
    }

    /// Uses the configuration profile `name` for this run, or the client's for `None`.
    #[must_use]
    pub fn profile_or_default(mut self, name: Option<impl Into<String>>) -> Self {
        self.profile = name.map(Into::into);
        self
    }

    /// Selects the request to run.
    #[must_use]
    pub fn request(mut self, selection: Selection) -> Self {
        self.request = selection;
        self
    }

    /// Sets the run variables (above the client's), replacing those set before.
    #[must_use]
    pub fn variables(mut self, variables: Map<String, Value>) -> Self {
        self.variables = variables;
        self
    }

    /// Adds a variable above everything else (the CLI's `--var`).
    #[must_use]
    pub fn override_variable(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.overrides.insert(name.into(), value.into());
        self
    }

    /// Sets the variables above everything else, replacing those set before.
    #[must_use]
    pub fn overrides(mut self, overrides: Map<String, Value>) -> Self {
        self.overrides = overrides;
        self
    }

    /// Asks no one (`$input`, `$password`, `$pick`, `# @prompt`): a prompt a variable or an
    /// earlier answer does not answer stays unanswered, and the run fails naming it. What a
    /// preview of a request uses.
    #[must_use]
    pub fn without_prompts(mut self) -> Self {
        self.without_prompts = true;
        self
    }

    /// Keeps the response under `name` too, beside the request's own name (httpyac's
    /// `@loop` keeps each iteration's as the name and its index, `login0`).
    #[must_use]
    pub fn also_named(mut self, name: impl Into<String>) -> Self {
        self.also_named.push(name.into());
        self
    }

    /// Sets the variables of a `run` line (`RunStep::variables` of volley-engine's `compose`):
    /// above every other, even [`RunOptions::overrides`]; `{{ }}` in a string value is
    /// resolved where the request runs.
    #[must_use]
    pub fn command_variables(mut self, variables: Map<String, Value>) -> Self {
        self.command_variables = variables;
        self
    }

    /// Follows redirects or not (above the configuration's and the client's defaults;
    /// a request's `@no-redirect` still wins).
    #[must_use]
    pub fn follow_redirects(mut self, follow: impl Into<Option<bool>>) -> Self {
        self.follow_redirects = follow.into();
        self
    }

    /// Checks TLS certificates or not (above the configuration's and the client's
    /// defaults).
    #[must_use]
    pub fn validate_ssl(mut self, validate: impl Into<Option<bool>>) -> Self {
        self.validate_ssl = validate.into();
        self
    }

    /// Keeps at most `limit` bytes of a response body; the rest is not read and
    /// [`Response::truncated`](crate::Response::truncated) says so.
    #[must_use]
    pub fn max_body_bytes(mut self, limit: impl Into<Option<usize>>) -> Self {
        self.max_body_bytes = limit.into();
        self
    }

    /// A body longer than [`max_body_bytes`](Self::max_body_bytes) is read to its end
    /// and written whole, as it arrives, to a new file in `dir` (created when missing),
    /// while the response keeps only its first bytes: an editor shows a preview and
    /// opens or saves the whole body from the file ([`Response::body_file`]). The file
    /// is the body as received (not redacted); the caller removes it.
    ///
    /// [`Response::body_file`]: crate::Response::body_file
    #[must_use]
    pub fn spill_body_to(mut self, dir: impl Into<Option<std::path::PathBuf>>) -> Self {
        self.spill_dir = dir.into();
        self
    }

    /// What `$env`, `$processEnv` and `$secret` read for this run, instead of the
    /// client's environment.
    #[must_use]
    pub fn environment(mut self, environment: impl Into<Option<Environment>>) -> Self {
        self.environment = environment.into();
        self
    }

    /// Hides nothing when `show` is set: errors, assertion results and the response's
    /// redactor show the run's secrets as they are. Off by default.
    #[must_use]
    pub fn show_secrets(mut self, show: bool) -> Self {
        self.show_secrets = show;
        self
    }

    /// Calls `listener` with each response message of a server-streaming or bidirectional
    /// gRPC call as it arrives (its number from 1, the message as proto3 JSON, secrets
    /// hidden), to show a stream as it comes; the response still has them all.
    #[must_use]
    pub fn on_grpc_message(mut self, listener: impl Fn(usize, serde_json::Value) + Send + Sync + 'static) -> Self {
        self.grpc_messages = Some(Listener(Arc::new(listener)));
        self
    }

    /// Uses `jar` for this run instead of the client's (a request's `@no-cookie-jar`
    /// still wins).
    #[must_use]
    pub fn cookie_jar(mut self, jar: impl Into<Option<CookieJar>>) -> Self {
        self.cookie_jar = jar.into();
        self
    }

    /// Which request the run selects.
    #[must_use]
    pub fn selection(&self) -> &Selection {
        &self.request
    }

    /// The cancellation token of the run, if any.
    #[must_use]
    pub fn cancel_token(&self) -> Option<&CancellationToken> {
        self.cancel.as_ref()
    }

    /// The file the text of a run belongs to, if set.
    #[must_use]
    pub fn source(&self) -> Option<&Path> {
        self.source_path.as_deref()
    }
}

/// What hears a streaming call's messages as they arrive ([`RunOptions::on_grpc_message`](crate::RunOptions::on_grpc_message)).
#[doc(hidden)]
#[derive(Clone)]
pub struct Listener(pub Arc<dyn Fn(usize, serde_json::Value) + Send + Sync>);

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listener")
    }
}

/// Listeners do not make two calls differ.
impl PartialEq for Listener {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Listener {}
