//! What a document can refer to inside `{{ }}`: its `@vars`, the configuration's
//! variables and the active profile's, request names for chaining, and command
//! resolvers. Shared by completion and hover; values of sensitive names (the engine's
//! rule, [`volley_engine::redact::is_sensitive_variable`]) are masked.

use std::path::Path;

use serde_json::{Map, Value};

use crate::model::Snapshot;

/// What stands in for the value of a sensitive variable.
const MASK: &str = "••••";

/// Where a variable is defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A `@name = value` line of the document.
    File,
    /// `variables` of the configuration file.
    Config,
    /// `variables` of the named profile of the configuration file.
    Profile(String),
    /// A `@name = value` line of an imported file (its name).
    Imported(String),
}

impl Source {
    /// How the source is shown to the user.
    pub(crate) fn describe(&self) -> String {
        match self {
            Source::File => "file".to_owned(),
            Source::Config => "volley.jsonc".to_owned(),
            Source::Profile(name) => format!("profile {name}"),
            Source::Imported(file) => format!("imported from {file}"),
        }
    }
}

/// A variable a document sees, its value already masked when its name is sensitive.
#[derive(Debug, Clone)]
pub(crate) struct Variable {
    pub(crate) name: String,
    pub(crate) value: String,
    pub(crate) source: Source,
}

/// Everything a position of a document can refer to.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    /// In precedence order (file, profile, configuration), one entry per name.
    pub(crate) variables: Vec<Variable>,
    /// Request names, for `name.response.…`.
    pub(crate) requests: Vec<String>,
    /// Command resolvers of the configuration, without `$`.
    pub(crate) resolvers: Vec<String>,
}

impl Scope {
    /// The variables of a snapshot's document and of the configuration that applies to
    /// it, with the variables of `profile` when one is active.
    pub(crate) fn of(snapshot: &Snapshot, engine: &volley_engine::Client, profile: Option<&str>) -> Self {
        let mut scope = Scope::default();
        for declaration in snapshot.model.variables() {
            scope.add(&declaration.name.value, declaration.value.to_source(), Source::File);
        }
        // The files it imports (`# @import`, `import`): below its own lines.
        let mut imported_names = Vec::new();
        for placed in snapshot.model.parts.iter().filter(|placed| placed.part.outline.imports) {
            let document = placed.part.document_once();
            let Ok(imports) = volley_engine::stages::imports(engine, &document, snapshot.path.as_deref()) else {
                continue;
            };
            for linked in imports {
                let file = linked.path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
                for declaration in linked.document.variables.iter().rev() {
                    scope.add(&declaration.name.value, declaration.value.to_source(), Source::Imported(file.clone()));
                }
                let names = linked.document.requests().filter_map(|request| request.name.as_ref());
                imported_names.extend(names.map(|name| name.value.clone()));
            }
        }
        let config = snapshot
            .path
            .as_deref()
            .and_then(Path::parent)
            .and_then(|directory| volley_engine::stages::config_for(engine, directory).ok().flatten());
        if let Some(config) = &config {
            if let Some((name, profile)) =
                profile.and_then(|name| config.profiles.get(name).map(|profile| (name, profile)))
            {
                scope.add_map(&profile.variables, &Source::Profile(name.to_owned()));
                scope.resolvers.extend(profile.resolvers.keys().map(|name| name.trim_start_matches('$').to_owned()));
            }
            scope.add_map(&config.variables, &Source::Config);
            scope.resolvers.extend(config.resolvers.keys().map(|name| name.trim_start_matches('$').to_owned()));
            scope.resolvers.sort();
            scope.resolvers.dedup();
        }
        scope.requests = snapshot.model.request_names().map(str::to_owned).collect();
        scope.requests.extend(imported_names);
        scope
    }

    fn add_map(&mut self, variables: &Map<String, Value>, source: &Source) {
        for (name, value) in variables {
            let value = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            self.add(name, value, source.clone());
        }
    }

    fn add(&mut self, name: &str, value: String, source: Source) {
        if self.variable(name).is_some() {
            return;
        }
        let value = if volley_engine::redact::is_sensitive_variable(name) { MASK.to_owned() } else { value };
        self.variables.push(Variable { name: name.to_owned(), value, source });
    }

    /// The variable `name` as the document sees it.
    pub(crate) fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|variable| variable.name == name)
    }
}
