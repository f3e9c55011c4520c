//! One verdict for `volley check` and `volley run`: the engine's analysis of the files
//! of one invocation, as a run of them sees it. The profile is exactly the one given
//! (none counts no profile's variables), `--var` values are defined, and the request
//! names and script-set variables of every file of the invocation count in each, since
//! a run sends them in order with one client. `run` merges these diagnostics into the
//! parser's, so the one refusal rule (`Document::refusal_of`) refuses what `check`
//! calls an error, with the same code at the same place.

use std::path::Path;

use serde_json::{Map, Value};
use volley_engine::Client;
use volley_engine::analysis::{Analysis, AnalysisContext, Analyzer, ScriptVariables};
use volley_syntax::Document;

/// What the files of an invocation share for their analysis.
pub(crate) struct Invocation<'a> {
    pub(crate) client: &'a Client,
    /// `-p` (or `VOLLEY_PROFILE`).
    pub(crate) profile: Option<&'a str>,
    /// `--var` values.
    pub(crate) variables: Map<String, Value>,
    /// The request names of every file.
    request_names: std::collections::BTreeSet<String>,
    /// What the scripts of every file may set, their script files read.
    scripts: ScriptVariables,
    /// `--allow-external-files`.
    pub(crate) allow_external_files: bool,
}

impl<'a> Invocation<'a> {
    /// The invocation of `files` (each file's path and parsed document).
    pub(crate) fn new(
        client: &'a Client,
        profile: Option<&'a str>,
        variables: &[(String, String)],
        files: &[(&Path, &Document)],
    ) -> Self {
        let analyzer = Analyzer::new(client);
        let mut scripts = ScriptVariables::default();
        let mut request_names = std::collections::BTreeSet::new();
        for (path, document) in files {
            let mut own = ScriptVariables::of_document(document);
            if let Some(directory) = path.parent() {
                analyzer.read_script_files(&mut own, &std::path::absolute(directory).unwrap_or_default());
            }
            scripts.extend(&own);
            request_names
                .extend(document.requests().filter_map(|request| request.name.as_ref()).map(|name| name.value.clone()));
        }
        let variables = variables.iter().map(|(name, value)| (name.clone(), Value::String(value.clone()))).collect();
        Self { client, profile, variables, request_names, scripts, allow_external_files: false }
    }

    /// The semantic diagnostics of the file at `path`.
    pub(crate) fn analyze(&self, path: &Path, document: &Document, text: &str) -> Analysis {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let analyzer = Analyzer::new(self.client);
        let (mut context, config_error): (AnalysisContext, _) = analyzer.context(Some(&absolute), self.profile);
        context.exact_profile = true;
        if !self.variables.is_empty() {
            context.variables.push(self.variables.clone());
        }
        context.request_names.clone_from(&self.request_names);
        context.script_variables.clone_from(&self.scripts);
        context.allow_external_files = self.allow_external_files;
        analyzer.add_imports(&mut context, document, Some(&absolute));
        let diagnostics = analyzer.analyze_in(document, text, &context);
        Analysis { diagnostics, config_error }
    }
}

/// Adds `analysis`'s diagnostics to the document's, in source order (the parser's first
/// at the same place), so that the document's refusal rule sees them.
pub(crate) fn merge(document: &mut Document, analysis: Vec<volley_syntax::Diagnostic>) {
    if analysis.is_empty() {
        return;
    }
    document.diagnostics.extend(analysis);
    document.diagnostics.sort_by_key(|diagnostic| diagnostic.span.start);
}
