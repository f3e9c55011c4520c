//! What JavaScript passes in: a client's configuration and a run's options, checked
//! and turned into the engine's [`ClientConfig`] and [`RunOptions`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use napi_derive::napi;
use serde_json::{Map, Value};
use volley_engine::config::{HostTls, ProxySettings, TlsSettings};
use volley_engine::{ClientConfig, CookieJar, RequestDefaults, Resolver, RunOptions, Transport};

use crate::io::{IoDispatcher, JsIo};
use crate::resolvers::{Dispatcher, JsResolver};
use crate::transport::{JsTransport, TransportAborter, TransportDispatcher};

/// A client's configuration (SPEC.md's `ClientConfig` less what the JavaScript layer
/// keeps: the cookie jar comes as its own argument).
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeConfig {
    /// Initial client variables.
    pub variables: Option<Map<String, Value>>,
    /// Default timeout of every request, in milliseconds.
    pub timeout: Option<f64>,
    /// Default headers and settings.
    pub defaults: Option<NativeDefaults>,
    /// The names of the custom resolvers, with their `$` (`"$token"`); the dispatcher
    /// given beside the configuration answers their calls.
    pub resolvers: Option<Vec<String>>,
    /// What `$env` and `$secret` read instead of the process's environment (under Bun,
    /// whose `process.env` changes never reach native code, `process.env` as it was
    /// when the client was made).
    pub environment: Option<HashMap<String, String>>,
    /// CA bundles and client certificates beside the configuration's (`volley.jsonc` `tls`).
    pub tls: Option<NativeTls>,
    /// Proxies over the configuration's and the environment's (`volley.jsonc` `proxy`).
    pub proxy: Option<NativeProxy>,
    /// `"1.1"` or `"2"`: the HTTP version of requests whose line names none.
    pub http_version: Option<String>,
    /// Read files outside the project (`allowExternalFiles`); refused by default.
    pub allow_external_files: Option<bool>,
}

/// `tls`: paths of PEM CA bundles, and client certificates by host pattern.
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeTls {
    /// PEM bundles trusted beside the system's roots.
    pub ca: Option<Vec<String>>,
    /// Entries by host pattern, the first of equally specific ones winning.
    pub hosts: Option<Vec<NativeHostTls>>,
}

/// One `tls.hosts` entry.
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeHostTls {
    /// `host`, `host:port`, `*.domain` or `*`.
    pub host: String,
    /// PEM bundles trusted for these hosts only.
    pub ca: Option<Vec<String>>,
    /// The client certificate (PEM).
    pub cert: Option<String>,
    /// Its private key (PEM).
    pub key: Option<String>,
    /// A PKCS#12 file instead of `cert` and `key`.
    pub pfx: Option<String>,
    /// The passphrase of an encrypted key or of the PKCS#12 file (a template:
    /// `{{$secret NAME}}`).
    pub passphrase: Option<String>,
}

/// `proxy`.
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeProxy {
    /// The proxy of `http://` and `ws://` URLs (a template; `""` for none).
    pub http: Option<String>,
    /// The proxy of `https://` and `wss://` URLs.
    pub https: Option<String>,
    /// Hosts reached directly.
    pub no_proxy: Option<Vec<String>>,
}

/// `RequestDefaults`, headers as `[name, value]` pairs in their order.
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeDefaults {
    /// Headers added to requests that do not set them.
    pub headers: Option<Vec<Vec<String>>>,
    /// Follow redirects (default `true`).
    pub follow_redirects: Option<bool>,
    /// Check TLS certificates (default `true`).
    pub validate_ssl: Option<bool>,
}

/// A run's options (SPEC.md's `RunOptions` less `signal`, which the JavaScript layer
/// turns into [`NativeRun::cancel`](crate::NativeRun::cancel)).
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeRunOptions {
    /// Variables of this run (above the client's).
    pub variables: Option<Map<String, Value>>,
    /// Timeout of this run, in milliseconds (a request's `@timeout` still wins).
    pub timeout: Option<f64>,
}

