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
//! A large document just opened gets its diagnostics in two steps: first those of its
//! first chunks ([`first`]), computed while the whole text is parsed on another thread,
//! then all of them. Parts are analysed on every core when there are many to analyse
//! (opening, or the context changed).
//!
//! Scheduling: a change starts a computation at once unless one is running for the
//! document; changes that arrive meanwhile are coalesced into one more computation of
//! the latest version when it ends. Results of an outdated version are dropped.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tower_lsp_server::ls_types::{Diagnostic, NumberOrString};
use volley_engine::ConfigError;
use volley_engine::analysis::AnalysisContext;
use volley_syntax::{Code, Spanned};

use crate::documents::LARGE_DOCUMENT_BYTES;
use crate::model::{Part, Placed, Snapshot};
use crate::{convert, grpc};

mod publish;
pub(crate) use publish::{Context, Publisher};

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
    if let Some(exceeded) = snapshot.model.unread {
        return vec![unread(exceeded)];
    }
    let (context, config_error) = context(snapshot, engine, environment);
    let analysis = Analysis { engine, context: &context, fingerprint: fingerprint(&context, environment.generation) };
    // The parts whose analysis is not kept for this context.
    let pending: Vec<&Placed> = snapshot
        .model
        .parts
        .iter()
        .filter(|placed| placed.part.diagnostics.analysis.get(analysis.fingerprint).is_none())
        .collect();
    analysis.parts(&pending);
    let found = assemble(snapshot, &analysis, environment, config_error, Completeness::Whole);
    let reparsed: usize = pending.iter().map(|placed| placed.part.text.len()).sum();
    if reparsed > RELEASE_AFTER_BYTES {
        // The trees and documents made for the analysis, freed: several times the size
        // of the text, resident until the threads that freed them allocate again.
        volley_syntax::allocator::release_free_memory();
    }
    found
}

/// What a document over the parse budget shows, at its top, instead of its diagnostics.
fn unread(exceeded: volley_syntax::Exceeded) -> Diagnostic {
    convert::file_error(
        &format!(
            "this file was not read: {}; it is read again once at most half of it is left",
            exceeded.standard_reason()
        ),
        volley_syntax::PARSE_BUDGET_HINT,
    )
}

/// The first chunks of a large document's text, to diagnose while the whole is parsed
/// ([`first`]): those that hold the first [`FIRST_BYTES`] (what an editor shows first).
/// `None` for a document that is not large, and when those chunks are large themselves
/// (a few huge blocks).
pub(crate) fn first_chunks(text: &str) -> Option<&str> {
    if text.len() <= LARGE_DOCUMENT_BYTES {
        return None;
    }
    let end = volley_syntax::first_chunks_end(text, FIRST_BYTES);
    (end <= FIRST_MOST_BYTES).then(|| &text[..end])
}

/// The first diagnostics of a large document, from its first chunks (`first`, a snapshot
/// of their text alone): those of the parser, and those of the analysis that do not
/// depend on the rest of the file ([`WHOLE_FILE_CODES`]). Each is one of the document's
/// diagnostics; those of the rest, the duplicate request names and the gRPC schemas
/// come with the whole set. `didOpen` computes them before the document's parse starts
/// (nothing competes with them for the cores): a few milliseconds.
pub(crate) fn first(first: &Snapshot, engine: &volley_engine::Client, environment: &Environment) -> Vec<Diagnostic> {
    let (context, config_error) = context(first, engine, environment);
    let analysis = Analysis { engine, context: &context, fingerprint: fingerprint(&context, environment.generation) };
    assemble(first, &analysis, environment, config_error, Completeness::First)
}

/// The first diagnostics of a large document hold the analysis of the chunks that hold
/// this many first bytes.
const FIRST_BYTES: usize = 64 * 1024;

/// Chunks larger than this in total are not diagnosed first.
const FIRST_MOST_BYTES: usize = 256 * 1024;

/// The codes of the analysis whose diagnostics depend on the rest of the file: the
/// variables it declares, the names of its requests, what its scripts set (an undefined
/// variable, a `run` line's unknown request). Left out of a document's first
/// diagnostics, which see its first chunks only.
const WHOLE_FILE_CODES: [Code; 2] = [Code::UndefinedVariable, Code::InvalidCommand];

