//! The client: the one executor behind every front end, and the facade of the library
//! ([`Client`]). This module holds its state (variables, the chain of responses, the
//! caches its forks share: [`shared`]), the selection of a request ([`select`]), the
//! settings of each directory ([`settings`]) and the exchange ([`exchange`]: redirects,
//! cookies, timeout, cancellation). The parts of a run are written as `impl Client`
//! blocks above it (`prepare`, `compose`, `grpc`, `oauth`), and `run` above them all
//! puts them in order; nothing here calls up into them.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use serde_json::{Map, Value};

use crate::chaining::Chain;
use crate::config::Config;
use crate::cookies::CookieJar;
use crate::dotenv::DotEnv;
use crate::resolvers::Environment;
use crate::script::Realms;
use crate::transport::Transport;

pub(crate) mod cache;
mod exchange;
mod options;
mod redirect;
mod settings;
pub(crate) mod shared;

use cache::MtimeCache;
pub use options::{ClientConfig, ConfigSource, DEFAULT_TIMEOUT, RequestDefaults};
pub use redirect::MAX_REDIRECTS;
pub(crate) use settings::{Settings, merged_headers};
pub use volley_model::options::RunOptions;
pub use volley_model::select::Selection;
pub(crate) use volley_model::select::{refuse, select};

/// The `.env` files of a run: its directories (nearest first) and its profile.
type DotEnvKey = (Vec<PathBuf>, Option<String>);

/// Runs `.http` definitions. Clones share variables, request history and cookie jar.
///
/// A run step by step (prepare, then send) is in [`stages`](crate::stages); the
/// diagnostics of a document as the client's runs would see it, in
/// [`Analyzer`](crate::analysis::Analyzer).
///
/// ```no_run
/// # async fn example() -> Result<(), volley_engine::Error> {
/// use volley_engine::{Client, ClientConfig, RunOptions};
///
/// volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
/// let client = Client::new(ClientConfig::default());
/// client.set_variable("host", "https://httpbin.org");
/// let response = client.run_string("GET {{host}}/json\n", RunOptions::default()).await?;
/// println!("{} {}", response.status(), response.text().await.unwrap_or_default());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

/// A directory and the profile asked for.
type SettingsKey = (PathBuf, Option<String>);

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("config", &self.inner.config).finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub(crate) config: ClientConfig,
    pub(crate) transport: Arc<dyn Transport>,
    /// Client variables; runs take a snapshot (an `Arc` clone), setters copy on write.
    pub(crate) variables: RwLock<Arc<Map<String, Value>>>,
    /// Last responses of named requests, snapshotted the same way.
    pub(crate) chain: Mutex<Arc<Chain>>,
    /// The working directory, for text run without a source path.
    working_directory: std::sync::OnceLock<PathBuf>,
    /// Settings by directory and profile; shared by forks.
    settings: Arc<MtimeCache<SettingsKey, Arc<Settings>>>,
    /// Configurations by directory (`None` when none applies); shared by forks.
    configs: Arc<MtimeCache<PathBuf, Option<Config>>>,
    /// `.env` variables by the directories whose files apply, nearest first; shared by forks.
    dotenvs: Arc<MtimeCache<DotEnvKey, Arc<DotEnv>>>,
    /// The JavaScript realms this client's scripts run in; never shared with forks.
    pub(crate) realms: Realms,
    /// OAuth 2.0 tokens and discovery documents; shared by forks.
    pub(crate) oauth: Arc<volley_auth::oauth::TokenCache>,
    /// Compiled gRPC schemas; shared by forks.
    pub(crate) grpc_schemas: Arc<shared::SchemaCache>,
    /// gRPC schemas got by reflection; shared by forks.
    pub(crate) grpc_reflected: Arc<shared::ReflectionCache>,
    /// Every service of a server by reflection, for the language server (`grpc/catalog.rs`).
    pub(crate) grpc_catalogs: Arc<shared::Catalogs>,
    /// The answers of `-askonce` prompts; shared by forks.
    pub(crate) answers: Arc<crate::prompt::Answers>,
    /// HTTP/2 connections of gRPC calls, kept for the next calls; shared by forks.
    pub(crate) grpc_connections: Arc<volley_grpc::Connections>,
    /// httpyac's `@ratelimit` slots; shared by forks.
    pub(crate) rate_slots: Arc<crate::ratelimit::Slots>,
}

impl Client {
    /// What `$env`, `$processEnv` and `$secret` read for this client.
    #[must_use]
    pub(crate) fn environment(&self) -> Environment {
        self.inner.config.environment.clone()
    }

