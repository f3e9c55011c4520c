//! The analysis of documents as a client's runs see them: [`Analyzer`], over the
//! client's configuration, variables, resolvers and `.env` files.

use std::path::Path;

use volley_syntax::Document;

use crate::analysis::AnalysisContext;
use crate::client::Client;
use crate::config::project_root;
use crate::dotenv;
use crate::error::ConfigError;

/// What [`Analyzer::analyze`] found.
#[derive(Debug)]
pub struct Analysis {
    /// The semantic diagnostics, in source order.
    pub diagnostics: Vec<volley_syntax::Diagnostic>,
    /// The configuration could not be read (the diagnostics were made without it).
    pub config_error: Option<ConfigError>,
}

/// The semantic diagnostics of documents as the runs of one [`Client`] would see them.
///
/// ```
/// use volley_engine::{Client, ClientConfig, ConfigSource};
/// use volley_engine::analysis::Analyzer;
///
/// let client = Client::new(ClientConfig { config: ConfigSource::Disabled, ..ClientConfig::default() });
/// let text = "GET https://example.com/{{missing}}\n";
/// let document = volley_syntax::parse(text);
/// let analysis = Analyzer::new(&client).analyze(&document, text, None);
/// assert_eq!(analysis.diagnostics.len(), 1);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Analyzer<'a> {
    client: &'a Client,
}

impl<'a> Analyzer<'a> {
    /// The analyzer of `client`'s documents.
    #[must_use]
    pub fn new(client: &'a Client) -> Self {
        Self { client }
    }

    /// The semantic diagnostics of `document` (parsed from `text`, read from
    /// `source_path` when it has one) as runs of the client would see it: its
    /// configuration, variables and resolvers (every profile's). A broken configuration
    /// is returned beside the diagnostics made without it.
    #[must_use]
    pub fn analyze(&self, document: &Document, text: &str, source_path: Option<&Path>) -> Analysis {
        let (context, config_error) = self.context(source_path, None);
        let diagnostics = self.analyze_in(document, text, &context);
        Analysis { diagnostics, config_error }
    }

    /// What the analysis of a file at `source_path` knows beyond the file: the
    /// configuration that applies (with only `profile`'s variables when one is given),
    /// the client's variables and resolvers, the variables of the `.env` files. A
    /// configuration (or `.env` file) that does not load, or a profile it does not have,
    /// is returned beside the context made without it.
    #[must_use]
    pub fn context(&self, source_path: Option<&Path>, profile: Option<&str>) -> (AnalysisContext, Option<ConfigError>) {
        let directory =
            source_path.and_then(Path::parent).map(Path::to_path_buf).or_else(|| self.client.working_directory());
        let (config, mut config_error) = match directory.as_deref().map(|directory| self.client.config_for(directory)) {
            Some(Ok(config)) => (config, None),
            Some(Err(error)) => (None, Some(error)),
            None => (None, None),
        };
        if let (Some(name), None) = (profile, &config_error) {
            config_error = match &directory {
                Some(directory) => self.client.profile_of(directory, config.as_ref(), name).err(),
                None => {
                    Some(ConfigError::UnknownProfile { name: name.to_owned(), suggestion: None, available: Vec::new() })
                }
            };
        }
        let mut variables = vec![self.client.get_variables()];
        if let Some(directory) = &directory {
            let root = project_root(&*self.client.inner.config.io, directory, config.as_ref());
            let directories = dotenv::directories(directory, &root);
            // With no profile, the `.env` files of every profile count, as their variables do.
            let profiles: Vec<Option<String>> = match profile {
                Some(name) => vec![Some(name.to_owned())],
                None => std::iter::once(None)
                    .chain(dotenv::profiles(&*self.client.inner.config.io, &directories).into_iter().map(Some))
                    .collect(),
            };
            for profile in profiles {
                match self.client.dotenv_for(&directories, profile.as_deref()) {
                    Ok(dotenv) => variables.push(dotenv.variables.clone()),
                    Err(error) => config_error = config_error.or(Some(error)),
                }
            }
        }
        let context = AnalysisContext {
            config,
            variables,
            resolvers: self
                .client
                .inner
                .config
                .resolvers
                .keys()
                .map(|key| key.trim_start_matches('$').to_owned())
                .collect(),
            directory,
            profile: profile.map(str::to_owned),
            ..AnalysisContext::default()
        };
        (context, config_error)
    }

    /// Adds what the files `document` imports declare to `context`: their file
    /// variables and request names (`# @import`, `import`). A file that cannot be read
    /// adds nothing; [`Analyzer::analyze_in`] reports it at its line.
    pub fn add_imports(&self, context: &mut AnalysisContext, document: &Document, source_path: Option<&Path>) {
        let Ok(imports) = self.client.imports_of(document, source_path) else { return };
        for linked in imports {
            let variables = linked.document.variables.iter().map(|declaration| declaration.name.value.clone());
            context.file_variables.extend(variables);
            let names = linked.document.requests().filter_map(|request| request.name.as_ref());
            context.request_names.extend(names.map(|name| name.value.clone()));
        }
    }

    /// Reads the script files of `scripts` (relative to `directory`) through the
    /// client's [`Io`](crate::Io), adding what they may set.
    pub fn read_script_files(&self, scripts: &mut super::ScriptVariables, directory: &Path) {
        scripts.read_files(directory, &*self.client.inner.config.io);
    }

    /// The semantic diagnostics of `document` (parsed from `text`) in `context`, the
    /// files it refers to read through the client's [`Io`](crate::Io).
    #[must_use]
    pub fn analyze_in(
        &self,
        document: &Document,
        text: &str,
        context: &AnalysisContext,
    ) -> Vec<volley_syntax::Diagnostic> {
        let mut diagnostics = super::analyze(document, text, &*self.client.inner.config.io, context);
        if document.has_imports() || document.has_runs() {
            diagnostics.extend(super::compose::check(self.client, document, context));
            diagnostics.sort_by_key(|diagnostic| diagnostic.span.start);
        }
        diagnostics
    }
}
