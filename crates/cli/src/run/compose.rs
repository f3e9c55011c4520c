//! `run` lines (JetBrains, Kulala): what each block of them runs, found by the engine
//! before anything is sent; the files they lead to are read as linked files of the run.

use std::sync::Arc;

use volley_engine::{Client, ClientConfig, Error};
use volley_syntax::LineIndex;

use super::select::{File, Problem, Runs, Step};
use crate::render;

/// The steps of every block of `run` lines of `files`, the files they run from added to
/// `files` as linked ones. A line that cannot be carried out (a name no file has, a
/// missing file, a cycle) is shown at its place and stops the run before anything is
/// sent.
pub(crate) fn link(files: &mut Vec<File>, allow_external_files: bool, remote: bool) -> Result<Runs, Problem> {
    let mut runs = Runs::new();
    if !files.iter().any(|file| file.document.has_runs()) {
        return Ok(runs);
    }
    // Only reads files: nothing is sent through it.
    let reader = Client::new(ClientConfig { allow_external_files, ..ClientConfig::default() });
    for number in 0..files.len() {
        if files[number].linked || !files[number].document.has_runs() {
            continue;
        }
        let blocks: Vec<usize> = files[number]
            .document
            .blocks
            .iter()
            // A block with a request line runs its `run` lines itself, first (the engine).
            .filter(|block| block.request.is_none() && block.runs().next().is_some())
            .map(|block| block.index)
            .collect();
        for block in blocks {
            let file = &files[number];
            let found = volley_engine::stages::run_steps(&reader, &file.document, Some(&file.path), block);
            let found = match found {
                Ok(found) => found,
                Err(error) => return Err(refuse(file, &error)),
            };
            let mut steps = Vec::with_capacity(found.len());
            for step in found {
                let target = match &step.file {
                    None => number,
                    Some(linked) => {
                        if let Some(position) = files.iter().position(|file| file.path == linked.path) {
                            position
                        } else {
                            files.push(linked_file(linked));
                            files.len() - 1
                        }
                    }
                };
                // A server takes variables as values: a template in one would be sent as written.
                if remote
                    && let Some((name, _)) =
                        step.variables.iter().find(|(_, value)| value.as_str().is_some_and(|text| text.contains("{{")))
                {
                    return Err(Problem::usage(
                        format!(
                            "`run` lines of `{}` set `@{name}` to a value with `{{{{ }}}}`, which --server cannot resolve",
                            files[number].shown
                        ),
                        Some("write the value as it is, or run without --server"),
                    ));
                }
                let variables = (!step.variables.is_empty()).then(|| Arc::new(step.variables));
                steps.push(Step { file: target, request: step.request, origin: number, variables });
            }
            runs.insert((number, block), steps);
        }
    }
    Ok(runs)
}

fn linked_file(linked: &volley_engine::compose::Linked) -> File {
    let path = linked.path.clone();
    let shown = std::env::current_dir()
        .ok()
        .and_then(|directory| path.strip_prefix(directory).ok().map(|relative| relative.display().to_string()))
        .unwrap_or_else(|| path.display().to_string());
    File {
        shown,
        text: linked.text.clone(),
        document: linked.document.clone(),
        lines: LineIndex::new(&linked.text),
        path,
        linked: true,
    }
}

/// Shows why a `run` line cannot be carried out, at its place; the run stops.
fn refuse(file: &File, error: &Error) -> Problem {
    let (span, message) = match error {
        Error::Build(build) => (Some(build.span()), build.message()),
        other => (None, other.to_string()),
    };
    if let Error::Build(build) = error {
        let diagnostic = volley_engine::compose::diagnostic(build);
        anstream::eprintln!("{}\n", render::human(&file.shown, &file.text, &file.lines, &diagnostic));
    }
    Problem::invalid(
        format!("`{}` has a `run` line that cannot be carried out: nothing was sent", file.shown),
        (span.is_none()).then_some(message.as_str()),
    )
}
