//! How a [`RemoteClient`](super::RemoteClient) reaches its execution server, and the
//! `VOLLEY_*` environment variables that set it.

use std::time::Duration;

use serde_json::{Map, Value};

/// The variable naming the execution server (`http://127.0.0.1:4097`).
pub(crate) const SERVER_VARIABLE: &str = "VOLLEY_SERVER";
/// The variable holding the bearer token.
pub(crate) const TOKEN_VARIABLE: &str = "VOLLEY_TOKEN";
/// The variable naming an existing flow to run in.
pub(crate) const FLOW_ID_VARIABLE: &str = "VOLLEY_FLOW_ID";
/// The variable naming an existing session to run in.
pub(crate) const SESSION_ID_VARIABLE: &str = "VOLLEY_SESSION_ID";
/// The variable naming the configuration profile.
pub(crate) const PROFILE_VARIABLE: &str = "VOLLEY_PROFILE";

/// How a [`RemoteClient`](super::RemoteClient) is set up: the server, its token, and
/// what the session and flow it creates start with.
///
/// `Debug` shows the token as `[REDACTED]` and only the names of the variables.
#[derive(Clone, Default)]
pub struct RemoteConfig {
    /// The server's base URL (`http://127.0.0.1:4097`; a path prefix is kept).
    pub server_url: String,
    /// Sent as `Authorization: Bearer <token>` on every call.
    pub token: Option<String>,
    /// The session's initial variables (below a run's).
    pub variables: Map<String, Value>,
    /// The `label` of the flow the client creates.
    pub flow_label: Option<String>,
    /// The `meta` of the flow the client creates (at most 10 keys).
    pub flow_meta: Option<Map<String, Value>>,
    /// The configuration profile of every run (a run's own profile wins).
    pub profile: Option<String>,
    /// The timeout of every run (a run's own timeout wins); sent as `timeoutMs`.
    pub timeout: Option<Duration>,
    /// Run in this existing session instead of creating one.
    pub session_id: Option<String>,
    /// Run in this existing flow instead of creating one (then `close` finishes nothing).
    pub flow_id: Option<String>,
    /// Shows a device flow's code the server publishes while a run waits for it
    /// (`authDeviceCode`); `None`: not watched. The CLI writes it to stderr.
    pub auth_prompt: Option<std::sync::Arc<dyn volley_auth::oauth::AuthPrompt>>,
}

impl RemoteConfig {
    /// A configuration for the server at `server_url`, everything else unset.
    #[must_use]
    pub fn new(server_url: impl Into<String>) -> Self {
        Self { server_url: server_url.into(), ..Self::default() }
    }

    /// The configuration the environment asks for: `VOLLEY_SERVER` (`None` when it is
    /// unset or empty), `VOLLEY_TOKEN`, `VOLLEY_FLOW_ID`, `VOLLEY_SESSION_ID` and
    /// `VOLLEY_PROFILE`. Empty values count as unset.
    #[must_use]
    pub fn from_env() -> Option<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`from_env`](RemoteConfig::from_env) over another source of variables
    /// (`lookup(name)` gives a variable's value).
    #[must_use]
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let server_url = non_empty(&lookup, SERVER_VARIABLE)?;
        let mut config = Self::new(server_url);
        config.fill_from_lookup(lookup);
        Some(config)
    }

    /// Fills what this configuration leaves unset (an empty `server_url`, a `None`
    /// token, flow id, session id or profile) from the `VOLLEY_*` variables: values set
    /// in code (command-line flags) win over the environment.
    pub fn fill_from_env(&mut self) {
        self.fill_from_lookup(|name| std::env::var(name).ok());
    }

    /// [`fill_from_env`](RemoteConfig::fill_from_env) over another source of variables.
    pub fn fill_from_lookup(&mut self, lookup: impl Fn(&str) -> Option<String>) {
        if self.server_url.trim().is_empty()
            && let Some(server) = non_empty(&lookup, SERVER_VARIABLE)
        {
            self.server_url = server;
        }
        for (slot, name) in [
            (&mut self.token, TOKEN_VARIABLE),
            (&mut self.flow_id, FLOW_ID_VARIABLE),
            (&mut self.session_id, SESSION_ID_VARIABLE),
            (&mut self.profile, PROFILE_VARIABLE),
        ] {
            if slot.is_none() {
                *slot = non_empty(&lookup, name);
            }
        }
    }
}

