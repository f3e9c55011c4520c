//! Configuration: `volley.jsonc` (or `volley.json`) found by walking up from the `.http`
//! file, JSONC with comments and trailing commas; JetBrains `http-client.env.json`
//! files when there is none, then httpyac's and REST Client's environments
//! (`others.rs`); how far up `.env` files apply. Every front end discovers
//! and reads it here, so they all mean the same thing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::ConfigError;
use crate::io::Io;
pub use crate::network::{HostTls, ProxySettings, TlsSettings};
use crate::resolvers::{CommandResolver, Environment};

pub(crate) mod auth;
mod javascript;
mod jetbrains;
mod network;
mod others;
mod reader;

pub use auth::AuthEntry;
pub use others::{HTTPYAC_CONFIG_FILES, HTTPYAC_DEFAULT_ENVIRONMENT, REST_CLIENT_SETTINGS};
use reader::Reader;

pub use network::check_proxy_url;

/// Names of the configuration file, in the order they are looked for in a directory.
pub const CONFIG_FILE_NAMES: [&str; 2] = ["volley.jsonc", "volley.json"];

/// The JetBrains HTTP Client's environment files, read when there is no Volley config.
pub const JETBRAINS_ENV_FILE: &str = "http-client.env.json";
/// The private (not committed) companion of [`JETBRAINS_ENV_FILE`].
pub const JETBRAINS_PRIVATE_ENV_FILE: &str = "http-client.private.env.json";

pub use crate::dotenv::DOTENV_FILE;

/// A configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// The file it was read from (the public env file for JetBrains files).
    pub path: PathBuf,
    /// `variables`.
    pub variables: Map<String, Value>,
    /// `profiles`.
    pub profiles: BTreeMap<String, Profile>,
    /// `defaultProfile`: the profile of a run that names none (`-p`, `VOLLEY_PROFILE`).
    pub default_profile: Option<String>,
    /// `resolvers`: command resolvers by name (without `$`).
    pub resolvers: BTreeMap<String, CommandResolver>,
    /// `defaults`.
    pub defaults: Defaults,
    /// `cookies`.
    pub cookies: CookieSettings,
    /// `scripts`: the limits of pre-request scripts and response handlers, and their realm.
    pub scripts: ScriptSettings,
    /// `tls`: CA bundles and client certificates, paths resolved against the file's directory.
    pub tls: TlsSettings,
    /// `proxy`.
    pub proxy: ProxySettings,
    /// `auth`: named OAuth 2.0 configurations (`{{$auth.token("id")}}`).
    pub auth: BTreeMap<String, AuthEntry>,
    /// Every file it was read from (the config file; or the JetBrains env files).
    pub sources: Vec<PathBuf>,
    /// Whether `{{ }}` in the string values of its variables and profiles are
    /// substituted when used, as httpyac and REST Client do with their environments
    /// (`{"base": "https://{{host}}/v1"}`); Volley's and JetBrains' files are taken as
    /// written.
    pub expand_values: bool,
    /// The project's folder when it is not the file's directory (REST Client's
    /// `.vscode/settings.json`: the workspace folder).
    pub folder: Option<PathBuf>,
}

/// One entry of `profiles`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// Variables over the configuration's.
    pub variables: Map<String, Value>,
    /// Defaults over the configuration's.
    pub defaults: Defaults,
    /// Command resolvers over the configuration's.
    pub resolvers: BTreeMap<String, CommandResolver>,
    /// `tls` beside the configuration's (its host entries first).
    pub tls: TlsSettings,
    /// `proxy` over the configuration's.
    pub proxy: ProxySettings,
    /// `auth` over the configuration's (an entry of the same name wins).
    pub auth: BTreeMap<String, AuthEntry>,
}

/// Request defaults (`defaults` of the config, of a profile, or of a client).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defaults {
    /// Headers added to every request that does not set them.
    pub headers: Vec<(String, String)>,
    /// `timeoutMs`.
    pub timeout: Option<Duration>,
    /// `followRedirects`.
    pub follow_redirects: Option<bool>,
    /// `validateSSL`.
    pub validate_ssl: Option<bool>,
}

