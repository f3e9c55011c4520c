//! The environments of other tools, read as a configuration when there is neither a
//! Volley configuration nor JetBrains env files: httpyac's (`environments` of
//! `.httpyac.json`, `httpyac.config.json`, a JavaScript config evaluated in the sandbox
//! for its data, or the `httpyac` key of `package.json`) and REST Client's
//! (`rest-client.environmentVariables` of `.vscode/settings.json`). Each environment is a
//! profile, `$shared` the configuration's variables; httpyac's `$default` is the profile
//! of a run that names none. Both tools expand `{{ }}` in these values, so Volley does
//! too ([`Config::expand_values`]). Their other settings are not read.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Config, invalid, parse_jsonc, read_text, substitute_env};
use crate::error::ConfigError;
use crate::io::Io;
use crate::resolvers::Environment;

/// httpyac's configuration files, in the order httpyac looks for them in a directory.
pub const HTTPYAC_CONFIG_FILES: [&str; 8] = [
    ".httpyac.js",
    ".httpyac.cjs",
    ".httpyac.config.js",
    ".httpyac.config.cjs",
    "httpyac.config.js",
    "httpyac.config.cjs",
    ".httpyac.json",
    "httpyac.config.json",
];

/// REST Client's settings, relative to the workspace folder.
pub const REST_CLIENT_SETTINGS: &str = ".vscode/settings.json";

/// The key of REST Client's environments in its settings.
const REST_CLIENT_KEY: &str = "rest-client.environmentVariables";

/// The name of httpyac's environment used when none is selected.
pub const HTTPYAC_DEFAULT_ENVIRONMENT: &str = "$default";

/// Where another tool's environments are, found in one directory.
pub(super) enum Found {
    /// One of [`HTTPYAC_CONFIG_FILES`].
    Httpyac(PathBuf),
    /// A `package.json` with an `httpyac` key.
    PackageJson(PathBuf),
    /// `.vscode/settings.json` with `rest-client.environmentVariables`.
    RestClient(PathBuf),
}

/// httpyac's configuration in `directory`, if any.
pub(super) fn httpyac_in(io: &dyn Io, directory: &Path) -> Option<Found> {
    if let Some(path) =
        HTTPYAC_CONFIG_FILES.iter().map(|name| directory.join(name)).find(|candidate| io.is_file(candidate))
    {
        return Some(Found::Httpyac(path));
    }
    let package = directory.join("package.json");
    (io.is_file(&package) && has_key(io, &package, "httpyac")).then_some(Found::PackageJson(package))
}

/// REST Client's environments in the workspace folder `directory`, if any.
pub(super) fn rest_client_in(io: &dyn Io, directory: &Path) -> Option<Found> {
    let settings = directory.join(REST_CLIENT_SETTINGS);
    (io.is_file(&settings) && has_key(io, &settings, REST_CLIENT_KEY)).then_some(Found::RestClient(settings))
}

/// Whether the JSON(C) file at `path` has the top-level key `key` (a file that does not
/// parse is left to the reading, which reports it).
fn has_key(io: &dyn Io, path: &Path, key: &str) -> bool {
    let Ok(text) = read_text(io, path) else { return false };
    // A cheap test first: most `package.json` files name no httpyac.
    text.contains(key)
        && match parse_jsonc(&text, path) {
            Ok(Value::Object(root)) => root.contains_key(key),
            Ok(_) => false,
            Err(_) => true,
        }
}

impl Config {
    /// Reads another tool's environments ([`Found`]).
    pub(super) fn from_other(io: &dyn Io, found: &Found, environment: &Environment) -> Result<Config, ConfigError> {
        match found {
            Found::Httpyac(path) => {
                let root = if is_javascript(path) {
                    super::javascript::evaluate(&read_text(io, path)?, path, environment)?
                } else {
                    parse_jsonc(&read_text(io, path)?, path)?
                };
                let Value::Object(mut root) = root else {
                    return Err(invalid(path, "", "the httpyac configuration must be an object", None));
                };
                let mut config =
                    from_environments(path, "environments", root.remove("environments"), environment, true)?;
                config.defaults.headers = default_headers(path, "defaultHeaders", root.remove("defaultHeaders"))?;
                Ok(config)
            }
            Found::PackageJson(path) => {
                let mut httpyac = match parse_jsonc(&read_text(io, path)?, path)? {
                    Value::Object(mut root) => match root.remove("httpyac") {
                        Some(Value::Object(httpyac)) => httpyac,
                        _ => serde_json::Map::new(),
                    },
                    _ => serde_json::Map::new(),
                };
                let environments = httpyac.remove("environments");
                let mut config = from_environments(path, "httpyac.environments", environments, environment, true)?;
                config.defaults.headers =
                    default_headers(path, "httpyac.defaultHeaders", httpyac.remove("defaultHeaders"))?;
                Ok(config)
            }
            Found::RestClient(path) => {
                let environments = match parse_jsonc(&read_text(io, path)?, path)? {
                    Value::Object(mut root) => root.remove(REST_CLIENT_KEY),
                    _ => None,
                };
                let mut config = from_environments(path, REST_CLIENT_KEY, environments, environment, false)?;
                // The workspace folder, not `.vscode`, is the project's root.
                config.folder = path.parent().and_then(Path::parent).map(Path::to_path_buf);
                Ok(config)
            }
        }
    }
}

