//! The network settings of a configuration: `tls` (CA bundles, client certificates by
//! host) and `proxy` in `volley.jsonc` and its profiles, and JetBrains'
//! `SSLConfiguration` in `http-client.env.json` and its private file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Reader, invalid};
use crate::error::ConfigError;
use crate::network::{HostTls, ProxySettings, TlsSettings};

/// JetBrains' `SSLConfiguration` of an environment: a client certificate for every host
/// (`clientCertificate`, `clientCertificateKey`, each a path or `{"path": …}`) and
/// `verifyHostCertificate`. `hasCertificatePassphrase` asks the IDE's user for the
/// key's passphrase; here an encrypted key or PKCS#12 file is reported as needing a
/// `passphrase`, which only `volley.jsonc` and `--cert-passphrase` give.
pub(super) fn jetbrains_ssl(
    value: Value,
    path: &Path,
    directory: &Path,
    at: &str,
) -> Result<(HostTls, Option<bool>), ConfigError> {
    let Value::Object(map) = value else {
        return Err(invalid(path, at, "`SSLConfiguration` must be an object", None));
    };
    let mut host = HostTls { host: "*".to_owned(), ..HostTls::default() };
    let mut verify = None;
    for (key, value) in map {
        let inner = format!("{at}.{key}");
        let file = |value: &Value| -> Result<PathBuf, ConfigError> {
            let text = match value {
                Value::String(text) => Some(text.as_str()),
                Value::Object(object) => object.get("path").and_then(Value::as_str),
                _ => None,
            };
            text.map(|text| directory.join(text)).ok_or_else(|| {
                invalid(path, &inner, format!("`{key}` must be a path or an object with a `path`"), None)
            })
        };
        match key.as_str() {
            "clientCertificate" => {
                let path = file(&value)?;
                let format = value.get("format").and_then(Value::as_str).unwrap_or_default().to_ascii_uppercase();
                let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
                if format == "PKCS12" || format == "PFX" || extension == "p12" || extension == "pfx" {
                    host.pfx = Some(path);
                } else {
                    host.cert = Some(path);
                }
            }
            "clientCertificateKey" => host.key = Some(file(&value)?),
            "verifyHostCertificate" => {
                verify = Some(
                    value
                        .as_bool()
                        .ok_or_else(|| invalid(path, &inner, "`verifyHostCertificate` must be true or false", None))?,
                );
            }
            // Asked of the IDE's user; an encrypted key is reported when it is read.
            "hasCertificatePassphrase" => {}
            _ => {
                let hint = Some(
                    "known keys: clientCertificate, clientCertificateKey, hasCertificatePassphrase, \
                     verifyHostCertificate"
                        .to_owned(),
                );
                return Err(invalid(path, &inner, format!("unknown key `{key}`"), hint));
            }
        }
    }
    Ok((host, verify))
}

/// The private env file's `SSLConfiguration` over the public one's, field by field.
pub(super) fn merge_jetbrains_host(tls: &mut TlsSettings, host: HostTls) {
    if let Some(existing) = tls.hosts.iter_mut().find(|entry| entry.host == host.host) {
        existing.cert = host.cert.or(existing.cert.take());
        existing.key = host.key.or(existing.key.take());
        existing.pfx = host.pfx.or(existing.pfx.take());
    } else if host.cert.is_some() || host.key.is_some() || host.pfx.is_some() {
        tls.hosts.push(host);
    }
}

