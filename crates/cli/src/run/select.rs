//! What a run will send: the files read and parsed, the requests selected, and the
//! errors that stop it before anything is sent.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use volley_syntax::{Diagnostic, Document, LineIndex, Severity};

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
    /// Read because a file of the run imports or runs it (`run ./other.http`): its
    /// requests run only where a `run` line says.
    pub(crate) linked: bool,
}

/// One request to send: `request` (0-based) of `files[file]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    pub(crate) file: usize,
    pub(crate) request: usize,
    /// The file of the run whose plan has this step: `file`, or the file of the `run`
    /// line that runs it.
    pub(crate) origin: usize,
    /// What the `run` line sets for it (`run #login (@user=ada)`).
    pub(crate) variables: Option<Arc<Map<String, Value>>>,
}

impl Step {
    /// `request` of `files[file]`, planned for its own file.
    pub(crate) fn of(file: usize, request: usize) -> Self {
        Self { file, request, origin: file, variables: None }
    }
}

/// The steps of each block of `run` lines, by (file, block).
pub(crate) type Runs = HashMap<(usize, usize), Vec<Step>>;

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

    /// A problem of the network, before anything was sent (exit code 4).
    pub(crate) fn transport(message: impl Into<String>, hint: Option<&str>) -> Self {
        Self { exit: Exit::Transport, message: message.into(), hint: hint.map(str::to_owned) }
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
        files.push(File { path, shown, text, document, lines, linked: false });
    }
    Ok(files)
}

/// Which requests of the files a run sends.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Selection<'a> {
    /// Every request of every file.
    All,
    /// The named ones, in the order of `--name`, each file in turn.
    Names(&'a [String]),
    /// The one at this index (0-based) of each file.
    Index(usize),
    /// The one whose block holds this 0-based line of each file.
    Line(u32),
}

