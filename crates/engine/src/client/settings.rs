//! Where a run's settings come from: the configuration of a directory (`volley.jsonc`,
//! its profiles), its `.env` files and command resolvers, each cached while the files
//! they were read from are unchanged, and the request defaults they layer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cache::{Lookup, stamp};
use super::{Client, ConfigSource};
use crate::config::{Config, Defaults, project_root};
use crate::dotenv::{self, DotEnv};
use crate::error::{ConfigError, Error};
use crate::resolvers::CommandResolver;

/// The configuration that applies to one run.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) config: Option<Config>,
    pub(crate) profile: Option<crate::config::Profile>,
    /// The directories whose `.env` files apply, nearest first: the `.http` file's and
    /// each one above it up to the configuration's directory or the project root.
    pub(crate) dotenv_directories: Vec<PathBuf>,
    /// The selected profile's name: its own `.env` files apply too (httpyac's
    /// `dev.env`, `.env.dev`, in `env/` or beside).
    pub(crate) profile_name: Option<String>,
    /// The project's root ([`project_root`]): `.env` files apply up to it, and files
    /// outside it are not read unless the client allows them.
    pub(crate) root: PathBuf,
    pub(crate) commands: BTreeMap<String, CommandResolver>,
    /// Named OAuth 2.0 configurations: the configuration's, the profile's over them.
    pub(crate) auth: BTreeMap<String, crate::config::AuthEntry>,
}

impl Client {
    /// The configuration that applies to `.http` files in `directory`, as runs see it.
    /// Kept while its files are unchanged, like run settings (see
    /// [`stages::reload_config`](crate::stages::reload_config) for a configuration created where there was none).
    pub(crate) fn config_for(&self, directory: &Path) -> Result<Option<Config>, ConfigError> {
        match &self.inner.config.config {
            ConfigSource::Discover => {
                let io = &*self.inner.config.io;
                if let Some(config) = self.inner.configs.get_within(io, self.inner.config.recheck_files, directory) {
                    return Ok(config);
                }
                let config = Config::discover(io, directory, &self.inner.config.environment)?;
                let sources = stamp(io, config.iter().flat_map(|config| &config.sources));
                self.inner.configs.insert(directory.to_path_buf(), config.clone(), sources);
                Ok(config)
            }
            ConfigSource::Disabled => Ok(None),
            ConfigSource::Given(config) => Ok(Some((**config).clone())),
        }
    }

    /// A client finds the configuration of a directory once and re-reads it when one
    /// of its files changes (a file's modification time, an in-memory file's
    /// [`MemoryFs::insert`](crate::io::MemoryFs::insert)). A configuration file created
    /// where there was none is only seen after this call: the language server calls it
    /// when the editor reports a new `volley.jsonc`.
    pub(crate) fn reload_config(&self) {
        self.inner.settings.clear();
        self.inner.configs.clear();
        self.inner.dotenvs.clear();
    }

    /// The variables of the `.env` files in `directories` (nearest first) and of
    /// `profile`'s own ones, from the cache while none of those files appeared, changed
    /// or went away.
    pub(crate) fn dotenv_for(
        &self,
        directories: &[PathBuf],
        profile: Option<&str>,
    ) -> Result<Arc<DotEnv>, ConfigError> {
        let io = &*self.inner.config.io;
        if directories.is_empty() {
            return Ok(Arc::default());
        }
        if let Some(dotenv) =
            self.inner.dotenvs.get_within(io, self.inner.config.recheck_files, &Lookup(directories, profile))
        {
            return Ok(dotenv);
        }
        let key = (directories.to_vec(), profile.map(str::to_owned));
        // The times are taken before reading: a file that changes meanwhile is read again.
        let sources = stamp(io, &dotenv::candidates(directories, profile));
        let dotenv = Arc::new(DotEnv::read(io, directories, profile)?);
        self.inner.dotenvs.insert(key, Arc::clone(&dotenv), sources);
        Ok(dotenv)
    }