impl std::fmt::Debug for RemoteConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteConfig")
            .field("server_url", &self.server_url)
            .field("token", &self.token.as_ref().map(|_| "[REDACTED]"))
            .field("variables", &self.variables.keys().collect::<Vec<_>>())
            .field("flow_label", &self.flow_label)
            .field("flow_meta", &self.flow_meta.as_ref().map(|meta| meta.keys().collect::<Vec<_>>()))
            .field("profile", &self.profile)
            .field("timeout", &self.timeout)
            .field("session_id", &self.session_id)
            .field("flow_id", &self.flow_id)
            .field("auth_prompt", &self.auth_prompt.is_some())
            .finish()
    }
}

/// The trimmed value of `name`, `None` when it is unset or blank.
fn non_empty(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn environment(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn no_server_no_config() {
        assert!(RemoteConfig::from_lookup(environment(&[])).is_none());
        assert!(RemoteConfig::from_lookup(environment(&[("VOLLEY_SERVER", "  "), ("VOLLEY_TOKEN", "t")])).is_none());
    }

    #[test]
    fn reads_every_variable() {
        let config = RemoteConfig::from_lookup(environment(&[
            ("VOLLEY_SERVER", "http://127.0.0.1:4097"),
            ("VOLLEY_TOKEN", "secret-token"),
            ("VOLLEY_FLOW_ID", "f_1"),
            ("VOLLEY_SESSION_ID", "s_1"),
            ("VOLLEY_PROFILE", "dev"),
        ]))
        .expect("a server is set");
        assert_eq!(config.server_url, "http://127.0.0.1:4097");
        assert_eq!(config.token.as_deref(), Some("secret-token"));
        assert_eq!(config.flow_id.as_deref(), Some("f_1"));
        assert_eq!(config.session_id.as_deref(), Some("s_1"));
        assert_eq!(config.profile.as_deref(), Some("dev"));
        assert!(config.variables.is_empty() && config.timeout.is_none() && config.flow_label.is_none());
    }

    #[test]
    fn empty_values_are_unset() {
        let config =
            RemoteConfig::from_lookup(environment(&[("VOLLEY_SERVER", "http://localhost:1"), ("VOLLEY_TOKEN", "")]))
                .expect("a server is set");
        assert_eq!(config.token, None);
        assert_eq!(config.profile, None);
    }

    #[test]
    fn code_wins_over_the_environment() {
        let mut config = RemoteConfig { profile: Some("prod".to_owned()), ..RemoteConfig::default() };
        config.fill_from_lookup(environment(&[
            ("VOLLEY_SERVER", "http://localhost:2"),
            ("VOLLEY_PROFILE", "dev"),
            ("VOLLEY_SESSION_ID", "s_2"),
        ]));
        assert_eq!(config.server_url, "http://localhost:2");
        assert_eq!(config.profile.as_deref(), Some("prod"));
        assert_eq!(config.session_id.as_deref(), Some("s_2"));

        let mut given = RemoteConfig::new("http://localhost:3");
        given.fill_from_lookup(environment(&[("VOLLEY_SERVER", "http://localhost:2")]));
        assert_eq!(given.server_url, "http://localhost:3");
    }

    #[test]
    fn debug_hides_the_token() {
        let config = RemoteConfig { token: Some("hunter2".to_owned()), ..RemoteConfig::new("http://localhost:1") };
        let shown = format!("{config:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
    }
}
