//! The client: the one executor behind every front end. It selects a request in a
//! document, resolves its variables with the configuration, builds it, and runs the
//! exchange (redirects, cookies, timeout, cancellation).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use bytes::Bytes;
use http::header::ACCEPT;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use volley_syntax::{Document, Protocol, Request};

use crate::analysis::{AnalysisContext, analyze};
use crate::assert::{Flavour, PendingAssertion, ResponseParts};
use crate::body::Files;
use crate::build::{BuiltRequest, build};
use crate::chaining::StoredResponse;
use crate::config::{Config, dotenv_root};
use crate::cookies::CookieJar;
use crate::digest::DigestCredentials;
use crate::dotenv::{self, DotEnv};
use crate::error::{BuildError, ConfigError, Error, SelectionError};
use crate::interpolate::{Renderer, Scope};
use crate::io::{Io, RealFs};
use crate::redact::{Redactor, Secrets};
use crate::resolvers::{Environment, Resolver};
use crate::response::Response;
use crate::transport::{HttpTransport, Transport};

mod exchange;
mod settings;

use settings::{CachedSettings, Settings, merged_headers};

/// The request timeout when nothing sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How many redirects are followed before giving up.
pub const MAX_REDIRECTS: usize = 10;

/// How a client is set up. `ClientConfig::default()` reads the real filesystem, sends
/// over the network, discovers `volley.jsonc`, and keeps no cookies.
#[derive(Clone)]
pub struct ClientConfig {
    /// Where `.http`, body and config files are read.
    pub io: Arc<dyn Io>,
    /// How requests are sent; `None` for [`HttpTransport`].
    pub transport: Option<Arc<dyn Transport>>,
    /// Initial client variables (above the configuration's, below a run's).
    pub variables: Map<String, Value>,
    /// Custom resolvers, keys with the `$` (`"$token"`); they win over built-ins.
    pub resolvers: HashMap<String, Arc<dyn Resolver>>,
    /// The cookie jar; `None` for no cookies.
    pub cookie_jar: Option<CookieJar>,
    /// The client's default timeout (above the configuration's, below a run's).
    pub timeout: Option<Duration>,
    /// Default headers and settings (above the configuration's and profile's).
    pub defaults: RequestDefaults,
    /// The configuration profile to use.
    pub profile: Option<String>,
    /// Where the configuration comes from.
    pub config: ConfigSource,
    /// What `$env` and `$secret` read.
    pub environment: Environment,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            io: Arc::new(RealFs),
            transport: None,
            variables: Map::new(),
            resolvers: HashMap::new(),
            cookie_jar: None,
            timeout: None,
            defaults: RequestDefaults::default(),
            profile: None,
            config: ConfigSource::Discover,
            environment: Environment::process(),
        }
    }
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("io", &self.io)
            .field("transport", &self.transport)
            .field("variables", &self.variables.keys().collect::<Vec<_>>())
            .field("resolvers", &self.resolvers.keys().collect::<Vec<_>>())
            .field("cookie_jar", &self.cookie_jar)
            .field("timeout", &self.timeout)
            .field("defaults", &self.defaults)
            .field("profile", &self.profile)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Default headers and settings of a client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestDefaults {
    /// Headers added to requests that do not set them.
    pub headers: Vec<(String, String)>,
    /// Follow redirects (default `true`).
    pub follow_redirects: Option<bool>,
    /// Check TLS certificates (default `true`).
    pub validate_ssl: Option<bool>,
}

/// Where a client's configuration comes from.
#[derive(Debug, Clone, Default)]
pub enum ConfigSource {
    /// Found next to the `.http` file or above it, on every run.
    #[default]
    Discover,
    /// No configuration.
    Disabled,
    /// This configuration.
    Given(Arc<Config>),
}

/// Which request of a file to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Selection {
    /// The first request.
    #[default]
    First,
    /// The request with this name (`# @name` or `### Name`).
    Name(String),
    /// The request at this 0-based position.
    Index(usize),
}

