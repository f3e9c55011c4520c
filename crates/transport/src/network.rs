//! Certificates and proxies of a run: the CA bundles to trust beside the platform's
//! roots, the client certificate to present to each host (mutual TLS), and the proxies
//! to go through. Front ends and `volley.jsonc` name files and templates
//! ([`TlsSettings`], [`ProxySettings`]); preparing a request reads the files through the
//! client's [`Io`](volley_io::Io) and renders the templates into a [`Network`], which
//! the transport turns into a rustls configuration ([`TlsChoice`], the files it names
//! read) and proxies.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::TransportError;
pub use crate::error::certificate_error;
pub use crate::tls::{PemFile, TlsChoice};

/// `tls` of `volley.jsonc` (and of a profile), JetBrains' `SSLConfiguration`, or a
/// client's `ClientConfig::tls` (the engine's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsSettings {
    /// `ca`: PEM bundles of CA certificates trusted beside the platform's roots.
    pub ca: Vec<PathBuf>,
    /// `hosts`: what to use with some hosts only.
    pub hosts: Vec<HostTls>,
}

impl TlsSettings {
    /// Whether nothing is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ca.is_empty() && self.hosts.is_empty()
    }
}

/// One entry of `tls.hosts`: a client certificate and CA bundles for the hosts `host`
/// matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostTls {
    /// `api.example.com` (any port), `api.example.com:8443`, `*.example.com` (its
    /// subdomains) or `*` (every host).
    pub host: String,
    /// `ca`: PEM bundles trusted for these hosts only.
    pub ca: Vec<PathBuf>,
    /// `cert`: the client certificate chain (PEM); with `key`, or a PEM file holding both.
    pub cert: Option<PathBuf>,
    /// `key`: the client certificate's private key (PEM, PKCS#8, PKCS#1 or SEC1; PKCS#8
    /// encrypted with `passphrase`).
    pub key: Option<PathBuf>,
    /// `pfx`: the certificate chain and key in one PKCS#12 file (`.p12`, `.pfx`).
    pub pfx: Option<PathBuf>,
    /// `passphrase`: of an encrypted key or of the PKCS#12 file; a template
    /// (`{{$secret CLIENT_KEY_PASSPHRASE}}`), rendered when a request is prepared.
    pub passphrase: Option<String>,
}

impl HostTls {
    /// How well `host` (lowercase) and `port` match this entry: `None` for no match,
    /// else higher for more specific patterns (`host:port` > `host` > `*.domain` > `*`).
    #[must_use]
    pub fn matches(&self, host: &str, port: u16) -> Option<u8> {
        let pattern = self.host.trim().to_ascii_lowercase();
        if pattern == "*" {
            return Some(0);
        }
        if let Some(domain) = pattern.strip_prefix("*.") {
            let suffix = format!(".{domain}");
            return host.ends_with(&suffix).then_some(1);
        }
        match split_port(&pattern) {
            Some((name, wanted)) => (name == host && wanted == port).then_some(3),
            None => (pattern == host).then_some(2),
        }
    }
}

/// `host:port` into its parts (`[::1]:443` too); `None` without a port.
fn split_port(pattern: &str) -> Option<(&str, u16)> {
    let (name, port) = pattern.rsplit_once(':')?;
    if name.contains(':') && !name.ends_with(']') {
        return None;
    }
    let port = port.parse().ok()?;
    Some((name.trim_start_matches('[').trim_end_matches(']'), port))
}

/// `proxy` of `volley.jsonc` (and of a profile), or a client's
/// `ClientConfig::proxy` (the engine's). Unset fields fall back to the
/// layer below, and in the end to `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxySettings {
    /// `http`: the proxy of `http://` (and `ws://`) URLs; a template
    /// (`http://user:{{$secret PROXY_PASSWORD}}@proxy:3128`). Empty for none.
    pub http: Option<String>,
    /// `https`: the proxy of `https://` URLs, the same way.
    pub https: Option<String>,
    /// `noProxy`: hosts reached directly (`localhost`, `.internal.example`, `10.0.0.0/8`, `*`).
    pub no_proxy: Option<Vec<String>>,
}