pub use volley_model::cookies::CookieSettings;

/// The configuration's `cookies`, as [`CookieJar::chosen`](crate::CookieJar::chosen) reads them.
impl AsRef<CookieSettings> for Config {
    fn as_ref(&self) -> &CookieSettings {
        &self.cookies
    }
}

impl Config {
    /// The directory of the configuration file: the project root for relative paths
    /// and command resolvers.
    #[must_use]
    pub fn directory(&self) -> &Path {
        self.folder.as_deref().unwrap_or_else(|| self.path.parent().unwrap_or_else(|| Path::new(".")))
    }

    /// The profile called `name`, or an error with a "did you mean".
    pub fn profile(&self, name: &str) -> Result<&Profile, ConfigError> {
        self.profiles.get(name).ok_or_else(|| ConfigError::UnknownProfile {
            name: name.to_owned(),
            suggestion: volley_syntax::closest(name, self.profiles.keys().map(String::as_str)).map(str::to_owned),
            available: self.profiles.keys().cloned().collect(),
        })
    }

    /// Reads a Volley configuration file. `{env:NAME}` in string values is replaced by
    /// the environment variable (empty when unset).
    pub fn load(io: &dyn Io, path: &Path, environment: &Environment) -> Result<Config, ConfigError> {
        let text = read_text(io, path)?;
        let value = parse_jsonc(&text, path)?;
        let value = substitute_env(value, environment);
        let Value::Object(root) = value else {
            return Err(invalid(path, "", "the configuration must be a JSON object", None));
        };
        let directory = path.parent().unwrap_or_else(|| Path::new(".")).to_path_buf();
        let reader = Reader { path, directory: &directory };
        reader.config(root)
    }

    /// Finds the configuration for files in `directory`: the nearest `volley.jsonc` or
    /// `volley.json` in it or a directory above (up to the project root, the first
    /// directory with `.git`); else JetBrains env files found the same way; else
    /// httpyac's configuration (its environments); else REST Client's environments in a
    /// `.vscode/settings.json`; else none.
    pub fn discover(io: &dyn Io, directory: &Path, environment: &Environment) -> Result<Option<Config>, ConfigError> {
        if let Some(path) = find_upwards(io, directory, &CONFIG_FILE_NAMES) {
            return Config::load(io, &path, environment).map(Some);
        }
        let public = find_upwards(io, directory, &[JETBRAINS_ENV_FILE]);
        let private = find_upwards(io, directory, &[JETBRAINS_PRIVATE_ENV_FILE]);
        if public.is_some() || private.is_some() {
            return Config::from_jetbrains(io, public.as_deref(), private.as_deref(), environment).map(Some);
        }
        for find in [others::httpyac_in, others::rest_client_in] {
            if let Some(found) = find_upwards_with(io, directory, find) {
                return Config::from_other(io, &found, environment).map(Some);
            }
        }
        Ok(None)
    }
}

/// The root of the project of `.http` files in `directory`: the configuration's
/// directory when it is `directory` or above it, else the first directory with `.git`
/// going up, else `directory` alone. `.env` files apply up to it, and files outside it
/// are not read unless the client allows them.
pub(crate) fn project_root(io: &dyn Io, directory: &Path, config: Option<&Config>) -> PathBuf {
    let directory = crate::io::normalize(directory);
    if let Some(config) = config {
        let config_directory = crate::io::normalize(config.directory());
        if directory.starts_with(&config_directory) {
            return config_directory;
        }
    }
    let mut current = Some(directory.as_path());
    while let Some(candidate) = current {
        if io.exists(&candidate.join(".git")) {
            return candidate.to_path_buf();
        }
        current = candidate.parent();
    }
    directory
}

/// The first of `names` found in `directory` or a directory above it, stopping after
/// the project root (a directory with `.git`).
fn find_upwards(io: &dyn Io, directory: &Path, names: &[&str]) -> Option<PathBuf> {
    find_upwards_with(io, directory, |io, directory| {
        names.iter().map(|name| directory.join(name)).find(|candidate| io.is_file(candidate))
    })
}

