//! The checked shape of a `volley.jsonc`: each key read into its typed field, with an
//! error that names the place (`profiles.dev.defaults.timeoutMs`) and suggests the key
//! meant.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{Config, CookieSettings, Defaults, Profile, ScriptRealm, ScriptSettings, auth, invalid};
use crate::error::ConfigError;
use crate::resolvers::{CommandResolver, DEFAULT_COMMAND_TIMEOUT};

/// Reads the checked shape of a configuration out of its JSON.
pub(super) struct Reader<'a> {
    pub(super) path: &'a Path,
    pub(super) directory: &'a Path,
}

impl Reader<'_> {
    pub(super) fn config(&self, root: Map<String, Value>) -> Result<Config, ConfigError> {
        self.known_keys(
            &root,
            "",
            &[
                "$schema",
                "variables",
                "profiles",
                "defaultProfile",
                "resolvers",
                "defaults",
                "cookies",
                "scripts",
                "tls",
                "proxy",
                "auth",
            ],
        )?;
        let mut config =
            Config { path: self.path.to_path_buf(), sources: vec![self.path.to_path_buf()], ..Config::default() };
        for (key, value) in root {
            match key.as_str() {
                "variables" => config.variables = self.object(value, "variables")?,
                "profiles" => {
                    for (name, profile) in self.object(value, "profiles")? {
                        let at = format!("profiles.{name}");
                        let profile = self.profile(self.object(profile, &at)?, &at)?;
                        config.profiles.insert(name, profile);
                    }
                }
                "resolvers" => config.resolvers = self.resolvers(value, "resolvers")?,
                "defaults" => config.defaults = self.defaults(value, "defaults")?,
                "cookies" => config.cookies = self.cookies(value)?,
                "scripts" => config.scripts = self.scripts(value)?,
                "tls" => config.tls = self.tls(value, "tls")?,
                "proxy" => config.proxy = self.proxy(value, "proxy")?,
                "auth" => config.auth = auth::volley_auth(value, self.path, "auth")?,
                "defaultProfile" => {
                    let name = value.as_str().ok_or_else(|| {
                        invalid(
                            self.path,
                            "defaultProfile",
                            "`defaultProfile` must be a profile's name".to_owned(),
                            None,
                        )
                    })?;
                    config.default_profile = Some(name.to_owned());
                }
                _ => {}
            }
        }
        if let Some(name) = &config.default_profile
            && !config.profiles.contains_key(name)
        {
            let known: Vec<&str> = config.profiles.keys().map(String::as_str).collect();
            let hint = volley_syntax::closest(name, known.iter().copied()).map_or_else(
                || format!("profiles: {}", if known.is_empty() { "none".to_owned() } else { known.join(", ") }),
                |close| format!("did you mean `{close}`?"),
            );
            return Err(invalid(
                self.path,
                "defaultProfile",
                format!("`defaultProfile` is `{name}`, which is not a profile of `profiles`"),
                Some(hint),
            ));
        }
        Ok(config)
    }

    fn profile(&self, map: Map<String, Value>, at: &str) -> Result<Profile, ConfigError> {
        self.known_keys(&map, at, &["variables", "defaults", "resolvers", "tls", "proxy", "auth"])?;
        let mut profile = Profile::default();
        for (key, value) in map {
            let inner = format!("{at}.{key}");
            match key.as_str() {
                "variables" => profile.variables = self.object(value, &inner)?,
                "defaults" => profile.defaults = self.defaults(value, &inner)?,
                "resolvers" => profile.resolvers = self.resolvers(value, &inner)?,
                "tls" => profile.tls = self.tls(value, &inner)?,
                "proxy" => profile.proxy = self.proxy(value, &inner)?,
                "auth" => profile.auth = auth::volley_auth(value, self.path, &inner)?,
                _ => {}
            }
        }
        Ok(profile)
    }

    fn defaults(&self, value: Value, at: &str) -> Result<Defaults, ConfigError> {
        let map = self.object(value, at)?;
        self.known_keys(&map, at, DEFAULTS_KEYS)?;
        let mut defaults = Defaults::default();
        for (key, value) in map {
            let inner = format!("{at}.{key}");
            match key.as_str() {
                "headers" => {
                    for (name, header) in self.object(value, &inner)? {
                        let Value::String(header) = header else {
                            return Err(invalid(
                                self.path,
                                &format!("{inner}.{name}"),
                                "a header value must be a string",
                                None,
                            ));
                        };
                        defaults.headers.push((name, header));
                    }
                }
                "timeoutMs" => defaults.timeout = Some(self.milliseconds(&value, &inner)?),
                "followRedirects" => defaults.follow_redirects = Some(self.boolean(&value, &inner)?),
                "validateSSL" => defaults.validate_ssl = Some(self.boolean(&value, &inner)?),
                _ => {}
            }
        }
        Ok(defaults)
    }

    fn cookies(&self, value: Value) -> Result<CookieSettings, ConfigError> {
        let map = self.object(value, "cookies")?;
        self.known_keys(&map, "cookies", &["enabled", "jarPath"])?;
        let mut settings = CookieSettings::default();
        for (key, value) in map {
            match key.as_str() {
                "enabled" => settings.enabled = self.boolean(&value, "cookies.enabled")?,
                "jarPath" => {
                    let Value::String(path) = value else {
                        return Err(invalid(self.path, "cookies.jarPath", "`jarPath` must be a string", None));
                    };
                    settings.jar_path = Some(self.directory.join(path));
                }
                _ => {}
            }
        }
        Ok(settings)
    }

    fn scripts(&self, value: Value) -> Result<ScriptSettings, ConfigError> {
        let map = self.object(value, "scripts")?;
        self.known_keys(&map, "scripts", &["timeoutMs", "memoryMb", "realm"])?;
        let mut limits = ScriptSettings::default();
        for (key, value) in map {
            match key.as_str() {
                "timeoutMs" => limits.timeout = self.milliseconds(&value, "scripts.timeoutMs")?,
                "memoryMb" => {
                    let megabytes =
                        value.as_u64().filter(|&megabytes| (1..=4096).contains(&megabytes)).ok_or_else(|| {
                            invalid(
                                self.path,
                                "scripts.memoryMb",
                                "`scripts.memoryMb` must be a number from 1 to 4096",
                                None,
                            )
                        })?;
                    limits.memory = usize::try_from(megabytes).unwrap_or(4096) << 20;
                }
                "realm" => {
                    limits.realm = match value.as_str() {
                        Some("client") => ScriptRealm::Client,
                        Some("script") => ScriptRealm::Script,
                        _ => {
                            return Err(invalid(
                                self.path,
                                "scripts.realm",
                                "`scripts.realm` must be \"client\" (the scripts of a client share one JavaScript realm) or \"script\" (a new realm for every script)",
                                None,
                            ));
                        }
                    };
                }
                _ => {}
            }
        }
        Ok(limits)
    }

    fn resolvers(&self, value: Value, at: &str) -> Result<BTreeMap<String, CommandResolver>, ConfigError> {
        let mut resolvers = BTreeMap::new();
        for (name, entry) in self.object(value, at)? {
            let inner = format!("{at}.{name}");
            let name = name.trim_start_matches('$').to_owned();
            let entry = self.object(entry, &inner)?;
            self.known_keys(&entry, &inner, &["type", "command", "timeoutMs"])?;
            match entry.get("type") {
                Some(Value::String(kind)) if kind == "command" => {}
                Some(other) => {
                    let hint = Some("the only resolver type is `command`".to_owned());
                    return Err(invalid(
                        self.path,
                        &format!("{inner}.type"),
                        format!("unknown resolver type {other}"),
                        hint,
                    ));
                }
                None => {
                    return Err(invalid(self.path, &inner, "a resolver needs `\"type\": \"command\"`", None));
                }
            }
            let Some(Value::String(command)) = entry.get("command") else {
                return Err(invalid(self.path, &inner, "a command resolver needs a `command` string", None));
            };
            let timeout = match entry.get("timeoutMs") {
                Some(value) => self.milliseconds(value, &format!("{inner}.timeoutMs"))?,
                None => DEFAULT_COMMAND_TIMEOUT,
            };
            resolvers.insert(
                name,
                CommandResolver { command: command.clone(), directory: self.directory.to_path_buf(), timeout },
            );
        }
        Ok(resolvers)
    }

    pub(super) fn object(&self, value: Value, at: &str) -> Result<Map<String, Value>, ConfigError> {
        match value {
            Value::Object(map) => Ok(map),
            other => Err(invalid(self.path, at, format!("`{at}` must be an object, not {}", kind(&other)), None)),
        }
    }

    pub(super) fn boolean(&self, value: &Value, at: &str) -> Result<bool, ConfigError> {
        value.as_bool().ok_or_else(|| invalid(self.path, at, format!("`{at}` must be true or false"), None))
    }

    pub(super) fn milliseconds(&self, value: &Value, at: &str) -> Result<Duration, ConfigError> {
        value
            .as_u64()
            .filter(|&millis| millis > 0)
            .map(Duration::from_millis)
            .ok_or_else(|| invalid(self.path, at, format!("`{at}` must be a positive number of milliseconds"), None))
    }

    pub(super) fn known_keys(&self, map: &Map<String, Value>, at: &str, known: &[&str]) -> Result<(), ConfigError> {
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                let place = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
                // A request default written one level too high (`"timeoutMs": 5000`).
                let nested = (known.contains(&"defaults") && DEFAULTS_KEYS.contains(&key.as_str())).then(|| {
                    let defaults = if at.is_empty() { "defaults".to_owned() } else { format!("{at}.defaults") };
                    format!("`{key}` goes in `{defaults}`: `\"defaults\": {{\"{key}\": …}}`")
                });
                let hint = nested
                    .or_else(|| {
                        volley_syntax::closest(key, known.iter().copied()).map(|best| format!("did you mean `{best}`?"))
                    })
                    .or_else(|| Some(format!("known keys: {}", known.join(", "))));
                return Err(invalid(self.path, &place, format!("unknown key `{place}`"), hint));
            }
        }
        Ok(())
    }
}

/// The keys of `defaults` (the configuration's and a profile's).
const DEFAULTS_KEYS: &[&str] = &["headers", "timeoutMs", "followRedirects", "validateSSL"];

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