impl Reader<'_> {
    /// `tls`: `ca` (a path or a list) and `hosts` (by host pattern: `ca`, `cert`, `key`).
    pub(super) fn tls(&self, value: Value, at: &str) -> Result<TlsSettings, ConfigError> {
        let map = self.object(value, at)?;
        self.known_keys(&map, at, &["ca", "hosts"])?;
        let mut tls = TlsSettings::default();
        for (key, value) in map {
            let inner = format!("{at}.{key}");
            match key.as_str() {
                "ca" => tls.ca = self.paths(value, &inner)?,
                "hosts" => {
                    for (host, entry) in self.object(value, &inner)? {
                        let at = format!("{inner}.{host}");
                        tls.hosts.push(self.host_tls(host, entry, &at)?);
                    }
                }
                _ => {}
            }
        }
        Ok(tls)
    }

    fn host_tls(&self, host: String, value: Value, at: &str) -> Result<HostTls, ConfigError> {
        let map = self.object(value, at)?;
        self.known_keys(&map, at, &["ca", "cert", "key", "pfx", "passphrase"])?;
        if host.trim().is_empty() {
            return Err(invalid(self.path, at, "a host pattern cannot be empty", None));
        }
        let mut entry = HostTls { host, ..HostTls::default() };
        for (key, value) in map {
            let inner = format!("{at}.{key}");
            match key.as_str() {
                "ca" => entry.ca = self.paths(value, &inner)?,
                "cert" => entry.cert = Some(self.path_value(value, &inner)?),
                "key" => entry.key = Some(self.path_value(value, &inner)?),
                "pfx" => entry.pfx = Some(self.path_value(value, &inner)?),
                "passphrase" => {
                    let Value::String(passphrase) = value else {
                        return Err(invalid(self.path, &inner, "`passphrase` must be a string", None));
                    };
                    if !passphrase.contains("{{") && !passphrase.is_empty() {
                        // Said once per load: a passphrase in clear in a committed file.
                        tracing::warn!(
                            "{}: `{inner}` is written in clear; `{{{{$secret NAME}}}}` reads it from the environment or .env",
                            self.path.display()
                        );
                    }
                    entry.passphrase = Some(passphrase);
                }
                _ => {}
            }
        }
        if entry.key.is_some() && entry.cert.is_none() {
            return Err(invalid(self.path, at, "a client `key` needs its `cert`", None));
        }
        if entry.pfx.is_some() && entry.cert.is_some() {
            let hint = Some("a PKCS#12 file holds the certificate and its key: keep `pfx` or `cert`/`key`".to_owned());
            return Err(invalid(self.path, at, "`pfx` and `cert` cannot both be given", hint));
        }
        Ok(entry)
    }

    /// `proxy`: `http`, `https` (URLs, templates) and `noProxy` (a list of hosts).
    pub(super) fn proxy(&self, value: Value, at: &str) -> Result<ProxySettings, ConfigError> {
        let map = self.object(value, at)?;
        self.known_keys(&map, at, &["http", "https", "noProxy"])?;
        let mut proxy = ProxySettings::default();
        for (key, value) in map {
            let inner = format!("{at}.{key}");
            match key.as_str() {
                "http" | "https" => {
                    let Value::String(url) = value else {
                        return Err(invalid(self.path, &inner, format!("`{inner}` must be a proxy URL"), None));
                    };
                    if !url.is_empty() && !url.contains("{{") {
                        check_proxy_url(&url).map_err(|message| {
                            let hint =
                                Some("like `http://proxy.example.com:3128` or `socks5://127.0.0.1:1080`".to_owned());
                            invalid(self.path, &inner, message, hint)
                        })?;
                    }
                    if key == "http" { proxy.http = Some(url) } else { proxy.https = Some(url) }
                }
                "noProxy" => {
                    let hosts = match value {
                        Value::String(text) => text.split(',').map(|host| host.trim().to_owned()).collect(),
                        Value::Array(items) => items
                            .into_iter()
                            .map(|item| match item {
                                Value::String(host) => Ok(host),
                                _ => Err(invalid(self.path, &inner, "`noProxy` must be a list of hosts", None)),
                            })
                            .collect::<Result<Vec<_>, _>>()?,
                        _ => return Err(invalid(self.path, &inner, "`noProxy` must be a list of hosts", None)),
                    };
                    proxy.no_proxy = Some(hosts);
                }
                _ => {}
            }
        }
        Ok(proxy)
    }

    /// A path or a list of paths, resolved against the configuration's directory.
    fn paths(&self, value: Value, at: &str) -> Result<Vec<PathBuf>, ConfigError> {
        match value {
            Value::Array(items) => items.into_iter().map(|item| self.path_value(item, at)).collect(),
            other => Ok(vec![self.path_value(other, at)?]),
        }
    }

    fn path_value(&self, value: Value, at: &str) -> Result<PathBuf, ConfigError> {
        match value {
            Value::String(path) if !path.is_empty() => Ok(self.directory.join(path)),
            _ => Err(invalid(self.path, at, format!("`{at}` must be a file path (or a list of them)"), None)),
        }
    }
}

/// Checks that `url` can name a proxy: a URL with a host and a scheme reqwest speaks to proxies.
pub fn check_proxy_url(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|error| format!("`{url}` is not a proxy URL: {error}"))?;
    if !matches!(parsed.scheme(), "http" | "https" | "socks5" | "socks5h") || parsed.host_str().is_none() {
        return Err(format!("`{url}` is not a proxy URL: the scheme must be http, https, socks5 or socks5h"));
    }
    Ok(())
}