/// What `find` finds in `directory` or the nearest directory above it, stopping after
/// the project root (a directory with `.git`).
fn find_upwards_with<T>(io: &dyn Io, directory: &Path, find: impl Fn(&dyn Io, &Path) -> Option<T>) -> Option<T> {
    let mut current = Some(directory);
    while let Some(directory) = current {
        if let Some(found) = find(io, directory) {
            return Some(found);
        }
        if io.exists(&directory.join(".git")) {
            return None;
        }
        current = directory.parent();
    }
    None
}

fn read_text(io: &dyn Io, path: &Path) -> Result<String, ConfigError> {
    let bytes = io.read(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
    String::from_utf8(bytes).map_err(|error| ConfigError::Syntax {
        path: path.to_path_buf(),
        line: 1,
        column: 1,
        message: format!("not UTF-8 text (invalid byte at offset {})", error.utf8_error().valid_up_to()),
    })
}

fn parse_jsonc(text: &str, path: &Path) -> Result<Value, ConfigError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    json5::from_str::<Value>(text).map_err(|error| {
        let (line, column) = error.position().map_or((1, 1), |position| (position.line + 1, position.column + 1));
        let message = error.to_string();
        // The library appends the position; the error carries it separately.
        let message = message.split(" at line ").next().unwrap_or(&message).to_owned();
        ConfigError::Syntax { path: path.to_path_buf(), line, column, message }
    })
}

/// Replaces `{env:NAME}` in every string of `value`.
fn substitute_env(value: Value, environment: &Environment) -> Value {
    match value {
        Value::String(text) if text.contains("{env:") => Value::String(substitute_env_in(&text, environment)),
        Value::Array(items) => Value::Array(items.into_iter().map(|item| substitute_env(item, environment)).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(key, item)| (key, substitute_env(item, environment))).collect())
        }
        other => other,
    }
}

fn substitute_env_in(text: &str, environment: &Environment) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{env:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 5..];
        if let Some(end) = after.find('}') {
            out.push_str(&environment.get(after[..end].trim()).unwrap_or_default());
            rest = &after[end + 1..];
        } else {
            out.push_str(&rest[start..]);
            rest = "";
        }
    }
    out.push_str(rest);
    out
}

