//! Where `$env`, `$processEnv` and `$secret` read the environment ([`Environment`]): an
//! option of a client and of a run.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Where `$env` and `$secret` read the environment: the process environment by
/// default, or a fixed map (tests, a server session that must not see the server's
/// own environment).
#[derive(Clone, Default)]
pub struct Environment {
    fixed: Option<Arc<HashMap<String, String>>>,
    /// When set, only these names are read.
    allowed: Option<Arc<Vec<String>>>,
    /// Names never read, and values never given out (a server's own token).
    hidden_names: Arc<Vec<String>>,
    hidden_values: Arc<Vec<String>>,
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.fixed {
            None => f.write_str("Environment::process()"),
            Some(map) => write!(f, "Environment::fixed({} variables)", map.len()),
        }
    }
}

impl Environment {
    /// The process environment.
    #[must_use]
    pub fn process() -> Self {
        Self::default()
    }

    /// A fixed set of variables instead of the process environment.
    #[must_use]
    pub fn fixed(variables: impl IntoIterator<Item = (String, String)>) -> Self {
        Self { fixed: Some(Arc::new(variables.into_iter().collect())), ..Self::default() }
    }

    /// The same environment with only `names` readable (an execution server's scoped
    /// callers: nothing unless the server allows it).
    #[must_use]
    pub fn allowing(mut self, names: impl IntoIterator<Item = String>) -> Self {
        let mut names: Vec<String> = names.into_iter().collect();
        if let Some(already) = &self.allowed {
            names.retain(|name| already.contains(name));
        }
        self.allowed = Some(Arc::new(names));
        self
    }

    /// The same environment with `names` never readable, and no variable whose value
    /// holds one of `values` (a server's token, whatever variable holds it).
    #[must_use]
    pub fn hiding(mut self, names: impl IntoIterator<Item = String>, values: impl IntoIterator<Item = String>) -> Self {
        let mut hidden_names = self.hidden_names.as_ref().clone();
        hidden_names.extend(names);
        let mut hidden_values = self.hidden_values.as_ref().clone();
        hidden_values.extend(values.into_iter().filter(|value| !value.is_empty()));
        self.hidden_names = Arc::new(hidden_names);
        self.hidden_values = Arc::new(hidden_values);
        self
    }

    /// The value of `name`, when set and readable.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<String> {
        if self.hidden_names.iter().any(|hidden| hidden == name)
            || self.allowed.as_ref().is_some_and(|allowed| !allowed.iter().any(|allowed| allowed == name))
        {
            return None;
        }
        let value = match &self.fixed {
            Some(map) => map.get(name).cloned(),
            None => std::env::var(name).ok(),
        }?;
        (!self.holds_hidden(&value)).then_some(value)
    }

    /// Every variable this environment lets be read, with its value.
    #[doc(hidden)]
    #[must_use]
    pub fn variables(&self) -> Vec<(String, String)> {
        let names: Vec<String> = match &self.fixed {
            Some(map) => map.keys().cloned().collect(),
            None => std::env::vars_os().filter_map(|(name, _)| name.into_string().ok()).collect(),
        };
        names.into_iter().filter_map(|name| self.get(&name).map(|value| (name, value))).collect()
    }

    /// Whether `value` holds one of the values never given out.
    fn holds_hidden(&self, value: &str) -> bool {
        self.hidden_values.iter().any(|hidden| value.contains(hidden.as_str()))
    }

    /// Sets the environment of a command resolver's process to what this environment
    /// lets be read. The whole process environment (not narrowed, not fixed): inherited,
    /// without the hidden names and the variables holding hidden values. A narrowed or
    /// fixed one: only the [`COMMAND_BASICS`] of the process (`PATH`, `HOME`, …, that a
    /// shell and the programs it starts need) and the variables this environment
    /// gives, each unless hidden.
    #[doc(hidden)]
    pub fn apply_to(&self, command: &mut tokio::process::Command) {
        if self.fixed.is_none() && self.allowed.is_none() {
            for (name, value) in std::env::vars_os() {
                let hidden = name.to_str().is_some_and(|name| self.hidden_names.iter().any(|hidden| hidden == name))
                    || value.to_str().is_some_and(|value| self.holds_hidden(value));
                if hidden {
                    command.env_remove(name);
                }
            }
            return;
        }
        command.env_clear();
        for name in COMMAND_BASICS {
            if let Some(value) = std::env::var_os(name)
                && !self.hidden_names.iter().any(|hidden| hidden == name)
                && !value.to_str().is_some_and(|value| self.holds_hidden(value))
            {
                command.env(name, value);
            }
        }
        let names: Vec<String> = match (&self.fixed, &self.allowed) {
            (Some(map), _) => map.keys().cloned().collect(),
            (None, Some(allowed)) => allowed.as_ref().clone(),
            (None, None) => Vec::new(),
        };
        for name in names {
            if let Some(value) = self.get(&name) {
                command.env(name, value);
            }
        }
    }
}

/// The variables of the process a command resolver always gets, even from a narrowed
/// environment: what a shell, and the programs it starts, need to run.
const COMMAND_BASICS: [&str; 17] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
];
