//! Diagnostics of a document: the parser's and the engine's analysis, as `volley check`
//! computes them, published for the latest version only.
//!
//! They are computed per part (chunk) of the document and kept with the part: the
//! parser's for as long as the chunk is unchanged, the analysis's while the chunk and
//! the context it was made in (the file's variable and request names, the
//! configuration, the active profile) are unchanged, those of gRPC requests' schemas
//! (`grpc/check.rs`) while, beyond that context, the file's variable values and its
//! global `proto <` lines are unchanged (the proto files: see `Environment::generation`).
//! A keystroke recomputes one part.
//!
//! Scheduling: a change starts a computation at once unless one is running for the
//! document; changes that arrive meanwhile are coalesced into one more computation of
//! the latest version when it ends. Results of an outdated version are dropped.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use parking_lot::Mutex;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{Diagnostic, Uri};
use volley_engine::ConfigError;
use volley_engine::analysis::AnalysisContext;
use volley_syntax::Spanned;

use crate::documents::{Documents, Snapshot, is_config};
use crate::{convert, grpc};

/// What is computed from one part, kept with it.
#[derive(Debug, Default)]
pub(crate) struct PartDiagnostics {
    /// The parser's, ranges counted from the part's start.
    syntax: Vec<Diagnostic>,
    /// The analysis's, ranges counted from the part's start.
    analysis: Kept,
    /// Those of its gRPC requests' schemas (`grpc/check.rs`), ranges counted from the
    /// part's start.
    grpc: Kept,
}

/// Diagnostics with the fingerprint of the context they were made in.
#[derive(Debug, Default)]
struct Kept(Mutex<Option<(u64, Arc<Vec<Diagnostic>>)>>);

impl Kept {
    /// The diagnostics kept, when they were made in the context `fingerprint`; else
    /// those `compute` makes, kept instead.
    fn get_or(&self, fingerprint: u64, compute: impl FnOnce() -> Vec<Diagnostic>) -> Arc<Vec<Diagnostic>> {
        let mut cached = self.0.lock();
        if let Some((made_in, diagnostics)) = &*cached
            && *made_in == fingerprint
        {
            return Arc::clone(diagnostics);
        }
        let diagnostics = Arc::new(compute());
        *cached = Some((fingerprint, Arc::clone(&diagnostics)));
        diagnostics
    }
}

impl PartDiagnostics {
    /// The diagnostics of a part with this text and typed document: the parser's now,
    /// the analysis's and the gRPC schemas' when first asked for.
    pub(crate) fn new(text: &str, document: &volley_syntax::Document) -> Self {
        let syntax =
            document.diagnostics.iter().map(|diagnostic| convert::relative_diagnostic(text, diagnostic)).collect();
        PartDiagnostics { syntax, analysis: Kept::default(), grpc: Kept::default() }
    }
}

/// What the diagnostics of every document depend on beyond its text.
#[derive(Debug, Clone, Default)]
pub(crate) struct Environment {
    /// The active configuration profile.
    pub(crate) profile: Option<String>,
    /// Bumped when files may have appeared or vanished or changed (a save, a
    /// watched-file event, proto files included): the analysis's file checks and the
    /// gRPC schemas are made again.
    pub(crate) generation: u64,
    /// Told when a gRPC server's catalog fetched in the background changed: the server
    /// then checks every document again (`Backend::initialized`).
    pub(crate) catalogs: Arc<tokio::sync::Notify>,
}

