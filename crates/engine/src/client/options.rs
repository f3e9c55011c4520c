//! How a client and its runs are set up: [`ClientConfig`] (files, transport, variables,
//! resolvers, cookie jar, defaults, profile, configuration); [`RunOptions`](super::RunOptions) is
//! volley-model's.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::Config;
use crate::cookies::CookieJar;
use crate::io::{Io, RealFs};
use crate::network::{ProxySettings, TlsSettings};
use crate::resolvers::{Environment, Resolver};
use crate::transport::Transport;

/// The request timeout when nothing sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How a client is set up. `ClientConfig::default()` reads the real filesystem, sends
/// over the network, discovers `volley.jsonc`, and keeps no cookies.
#[derive(Clone)]
pub struct ClientConfig {
    /// Where `.http`, body and config files are read.
    pub io: Arc<dyn Io>,
    /// How requests are sent; `None` for the installed one
    /// ([`transport::install_default`](crate::transport::install_default)).
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
    /// CA bundles and client certificates beside the configuration's (the CLI's
    /// `--cacert`, `--cert`, `--key`); its host entries win over the configuration's.
    pub tls: TlsSettings,
    /// Proxies over the configuration's (the CLI's `--proxy`, `--noproxy`).
    pub proxy: ProxySettings,
    /// The HTTP version of requests whose request line names none (`HTTP_11` or
    /// `HTTP_2`; the CLI's `--http1.1`, `--http2`); `None` to negotiate.
    pub http_version: Option<http::Version>,
    /// How a person takes part in an OAuth 2.0 flow (the browser of the authorization
    /// code, the device code shown); `None` for [`CommandPrompt`](volley_auth::oauth::CommandPrompt).
    pub auth_prompt: Option<Arc<dyn volley_auth::oauth::AuthPrompt>>,
    /// Who answers httpyac's `{{$input …}}`, `{{$password …}}` and `{{$pick …}}` when
    /// no variable has the value (a terminal, an editor); `None`: such a request is
    /// refused, naming the prompt.
    pub value_prompt: Option<Arc<dyn crate::prompt::ValuePrompt>>,
    /// The on-disk token cache (a JSON file, written readable by its owner only);
    /// `None` keeps tokens for the process alone. See
    /// [`default_token_cache`](volley_auth::oauth::default_token_cache).
    pub token_cache: Option<PathBuf>,
    /// Read files outside the project (`< ../../secret.txt`): the directory of the
    /// configuration, else of the checkout's `.git`, else of the `.http` file. `false`
    /// (the default) refuses them, by name, before anything is sent.
    pub allow_external_files: bool,
    /// How long the configuration, `.env` and profile files read stay trusted without
    /// asking the filesystem whether they changed. Zero (the default): every run checks
    /// them, so an edit counts at once (the language server, the execution server). The
    /// CLI's `run` and `load` set a second: their sends, thousands a second, would
    /// otherwise spend a tenth of their time asking.
    pub recheck_files: Duration,
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
            tls: TlsSettings::default(),
            proxy: ProxySettings::default(),
            http_version: None,
            auth_prompt: None,
            value_prompt: None,
            token_cache: None,
            allow_external_files: false,
            recheck_files: Duration::ZERO,
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
            .field("tls", &self.tls)
            .field("proxy", &self.proxy.http.as_deref().map(crate::network::without_password))
            .field("http_version", &self.http_version)
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