/// Options of one run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Variables for this run (above the client's).
    pub variables: Map<String, Value>,
    /// Variables above everything else (the CLI's `--var`).
    pub overrides: Map<String, Value>,
    /// Timeout for this run (a request's `@timeout` still wins).
    pub timeout: Option<Duration>,
    /// Cancels the run when triggered (the Fetch API's `AbortSignal`).
    pub cancel: Option<CancellationToken>,
    /// Which request to run.
    pub request: Selection,
    /// For [`Client::run_string`]: the file the text belongs to, for relative paths
    /// and configuration discovery (default: the working directory).
    pub source_path: Option<PathBuf>,
    /// The configuration profile of this run (instead of the client's).
    pub profile: Option<String>,
    /// Follow redirects (above the configuration's and the client's defaults; a
    /// request's `@no-redirect` still wins).
    pub follow_redirects: Option<bool>,
    /// Check TLS certificates (above the configuration's and the client's defaults).
    pub validate_ssl: Option<bool>,
    /// Keep at most this many bytes of a response body; the rest is not read and
    /// [`Response::truncated`] says so.
    pub max_body_bytes: Option<usize>,
    /// What `$env`, `$processEnv` and `$secret` read for this run, instead of the
    /// client's environment (an execution server narrows it for scoped callers).
    pub environment: Option<Environment>,
    /// Hide nothing: the run's errors, assertion results and
    /// [`Response::redactor`] show its secrets as they are (`volley run
    /// --show-secrets`, on the user's own terminal). Off by default.
    pub show_secrets: bool,
    /// The cookie jar of this run, instead of the client's (the language server keeps
    /// one per workspace folder). A request's `@no-cookie-jar` still wins.
    pub cookie_jar: Option<CookieJar>,
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

    /// Sets the timeout of the run.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the cancellation token of the run.
    #[must_use]
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Sets the file the text of [`Client::run_string`] belongs to.
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
}

/// A request resolved and built, not sent: what [`Client::prepare`] returns.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    /// The method.
    pub method: http::Method,
    /// The URL.
    pub url: url::Url,
    /// The headers, defaults included (cookies are added when sending).
    pub headers: http::HeaderMap,
    /// The body.
    pub body: Bytes,
    /// The effective timeout.
    pub timeout: Duration,
    /// Whether redirects are followed.
    pub follow_redirects: bool,
    /// Whether TLS certificates are checked.
    pub validate_ssl: bool,
    /// Whether the cookie jar is used.
    pub use_cookies: bool,
    /// What hides this request's secrets from anything shown of it: its `$secret`
    /// values, the values of sensitive-named variables (every layer, `.env` files),
    /// environment variables and credential headers ([`crate::Redactor`]). A run's
    /// [`Response`] carries it on.
    pub redactor: Redactor,
    /// The `# @assert` and `??` checks, rendered and parsed, to evaluate on the response.
    pub assertions: Vec<PendingAssertion>,
    /// What kind of exchange it is.
    pub exchange: Exchange,
    /// The request's name, under which its response is kept for chaining.
    pub name: Option<String>,
    /// Keep at most this many bytes of the response body.
    pub max_body_bytes: Option<usize>,
    /// The configuration file that applied, if any.
    pub config_path: Option<PathBuf>,
    version: Option<http::Version>,
    /// `Authorization: Digest user password`: the answer to the server's challenge is
    /// computed during the exchange.
    digest: Option<DigestCredentials>,
    /// The jar the exchange reads and fills (when `use_cookies`): the run's, else the
    /// client's.
    cookie_jar: Option<CookieJar>,
}

/// What [`Client::analyze`] found.
#[derive(Debug)]
pub struct Analysis {
    /// The semantic diagnostics, in source order.
    pub diagnostics: Vec<volley_syntax::Diagnostic>,
    /// The configuration could not be read (the diagnostics were made without it).
    pub config_error: Option<ConfigError>,
}

/// The kind of exchange of a prepared request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exchange {
    /// A request and its whole response.
    Http,
    /// Server-Sent Events: the response streams when it is `text/event-stream`; the
    /// timeout covers the connection and the response head only.
    EventStream,
    /// A WebSocket handshake (`ws://`/`wss://`), then an open connection.
    WebSocket {
        /// `@ws-subprotocols`, in order.
        subprotocols: Vec<String>,
    },
}

/// Runs `.http` definitions. Clones share variables, request history and cookie jar.
///
/// ```no_run
/// # async fn example() -> Result<(), volley_engine::Error> {
/// use volley_engine::{Client, ClientConfig, RunOptions};
///
/// let client = Client::new(ClientConfig::default());
/// client.set_variable("host", "https://httpbin.org");
/// let response = client.run_string("GET {{host}}/json\n", RunOptions::default()).await?;
/// println!("{} {}", response.status(), response.text().await.unwrap_or_default());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("config", &self.inner.config).finish_non_exhaustive()
    }
}