    /// The profiles runs in `directory` may select: the configuration's, and those
    /// httpyac's `.env` files name (`dev.env`, `.env.dev`, in `env/` or beside).
    pub(crate) fn profile_names(&self, directory: &Path, config: Option<&Config>) -> Vec<String> {
        let io = &*self.inner.config.io;
        let root = project_root(io, directory, config);
        let mut names: Vec<String> = config.map(|config| config.profiles.keys().cloned().collect()).unwrap_or_default();
        names.extend(dotenv::profiles(io, &dotenv::directories(directory, &root)));
        names.sort();
        names.dedup();
        names
    }

    /// The profile `name` of runs in `directory`: the configuration's, or an empty one
    /// when only `.env` files name it; else why not.
    pub(crate) fn profile_of(
        &self,
        directory: &Path,
        config: Option<&Config>,
        name: &str,
    ) -> Result<crate::config::Profile, ConfigError> {
        if let Some(profile) = config.and_then(|config| config.profiles.get(name)) {
            return Ok(profile.clone());
        }
        let available = self.profile_names(directory, config);
        if available.iter().any(|known| known == name) {
            return Ok(crate::config::Profile::default());
        }
        Err(ConfigError::UnknownProfile {
            name: name.to_owned(),
            suggestion: volley_syntax::closest(name, available.iter().map(String::as_str)).map(str::to_owned),
            available,
        })
    }

    /// Configuration, profile, `.env` and command resolvers for a run in `directory`,
    /// from the cache while the configuration's files are unchanged.
    pub(crate) fn settings(&self, directory: &Path, profile: Option<&str>) -> Result<Arc<Settings>, Error> {
        let io = &*self.inner.config.io;
        if let Some(settings) =
            self.inner.settings.get_within(io, self.inner.config.recheck_files, &Lookup(directory, profile))
        {
            return Ok(settings);
        }
        let settings = Arc::new(self.load_settings(directory, profile)?);
        let sources = stamp(io, settings.config.iter().flat_map(|config| &config.sources));
        let key = (directory.to_path_buf(), profile.map(str::to_owned));
        self.inner.settings.insert(key, Arc::clone(&settings), sources);
        Ok(settings)
    }

    fn load_settings(&self, directory: &Path, profile: Option<&str>) -> Result<Settings, Error> {
        let config = self.config_for(directory)?;
        // The configuration's `defaultProfile`, when the run names none.
        let profile_name =
            profile.map(str::to_owned).or_else(|| config.as_ref().and_then(|config| config.default_profile.clone()));
        let profile = match &profile_name {
            Some(name) => Some(self.profile_of(directory, config.as_ref(), name)?),
            None => None,
        };
        let root = project_root(&*self.inner.config.io, directory, config.as_ref());
        let dotenv_directories = dotenv::directories(directory, &root);
        let mut commands = config.as_ref().map(|config| config.resolvers.clone()).unwrap_or_default();
        let mut auth = config.as_ref().map(|config| config.auth.clone()).unwrap_or_default();
        if let Some(profile) = &profile {
            commands.extend(profile.resolvers.clone());
            auth.extend(profile.auth.clone());
        }
        Ok(Settings { config, profile, dotenv_directories, profile_name, root, commands, auth })
    }

    /// Defaults by precedence, lowest first: configuration, profile, client.
    pub(crate) fn default_layers(&self, settings: &Settings) -> Vec<Defaults> {
        let mut layers = Vec::new();
        if let Some(config) = &settings.config {
            layers.push(config.defaults.clone());
        }
        if let Some(profile) = &settings.profile {
            layers.push(profile.defaults.clone());
        }
        let client = &self.inner.config.defaults;
        layers.push(Defaults {
            headers: client.headers.clone(),
            timeout: None,
            follow_redirects: client.follow_redirects,
            validate_ssl: client.validate_ssl,
        });
        layers
    }
}

/// Headers of the default layers (lowest first), later layers replacing a header of the
/// same name.
pub(crate) fn merged_headers(layers: &[Defaults]) -> Vec<(String, String)> {
    let mut merged: Vec<(String, String)> = Vec::new();
    for layer in layers {
        for (name, value) in &layer.headers {
            merged.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
            merged.push((name.clone(), value.clone()));
        }
    }
    merged
}
