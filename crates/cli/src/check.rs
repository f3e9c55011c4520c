//! `volley check`: the diagnostics of the language server (the parser's and the
//! engine's analysis) for files, without sending anything.

use std::path::PathBuf;

use anyhow::Context as _;
use serde::Serialize;
use volley_engine::{Client, ClientConfig};
use volley_syntax::{Diagnostic, LineIndex, Severity};

use crate::exit::Exit;
use crate::files::collect_files;
use crate::render::{self, JsonDiagnostic};

/// Arguments of `volley check`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = CHECK_EXAMPLES)]
pub(crate) struct CheckArgs {
    /// Files to check; a directory is searched for `.http` and `.rest` files.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,

    /// Print one JSON object per file (`{"path", "diagnostics": [...]}`) instead of
    /// compiler-style text.
    #[arg(long)]
    json: bool,

    /// Fail (exit code 1) on warnings too, not only on errors.
    #[arg(long)]
    deny_warnings: bool,

    /// Check as a run with this profile sees the files (`volley run -p NAME`): only its
    /// variables count. Without one, a variable only profiles define is an error, as it
    /// is in a run without `-p`.
    #[arg(long, short = 'p', value_name = "NAME", env = "VOLLEY_PROFILE", hide_env_values = true, add = crate::complete::profiles())]
    profile: Option<String>,

    /// A variable the run will be given (`volley run --var NAME=VALUE`). Repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = crate::args::parse_var)]
    vars: Vec<(String, String)>,

    /// As `volley run --allow-external-files`: files outside the project are no error.
    #[arg(long)]
    allow_external_files: bool,
}

const CHECK_EXAMPLES: &str = "\
Examples:
  volley check api.http                 one file
  volley check .                        every .http and .rest file below this directory
  volley check requests/ --deny-warnings
  volley check . --json | jq 'select(.diagnostics != [])'

Exit codes: 0 no errors, 1 errors (or warnings with --deny-warnings), 2 usage error.";

#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    config_error: Option<String>,
    /// The file could not be checked at all (not UTF-8).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// A file read and parsed: its text and document.
type Parsed = (String, volley_syntax::Document);
/// Why a file was not checked, and the hint.
type Unchecked = (String, &'static str);

pub(crate) fn run(args: &CheckArgs) -> anyhow::Result<Exit> {
    let files = collect_files(&args.paths)?;
    let client = Client::new(ClientConfig::default());
    let mut errors = 0usize;
    let mut warnings = 0usize;
    // Every file first: a run of them shares request names and script variables.
    let mut read: Vec<(&PathBuf, Result<Parsed, Unchecked>)> = Vec::new();
    for path in &files {
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).with_context(|| format!("cannot read `{shown}`"))?;
        let file = match String::from_utf8(bytes) {
            // The budget the execution server gives a text: text made to be slow to parse
            // is said so, instead of holding the check (and a CI job) for minutes.
            Ok(text) => match volley_syntax::parse_within(&text, volley_syntax::Budget::standard()) {
                Ok(document) => Ok((text, document)),
                Err(exceeded) => Err((over_budget(&shown, exceeded), volley_syntax::PARSE_BUDGET_HINT)),
            },
            Err(error) => {
                let at = error.utf8_error().valid_up_to();
                Err((format!("`{shown}` is not UTF-8 text (invalid byte at offset {at})"), "save the file as UTF-8"))
            }
        };
        read.push((path, file));
    }
    let parsed: Vec<(&std::path::Path, &volley_syntax::Document)> = read
        .iter()
        .filter_map(|(path, file)| file.as_ref().ok().map(|(_, document)| (path.as_path(), document)))
        .collect();
    let mut invocation = crate::verdict::Invocation::new(&client, args.profile.as_deref(), &args.vars, &parsed);
    invocation.allow_external_files = args.allow_external_files;
    for (path, file) in &read {
        let shown = path.display().to_string();
        let (text, document) = match file {
            Ok(file) => file,
            Err((message, hint)) => {
                if args.json {
                    let file = JsonFile {
                        path: &shown,
                        diagnostics: Vec::new(),
                        config_error: None,
                        error: Some(message.clone()),
                    };
                    crate::output::line(&serde_json::to_string(&file)?);
                } else {
                    anstream::eprintln!("{}", render::plain(message, Some(*hint)));
                }
                errors += 1;
                continue;
            }
        };
        let lines = LineIndex::new(text);
        let analysis = invocation.analyze(path, document, text);
        let mut diagnostics: Vec<&Diagnostic> = document.diagnostics.iter().chain(&analysis.diagnostics).collect();
        diagnostics.sort_by_key(|diagnostic| (diagnostic.span.start, diagnostic.span.end));
        let config_hint = match &analysis.config_error {
            Some(volley_engine::ConfigError::UnknownProfile { .. }) => {
                "pass one of the profiles with `-p NAME` (or VOLLEY_PROFILE)"
            }
            _ => "fix the file it names",
        };
        let config_error = analysis.config_error.map(|error| error.to_string());
        if config_error.is_some() {
            errors += 1;
        }
        for diagnostic in &diagnostics {
            match diagnostic.severity {
                Severity::Error => errors += 1,
                Severity::Warning => warnings += 1,
                Severity::Info => {}
            }
        }
        if args.json {
            let file = JsonFile {
                path: &shown,
                diagnostics: diagnostics
                    .iter()
                    .map(|diagnostic| JsonDiagnostic::new(text, &lines, diagnostic))
                    .collect(),
                config_error,
                error: None,
            };
            crate::output::line(&serde_json::to_string(&file)?);
        } else {
            if let Some(error) = &config_error {
                crate::output::line(&format!("{}\n", render::plain(error, Some(config_hint))));
            }
            for diagnostic in &diagnostics {
                crate::output::line(&format!("{}\n", render::human(&shown, text, &lines, diagnostic)));
            }
        }
    }
    if !args.json {
        let files_word = if files.len() == 1 { "file" } else { "files" };
        anstream::eprintln!(
            "checked {} {files_word}: {errors} {}, {warnings} {}",
            files.len(),
            plural(errors, "error"),
            plural(warnings, "warning")
        );
    }
    let failed = errors > 0 || (args.deny_warnings && warnings > 0);
    Ok(if failed { Exit::Failed } else { Exit::Success })
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 { word.to_owned() } else { format!("{word}s") }
}

/// What a file too costly to parse is told.
fn over_budget(shown: &str, exceeded: volley_syntax::Exceeded) -> String {
    format!("`{shown}` was not checked: {}", exceeded.standard_reason())
}