struct Inner {
    config: ClientConfig,
    transport: Arc<dyn Transport>,
    /// Client variables; runs take a snapshot (an `Arc` clone), setters copy on write.
    variables: RwLock<Arc<Map<String, Value>>>,
    /// Last responses of named requests, snapshotted the same way.
    chain: Mutex<Arc<HashMap<String, StoredResponse>>>,
    /// The working directory, for text run without a source path.
    working_directory: std::sync::OnceLock<PathBuf>,
    /// Settings by directory, kept while their files are unchanged; shared by forks.
    settings: Arc<Mutex<SettingsCache>>,
    /// Configurations by directory, kept while their files are unchanged; shared by forks.
    configs: Arc<Mutex<ConfigCache>>,
    /// `.env` variables by directory, kept while their files are unchanged; shared by forks.
    dotenvs: Arc<Mutex<DotenvCache>>,
}

/// Configurations found by directory, with the files each came from and their
/// modification times (`None` when no configuration applies).
type ConfigCache = HashMap<PathBuf, (Option<Config>, Vec<(PathBuf, Option<std::time::SystemTime>)>)>;

/// `.env` variables by the directory of the `.http` file, with the modification time of
/// every `.env` path looked at (`None` for a missing one, so that a new file is seen).
type DotenvCache = HashMap<PathBuf, (Arc<DotEnv>, Vec<(PathBuf, Option<std::time::SystemTime>)>)>;

/// Settings by directory and profile.
type SettingsCache = HashMap<(PathBuf, Option<String>), CachedSettings>;

impl Client {
    /// What `$env`, `$processEnv` and `$secret` read for this client.
    #[must_use]
    pub fn environment(&self) -> Environment {
        self.inner.config.environment.clone()
    }

    /// A client.
    #[must_use]
    pub fn new(config: ClientConfig) -> Self {
        let transport = config.transport.clone().unwrap_or_else(|| Arc::new(HttpTransport::new()));
        let variables = RwLock::new(Arc::new(config.variables.clone()));
        let inner = Inner {
            config,
            transport,
            variables,
            chain: Mutex::default(),
            working_directory: std::sync::OnceLock::new(),
            settings: Arc::default(),
            configs: Arc::default(),
            dotenvs: Arc::default(),
        };
        Self { inner: Arc::new(inner) }
    }

    /// A client with the same setup (files, transport, resolvers, defaults, profile,
    /// configuration and its cache) and state of its own: `variables`, `cookie_jar`
    /// and no request history. The execution server forks one per session, so that
    /// sessions share the configuration found on disk but nothing else.
    #[must_use]
    pub fn fork(&self, variables: Map<String, Value>, cookie_jar: Option<CookieJar>) -> Self {
        let config = ClientConfig { variables: variables.clone(), cookie_jar, ..self.inner.config.clone() };
        let working_directory = std::sync::OnceLock::new();
        if let Some(directory) = self.inner.working_directory.get() {
            let _ = working_directory.set(directory.clone());
        }
        let inner = Inner {
            config,
            transport: Arc::clone(&self.inner.transport),
            variables: RwLock::new(Arc::new(variables)),
            chain: Mutex::default(),
            working_directory,
            settings: Arc::clone(&self.inner.settings),
            configs: Arc::clone(&self.inner.configs),
            dotenvs: Arc::clone(&self.inner.dotenvs),
        };
        Self { inner: Arc::new(inner) }
    }

    /// Sets a client variable (above the configuration's, below a run's).
    pub fn set_variable(&self, name: impl Into<String>, value: impl Into<Value>) {
        if let Ok(mut variables) = self.inner.variables.write() {
            Arc::make_mut(&mut variables).insert(name.into(), value.into());
        }
    }

    /// Sets several client variables.
    pub fn set_variables(&self, variables: impl IntoIterator<Item = (String, Value)>) {
        if let Ok(mut current) = self.inner.variables.write() {
            Arc::make_mut(&mut current).extend(variables);
        }
    }

    /// Replaces every client variable with `variables`.
    pub fn replace_variables(&self, variables: Map<String, Value>) {
        if let Ok(mut current) = self.inner.variables.write() {
            *current = Arc::new(variables);
        }
    }

    /// The client variables: the initial ones and those set since.
    #[must_use]
    pub fn get_variables(&self) -> Map<String, Value> {
        self.inner.variables.read().map(|variables| (**variables).clone()).unwrap_or_default()
    }