/// The requests to send, in order, as `selection` says. `lenient` (a shard's part of the
/// files, checked whole before): a name none of the files has, or no request at all, is
/// no error.
pub(crate) fn plan(
    files: &[File],
    runs: &Runs,
    selection: &Selection<'_>,
    lenient: bool,
) -> Result<Vec<Step>, Problem> {
    let mut steps = Vec::new();
    let names = match *selection {
        Selection::All => &[][..],
        Selection::Names(names) => names,
        Selection::Index(index) => return by_index(files, index),
        Selection::Line(line) => return by_line(files, runs, line),
    };
    let own = || files.iter().enumerate().filter(|(_, file)| !file.linked);
    if names.is_empty() {
        for (number, file) in own() {
            for block in &file.document.blocks {
                match &block.request {
                    Some(request) => steps.push(Step::of(number, request.index)),
                    None => steps.extend(runs.get(&(number, block.index)).into_iter().flatten().cloned()),
                }
            }
        }
        if steps.is_empty() && !lenient {
            return Err(Problem::usage(
                "no requests to run: the files have no request line",
                Some("a request starts with a line like `GET https://example.com`"),
            ));
        }
        return Ok(steps);
    }
    for name in names {
        let before = steps.len();
        for (number, file) in own() {
            if let Some(request) = file.document.request_named(name) {
                steps.push(Step::of(number, request.index));
            }
        }
        if steps.len() == before && !lenient {
            let every: BTreeSet<&str> = own()
                .flat_map(|(_, file)| file.document.requests())
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

/// The request at `index` of each file.
fn by_index(files: &[File], index: usize) -> Result<Vec<Step>, Problem> {
    let mut steps = Vec::new();
    for (number, file) in files.iter().enumerate().filter(|(_, file)| !file.linked) {
        let count = file.document.requests().count();
        if index >= count {
            return Err(Problem::usage(
                format!("`{}` has {count} request(s): there is no index {index}", file.shown),
                Some("--index counts from 0"),
            ));
        }
        steps.push(Step::of(number, index));
    }
    Ok(steps)
}

/// The request whose block holds the 0-based `line` of each file, or what the block's
/// `run` lines run.
fn by_line(files: &[File], runs: &Runs, line: u32) -> Result<Vec<Step>, Problem> {
    let mut steps = Vec::new();
    for (number, file) in files.iter().enumerate().filter(|(_, file)| !file.linked) {
        let hint = "--line counts from 1 and picks the request whose block (from its `###` line to the next) holds it";
        let lines = file.text.lines().count();
        if line as usize >= lines {
            let message = format!("`{}` has {lines} line(s): there is no line {}", file.shown, line + 1);
            return Err(Problem::usage(message, Some(hint)));
        }
        let block = file.document.block_at_line(line);
        if let Some(run) = block.and_then(|block| runs.get(&(number, block.index))) {
            steps.extend(run.iter().cloned());
            continue;
        }
        let Some(request) = block.and_then(|block| block.request.as_deref()) else {
            let message = format!("line {} of `{}` is in a block without a request", line + 1, file.shown);
            return Err(Problem::usage(message, Some(hint)));
        };
        steps.push(Step::of(number, request.index));
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

/// What the diagnostics printed before the run found.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Found {
    /// Errors in the requests to run or outside any request.
    pub(crate) errors: usize,
    /// Errors outside any request (file variables, text that starts no request).
    pub(crate) outside: usize,
    /// Warnings in the requests to run or outside any request.
    pub(crate) warnings: usize,
}

/// Prints, before anything is sent, the parser's diagnostics that concern the run:
/// those in the block of a request to run (not a disabled one) and those outside any
/// request. Warnings are shown and the run goes on (an unknown `# @bogus` must not pass
/// silently). Errors outside any request are shown with a line that counts them. The
/// errors of a request are shown when its turn comes, where it is refused; with
/// `strict` they are all shown here, because nothing will be sent. `--json` gives them
/// all here, in one record per file. Problems in requests that do not run are left to
/// `volley check`.
pub(crate) fn diagnostics(files: &[File], plan: &[Step], mode: Mode, strict: bool) -> Found {
    let mut found = Found::default();
    for (number, file) in files.iter().enumerate() {
        let document = &file.document;
        // By index: `Document::request` walks the blocks from the first.
        let all: Vec<&volley_syntax::Request> = document.requests().collect();
        let requests: Vec<_> = plan
            .iter()
            .filter(|step| step.file == number)
            .filter_map(|step| all.get(step.request).copied())
            .filter(|request| !request.disabled)
            .collect();
        let planned: BTreeSet<usize> = requests.iter().map(|request| request.block).collect();
        let outside_set: HashSet<*const Diagnostic> = document.unowned_errors().map(std::ptr::from_ref).collect();
        let owned: HashSet<*const Diagnostic> =
            requests.iter().flat_map(|request| document.errors_of(request)).map(std::ptr::from_ref).collect();
        let outside = |diagnostic: &Diagnostic| outside_set.contains(&std::ptr::from_ref(diagnostic));
        let concerned: Vec<_> = document
            .diagnostics
            .iter()
            .filter(|diagnostic| match diagnostic.severity {
                Severity::Info => false,
                Severity::Warning => document
                    .block_at(diagnostic.span.start)
                    .is_none_or(|block| block.request.is_none() || planned.contains(&block.index)),
                Severity::Error => outside(diagnostic) || owned.contains(&std::ptr::from_ref(*diagnostic)),
            })
            .collect();
        let errors = concerned.iter().filter(|diagnostic| diagnostic.is_error()).count();
        let outside_errors = concerned.iter().filter(|diagnostic| diagnostic.is_error() && outside(diagnostic)).count();
        found.errors += errors;
        found.outside += outside_errors;
        found.warnings += concerned.iter().filter(|diagnostic| diagnostic.severity == Severity::Warning).count();
        if concerned.is_empty() {
            continue;
        }
        if mode == Mode::Json {
            let record = DiagnosticsRecord {
                kind: "diagnostics",
                file: &file.shown,
                diagnostics: concerned
                    .iter()
                    .map(|diagnostic| JsonDiagnostic::new(&file.text, &file.lines, diagnostic))
                    .collect(),
            };
            crate::output::line(&serde_json::to_string(&record).unwrap_or_default());
            continue;
        }
        for diagnostic in &concerned {
            if strict || !diagnostic.is_error() || outside(diagnostic) {
                anstream::eprintln!("{}\n", render::human(&file.shown, &file.text, &file.lines, diagnostic));
            }
        }
        if strict && errors > 0 {
            let noun = if errors == 1 { "error" } else { "errors" };
            anstream::eprintln!(
                "{}",
                render::plain(&format!("`{}` has {errors} {noun}: nothing was sent", file.shown), None)
            );
        } else if outside_errors > 0 {
            let noun = if outside_errors == 1 { "error" } else { "errors" };
            let message = format!("`{}` has {outside_errors} {noun} outside any request", file.shown);
            let hint = "the requests that use a file variable declared on a line with errors are not sent; the \
                        others run";
            anstream::eprintln!("{}\n", render::plain(&message, Some(hint)));
        }
    }
    found
}