fn invalid(path: &Path, at: &str, message: impl Into<String>, hint: Option<String>) -> ConfigError {
    ConfigError::Invalid { path: path.to_path_buf(), at: at.to_owned(), message: message.into(), hint }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::io::MemoryFs;

    /// The environment of the configuration tests: `TOKEN` only.
    pub(super) fn environment() -> Environment {
        Environment::fixed([("TOKEN".to_owned(), "t0k3n".to_owned())])
    }

    #[test]
    fn reads_a_full_configuration() {
        let files = MemoryFs::new();
        files.insert(
            "/p/volley.jsonc",
            r#"{
              // comments and trailing commas are fine
              "variables": {"host": "https://api.example.com", "token": "{env:TOKEN}", "nested": {"a": [1, 2]},},
              "profiles": {
                "dev": {"variables": {"host": "http://localhost:8080"}, "defaults": {"timeoutMs": 500}},
              },
              "resolvers": {"vault": {"type": "command", "command": "echo hi", "timeoutMs": 2000}},
              "defaults": {"headers": {"User-Agent": "volley-test"}, "followRedirects": false, "validateSSL": false},
              "cookies": {"enabled": true, "jarPath": ".volley/cookies.json"},
              "scripts": {"timeoutMs": 250, "memoryMb": 16, "realm": "script"},
            }"#,
        );
        let config = Config::load(&files, Path::new("/p/volley.jsonc"), &environment()).unwrap();
        assert_eq!(config.variables["token"], "t0k3n");
        assert_eq!(config.profile("dev").unwrap().defaults.timeout, Some(Duration::from_millis(500)));
        assert_eq!(config.resolvers["vault"].timeout, Duration::from_secs(2));
        assert_eq!(config.resolvers["vault"].directory, Path::new("/p"));
        assert_eq!(config.defaults.headers, [("User-Agent".to_owned(), "volley-test".to_owned())]);
        assert_eq!(config.defaults.follow_redirects, Some(false));
        assert_eq!(config.cookies.jar_path.as_deref(), Some(Path::new("/p/.volley/cookies.json")));
        let scripts =
            ScriptSettings { timeout: Duration::from_millis(250), memory: 16 << 20, realm: ScriptRealm::Script };
        assert_eq!(config.scripts, scripts);
        let error = config.profile("prod").unwrap_err().to_string();
        assert!(error.contains("unknown profile `prod`") && error.contains("dev"), "{error}");
        let error = config.profile("dve").unwrap_err().to_string();
        assert!(error.contains("did you mean `dev`"), "{error}");
    }

    #[test]
    fn reports_syntax_errors_with_positions_and_unknown_keys_with_suggestions() {
        let files = MemoryFs::new();
        files.insert("/p/volley.json", "{\n  \"variables\": {\n    \"a\": 1,,\n  }\n}");
        let error = Config::load(&files, Path::new("/p/volley.json"), &environment()).unwrap_err();
        assert!(matches!(error, ConfigError::Syntax { line: 3, .. }), "{error:?}");
        files.insert("/p/volley.json", r#"{"varibles": {}}"#);
        let error = Config::load(&files, Path::new("/p/volley.json"), &environment()).unwrap_err().to_string();
        assert!(error.contains("unknown key `varibles`") && error.contains("did you mean `variables`"), "{error}");
        files.insert("/p/volley.json", r#"{"defaults": {"timeoutMs": -1}}"#);
        let error = Config::load(&files, Path::new("/p/volley.json"), &environment()).unwrap_err().to_string();
        assert!(error.contains("positive number of milliseconds"), "{error}");
        files.insert("/p/volley.json", r#"{"resolvers": {"x": {"type": "script", "command": "x"}}}"#);
        let error = Config::load(&files, Path::new("/p/volley.json"), &environment()).unwrap_err().to_string();
        assert!(error.contains("unknown resolver type"), "{error}");
        files.insert("/p/volley.json", r#"{"scripts": {"realm": "file"}}"#);
        let error = Config::load(&files, Path::new("/p/volley.json"), &environment()).unwrap_err().to_string();
        assert!(error.contains("`scripts.realm` must be \"client\"") && error.contains("\"script\""), "{error}");
    }

    #[test]
    fn discovers_upwards_and_falls_back_to_jetbrains_files() {
        let files = MemoryFs::new();
        files.insert("/p/volley.json", r#"{"variables": {"from": "volley"}}"#);
        let found = Config::discover(&files, Path::new("/p/a/b"), &environment()).unwrap().unwrap();
        assert_eq!(found.variables["from"], "volley");

        let files = MemoryFs::new();
        files.insert("/q/http-client.env.json", r#"{"$shared": {"x": 1}, "dev": {"host": "a", "user": "u"}}"#);
        files.insert("/q/http-client.private.env.json", r#"{"dev": {"user": "private"}}"#);
        let found = Config::discover(&files, Path::new("/q/sub"), &environment()).unwrap().unwrap();
        assert_eq!(found.variables["x"], 1);
        let dev = found.profile("dev").unwrap();
        assert_eq!(dev.variables["host"], "a");
        assert_eq!(dev.variables["user"], "private");
        assert!(Config::discover(&MemoryFs::new(), Path::new("/none"), &environment()).unwrap().is_none());
    }

    #[test]
    fn reads_tls_and_proxy_with_paths_from_the_configuration_and_clear_errors() {
        let files = MemoryFs::new();
        files.insert(
            "/p/volley.jsonc",
            r#"{
              "tls": {"ca": "ca.pem", "hosts": {"api.example.com:8443": {"pfx": "me.p12", "passphrase": "{{$secret P}}"}}},
              "proxy": {"http": "http://proxy:3128", "noProxy": "localhost, .internal"},
              "profiles": {"home": {"proxy": {"http": ""}, "tls": {"ca": ["home.pem"]}}},
            }"#,
        );
        let config = Config::load(&files, Path::new("/p/volley.jsonc"), &environment()).unwrap();
        assert_eq!(config.tls.ca, [PathBuf::from("/p/ca.pem")]);
        let host = &config.tls.hosts[0];
        assert_eq!(host.host, "api.example.com:8443");
        assert_eq!(host.pfx.as_deref(), Some(Path::new("/p/me.p12")));
        assert_eq!(host.passphrase.as_deref(), Some("{{$secret P}}"));
        assert_eq!(config.proxy.no_proxy, Some(vec!["localhost".to_owned(), ".internal".to_owned()]));
        let home = config.profile("home").unwrap();
        assert_eq!(home.proxy.over(&config.proxy).http.as_deref(), Some(""), "the profile's empty proxy wins");
        assert_eq!(home.tls.ca, [PathBuf::from("/p/home.pem")]);

        for (text, expected) in [
            (r#"{"tls": {"hosts": {"*": {"crt": "a.pem"}}}}"#, "did you mean `cert`"),
            (r#"{"tls": {"hosts": {"*": {"pfx": "a.p12", "cert": "a.pem"}}}}"#, "`pfx` and `cert` cannot both"),
            (r#"{"tls": {"hosts": {"*": {"key": "a.key"}}}}"#, "needs its `cert`"),
            (r#"{"proxy": {"https": "proxy:3128"}}"#, "not a proxy URL"),
            (r#"{"proxy": {"noProxy": [1]}}"#, "list of hosts"),
        ] {
            files.insert("/p/volley.jsonc", text);
            let error = Config::load(&files, Path::new("/p/volley.jsonc"), &environment()).unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn dotenv_files_apply_up_to_the_configuration_or_the_project_root() {
        let files = MemoryFs::new();
        files.insert("/repo/.git/HEAD", "ref: main");
        files.insert("/repo/api/volley.jsonc", "{}");
        let config = Config::discover(&files, Path::new("/repo/api/users"), &environment()).unwrap();
        let root = |directory: &str, config: Option<&Config>| project_root(&files, Path::new(directory), config);
        assert_eq!(root("/repo/api/users", config.as_ref()), Path::new("/repo/api"));
        assert_eq!(root("/repo/web", None), Path::new("/repo"), "no configuration: the project root");
        assert_eq!(root("/repo/web", config.as_ref()), Path::new("/repo"), "a configuration elsewhere");
        assert_eq!(root("/tmp/loose", None), Path::new("/tmp/loose"), "no root: the directory alone");
    }
}

/// The default time a script (with its tests) may run.
pub const DEFAULT_SCRIPT_TIMEOUT: Duration = Duration::from_secs(5);
/// The default memory a script may allocate.
pub const DEFAULT_SCRIPT_MEMORY: usize = 128 << 20;

/// `scripts` of the configuration: what each script may use, and where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptSettings {
    /// `timeoutMs`: the time a script and its tests may take together.
    pub timeout: Duration,
    /// `memoryMb`: the memory its JavaScript runtime may allocate, in bytes.
    pub memory: usize,
    /// `realm`: whether the scripts of a client share a JavaScript realm.
    pub realm: ScriptRealm,
}

impl Default for ScriptSettings {
    fn default() -> Self {
        Self { timeout: DEFAULT_SCRIPT_TIMEOUT, memory: DEFAULT_SCRIPT_MEMORY, realm: ScriptRealm::Client }
    }
}

/// `scripts.realm`: the JavaScript realm (global object and built-ins) a script runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScriptRealm {
    /// `"client"`: one realm for the scripts of a client (a `volley run`, a server
    /// session, an editor session), taken in turns. Each script's declarations are
    /// its own and the global object is put back after it; what a script changes in
    /// the built-ins (`Array.prototype.x = …`) the later scripts see.
    #[default]
    Client,
    /// `"script"`: a new realm for every script, nothing shared (about 0.2 ms more
    /// per script).
    Script,
}