impl ProxySettings {
    /// Whether nothing is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.http.is_none() && self.https.is_none() && self.no_proxy.is_none()
    }

    /// Fields unset here taken from `below`.
    #[must_use]
    pub fn over(&self, below: &ProxySettings) -> ProxySettings {
        ProxySettings {
            http: self.http.clone().or_else(|| below.http.clone()),
            https: self.https.clone().or_else(|| below.https.clone()),
            no_proxy: self.no_proxy.clone().or_else(|| below.no_proxy.clone()),
        }
    }
}

/// The proxies of a request, rendered.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Proxies {
    /// For `http://` URLs.
    pub http: Option<String>,
    /// For `https://` URLs.
    pub https: Option<String>,
    /// Comma-separated hosts reached directly.
    pub no_proxy: Option<String>,
}

impl fmt::Debug for Proxies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxies")
            .field("http", &self.http.as_deref().map(without_password))
            .field("https", &self.https.as_deref().map(without_password))
            .field("no_proxy", &self.no_proxy)
            .finish()
    }
}

/// The environment variables of each proxy setting, in the order they are read.
const HTTP_PROXY_VARIABLES: [&str; 4] = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];
const HTTPS_PROXY_VARIABLES: [&str; 4] = ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"];
const NO_PROXY_VARIABLES: [&str; 2] = ["no_proxy", "NO_PROXY"];

/// The first of `names` set in the environment.
fn from_environment(names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| std::env::var(name).ok())
}

impl Proxies {
    /// The proxies of the environment (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
    /// `NO_PROXY`, lower case first).
    #[must_use]
    pub fn from_environment() -> Self {
        Self {
            http: from_environment(&HTTP_PROXY_VARIABLES),
            https: from_environment(&HTTPS_PROXY_VARIABLES),
            no_proxy: from_environment(&NO_PROXY_VARIABLES),
        }
    }

    /// `settings`, each setting it leaves unset taken from the environment (not yet
    /// rendered: a setting may hold `{{…}}`).
    #[must_use]
    pub fn over_environment(settings: ProxySettings) -> Self {
        Self {
            http: settings.http.or_else(|| from_environment(&HTTP_PROXY_VARIABLES)),
            https: settings.https.or_else(|| from_environment(&HTTPS_PROXY_VARIABLES)),
            no_proxy: settings.no_proxy.map(|hosts| hosts.join(",")).or_else(|| from_environment(&NO_PROXY_VARIABLES)),
        }
    }

    /// The proxy `url` goes through, unless `no_proxy` lists its host.
    #[must_use]
    pub fn for_url(&self, url: &url::Url) -> Option<String> {
        let proxy = match url.scheme() {
            "http" | "ws" => self.http.as_deref(),
            _ => self.https.as_deref(),
        }
        .filter(|proxy| !proxy.is_empty())?;
        let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let excluded = self.no_proxy.as_deref().unwrap_or("").split(',').map(str::trim).any(|entry| {
            let entry = entry.to_ascii_lowercase();
            let entry = entry.strip_prefix("*.").map_or(entry.as_str(), |domain| domain);
            let entry = entry.strip_prefix('.').unwrap_or(entry);
            entry == "*" || (!entry.is_empty() && (host == entry || host.ends_with(&format!(".{entry}"))))
        });
        (!excluded).then(|| proxy.to_owned())
    }
}

/// A proxy URL with its password replaced, for messages.
#[must_use]
pub fn without_password(proxy: &str) -> String {
    match url::Url::parse(proxy) {
        Ok(mut url) if url.password().is_some() => {
            let _ = url.set_password(Some("***"));
            url.to_string()
        }
        _ => proxy.to_owned(),
    }
}

/// What the transport needs of a request's certificates and proxies. Files are read
/// when a connection needs them, through the client's [`Io`](volley_io::Io) (the
/// execution server's keeps to its workspace), so the files of hosts a run never
/// reaches are never read.
#[derive(Clone)]
pub struct Network {
    /// CA bundles trusted for every host.
    pub ca: Vec<PathBuf>,
    /// Entries by host, the client's first, then the profile's, then the configuration's.
    pub hosts: Vec<HostTls>,
    /// The proxies; `None` for those of the environment.
    pub proxies: Option<Proxies>,
    /// Where the files are read.
    pub io: Arc<dyn volley_io::Io>,
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("ca", &self.ca)
            .field("hosts", &self.hosts)
            .field("proxies", &self.proxies)
            .finish_non_exhaustive()
    }
}