/// The diagnostics of one snapshot, sorted like `volley check`'s: a configuration error
/// first, then by position. Runs off the async workers: the schemas of gRPC requests
/// are awaited on this thread.
pub(crate) fn compute(
    snapshot: &Snapshot,
    engine: &volley_engine::Client,
    environment: &Environment,
) -> Vec<Diagnostic> {
    let model = &snapshot.model;
    let (mut context, config_error) = volley_engine::analysis::Analyzer::new(engine)
        .context(snapshot.path.as_deref(), environment.profile.as_deref());
    context.file_variables = model.variables().map(|declaration| declaration.name.value.clone()).collect();
    context.request_names = model.request_names().map(str::to_owned).collect();
    // What the files it imports declare (`# @import`, `import`), wherever the line is.
    for placed in model.parts.iter().filter(|placed| placed.part.text.contains("import")) {
        volley_engine::analysis::Analyzer::new(engine).add_imports(
            &mut context,
            &placed.part.document_once(),
            snapshot.path.as_deref(),
        );
    }
    // A script in another part may set what this part uses.
    context.script_variables = model.script_variables();
    if let Some(directory) = &context.directory {
        volley_engine::analysis::Analyzer::new(engine).read_script_files(&mut context.script_variables, directory);
    }
    let fingerprint = fingerprint(&context, environment.generation);
    let mut found = Vec::new();
    // The file's variables, for the schemas of gRPC requests: taken once, when a part has one.
    let mut file_variables: Option<Arc<[volley_syntax::VariableDeclaration]>> = None;
    // Bytes of text whose typed document was made again for the analysis.
    let mut reparsed = 0;
    for placed in &model.parts {
        let part = &placed.part;
        let syntax = &part.diagnostics.syntax;
        let analysis = part.diagnostics.analysis.get_or(fingerprint, || {
            reparsed += part.text.len();
            volley_engine::analysis::Analyzer::new(engine)
                .analyze_in(&part.document_once(), &part.text, &context)
                .iter()
                .map(|diagnostic| convert::relative_diagnostic(&part.text, diagnostic))
                .collect()
        });
        let grpc = if part.outline.grpc {
            let variables = file_variables.get_or_insert_with(|| model.variables().cloned().collect());
            let surroundings = grpc::Surroundings::of(model, placed, Arc::clone(variables));
            let place = grpc::Place {
                path: snapshot.path.as_deref(),
                profile: environment.profile.as_deref(),
                catalogs: Some(&environment.catalogs),
            };
            let mut hasher = DefaultHasher::new();
            (fingerprint, surroundings.fingerprint()).hash(&mut hasher);
            let fingerprint = hasher.finish();
            part.diagnostics.grpc.get_or(fingerprint, || {
                let document = part.document_once();
                grpc::blocking(grpc::diagnostics(engine, &part.text, &document, &surroundings, place))
                    .iter()
                    .map(|diagnostic| convert::relative_diagnostic(&part.text, diagnostic))
                    .collect()
            })
        } else {
            Arc::default()
        };
        if syntax.is_empty() && analysis.is_empty() && grpc.is_empty() {
            continue;
        }
        let start = convert::position(&snapshot.rope, placed.start);
        found.extend(syntax.iter().chain(analysis.iter()).chain(grpc.iter()).map(|diagnostic| Diagnostic {
            range: convert::place_range(diagnostic.range, start.line, start.character),
            ..diagnostic.clone()
        }));
    }
    let names: Vec<Spanned<String>> = model
        .requests()
        .filter_map(|(placed, request)| request.name.as_ref().map(|name| (placed, name)))
        .map(|(placed, name)| Spanned::new(name.value.clone(), placed.place(name.span)))
        .collect();
    found.extend(
        volley_syntax::duplicate_names(&names).iter().map(|diagnostic| convert::diagnostic(&snapshot.rope, diagnostic)),
    );
    found.sort_by_key(|diagnostic| {
        let range = diagnostic.range;
        (range.start.line, range.start.character, range.end.line, range.end.character)
    });
    if reparsed > RELEASE_AFTER_BYTES {
        // The trees and documents made for the analysis, freed on this thread: several
        // times the size of the text, resident until this thread allocates again.
        volley_syntax::allocator::release_free_memory();
    }
    config_error.map(|error| convert::config_error(&error.to_string(), hint(&error))).into_iter().chain(found).collect()
}

/// The analysis of more text than this (the first one, or one after the context
/// changed) gives the memory it freed back to the system at once.
const RELEASE_AFTER_BYTES: usize = 1024 * 1024;