/// What the analysis of a snapshot's parts knows beyond them (the configuration, the
/// file's variables and request names, the imported files', what scripts set) and the
/// error of a configuration that does not load.
fn context(
    snapshot: &Snapshot,
    engine: &volley_engine::Client,
    environment: &Environment,
) -> (AnalysisContext, Option<Diagnostic>) {
    let model = &snapshot.model;
    let (mut context, config_error) = volley_engine::analysis::Analyzer::new(engine)
        .context(snapshot.path.as_deref(), environment.profile.as_deref());
    context.file_variables.clone_from(&model.names.variables);
    context.request_names.clone_from(&model.names.requests);
    // What the files it imports declare (`# @import`, `import`), wherever the line is.
    for placed in model.parts.iter().filter(|placed| placed.part.outline.imports) {
        volley_engine::analysis::Analyzer::new(engine).add_imports(
            &mut context,
            &placed.part.document_once(),
            snapshot.path.as_deref(),
        );
    }
    // A script in another part may set what this part uses.
    context.script_variables.clone_from(&model.names.script_variables);
    if let Some(directory) = &context.directory {
        volley_engine::analysis::Analyzer::new(engine).read_script_files(&mut context.script_variables, directory);
    }
    let config_error = config_error.map(|error| convert::config_error(&error.to_string(), hint(&error)));
    (context, config_error)
}

/// Parts with more text than this in total are analysed on every core.
const PARALLEL_AFTER_BYTES: usize = 512 * 1024;

/// How one computation analyses parts: in a context, known by its fingerprint.
struct Analysis<'a> {
    engine: &'a volley_engine::Client,
    context: &'a AnalysisContext,
    fingerprint: u64,
}

impl Analysis<'_> {
    /// Analyses those of `parts` whose analysis is not kept for this context, and keeps
    /// it with them: on several threads when they are large in total.
    fn parts(&self, parts: &[&Placed]) {
        let bytes: usize = parts.iter().map(|placed| placed.part.text.len()).sum();
        let threads = if bytes < PARALLEL_AFTER_BYTES {
            1
        } else {
            std::thread::available_parallelism().map_or(1, usize::from).min(parts.len())
        };
        on_threads(parts.len(), threads, |index| {
            self.kept(&parts[index].part);
        });
    }

    /// The analysis of `part`: the one kept for this context, else made and kept.
    fn kept(&self, part: &Part) -> Arc<Vec<Diagnostic>> {
        part.diagnostics.analysis.get_or(self.fingerprint, || {
            volley_engine::analysis::Analyzer::new(self.engine)
                .analyze_in(&part.document_once(), &part.text, self.context)
                .iter()
                .map(|diagnostic| convert::relative_diagnostic(&part.text, diagnostic))
                .collect()
        })
    }
}

/// Runs `work` on every index below `count`, on `threads` threads (the calling one among
/// them), each taking the next index as soon as it is free.
fn on_threads(count: usize, threads: usize, work: impl Fn(usize) + Sync) {
    let next = AtomicUsize::new(0);
    let run = || {
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= count {
                return;
            }
            work(index);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(run);
        }
        run();
    });
}

/// Which diagnostics [`assemble`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Completeness {
    /// The first diagnostics of a large document, from its first chunks ([`first`]).
    First,
    /// All, the missing ones made now.
    Whole,
}

