//! Shell completion that knows the project: `volley completions SHELL` prints a script
//! that asks the binary for candidates as the user types (`clap_complete`'s
//! `COMPLETE=SHELL volley -- WORDS…` protocol), so `-p` offers the configuration's
//! profiles and `-n` the request names of the files on the line, beside the subcommands
//! and flags.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};
use clap_complete::env::Shells;

/// The variable the scripts set when they call the binary back.
const VARIABLE: &str = "COMPLETE";
/// Most files read for request names (a completion answers while the user waits).
const MOST_FILES: usize = 200;

/// The script that registers Volley's completion in `shell`.
pub(crate) fn registration(shell: clap_complete::Shell) -> Vec<u8> {
    let name = shell.to_string();
    let mut script = Vec::new();
    if let Some(completer) = Shells::builtins().completer(&name) {
        // The binary is called by name: the script keeps working when volley moves on PATH.
        let _ = completer.write_registration(VARIABLE, "volley", "volley", "volley", &mut script);
    }
    script
}

/// Answers a shell's completion call and exits; returns when the process was not
/// started for one.
pub(crate) fn answer_if_asked(command: fn() -> clap::Command) {
    clap_complete::CompleteEnv::with_factory(command).var(VARIABLE).complete();
}

/// The completer of `-p/--profile`: the profiles of the files on the line (else of the
/// current directory): their configuration's, and those their `.env` files name.
pub(crate) fn profiles() -> ArgValueCompleter {
    ArgValueCompleter::new(|current: &OsStr| {
        let typed = current.to_string_lossy();
        let directory = files_on_line()
            .first()
            .and_then(|file| file.parent().map(Path::to_path_buf))
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let client = volley_engine::Client::new(volley_engine::ClientConfig::default());
        let Ok(profiles) = volley_engine::stages::profiles_for(&client, &directory) else {
            return Vec::new();
        };
        profiles
            .iter()
            .filter(|name| name.starts_with(typed.as_ref()))
            .map(|name| CompletionCandidate::new(name.as_str()))
            .collect()
    })
}

/// The completer of `-n/--name`: the named requests of the files on the line (else of
/// the `.http` files below the current directory), each with its request line as help.
pub(crate) fn request_names() -> ArgValueCompleter {
    ArgValueCompleter::new(|current: &OsStr| {
        let typed = current.to_string_lossy();
        let mut files = files_on_line();
        if files.is_empty() {
            files = crate::files::collect_files(&[PathBuf::from(".")]).unwrap_or_default();
        }
        let mut seen = std::collections::HashSet::new();
        let mut candidates = Vec::new();
        for file in files.iter().take(MOST_FILES) {
            let Ok(text) = std::fs::read_to_string(file) else { continue };
            let document = volley_syntax::parse(&text);
            for request in document.requests() {
                let Some(name) = &request.name else { continue };
                if !name.value.starts_with(typed.as_ref()) || !seen.insert(name.value.clone()) {
                    continue;
                }
                let line = text.get(request.line_span.start..request.line_span.end).unwrap_or_default().trim();
                candidates.push(CompletionCandidate::new(name.value.as_str()).help(Some(line.to_owned().into())));
            }
        }
        candidates
    })
}

/// The `.http` files (directories expanded) among the words the shell passed after
/// `--`: what the command being completed will run.
fn files_on_line() -> Vec<PathBuf> {
    let words: Vec<OsString> = std::env::args_os().skip_while(|word| word != "--").skip(2).collect();
    let paths: Vec<PathBuf> = words
        .iter()
        .map(PathBuf::from)
        .filter(|path| {
            path.is_dir() || path.extension().is_some_and(|ext| ext == "http" || ext == "rest") && path.is_file()
        })
        .collect();
    if paths.is_empty() {
        return Vec::new();
    }
    crate::files::collect_files(&paths).unwrap_or_default()
}
