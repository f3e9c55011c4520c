//! JetBrains env files (`http-client.env.json` and its private twin) read as a
//! configuration: each environment a profile, `$shared` the configuration's variables,
//! `SSLConfiguration` as `tls` and `defaults.validateSSL`.

use std::path::Path;

use serde_json::Value;

use super::network::{jetbrains_ssl, merge_jetbrains_host};
use super::{Config, invalid, parse_jsonc, read_text, substitute_env};
use crate::error::ConfigError;
use crate::io::Io;
use crate::resolvers::Environment;

impl Config {
    /// Reads JetBrains env files: each environment becomes a profile with its
    /// variables; `$shared` becomes the configuration's variables; the private file's
    /// values win over the public one's.
    pub fn from_jetbrains(
        io: &dyn Io,
        public: Option<&Path>,
        private: Option<&Path>,
        environment: &Environment,
    ) -> Result<Config, ConfigError> {
        let mut config = Config {
            path: public.or(private).map(Path::to_path_buf).unwrap_or_default(),
            sources: [public, private].into_iter().flatten().map(Path::to_path_buf).collect(),
            ..Config::default()
        };
        for path in [public, private].into_iter().flatten() {
            let value = substitute_env(parse_jsonc(&read_text(io, path)?, path)?, environment);
            let Value::Object(environments) = value else {
                return Err(invalid(path, "", "an env file must be a JSON object of environments", None));
            };
            for (name, variables) in environments {
                // The JSON schema an editor validates the file against (Kulala's, JetBrains').
                if name == "$schema" {
                    continue;
                }
                let Value::Object(mut variables) = variables else {
                    return Err(invalid(path, &name, "an environment must be a JSON object of variables", None));
                };
                if let Some(security) = variables.remove("Security") {
                    let entries = super::auth::jetbrains_security(security, path, &format!("{name}.Security"))?;
                    let auth = if name == "$shared" {
                        &mut config.auth
                    } else {
                        &mut config.profiles.entry(name.clone()).or_default().auth
                    };
                    // The private file's fields over the public one's.
                    for (id, entry) in entries {
                        let merged = auth.entry(id).or_default();
                        if !entry.grant.is_empty() {
                            merged.grant = entry.grant;
                        }
                        merged.fields.extend(entry.fields);
                    }
                }
                if let Some(ssl) = variables.remove("SSLConfiguration") {
                    let directory = path.parent().unwrap_or_else(|| Path::new("."));
                    let at = format!("{name}.SSLConfiguration");
                    let (host, verify) = jetbrains_ssl(ssl, path, directory, &at)?;
                    let (tls, defaults) = if name == "$shared" {
                        (&mut config.tls, &mut config.defaults)
                    } else {
                        let profile = config.profiles.entry(name.clone()).or_default();
                        (&mut profile.tls, &mut profile.defaults)
                    };
                    merge_jetbrains_host(tls, host);
                    if verify.is_some() {
                        defaults.validate_ssl = verify;
                    }
                }
                let target = if name == "$shared" {
                    &mut config.variables
                } else {
                    &mut config.profiles.entry(name).or_default().variables
                };
                target.extend(variables);
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::io::MemoryFs;

    use crate::config::tests::environment;

    #[test]
    fn reads_jetbrains_ssl_configuration_per_environment() {
        let files = MemoryFs::new();
        files.insert(
            "/q/http-client.env.json",
            r#"{"dev": {"SSLConfiguration": {"clientCertificate": {"path": "me.p12", "format": "PKCS12"},
                "verifyHostCertificate": false}},
               "prod": {"SSLConfiguration": {"clientCertificate": "me.pem"}}}"#,
        );
        files.insert(
            "/q/http-client.private.env.json",
            r#"{"prod": {"SSLConfiguration": {"clientCertificateKey": "me.key"}}}"#,
        );
        let config = Config::discover(&files, Path::new("/q"), &environment()).unwrap().unwrap();
        let dev = config.profile("dev").unwrap();
        assert_eq!(dev.tls.hosts[0].pfx.as_deref(), Some(Path::new("/q/me.p12")));
        assert_eq!(dev.defaults.validate_ssl, Some(false));
        assert!(!dev.variables.contains_key("SSLConfiguration"));
        let prod = &config.profile("prod").unwrap().tls.hosts[0];
        assert_eq!((prod.host.as_str(), prod.cert.as_deref()), ("*", Some(Path::new("/q/me.pem"))));
        assert_eq!(prod.key.as_deref(), Some(Path::new("/q/me.key")), "the private file's key joins the entry");
        files.insert("/q/http-client.env.json", r#"{"dev": {"SSLConfiguration": {"clientCert": "x"}}}"#);
        files.remove("/q/http-client.private.env.json");
        let error = Config::discover(&files, Path::new("/q"), &environment()).unwrap_err().to_string();
        assert!(error.contains("unknown key `clientCert`"), "{error}");
    }

    /// A `$schema` key (Kulala's and JetBrains' editors validate the file against it) is
    /// no environment; `$shared` and the others are read as usual.
    #[test]
    fn a_schema_key_is_not_an_environment() {
        let files = MemoryFs::new();
        files.insert(
            "/s/http-client.env.json",
            r#"{"$schema": "https://example.com/http-client.env.schema.json",
               "dev": {"API_URL": "https://localhost:9888", "Security": {"Auth": {}}}}"#,
        );
        let config = Config::discover(&files, Path::new("/s"), &environment()).unwrap().unwrap();
        assert_eq!(config.profile("dev").unwrap().variables["API_URL"], "https://localhost:9888");
        assert!(config.profile("$schema").is_err());
    }
}