    /// A client.
    #[must_use]
    pub fn new(config: ClientConfig) -> Self {
        let transport = config.transport.clone().unwrap_or_else(crate::transport::default_transport);
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
            realms: Realms::default(),
            oauth: Arc::default(),
            grpc_schemas: Arc::default(),
            grpc_reflected: Arc::default(),
            grpc_catalogs: Arc::default(),
            answers: Arc::default(),
            grpc_connections: Arc::default(),
            rate_slots: Arc::default(),
        };
        Self { inner: Arc::new(inner) }
    }

    /// A client with the same setup (files, transport, resolvers, defaults, profile,
    /// configuration and its cache) and state of its own: `variables`, `cookie_jar`
    /// and no request history. The execution server forks one per session, so that
    /// sessions share the configuration found on disk but nothing else.
    #[must_use]
    pub(crate) fn fork(&self, variables: Map<String, Value>, cookie_jar: Option<CookieJar>) -> Self {
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
            realms: Realms::default(),
            oauth: Arc::clone(&self.inner.oauth),
            grpc_schemas: Arc::clone(&self.inner.grpc_schemas),
            grpc_reflected: Arc::clone(&self.inner.grpc_reflected),
            grpc_catalogs: Arc::clone(&self.inner.grpc_catalogs),
            answers: Arc::clone(&self.inner.answers),
            grpc_connections: Arc::clone(&self.inner.grpc_connections),
            rate_slots: Arc::clone(&self.inner.rate_slots),
        };
        Self { inner: Arc::new(inner) }
    }

    /// Sets a client variable (above the configuration's, below a run's).
    pub fn set_variable(&self, name: impl Into<String>, value: impl Into<Value>) {
        Arc::make_mut(&mut self.inner.variables.write()).insert(name.into(), value.into());
    }

    /// Sets several client variables.
    pub fn set_variables(&self, variables: impl IntoIterator<Item = (String, Value)>) {
        Arc::make_mut(&mut self.inner.variables.write()).extend(variables);
    }

    /// Replaces every client variable with `variables`.
    pub(crate) fn replace_variables(&self, variables: Map<String, Value>) {
        *self.inner.variables.write() = Arc::new(variables);
    }

    /// The client variables: the initial ones and those set since.
    #[must_use]
    pub fn get_variables(&self) -> Map<String, Value> {
        (**self.inner.variables.read()).clone()
    }

    /// Whether a request named `name` has answered in this client (its response is
    /// kept for `{{name.response…}}`).
    #[must_use]
    pub fn has_response(&self, name: &str) -> bool {
        self.inner.chain.lock().contains(name)
    }

    /// The cookie jar, when the client has one.
    #[must_use]
    pub fn cookie_jar(&self) -> Option<&CookieJar> {
        self.inner.config.cookie_jar.as_ref()
    }

    /// The process's working directory, read once.
    pub(crate) fn working_directory(&self) -> Option<PathBuf> {
        if let Some(directory) = self.inner.working_directory.get() {
            return Some(directory.clone());
        }
        let directory = std::env::current_dir().ok()?;
        Some(self.inner.working_directory.get_or_init(|| directory).clone())
    }

    pub(crate) fn active_jar(&self) -> Option<&CookieJar> {
        self.inner.config.cookie_jar.as_ref()
    }
}

/// Scripts' `client.global` is the client's variables.
impl crate::script::Globals for Client {
    fn globals(&self) -> Map<String, Value> {
        self.get_variables()
    }

    fn replace_globals(&self, variables: Map<String, Value>) {
        self.replace_variables(variables);
    }
}

#[cfg(test)]
mod tests {
    use super::{Client, ClientConfig};

    /// A thread that panics while it holds the variables' lock releases it, and the
    /// client's variables stay usable: `parking_lot`'s locks do not poison (the workspace's
    /// lock policy, docs/ARCHITECTURE.md).
    #[test]
    fn variables_stay_usable_after_a_panic_under_the_lock() {
        let client = Client::new(ClientConfig::default());
        client.set_variable("before", 1);
        let panicking = client.clone();
        let panicked = std::thread::spawn(move || {
            let _held = panicking.inner.variables.write();
            panic!("panics while holding the lock");
        })
        .join();
        assert!(panicked.is_err());
        assert!(client.inner.variables.try_write().is_some(), "the lock is released");
        client.set_variable("after", 2);
        let variables = client.get_variables();
        assert_eq!((variables["before"].as_i64(), variables["after"].as_i64()), (Some(1), Some(2)));
    }
}
