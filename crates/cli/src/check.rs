//! `volley check`: diagnostics for files, without sending anything.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Serialize;
use volley_syntax::{LineIndex, Severity};

use crate::exit::Exit;
use crate::render::{self, JsonDiagnostic};

/// Arguments of `volley check`.
#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// Files to check; a directory is searched for `.http` and `.rest` files.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,

    /// Print one JSON object per file (`{"path", "diagnostics": [...]}`) instead of
    /// compiler-style text.
    #[arg(long)]
    json: bool,

    /// Fail (exit code 3) on warnings too, not only on errors.
    #[arg(long)]
    deny_warnings: bool,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    diagnostics: Vec<JsonDiagnostic<'a>>,
}

pub(crate) fn run(args: &CheckArgs) -> anyhow::Result<Exit> {
    let files = collect_files(&args.paths)?;
    let mut errors = 0usize;
    let mut warnings = 0usize;
    let mut stdout = anstream::stdout().lock();
    for path in &files {
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).with_context(|| format!("cannot read `{shown}`"))?;
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => {
                let at = error.utf8_error().valid_up_to();
                anstream::eprintln!("error: `{shown}` is not UTF-8 text (invalid byte at offset {at})");
                errors += 1;
                continue;
            }
        };
        let document = volley_syntax::parse(&text);
        let lines = LineIndex::new(&text);
        for diagnostic in &document.diagnostics {
            match diagnostic.severity {
                Severity::Error => errors += 1,
                Severity::Warning => warnings += 1,
                Severity::Info => {}
            }
        }
        if args.json {
            let file = JsonFile {
                path: &shown,
                diagnostics: document
                    .diagnostics
                    .iter()
                    .map(|diagnostic| JsonDiagnostic::new(&text, &lines, diagnostic))
                    .collect(),
            };
            writeln!(stdout, "{}", serde_json::to_string(&file)?)?;
        } else {
            for diagnostic in &document.diagnostics {
                writeln!(stdout, "{}\n", render::human(&shown, &text, &lines, diagnostic))?;
            }
        }
    }
    stdout.flush()?;
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
    Ok(if failed { Exit::FileErrors } else { Exit::Success })
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 { word.to_owned() } else { format!("{word}s") }
}

/// The files named, with directories expanded to the `.http`/`.rest` files below them
/// (hidden directories, `node_modules` and `target` skipped), in a stable order.
fn collect_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        let metadata = std::fs::metadata(path).with_context(|| format!("cannot read `{}`", path.display()))?;
        if metadata.is_dir() {
            let before = files.len();
            walk(path, &mut files).with_context(|| format!("cannot read directory `{}`", path.display()))?;
            files[before..].sort();
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        bail!("no .http or .rest files found in the given directories");
    }
    Ok(files)
}

fn walk(directory: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(directory)? {
        let path = entry?.path();
        let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && name != "node_modules" && name != "target" {
                walk(&path, files)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "http" || ext == "rest") {
            files.push(path);
        }
    }
    Ok(())
}