    /// The cookie jar, when the client has one.
    #[must_use]
    pub fn cookie_jar(&self) -> Option<&CookieJar> {
        self.inner.config.cookie_jar.as_ref()
    }

    /// The semantic diagnostics of `document` (parsed from `text`, read from
    /// `source_path` when it has one) as runs of this client would see it: its
    /// configuration, variables and resolvers (every profile's). A broken configuration
    /// is returned beside the diagnostics made without it.
    #[must_use]
    pub fn analyze(&self, document: &Document, text: &str, source_path: Option<&Path>) -> Analysis {
        let (context, config_error) = self.analysis_context(source_path, None);
        let diagnostics = self.analyze_in(document, text, &context);
        Analysis { diagnostics, config_error }
    }

    /// What the analysis of a file at `source_path` knows beyond the file: the
    /// configuration that applies (with only `profile`'s variables when one is given),
    /// this client's variables and resolvers, the variables of the `.env` files. A
    /// configuration (or `.env` file) that does not load, or a profile it does not have,
    /// is returned beside the context made without it.
    #[must_use]
    pub fn analysis_context(
        &self,
        source_path: Option<&Path>,
        profile: Option<&str>,
    ) -> (AnalysisContext, Option<ConfigError>) {
        let directory = source_path.and_then(Path::parent).map(Path::to_path_buf).or_else(|| self.working_directory());
        let (config, mut config_error) = match directory.as_deref().map(|directory| self.config_for(directory)) {
            Some(Ok(config)) => (config, None),
            Some(Err(error)) => (None, Some(error)),
            None => (None, None),
        };
        if let (Some(name), None) = (profile, &config_error) {
            let known = config.as_ref().map(|config| config.profile(name).map(|_| ()));
            config_error = match known {
                Some(Ok(())) => None,
                Some(Err(error)) => Some(error),
                None => {
                    Some(ConfigError::UnknownProfile { name: name.to_owned(), suggestion: None, available: Vec::new() })
                }
            };
        }
        let mut variables = vec![self.get_variables()];
        if let Some(directory) = &directory {
            let root = dotenv_root(&*self.inner.config.io, directory, config.as_ref());
            match self.dotenv_for(&dotenv::directories(directory, &root)) {
                Ok(dotenv) => variables.push(dotenv.variables.clone()),
                Err(error) => config_error = config_error.or(Some(error)),
            }
        }
        let context = AnalysisContext {
            config,
            variables,
            resolvers: self.inner.config.resolvers.keys().map(|key| key.trim_start_matches('$').to_owned()).collect(),
            directory,
            profile: profile.map(str::to_owned),
            ..AnalysisContext::default()
        };
        (context, config_error)
    }

    /// The semantic diagnostics of `document` (parsed from `text`) in `context`, the
    /// files it refers to read through this client's [`Io`](crate::Io).
    #[must_use]
    pub fn analyze_in(
        &self,
        document: &Document,
        text: &str,
        context: &AnalysisContext,
    ) -> Vec<volley_syntax::Diagnostic> {
        analyze(document, text, &*self.inner.config.io, context)
    }

    /// Reads the `.http` file at `path` and runs the selected request.
    pub async fn run(&self, path: impl AsRef<Path>, options: RunOptions) -> Result<Response, Error> {
        let path = path.as_ref();
        let bytes =
            self.inner.config.io.read(path).map_err(|source| Error::ReadFile { path: path.to_path_buf(), source })?;
        let text = String::from_utf8(bytes).map_err(|error| Error::ReadFile {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text: {error}")),
        })?;
        let document = volley_syntax::parse(&text);
        let request = select(&document, &options.request)?;
        self.run_request(&document, request, Some(path), options).await
    }

    /// Runs the selected request of `content` (`.http` text); relative paths and the
    /// configuration are found from [`RunOptions::source_path`].
    pub async fn run_string(&self, content: &str, options: RunOptions) -> Result<Response, Error> {
        let document = volley_syntax::parse(content);
        let request = select(&document, &options.request)?;
        let source = options.source_path.clone();
        self.run_request(&document, request, source.as_deref(), options).await
    }