fn hint(error: &ConfigError) -> &'static str {
    match error {
        ConfigError::UnknownProfile { .. } => {
            "select one of the configuration's profiles (the `volley.profile` setting or the `volley.selectProfile` command)"
        }
        _ => "fix the file it names",
    }
}

/// A hash of everything the analysis of a part depends on beyond the part.
fn fingerprint(context: &AnalysisContext, generation: u64) -> u64 {
    let mut hasher = DefaultHasher::new();
    generation.hash(&mut hasher);
    context.profile.hash(&mut hasher);
    context.directory.hash(&mut hasher);
    context.file_variables.hash(&mut hasher);
    context.request_names.hash(&mut hasher);
    context.script_variables.hash(&mut hasher);
    context.resolvers.hash(&mut hasher);
    // Configurations and variable maps are small; their debug text covers every value.
    format!("{:?}{:?}", context.config, context.variables).hash(&mut hasher);
    hasher.finish()
}

/// Publishes documents' diagnostics: one computation at a time per document, the
/// changes made meanwhile coalesced into one more.
#[derive(Debug, Clone, Default)]
pub(crate) struct Publisher {
    /// The documents being computed, each with "changed since it started".
    running: Arc<Mutex<HashMap<String, bool>>>,
}

/// What a computation needs, cloned into its task.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub(crate) client: Client,
    pub(crate) documents: Documents,
    pub(crate) engine: volley_engine::Client,
    pub(crate) environment: Arc<Mutex<Environment>>,
}

impl Publisher {
    /// Computes and publishes the diagnostics of `uri`'s latest version, now or, when a
    /// computation of it is running, right after it.
    pub(crate) fn request(&self, context: &Context, uri: Uri) {
        {
            let mut running = self.running.lock();
            if let Some(changed) = running.get_mut(uri.as_str()) {
                *changed = true;
                return;
            }
            running.insert(uri.as_str().to_owned(), false);
        }
        let publisher = self.clone();
        let context = context.clone();
        tokio::spawn(async move { publisher.run(context, uri).await });
    }

    /// Requests the diagnostics of every open document (the configuration, the files or
    /// the profile changed): a new generation, so every part is analysed again.
    pub(crate) fn request_all(&self, context: &Context) {
        context.environment.lock().generation += 1;
        let uris: HashSet<Uri> =
            context.documents.all().into_iter().map(|(uri, _)| uri).filter(|uri| !is_config(uri)).collect();
        for uri in uris {
            self.request(context, uri);
        }
    }

    async fn run(&self, context: Context, uri: Uri) {
        let mut published = None;
        loop {
            let Some(snapshot) = context.documents.snapshot(&uri) else {
                self.finish(&uri);
                return;
            };
            let version = snapshot.version;
            let environment = context.environment.lock().clone();
            if published == Some((version, environment.generation, environment.profile.clone())) {
                // Asked again for what was just published (several changes of one version).
                if self.done(&uri) {
                    return;
                }
                continue;
            }
            let key = (version, environment.generation, environment.profile.clone());
            let engine = context.engine.clone();
            // Parsing and reading files: off the async workers.
            let computed = tokio::task::spawn_blocking(move || compute(&snapshot, &engine, &environment)).await;
            if let Ok(diagnostics) = computed
                && context.documents.version(&uri) == Some(version)
            {
                context.client.publish_diagnostics(uri.clone(), diagnostics, Some(version)).await;
                published = Some(key);
            }
            context.documents.sync_file(&uri);
            if self.done(&uri) {
                return;
            }
        }
    }

    /// Ends a computation of `uri`: `true` when nothing changed since it started, else
    /// the caller computes again.
    fn done(&self, uri: &Uri) -> bool {
        let mut running = self.running.lock();
        match running.get_mut(uri.as_str()) {
            Some(changed) if *changed => {
                *changed = false;
                false
            }
            _ => {
                running.remove(uri.as_str());
                true
            }
        }
    }

    fn finish(&self, uri: &Uri) {
        self.running.lock().remove(uri.as_str());
    }
}