impl Network {
    /// The entry for `url`: the most specific pattern that matches it, the first of equals.
    #[must_use]
    pub fn host_for(&self, url: &url::Url) -> Option<&HostTls> {
        let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let port = url.port_or_known_default()?;
        let mut best: Option<(u8, &HostTls)> = None;
        for entry in &self.hosts {
            if let Some(score) = entry.matches(&host, port)
                && best.is_none_or(|(top, _)| score > top)
            {
                best = Some((score, entry));
            }
        }
        best.map(|(_, entry)| entry)
    }
}

impl TlsChoice {
    /// What `network` says for `url`, its files read.
    pub fn for_url(network: &Network, url: &url::Url) -> Result<Self, TransportError> {
        let read = |path: &Path| -> Result<PemFile, TransportError> {
            let bytes = network.io.read(path).map_err(|error| {
                certificate_error(
                    path,
                    &format!("cannot read the file: {error}"),
                    "paths in volley.jsonc are relative to its directory; on the command line, to the working \
                     directory",
                )
            })?;
            Ok(PemFile { path: path.to_path_buf(), bytes: Arc::from(bytes) })
        };
        let mut choice = TlsChoice::default();
        for path in &network.ca {
            choice.ca.push(read(path)?);
        }
        if let Some(entry) = network.host_for(url) {
            for path in &entry.ca {
                choice.ca.push(read(path)?);
            }
            choice.cert = entry.cert.as_deref().map(read).transpose()?;
            choice.key = entry.key.as_deref().map(read).transpose()?;
            choice.pfx = entry.pfx.as_deref().map(read).transpose()?;
            choice.passphrase.clone_from(&entry.passphrase);
        }
        Ok(choice)
    }
}

/// Installs rustls's ring provider once per process: reqwest is built without a default
/// provider and every client build needs one.
pub fn install_crypto_provider() {
    static INSTALLED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(|| {
        // Another part of the process may have installed one already; that is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(host: &str) -> HostTls {
        HostTls { host: host.to_owned(), ..HostTls::default() }
    }

    #[test]
    fn host_patterns_match_from_the_most_specific() {
        assert_eq!(entry("api.example.com:8443").matches("api.example.com", 8443), Some(3));
        assert_eq!(entry("api.example.com:8443").matches("api.example.com", 443), None);
        assert_eq!(entry("API.example.com").matches("api.example.com", 443), Some(2));
        assert_eq!(entry("*.example.com").matches("api.example.com", 443), Some(1));
        assert_eq!(entry("*.example.com").matches("example.com", 443), None);
        assert_eq!(entry("*").matches("anything", 1), Some(0));
        assert_eq!(entry("[::1]:8443").matches("::1", 8443), Some(3));
        let host = |pattern: &str, cert: &str| HostTls { cert: Some(PathBuf::from(cert)), ..entry(pattern) };
        let network = Network {
            ca: Vec::new(),
            hosts: vec![host("*", "any"), host("*.example.com", "wild"), host("api.example.com", "exact")],
            proxies: None,
            io: Arc::new(volley_io::MemoryFs::new()),
        };
        let chosen = |url: &str| network.host_for(&url::Url::parse(url).unwrap()).and_then(|e| e.cert.clone());
        assert_eq!(chosen("https://api.example.com/x"), Some(PathBuf::from("exact")));
        assert_eq!(chosen("https://www.example.com/x"), Some(PathBuf::from("wild")));
        assert_eq!(chosen("https://other.org/x"), Some(PathBuf::from("any")));
    }

    #[test]
    fn passwords_stay_out_of_proxy_messages() {
        assert_eq!(without_password("http://ada:s3cret@proxy:3128"), "http://ada:***@proxy:3128/");
        assert_eq!(without_password("http://proxy:3128"), "http://proxy:3128");
    }
}