    /// Runs `request` of an already parsed `document` (the CLI runs every request of a
    /// file this way). `options.request` is ignored.
    pub async fn run_request(
        &self,
        document: &Document,
        request: &Request,
        source_path: Option<&Path>,
        options: RunOptions,
    ) -> Result<Response, Error> {
        let prepared = self.prepare_request(document, request, source_path, &options).await?;
        self.send(prepared, options.cancel.as_ref()).await
    }

    /// Sends a prepared request (what [`Client::prepare_request`] built, perhaps
    /// changed since): the exchange, its assertions, the response kept for chaining
    /// under the request's name, the cookie jar saved. Front ends that report each
    /// stage (the execution server) run the two steps themselves.
    pub async fn send(
        &self,
        mut prepared: PreparedRequest,
        cancel: Option<&CancellationToken>,
    ) -> Result<Response, Error> {
        let pending = std::mem::take(&mut prepared.assertions);
        let name = prepared.name.take();
        // Transport messages may quote the URL (reqwest's do): what is secret in it is
        // kept out of them.
        let redactor = prepared.redactor.clone();
        let jar = prepared.cookie_jar.clone().filter(|_| prepared.use_cookies);
        let exchanged = match prepared.exchange {
            Exchange::WebSocket { .. } => self.connect_websocket(prepared, cancel).await,
            Exchange::Http | Exchange::EventStream => self.exchange(prepared, cancel).await,
        };
        let mut response = exchanged.map_err(|error| error.redacted(&redactor))?;
        // A body that streams (events, WebSocket messages) is not there to check.
        let body = (response.stream.is_none() && response.websocket.is_none()).then_some(&response.body[..]);
        let parts = ResponseParts {
            status: response.status(),
            headers: &response.headers,
            body,
            timing: Some(response.timing),
            redactor: Some(&redactor),
        };
        response.assertions = pending.iter().map(|check| redactor.assertion(&check.evaluate(&parts))).collect();
        if let Some(name) = name {
            let stored = StoredResponse {
                status: response.status(),
                headers: response.headers().clone(),
                body: response.body.clone(),
            };
            if let Ok(mut chain) = self.inner.chain.lock() {
                Arc::make_mut(&mut chain).insert(name, stored);
            }
        }
        if let Some(jar) = &jar
            && let Err(error) = jar.save()
        {
            tracing::warn!("{error}");
        }
        Ok(response)
    }

    /// Resolves and builds the selected request of `content` without sending it: the
    /// request a run would send (cookies aside).
    pub async fn prepare(&self, content: &str, options: &RunOptions) -> Result<PreparedRequest, Error> {
        let document = volley_syntax::parse(content);
        let request = select(&document, &options.request)?;
        self.prepare_request(&document, request, options.source_path.as_deref(), options).await
    }

    /// Resolves and builds `request` of a parsed `document` without sending it (the
    /// CLI's `--verbose`, the language server's preview). `options.request` is ignored.
    pub async fn prepare_request(
        &self,
        document: &Document,
        request: &Request,
        source_path: Option<&Path>,
        options: &RunOptions,
    ) -> Result<PreparedRequest, Error> {
        refuse(document, request)?;
        let directory = source_path
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .or_else(|| self.working_directory())
            .unwrap_or_default();
        let profile = options.profile.as_deref().or(self.inner.config.profile.as_deref());
        let settings = self.settings(&directory, profile)?;
        let client_variables = self.inner.variables.read().map(|variables| Arc::clone(&variables)).unwrap_or_default();
        let chain = self.inner.chain.lock().map(|chain| Arc::clone(&chain)).unwrap_or_default();
        let empty = Map::new();
        let profile_variables = settings.profile.as_ref().map_or(&empty, |profile| &profile.variables);
        let config_variables = settings.config.as_ref().map_or(&empty, |config| &config.variables);
        let dotenv = self.dotenv_for(&settings.dotenv_directories);
        let scope = Scope {
            layers: vec![
                &options.overrides,
                &options.variables,
                &client_variables,
                profile_variables,
                config_variables,
            ],
            file_variables: &document.variables,
            dotenv: dotenv.as_deref(),
            chain: &chain,
            custom: &self.inner.config.resolvers,
            commands: &settings.commands,
            environment: options.environment.as_ref().unwrap_or(&self.inner.config.environment),
        };
        let mut renderer = Renderer::new(scope);
        let built = self.build_prepared(request, &mut renderer, &settings, &directory, options).await;
        // What this request must keep out of what is shown, its errors included.
        let mut secrets = renderer.secrets();
        let redactor =
            |secrets: &Secrets| if options.show_secrets { Redactor::reveal_all() } else { secrets.redactor() };
        match built {
            Ok(mut prepared) => {
                // A URL's `user:password@` is sent as a `Basic` header (whose token is among
                // the secrets); a Digest password is kept aside for the challenge.
                secrets.add_headers(&prepared.headers);
                if let Some(digest) = &prepared.digest {
                    secrets.add_value(digest.password());
                }
                prepared.redactor = redactor(&secrets);
                Ok(prepared)
            }
            Err(error) => Err(error.redacted(&redactor(&secrets))),
        }
    }