/// The diagnostics of `snapshot`, sorted: the configuration error, then the parts'
/// (parser, analysis, gRPC schemas) and the duplicate request names by position.
fn assemble(
    snapshot: &Snapshot,
    analysis: &Analysis<'_>,
    environment: &Environment,
    config_error: Option<Diagnostic>,
    completeness: Completeness,
) -> Vec<Diagnostic> {
    let model = &snapshot.model;
    let mut found = Vec::new();
    // The file's variables, for the schemas of gRPC requests: taken once, when a part has one.
    let mut file_variables: Option<Arc<[volley_syntax::VariableDeclaration]>> = None;
    for placed in &model.parts {
        let part = &placed.part;
        let syntax = &part.diagnostics.syntax;
        let kept = analysis.kept(part);
        let kept: Arc<Vec<Diagnostic>> = match completeness {
            Completeness::First => Arc::new(
                kept.iter()
                    .filter(|diagnostic| {
                        !WHOLE_FILE_CODES.iter().any(|code| {
                            diagnostic.code.as_ref() == Some(&NumberOrString::String(code.as_str().to_owned()))
                        })
                    })
                    .cloned()
                    .collect(),
            ),
            Completeness::Whole => kept,
        };
        let grpc = match completeness {
            Completeness::Whole if part.outline.grpc => {
                let variables = file_variables.get_or_insert_with(|| model.variables().cloned().collect());
                let surroundings = grpc::Surroundings::of(model, placed, Arc::clone(variables));
                let place = grpc::Place {
                    path: snapshot.path.as_deref(),
                    profile: environment.profile.as_deref(),
                    catalogs: Some(&environment.catalogs),
                };
                let mut hasher = DefaultHasher::new();
                (analysis.fingerprint, surroundings.fingerprint()).hash(&mut hasher);
                let fingerprint = hasher.finish();
                part.diagnostics.grpc.get_or(fingerprint, || {
                    let document = part.document_once();
                    grpc::blocking(grpc::diagnostics(analysis.engine, &part.text, &document, &surroundings, place))
                        .iter()
                        .map(|diagnostic| convert::relative_diagnostic(&part.text, diagnostic))
                        .collect()
                })
            }
            _ => Arc::default(),
        };
        if syntax.is_empty() && kept.is_empty() && grpc.is_empty() {
            continue;
        }
        let start = convert::position(&snapshot.rope, placed.start);
        found.extend(syntax.iter().chain(kept.iter()).chain(grpc.iter()).map(|diagnostic| Diagnostic {
            range: convert::place_range(diagnostic.range, start.line, start.character),
            ..diagnostic.clone()
        }));
    }
    if completeness == Completeness::Whole {
        found.extend(duplicate_names(snapshot));
    }
    found.sort_by_key(|diagnostic| {
        let range = diagnostic.range;
        (range.start.line, range.start.character, range.end.line, range.end.character)
    });
    config_error.into_iter().chain(found).collect()
}

