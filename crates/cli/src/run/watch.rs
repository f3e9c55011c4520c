//! `volley run --watch`: the run again each time one of its files changes — the `.http`
//! files (a directory's new ones too), the body, form and script files their requests
//! name, the configuration and `.env` files that apply to them — with the screen
//! cleared first on a terminal, until Ctrl-C.

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::exit::Exit;
use crate::files::collect_files;

/// How often the files are looked at.
const POLL: Duration = Duration::from_millis(250);
/// The files a configuration may be read from, in each directory up to the project root.
const CONFIG_FILES: [&str; 5] =
    ["volley.jsonc", "volley.json", "http-client.env.json", "http-client.private.env.json", ".env"];

/// The modification times and sizes of the files a run of `paths` reads (absent ones included, as
/// `None`, so that creating one counts as a change).
fn snapshot(paths: &[PathBuf]) -> BTreeMap<PathBuf, Option<(SystemTime, u64)>> {
    let mut files: Vec<PathBuf> = collect_files(paths).unwrap_or_default();
    let named: Vec<PathBuf> = files.iter().flat_map(|file| named_files(file)).collect();
    let mut directories: Vec<PathBuf> =
        files.iter().filter_map(|file| std::path::absolute(file).ok()?.parent().map(Path::to_path_buf)).collect();
    directories.sort();
    directories.dedup();
    for directory in directories {
        for ancestor in directory.ancestors() {
            files.extend(CONFIG_FILES.iter().map(|name| ancestor.join(name)));
            if ancestor.join(".git").exists() {
                break;
            }
        }
    }
    files.extend(named);
    files
        .into_iter()
        .map(|path| {
            // The size too: a file system with coarse times still shows most edits.
            let modified =
                std::fs::metadata(&path).and_then(|metadata| Ok((metadata.modified()?, metadata.len()))).ok();
            (path, modified)
        })
        .collect()
}

/// The files the requests of the `.http` file at `path` read (bodies, form and
/// multipart files, scripts), where their paths are written out.
fn named_files(path: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let directory = path.parent().unwrap_or_else(|| Path::new("."));
    let document = volley_syntax::parse(&text);
    document
        .requests()
        .flat_map(volley_syntax::Request::file_paths)
        .map(|relative| volley_engine::io::normalize(&directory.join(relative)))
        .collect()
}

/// Runs `run` now and again after every change, until Ctrl-C: the exit code of the last
/// run then.
pub(crate) async fn watch<F, Fut>(paths: &[PathBuf], mut run: F) -> anyhow::Result<Exit>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Exit>>,
{
    let terminal = std::io::stdout().is_terminal();
    let mut last;
    let mut seen = snapshot(paths);
    let mut changed: Option<PathBuf> = None;
    loop {
        if let Some(path) = &changed {
            if terminal {
                // Clear the screen and go home: the new run reads from the top.
                crate::output::raw(b"\x1b[2J\x1b[H");
            }
            crate::output::error_line(&format!("volley run --watch: `{}` changed, running again", path.display()));
        }
        last = run().await?;
        let word = if matches!(last, Exit::Success) { "passed" } else { "failed" };
        crate::output::error_line(&format!(
            "volley run --watch: the run {word} (exit code {}); watching {} files for changes, Ctrl-C to stop",
            last.code(),
            seen.values().filter(|modified| modified.is_some()).count()
        ));
        changed = loop {
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                _ = tokio::signal::ctrl_c() => return Ok(last),
            }
            let now = snapshot(paths);
            let moved = now
                .iter()
                .find(|(path, modified)| seen.get(*path) != Some(modified))
                .map(|(path, _)| path.clone())
                .or_else(|| seen.keys().find(|path| !now.contains_key(*path)).cloned());
            seen = now;
            if moved.is_some() {
                break moved;
            }
        };
    }
}
