//! What a run will send: the files read and parsed, the requests selected, and the
//! errors that stop it before anything is sent.

use std::collections::BTreeSet;
use std::path::PathBuf;

use volley_syntax::{Document, LineIndex, Severity};

use super::Mode;
use crate::exit::Exit;
use crate::files::collect_files;
use crate::render::{self, JsonDiagnostic};

/// A `.http` file of the run.
#[derive(Debug)]
pub(crate) struct File {
    /// The path as read.
    pub(crate) path: PathBuf,
    /// The path as shown (as given on the command line).
    pub(crate) shown: String,
    pub(crate) text: String,
    pub(crate) document: Document,
    pub(crate) lines: LineIndex,
}

/// One request to send: `request` (0-based) of `files[file]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) file: usize,
    pub(crate) request: usize,
}

/// Why a run stops before sending anything.
#[derive(Debug)]
pub(crate) struct Problem {
    exit: Exit,
    message: String,
    hint: Option<String>,
}

impl Problem {
    pub(crate) fn usage(message: impl Into<String>, hint: Option<&str>) -> Self {
        Self { exit: Exit::Usage, message: message.into(), hint: hint.map(str::to_owned) }
    }

    pub(crate) fn invalid(message: impl Into<String>, hint: Option<&str>) -> Self {
        Self { exit: Exit::Invalid, message: message.into(), hint: hint.map(str::to_owned) }
    }

    /// Prints the problem to stderr; the exit code it means.
    pub(crate) fn print(self) -> Exit {
        anstream::eprintln!("{}", render::plain(&self.message, self.hint.as_deref()));
        self.exit
    }
}

/// Reads and parses the files (directories expanded).
pub(crate) fn load(paths: &[PathBuf]) -> Result<Vec<File>, Problem> {
    let paths = collect_files(paths).map_err(|error| Problem::usage(format!("{error:#}"), None))?;
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let shown = path.display().to_string();
        let bytes =
            std::fs::read(&path).map_err(|error| Problem::usage(format!("cannot read `{shown}`: {error}"), None))?;
        let text = String::from_utf8(bytes).map_err(|error| {
            let at = error.utf8_error().valid_up_to();
            Problem::usage(format!("`{shown}` is not UTF-8 text (invalid byte at offset {at})"), None)
        })?;
        let document = volley_syntax::parse(&text);
        let lines = LineIndex::new(&text);
        // Absolute, so that messages about files next to it name where they were looked for.
        let path = std::path::absolute(&path).unwrap_or(path);
        files.push(File { path, shown, text, document, lines });
    }
    Ok(files)
}

/// The requests to send, in order: every request of every file; the named ones (in
/// the order of `--name`, each file in turn); or the one at `index` of each file.
pub(crate) fn plan(files: &[File], names: &[String], index: Option<usize>) -> Result<Vec<Step>, Problem> {
    let mut steps = Vec::new();
    if let Some(index) = index {
        for (number, file) in files.iter().enumerate() {
            let count = file.document.requests().count();
            if index >= count {
                return Err(Problem::usage(
                    format!("`{}` has {count} request(s): there is no index {index}", file.shown),
                    Some("--index counts from 0"),
                ));
            }
            steps.push(Step { file: number, request: index });
        }
        return Ok(steps);
    }
    if names.is_empty() {
        for (number, file) in files.iter().enumerate() {
            steps.extend(file.document.requests().map(|request| Step { file: number, request: request.index }));
        }
        if steps.is_empty() {
            return Err(Problem::usage(
                "no requests to run: the files have no request line",
                Some("a request starts with a line like `GET https://example.com`"),
            ));
        }
        return Ok(steps);
    }
    for name in names {
        let before = steps.len();
        for (number, file) in files.iter().enumerate() {
            if let Some(request) = file.document.request_named(name) {
                steps.push(Step { file: number, request: request.index });
            }
        }
        if steps.len() == before {
            let every: BTreeSet<&str> = files
                .iter()
                .flat_map(|file| file.document.requests())
                .filter_map(|request| request.name.as_ref().map(|name| name.value.as_str()))
                .collect();
            let hint = match volley_syntax::closest(name, every.iter().copied()) {
                Some(suggestion) => format!("did you mean `{suggestion}`?"),
                None if every.is_empty() => "no request is named; name one with `# @name login`".to_owned(),
                None => format!("requests: {}", every.into_iter().collect::<Vec<_>>().join(", ")),
            };
            return Err(Problem::usage(format!("no request named `{name}`"), Some(&hint)));
        }
    }
    Ok(steps)
}

/// The `--json` record of a file's diagnostics.
#[derive(serde::Serialize)]
struct DiagnosticsRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    file: &'a str,
    diagnostics: Vec<JsonDiagnostic<'a>>,
}

/// Prints the parser's diagnostics that concern the run: errors and warnings in the
/// block of a planned request, and outside any request (file variables). Errors keep
/// the whole run from sending anything (the exit code is returned); warnings are shown
/// and the run goes on (a misspelt `# @asert` must not pass silently). Problems in
/// requests that do not run are left to `volley check`.
pub(crate) fn diagnostics(files: &[File], plan: &[Step], mode: Mode) -> bool {
    let mut errors = false;
    for (number, file) in files.iter().enumerate() {
        let planned: BTreeSet<usize> = plan
            .iter()
            .filter(|step| step.file == number)
            .filter_map(|step| file.document.request(step.request).map(|request| request.block))
            .collect();
        let shown: Vec<_> = file
            .document
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.severity != Severity::Info)
            .filter(|diagnostic| {
                file.document
                    .block_at(diagnostic.span.start)
                    .is_none_or(|block| block.request.is_none() || planned.contains(&block.index))
            })
            .collect();
        if shown.is_empty() {
            continue;
        }
        let count = shown.iter().filter(|diagnostic| diagnostic.severity == Severity::Error).count();
        errors |= count > 0;
        if mode == Mode::Json {
            let record = DiagnosticsRecord {
                kind: "diagnostics",
                file: &file.shown,
                diagnostics: shown
                    .iter()
                    .map(|diagnostic| JsonDiagnostic::new(&file.text, &file.lines, diagnostic))
                    .collect(),
            };
            crate::output::line(&serde_json::to_string(&record).unwrap_or_default());
            continue;
        }
        for diagnostic in &shown {
            anstream::eprintln!("{}\n", render::human(&file.shown, &file.text, &file.lines, diagnostic));
        }
        if count > 0 {
            let noun = if count == 1 { "error" } else { "errors" };
            anstream::eprintln!(
                "{}",
                render::plain(&format!("`{}` has {count} {noun}: nothing was sent", file.shown), None)
            );
        }
    }
    errors
}
