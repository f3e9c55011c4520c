//! Where a run's settings come from: the configuration of a directory (`volley.jsonc`,
//! its profiles), its `.env` files and command resolvers, each cached while the files
//! they were read from are unchanged, and the request defaults they layer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Client, ConfigSource};
use crate::config::{Config, Defaults, dotenv_root};
use crate::dotenv::{self, DotEnv};
use crate::error::{ConfigError, Error};
use crate::resolvers::CommandResolver;

/// Settings found for a directory and the files they came from, with the modification
/// time each had: a changed file makes the entry stale.
pub(super) struct CachedSettings {
    settings: Arc<Settings>,
    sources: Vec<(PathBuf, Option<std::time::SystemTime>)>,
}

/// The configuration that applies to one run.
#[derive(Debug)]
pub(super) struct Settings {
    pub(super) config: Option<Config>,
    pub(super) profile: Option<crate::config::Profile>,
    /// The directories whose `.env` files apply, nearest first: the `.http` file's and
    /// each one above it up to the configuration's directory or the project root.
    pub(super) dotenv_directories: Vec<PathBuf>,
    pub(super) commands: BTreeMap<String, CommandResolver>,
}

impl Client {
    /// The configuration that applies to `.http` files in `directory`, as runs see it.
    /// Kept while its files are unchanged, like run settings (see
    /// [`Client::reload_config`] for a configuration created where there was none).
    pub fn config_for(&self, directory: &Path) -> Result<Option<Config>, ConfigError> {
        match &self.inner.config.config {
            ConfigSource::Discover => {
                let io = &*self.inner.config.io;
                if let Ok(cache) = self.inner.configs.lock()
                    && let Some((config, sources)) = cache.get(directory)
                    && sources.iter().all(|(path, modified)| io.modified(path) == *modified)
                {
                    return Ok(config.clone());
                }
                let config = Config::discover(io, directory, &self.inner.config.environment)?;
                let sources = config
                    .iter()
                    .flat_map(|config| &config.sources)
                    .map(|path| (path.clone(), io.modified(path)))
                    .collect();
                if let Ok(mut cache) = self.inner.configs.lock() {
                    cache.insert(directory.to_path_buf(), (config.clone(), sources));
                }
                Ok(config)
            }
            ConfigSource::Disabled => Ok(None),
            ConfigSource::Given(config) => Ok(Some((**config).clone())),
        }
    }

    /// A client finds the configuration of a directory once and re-reads it when one
    /// of its files changes (a file's modification time, an in-memory file's
    /// [`MemoryFs::insert`](crate::MemoryFs::insert)). A configuration file created
    /// where there was none is only seen after this call: the language server calls it
    /// when the editor reports a new `volley.jsonc`.
    pub fn reload_config(&self) {
        if let Ok(mut cache) = self.inner.settings.lock() {
            cache.clear();
        }
        if let Ok(mut cache) = self.inner.configs.lock() {
            cache.clear();
        }
        if let Ok(mut cache) = self.inner.dotenvs.lock() {
            cache.clear();
        }
    }

    /// The variables of the `.env` files in `directories` (nearest first), from the
    /// cache while none of those files appeared, changed or went away.
    pub(super) fn dotenv_for(&self, directories: &[PathBuf]) -> Result<Arc<DotEnv>, ConfigError> {
        let io = &*self.inner.config.io;
        let Some(key) = directories.first() else { return Ok(Arc::default()) };
        if let Ok(cache) = self.inner.dotenvs.lock()
            && let Some((dotenv, sources)) = cache.get(key)
            && sources.len() == directories.len()
            && sources.iter().all(|(path, modified)| io.modified(path) == *modified)
        {
            return Ok(Arc::clone(dotenv));
        }
        // The times are taken before reading: a file that changes meanwhile is read again.
        let sources: Vec<_> = directories
            .iter()
            .map(|directory| {
                let path = directory.join(dotenv::DOTENV_FILE);
                let modified = io.modified(&path);
                (path, modified)
            })
            .collect();
        let dotenv = Arc::new(DotEnv::read(io, directories)?);
        if let Ok(mut cache) = self.inner.dotenvs.lock() {
            cache.insert(key.clone(), (Arc::clone(&dotenv), sources));
        }
        Ok(dotenv)
    }

    /// Configuration, profile, `.env` and command resolvers for a run in `directory`,
    /// from the cache while the configuration's files are unchanged.
    pub(super) fn settings(&self, directory: &Path, profile: Option<&str>) -> Result<Arc<Settings>, Error> {
        let key = (directory.to_path_buf(), profile.map(str::to_owned));
        let io = &*self.inner.config.io;
        if let Ok(cache) = self.inner.settings.lock()
            && let Some(cached) = cache.get(&key)
            && cached.sources.iter().all(|(path, modified)| io.modified(path) == *modified)
        {
            return Ok(Arc::clone(&cached.settings));
        }
        let settings = Arc::new(self.load_settings(directory, profile)?);
        let sources = settings
            .config
            .iter()
            .flat_map(|config| &config.sources)
            .map(|path| (path.clone(), io.modified(path)))
            .collect();
        if let Ok(mut cache) = self.inner.settings.lock() {
            cache.insert(key, CachedSettings { settings: Arc::clone(&settings), sources });
        }
        Ok(settings)
    }

    fn load_settings(&self, directory: &Path, profile: Option<&str>) -> Result<Settings, Error> {
        let config = self.config_for(directory)?;
        let profile = match (profile, &config) {
            (None, _) => None,
            (Some(name), Some(config)) => Some(config.profile(name)?.clone()),
            (Some(name), None) => {
                return Err(Error::Config(ConfigError::UnknownProfile {
                    name: name.to_owned(),
                    suggestion: None,
                    available: Vec::new(),
                }));
            }
        };
        let root = dotenv_root(&*self.inner.config.io, directory, config.as_ref());
        let dotenv_directories = dotenv::directories(directory, &root);
        let mut commands = config.as_ref().map(|config| config.resolvers.clone()).unwrap_or_default();
        if let Some(profile) = &profile {
            commands.extend(profile.resolvers.clone());
        }
        Ok(Settings { config, profile, dotenv_directories, commands })
    }

    /// Defaults by precedence, lowest first: configuration, profile, client.
    pub(super) fn default_layers(&self, settings: &Settings) -> Vec<Defaults> {
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
pub(super) fn merged_headers(layers: &[Defaults]) -> Vec<(String, String)> {
    let mut merged: Vec<(String, String)> = Vec::new();
    for layer in layers {
        for (name, value) in &layer.headers {
            merged.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
            merged.push((name.clone(), value.clone()));
        }
    }
    merged
}