    /// Builds `request` with `renderer`: what [`prepare_request`](Self::prepare_request)
    /// returns, before its redactor is known.
    async fn build_prepared(
        &self,
        request: &Request,
        renderer: &mut Renderer<'_>,
        settings: &Settings,
        directory: &Path,
        options: &RunOptions,
    ) -> Result<PreparedRequest, Error> {
        let files = Files { io: &*self.inner.config.io, base: directory };
        let layers = self.default_layers(settings);
        let headers = merged_headers(&layers);
        let mut built = build(request, renderer, &files, &headers).await?;
        let (exchange, connect_timeout) = match &request.protocol {
            // `GET {{socketUrl}}`: a WebSocket URL known only after substitution.
            Protocol::Http if matches!(built.url.scheme(), "ws" | "wss") => {
                if let Some(span) = request.body.span() {
                    let diagnostic = volley_syntax::Diagnostic::new(
                        volley_syntax::Code::WebSocketBody,
                        span,
                        format!("`{}` is a WebSocket URL, and a WebSocket request cannot have a body", built.url),
                    )
                    .with_hint("send messages after connecting; remove the body");
                    return Err(Error::Invalid { diagnostics: vec![diagnostic] });
                }
                (Exchange::WebSocket { subprotocols: Vec::new() }, None)
            }
            Protocol::Http => (Exchange::Http, None),
            Protocol::Sse(sse) => {
                if !built.headers.contains_key(ACCEPT) {
                    built.headers.insert(ACCEPT, http::HeaderValue::from_static("text/event-stream"));
                }
                if let Some(template) = &sse.last_event_id {
                    let id = renderer.render(template).await?;
                    let value = http::HeaderValue::from_str(id.trim()).map_err(|_| BuildError::InvalidHeader {
                        name: "Last-Event-ID".to_owned(),
                        reason: "the id contains a line break or another control character".to_owned(),
                        span: template.span,
                    })?;
                    built.headers.insert("last-event-id", value);
                }
                (Exchange::EventStream, None)
            }
            Protocol::WebSocket(websocket) => {
                let mut subprotocols = Vec::new();
                if let Some(template) = &websocket.subprotocols {
                    let list = renderer.render(template).await?;
                    subprotocols
                        .extend(list.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned));
                    if !subprotocols.is_empty() {
                        let value = http::HeaderValue::from_str(&subprotocols.join(", ")).map_err(|_| {
                            BuildError::InvalidHeader {
                                name: "Sec-WebSocket-Protocol".to_owned(),
                                reason: "a subprotocol contains a control character".to_owned(),
                                span: template.span,
                            }
                        })?;
                        built.headers.insert("sec-websocket-protocol", value);
                    }
                }
                let connect = renderer.duration(websocket.connect_timeout.as_ref(), "ws-connect-timeout").await?;
                (Exchange::WebSocket { subprotocols }, connect)
            }
        };
        let request_timeout = renderer.duration(request.timeout.as_ref(), "timeout").await?;
        let timeout = connect_timeout
            .or(request_timeout)
            .or(options.timeout)
            .or(self.inner.config.timeout)
            .or_else(|| layers.iter().rev().find_map(|defaults| defaults.timeout))
            .unwrap_or(DEFAULT_TIMEOUT);
        let follow = options
            .follow_redirects
            .or(self.inner.config.defaults.follow_redirects)
            .or_else(|| layers.iter().rev().find_map(|d| d.follow_redirects));
        let validate = options
            .validate_ssl
            .or(self.inner.config.defaults.validate_ssl)
            .or_else(|| layers.iter().rev().find_map(|d| d.validate_ssl));
        let mut assertions = Vec::new();
        for directive in request.assertions() {
            let Some(template) = &directive.value else { continue };
            let pending = match renderer.render(template).await {
                Ok(expression) => {
                    let flavour = Flavour::of_directive(&directive.name.value);
                    PendingAssertion::new(expression, template.span, template.as_literal().is_some(), flavour)
                }
                Err(error) => {
                    PendingAssertion::invalid(template.to_source(), error.span(), error.message(), error.hint())
                }
            };
            assertions.push(pending);
        }
        let BuiltRequest { method, url, headers, body, version, digest } = built;
        let cookie_jar = options.cookie_jar.clone().or_else(|| self.active_jar().cloned());
        if let (Exchange::WebSocket { .. }, Some((_, span))) = (&exchange, &digest) {
            return Err(BuildError::Credentials {
                reason: "Digest authentication is not supported for WebSocket handshakes".to_owned(),
                hint: "send `Authorization: Basic user:password` or a token, or open the socket after an \
                       authenticated request that sets a cookie"
                    .to_owned(),
                span: *span,
            }
            .into());
        }
        Ok(PreparedRequest {
            method,
            url,
            headers,
            body,
            timeout,
            follow_redirects: !request.no_redirect && follow.unwrap_or(true),
            validate_ssl: validate.unwrap_or(true),
            use_cookies: cookie_jar.is_some() && !request.no_cookie_jar,
            assertions,
            exchange,
            name: request.name.as_ref().map(|name| name.value.clone()),
            max_body_bytes: options.max_body_bytes,
            config_path: settings.config.as_ref().map(|config| config.path.clone()),
            version,
            digest: digest.map(|(credentials, _)| credentials),
            cookie_jar,
            redactor: Redactor::default(),
        })
    }

    /// Forgets the configurations found so far: the next run looks for them again.
    ///
    /// The process's working directory, read once.
    fn working_directory(&self) -> Option<PathBuf> {
        if let Some(directory) = self.inner.working_directory.get() {
            return Some(directory.clone());
        }
        let directory = std::env::current_dir().ok()?;
        Some(self.inner.working_directory.get_or_init(|| directory).clone())
    }

    fn active_jar(&self) -> Option<&CookieJar> {
        self.inner.config.cookie_jar.as_ref()
    }
}