/// httpyac's `defaultHeaders`: headers of every request that does not set them; their
/// values may use `{{ }}`, substituted when a request is built.
fn default_headers(path: &Path, at: &str, value: Option<Value>) -> Result<Vec<(String, String)>, ConfigError> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let Value::Object(headers) = value else {
        return Err(invalid(path, at, format!("`{at}` must be an object of header names and values"), None));
    };
    let mut found = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        let value = match value {
            Value::String(text) => text,
            Value::Number(number) => number.to_string(),
            Value::Bool(flag) => flag.to_string(),
            _ => return Err(invalid(path, &format!("{at}.{name}"), "a header's value must be text", None)),
        };
        found.push((name, value));
    }
    Ok(found)
}

fn is_javascript(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension == "js" || extension == "cjs")
}

/// The configuration of an object of environments (`at` names it in errors): `$shared`
/// the variables, each other key a profile, and with `httpyac`, `$default` the profile
/// of a run that names none.
fn from_environments(
    path: &Path,
    at: &str,
    environments: Option<Value>,
    environment: &Environment,
    httpyac: bool,
) -> Result<Config, ConfigError> {
    // `{env:NAME}` as in every configuration Volley reads.
    let environments = environments.map(|value| substitute_env(value, environment));
    let mut config = Config {
        path: path.to_path_buf(),
        sources: vec![path.to_path_buf()],
        expand_values: true,
        ..Config::default()
    };
    let environments = match environments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(environments)) => environments,
        Some(_) => {
            return Err(invalid(path, at, format!("`{at}` must be an object of environments"), None));
        }
    };
    for (name, variables) in environments {
        let Value::Object(variables) = variables else {
            let at = format!("{at}.{name}");
            return Err(invalid(
                path,
                &at,
                format!("`{at}` must be an object of variables"),
                Some(format!("write `\"{name}\": {{\"host\": \"…\"}}`")),
            ));
        };
        if name == "$shared" {
            config.variables.extend(variables);
            continue;
        }
        if httpyac && name == HTTPYAC_DEFAULT_ENVIRONMENT {
            config.default_profile = Some(name.clone());
        }
        config.profiles.entry(name).or_default().variables.extend(variables);
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemoryFs;

    use crate::config::tests::environment;

    #[test]
    fn httpyac_environments_with_shared_and_default() {
        let files = MemoryFs::new();
        files.insert(
            "/p/.httpyac.json",
            r#"{"log": {"level": 10}, "environments": {
                "$shared": {"host": "https://api.example.com"},
                "$default": {"user": "anonymous"},
                "dev": {"user": "mario", "token": "{env:TOKEN}"}}}"#,
        );
        let config = Config::discover(&files, Path::new("/p/api"), &environment()).unwrap().unwrap();
        assert_eq!(config.path, Path::new("/p/.httpyac.json"));
        assert!(config.expand_values);
        assert_eq!(config.variables["host"], "https://api.example.com");
        assert_eq!(config.default_profile.as_deref(), Some("$default"));
        assert_eq!(config.profile("$default").unwrap().variables["user"], "anonymous");
        assert_eq!(config.profile("dev").unwrap().variables["token"], "t0k3n");
    }

    #[test]
    fn package_json_counts_only_with_an_httpyac_key() {
        let files = MemoryFs::new();
        files.insert("/p/package.json", r#"{"name": "app", "dependencies": {}}"#);
        assert!(Config::discover(&files, Path::new("/p"), &environment()).unwrap().is_none());
        files.insert("/p/package.json", r#"{"name": "app", "httpyac": {"environments": {"dev": {"a": 1}}}}"#);
        let config = Config::discover(&files, Path::new("/p"), &environment()).unwrap().unwrap();
        assert_eq!(config.profile("dev").unwrap().variables["a"], 1);
    }

    #[test]
    fn rest_client_environments_in_the_workspace_settings() {
        let files = MemoryFs::new();
        files.insert(
            "/w/.vscode/settings.json",
            r#"{
              // VS Code's settings are JSONC
              "editor.tabSize": 2,
              "rest-client.environmentVariables": {
                "$shared": {"version": "v1"},
                "local": {"host": "localhost:8080", "base": "http://{{host}}/{{version}}"},
              },
            }"#,
        );
        let config = Config::discover(&files, Path::new("/w/requests"), &environment()).unwrap().unwrap();
        assert_eq!(config.variables["version"], "v1");
        assert_eq!(config.profile("local").unwrap().variables["base"], "http://{{host}}/{{version}}");
        assert_eq!(config.default_profile, None, "REST Client has no `$default`");
        assert_eq!(config.directory(), Path::new("/w"), "the workspace folder");
        files.insert("/w/.vscode/settings.json", r#"{"rest-client.environmentVariables": {"local": "x"}}"#);
        let error = Config::discover(&files, Path::new("/w"), &environment()).unwrap_err().to_string();
        assert!(error.contains("rest-client.environmentVariables.local"), "{error}");
    }

    #[test]
    fn volley_and_jetbrains_files_come_first() {
        let files = MemoryFs::new();
        files.insert("/p/.httpyac.json", r#"{"environments": {"dev": {"from": "httpyac"}}}"#);
        files.insert("/p/http-client.env.json", r#"{"dev": {"from": "jetbrains"}}"#);
        let config = Config::discover(&files, Path::new("/p"), &environment()).unwrap().unwrap();
        assert_eq!(config.profile("dev").unwrap().variables["from"], "jetbrains");
        assert!(!config.expand_values);
    }
}