impl NativeConfig {
    /// The engine's configuration: the real filesystem, configuration discovery, the
    /// process environment, `jar` when given, the custom resolvers answered by
    /// `dispatcher`, `transport` instead of the engine's HTTP client and `io` instead of
    /// the real filesystem when given.
    pub(crate) fn into_client_config(
        self,
        jar: Option<CookieJar>,
        dispatcher: Option<Dispatcher>,
        transport: Option<(TransportDispatcher, TransportAborter)>,
        io: Option<IoDispatcher>,
    ) -> napi::Result<ClientConfig> {
        let defaults = self.defaults.unwrap_or_default();
        let headers = defaults
            .headers
            .unwrap_or_default()
            .into_iter()
            .map(|pair| match <[String; 2]>::try_from(pair) {
                Ok([name, value]) => Ok((name, value)),
                Err(_) => Err(invalid_argument("defaults.headers: every entry is a [name, value] pair")),
            })
            .collect::<napi::Result<Vec<_>>>()?;
        let names = self.resolvers.unwrap_or_default();
        let mut resolvers: HashMap<String, Arc<dyn Resolver>> = HashMap::new();
        if !names.is_empty() {
            let Some(dispatcher) = dispatcher else {
                return Err(invalid_argument("resolvers: named without a dispatcher to call"));
            };
            let dispatcher = Arc::new(dispatcher);
            for name in names {
                if !name.starts_with('$') || name.len() < 2 {
                    return Err(invalid_argument(&format!("resolvers: `{name}` is not a `$name` key")));
                }
                let resolver = JsResolver { name: name.clone(), dispatcher: Arc::clone(&dispatcher) };
                resolvers.insert(name, Arc::new(resolver));
            }
        }
        let transport = transport.map(|(dispatcher, aborter)| -> Arc<dyn Transport> {
            Arc::new(JsTransport {
                dispatcher: Arc::new(dispatcher),
                aborter: Arc::new(aborter),
                next: AtomicU32::new(0),
                volley: volley_http::transport::HttpTransport::new(),
            })
        });
        let mut config = ClientConfig::default();
        if let Some(environment) = self.environment {
            config.environment = volley_engine::resolvers::Environment::fixed(environment);
        }
        if let Some(io) = io {
            config.io = Arc::new(JsIo { dispatcher: Arc::new(io) });
        }
        let tls = self.tls.unwrap_or_default();
        let paths = |list: Option<Vec<String>>| list.unwrap_or_default().into_iter().map(PathBuf::from).collect();
        let tls = TlsSettings {
            ca: paths(tls.ca),
            hosts: tls
                .hosts
                .unwrap_or_default()
                .into_iter()
                .map(|entry| HostTls {
                    host: entry.host,
                    ca: paths(entry.ca),
                    cert: entry.cert.map(PathBuf::from),
                    key: entry.key.map(PathBuf::from),
                    pfx: entry.pfx.map(PathBuf::from),
                    passphrase: entry.passphrase,
                })
                .collect(),
        };
        let proxy = self.proxy.unwrap_or_default();
        for url in [&proxy.http, &proxy.https].into_iter().flatten() {
            if !url.is_empty() && !url.contains("{{") {
                volley_engine::config::check_proxy_url(url)
                    .map_err(|message| invalid_argument(&format!("proxy: {message}")))?;
            }
        }
        let proxy = ProxySettings { http: proxy.http, https: proxy.https, no_proxy: proxy.no_proxy };
        let http_version = match self.http_version.as_deref() {
            None => None,
            Some("1.1") => Some(volley_engine::HttpVersion::HTTP_11),
            Some("2") => Some(volley_engine::HttpVersion::HTTP_2),
            Some(other) => return Err(invalid_argument(&format!("httpVersion: \"1.1\" or \"2\" (got {other:?})"))),
        };
        Ok(ClientConfig {
            resolvers,
            // The addon is its own program: its clients send with Volley's HTTP client.
            transport: Some(transport.unwrap_or_else(volley_http::transport::HttpTransport::shared)),
            tls,
            proxy,
            http_version,
            allow_external_files: self.allow_external_files.unwrap_or(false),
            variables: self.variables.unwrap_or_default(),
            cookie_jar: jar,
            timeout: self.timeout.map(|ms| milliseconds("timeout", ms)).transpose()?,
            defaults: RequestDefaults {
                headers,
                follow_redirects: defaults.follow_redirects,
                validate_ssl: defaults.validate_ssl,
            },
            ..config
        })
    }
}

impl NativeRunOptions {
    /// The engine's options of one run (the first request of the text is selected).
    pub(crate) fn into_run_options(self) -> napi::Result<RunOptions> {
        let timeout = self.timeout.map(|ms| milliseconds("timeout", ms)).transpose()?;
        Ok(RunOptions::default().variables(self.variables.unwrap_or_default()).timeout(timeout))
    }
}

/// A duration from a number of milliseconds, refused when it is negative or not finite.
pub(crate) fn milliseconds(what: &str, ms: f64) -> napi::Result<Duration> {
    if ms.is_finite() && ms >= 0.0 {
        Ok(Duration::from_secs_f64(ms / 1000.0))
    } else {
        Err(invalid_argument(&format!("{what}: a number of milliseconds, 0 or more (got {ms})")))
    }
}

fn invalid_argument(message: &str) -> napi::Error {
    napi::Error::new(napi::Status::InvalidArg, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_are_checked() {
        assert_eq!(milliseconds("timeout", 1500.0).ok(), Some(Duration::from_millis(1500)));
        assert!(milliseconds("timeout", -1.0).is_err());
        assert!(milliseconds("timeout", f64::NAN).is_err());
        assert!(milliseconds("timeout", f64::INFINITY).is_err());
    }

    #[test]
    fn headers_must_be_pairs() {
        let config = |headers: Vec<Vec<String>>| NativeConfig {
            defaults: Some(NativeDefaults { headers: Some(headers), ..NativeDefaults::default() }),
            ..NativeConfig::default()
        };
        let pair = vec!["X-A".to_owned(), "1".to_owned()];
        let given = config(vec![pair]).into_client_config(None, None, None, None).map(|config| config.defaults.headers);
        assert_eq!(given.ok(), Some(vec![("X-A".to_owned(), "1".to_owned())]));
        assert!(config(vec![vec!["X-A".to_owned()]]).into_client_config(None, None, None, None).is_err());
    }

    #[test]
    fn resolvers_need_a_dispatcher() {
        let config = NativeConfig { resolvers: Some(vec!["$token".to_owned()]), ..NativeConfig::default() };
        assert!(config.into_client_config(None, None, None, None).is_err());
        let none = NativeConfig { resolvers: Some(Vec::new()), ..NativeConfig::default() };
        assert!(none.into_client_config(None, None, None, None).is_ok_and(|config| config.resolvers.is_empty()));
    }
}