impl Selection {
    /// The request of `document` this selection names.
    pub fn find<'a>(&self, document: &'a Document) -> Result<&'a Request, SelectionError> {
        select(document, self)
    }
}

/// The one refusal rule of every front end ([`Document::refusal_of`]): `request` is not
/// sent when it has errors of its own or uses a broken file variable.
fn refuse(document: &Document, request: &Request) -> Result<(), Error> {
    match document.refusal_of(request) {
        Some(refusal) => Err(Error::Invalid { diagnostics: refusal.into_diagnostics() }),
        None => Ok(()),
    }
}

/// The request a selection names.
fn select<'a>(document: &'a Document, selection: &Selection) -> Result<&'a Request, SelectionError> {
    let count = document.requests().count();
    if count == 0 {
        return Err(SelectionError::NoRequests);
    }
    match selection {
        Selection::First => document.request(0).ok_or(SelectionError::NoRequests),
        Selection::Index(index) => {
            document.request(*index).ok_or(SelectionError::IndexOutOfRange { index: *index, count })
        }
        Selection::Name(name) => document.request_named(name).ok_or_else(|| {
            let names = document.requests().filter_map(|request| request.name.as_ref().map(|name| name.value.as_str()));
            SelectionError::NameNotFound {
                name: name.clone(),
                suggestion: volley_syntax::closest(name, names).map(str::to_owned),
            }
        }),
    }
}

impl PreparedRequest {
    /// The HTTP version the request line asked for, if any.
    #[must_use]
    pub fn version(&self) -> Option<http::Version> {
        self.version
    }

    /// The user and password of `Authorization: Digest user password`, which the
    /// exchange answers the server's challenge with (the header is not sent).
    #[must_use]
    pub fn digest_credentials(&self) -> Option<(&str, &str)> {
        self.digest.as_ref().map(|credentials| (credentials.user(), credentials.password()))
    }

    /// Adds the cookies of the request's jar for its URL to its `Cookie` header, as the
    /// exchange does before sending (nothing when it uses no jar): the headers as they
    /// will go out, for a request shown or copied rather than sent.
    pub fn add_jar_cookies(&mut self) {
        let jar = self.cookie_jar.as_ref().filter(|_| self.use_cookies);
        exchange::add_jar_cookies(&mut self.headers, jar, &self.url);
    }
}