/// The duplicate request names of a snapshot, checked over the whole file.
fn duplicate_names(snapshot: &Snapshot) -> Vec<Diagnostic> {
    let duplicated = &snapshot.model.names.duplicated;
    if duplicated.is_empty() {
        return Vec::new();
    }
    // Only the names given twice: the diagnostics are the same as of every name.
    let names: Vec<Spanned<String>> = snapshot
        .model
        .requests()
        .filter_map(|(placed, request)| request.name.as_ref().map(|name| (placed, name)))
        .filter(|(_, name)| duplicated.contains(&name.value))
        .map(|(placed, name)| Spanned::new(name.value.clone(), placed.place(name.span)))
        .collect();
    volley_syntax::duplicate_names(&names)
        .iter()
        .map(|diagnostic| convert::diagnostic(&snapshot.rope, diagnostic))
        .collect()
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;
    use tower_lsp_server::ls_types::{Diagnostic, TextDocumentContentChangeEvent, Uri};
    use volley_engine::io::MemoryFs;

    use super::{Environment, compute, first};
    use crate::convert;
    use crate::documents::Documents;
    use crate::model::Snapshot;

    /// Pieces of `.http` files whose diagnostics depend on the rest of the file (variables
    /// declared later, request names, what scripts set, `run` lines) or not (JSON bodies,
    /// resolvers, directives, files, syntax errors).
    const PIECES: &[&str] = &[
        "\n",
        "\r\n",
        "\n###\n",
        "\n### Name\n",
        "# @name a\n",
        "# @name b\n",
        "@v = 1\n",
        "@w = {{v}}\n",
        "GET https://example.com/",
        "POST https://example.com/x\n",
        "{{v}}",
        "{{w}}",
        "{{u}}",
        "{{a.response.body.$.id}}",
        "{{c.response.body.$.id}}",
        "{{s}}",
        "{{$uuid()}}",
        "{{$nope()}}",
        "{{",
        "}}",
        "Content-Type: application/json\n",
        "\n\n",
        "{\"a\": }",
        "{\"a\": 1}",
        "< ./f.json\n",
        "run #a\n",
        "run #c\n",
        "> {% client.global.set(\"s\", 1); %}\n",
        "# @timeout soon\n",
        "é",
        " ",
    ];

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|pieces| pieces.concat())
    }

    fn engine() -> volley_engine::Client {
        volley_engine::Client::new(volley_engine::ClientConfig {
            io: Arc::new(MemoryFs::new()),
            ..volley_engine::ClientConfig::default()
        })
    }

    fn uri() -> Uri {
        "file:///project/api.http".parse().expect("a URI")
    }

    fn diagnostics_of(text: &str, engine: &volley_engine::Client) -> Vec<Diagnostic> {
        compute(&Snapshot::parse(1, text, convert::path(&uri())), engine, &Environment::default())
    }

    /// Where blocks start (the line break before each `###` line).
    fn block_starts(text: &str) -> Vec<usize> {
        text.match_indices("\n###")
            .map(|(at, _)| if text[..at].ends_with('\r') { at - 1 } else { at })
            .chain(text.match_indices("\r###").map(|(at, _)| at))
            .collect()
    }

    /// The offset at or before `offset` that an LSP position can name: on a character
    /// boundary, not between the `\r` and `\n` of a line break.
    fn floor_boundary(text: &str, mut offset: usize) -> usize {
        offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        if offset > 0 && text[..offset].ends_with('\r') && text[offset..].starts_with('\n') {
            offset -= 1;
        }
        offset
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The first diagnostics of a large document, made from its first blocks alone,
        /// are each one of the diagnostics of the whole.
        #[test]
        fn first_diagnostics_are_diagnostics_of_the_whole(text in text()) {
            let engine = engine();
            let whole = diagnostics_of(&text, &engine);
            for end in block_starts(&text) {
                let first = first(&Snapshot::parse(1, &text[..end], convert::path(&uri())), &engine, &Environment::default());
                let mut left = whole.clone();
                for diagnostic in first {
                    let found = left.iter().position(|candidate| *candidate == diagnostic);
                    prop_assert!(found.is_some(), "{diagnostic:?} is not among {whole:?} ({:?} first)", &text[..end]);
                    left.remove(found.unwrap_or_default());
                }
            }
        }

        /// Edits that arrive while a large document is parsed are applied once it is: the
        /// diagnostics are those of the edited text opened afresh.
        #[test]
        fn edits_while_parsing_match_a_fresh_open(
            text in text(),
            edits in prop::collection::vec((0..=1000usize, 0..300usize, text().prop_map(|t| t.chars().take(12).collect::<String>())), 1..6),
            held in 0usize..6,
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
            let engine = engine();
            let documents = Documents::new(MemoryFs::new());
            let uri = uri();
            let mut release = Some(documents.open_held(&uri, 1, &text));
            let mut expected = text.clone();
            for (index, (version, (at, length, insert))) in (2..).zip(edits).enumerate() {
                // The parse ends after `held` edits (or never before the snapshot).
                if index == held && let Some(release) = release.take() {
                    release();
                }
                let start = floor_boundary(&expected, at * expected.len() / 1000);
                let end = floor_boundary(&expected, start + length * expected.len() / 1000);
                let rope = ropey::Rope::from_str(&expected);
                let change = TextDocumentContentChangeEvent {
                    range: Some(convert::range(&rope, start, end)),
                    range_length: None,
                    text: insert.clone(),
                };
                expected.replace_range(start..end, &insert);
                prop_assert!(documents.change(&uri, version, &[change]));
            }
            if let Some(release) = release.take() {
                release();
            }
            let snapshot = runtime.block_on(documents.snapshot(&uri)).expect("open");
            prop_assert_eq!(snapshot.rope.to_string(), expected.clone());
            prop_assert_eq!(compute(&snapshot, &engine, &Environment::default()), diagnostics_of(&expected, &engine));
        }
    }
}
