//! `volley history`: the response history the editors keep and `volley run --history`
//! writes (`run/history.rs`; the `volley-history` crate) listed, shown, diffed and
//! cleared from the terminal, whichever front end sent the responses.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use volley_history::{Entry, Filter, Source, Store};

use crate::exit::Exit;

/// What to do with the history.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum HistoryCommand {
    /// List stored responses, newest first: id, time, who sent it, status, request.
    List(ListArgs),
    /// Print a stored response: status line, headers and body (JSON indented).
    Show {
        /// The entry's id (from `volley history list`).
        id: String,
        /// A file of the project whose history to read (default: the current directory's project).
        #[arg(long, value_name = "FILE")]
        project: Option<PathBuf>,
    },
    /// Compare two stored responses as a unified diff. Without ids, the newest two of
    /// the request given by FILE and --name (or --index); with one id, that one against
    /// the newest response of its request before it.
    Diff(DiffArgs),
    /// Remove the stored responses of FILE, or all of the project's.
    Clear {
        /// The `.http` file whose responses go; without it, every response of the
        /// current directory's project.
        file: Option<PathBuf>,
    },
    /// Print where the current directory's project keeps its history.
    Path,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    /// Only the responses of this `.http` file.
    file: Option<PathBuf>,
    /// Only the responses of the request of this name.
    #[arg(short, long)]
    name: Option<String>,
    /// Only the responses of the request at this position (0-based).
    #[arg(short, long, conflicts_with = "name")]
    index: Option<usize>,
    /// At most this many.
    #[arg(short, long, default_value_t = 20)]
    limit: usize,
    /// One JSON object per entry, as the language server's `volley.history` answers.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct DiffArgs {
    /// The older entry's id, or the `.http` file of the request (with --name or --index).
    first: Option<String>,
    /// The newer entry's id.
    second: Option<String>,
    /// The request of the file, by name.
    #[arg(short, long)]
    name: Option<String>,
    /// The request of the file, by position (0-based).
    #[arg(short, long, conflicts_with = "name")]
    index: Option<usize>,
}

pub(crate) fn run(command: &HistoryCommand) -> anyhow::Result<Exit> {
    match command {
        HistoryCommand::List(args) => list(args),
        HistoryCommand::Show { id, project } => {
            let store = store_of(project.as_deref())?;
            let stored = store.get(id)?.with_context(|| no_entry(id, &store))?;
            let text = std::fs::read_to_string(&stored.text)?;
            crate::output::raw(text.as_bytes());
            Ok(Exit::Success)
        }
        HistoryCommand::Diff(args) => diff(args),
        HistoryCommand::Clear { file } => {
            let store = store_of(file.as_deref())?;
            let absolute = file.as_deref().map(absolute).transpose()?;
            let cleared = store.clear(absolute.as_deref())?;
            crate::output::line(&format!("removed {cleared} stored responses from {}", store.dir().display()));
            Ok(Exit::Success)
        }
        HistoryCommand::Path => {
            let store = store_of(None)?;
            crate::output::line(&store.dir().display().to_string());
            Ok(Exit::Success)
        }
    }
}

fn list(args: &ListArgs) -> anyhow::Result<Exit> {
    let store = store_of(args.file.as_deref())?;
    let file = args.file.as_deref().map(absolute).transpose()?;
    let entries = store.list(&Filter {
        file: file.as_deref(),
        index: args.index,
        name: args.name.as_deref(),
        limit: Some(args.limit),
    })?;
    if args.json {
        for entry in &entries {
            crate::output::line(&serde_json::to_string(entry)?);
        }
        return Ok(Exit::Success);
    }
    if entries.is_empty() {
        crate::output::line(&format!(
            "no stored responses in {} (hint: `volley run --history FILE` or an editor's sends keep them)",
            store.dir().display()
        ));
        return Ok(Exit::Success);
    }
    let root = volley_history::project_root(&std::env::current_dir()?.join("x.http"));
    for entry in &entries {
        crate::output::line(&describe(entry, &root));
    }
    Ok(Exit::Success)
}

/// One line of `volley history list`.
fn describe(entry: &Entry, root: &Path) -> String {
    let outcome = match (&entry.status, &entry.error) {
        (Some(status), _) => status.to_string(),
        (None, Some(error)) => error.kind.clone(),
        (None, None) => "-".to_owned(),
    };
    let file = entry.file.strip_prefix(root).unwrap_or(&entry.file).display().to_string();
    let request =
        entry.request.name.clone().unwrap_or_else(|| format!("{} {}", entry.request.method, entry.request.url));
    let time = entry.at.replace('T', " ");
    let time = time.get(..19).unwrap_or(&time);
    let source = match entry.source {
        Source::Editor => "editor",
        Source::Cli => "cli",
    };
    format!("{}  {time}  {source:<6}  {outcome:<5}  {file}:{}  {request}", entry.id, entry.request.line + 1)
}

fn diff(args: &DiffArgs) -> anyhow::Result<Exit> {
    let looks_like_file =
        |value: &str| Path::new(value).extension().is_some_and(|extension| extension == "http" || extension == "rest");
    let (store, older, newer) = match (&args.first, &args.second) {
        (Some(first), Some(second)) => {
            let store = store_of(None)?;
            (store, first.clone(), second.clone())
        }
        (Some(file), None) if looks_like_file(file) => newest_two(Path::new(file), args)?,
        (Some(id), None) => {
            let store = store_of(None)?;
            let newer = store.get(id)?.with_context(|| no_entry(id, &store))?.entry;
            let before = store
                .list(&Filter { file: Some(&newer.file), index: Some(newer.request.index), ..Filter::default() })?
                .into_iter()
                .find(|entry| entry.id < newer.id)
                .with_context(|| format!("no earlier response of the request of `{id}` to compare with"))?;
            (store, before.id, newer.id)
        }
        (None, _) => anyhow::bail!(
            "say what to compare: two ids, one id (compared with the response before it), or a FILE with --name or --index"
        ),
    };
    let text = |id: &str| -> anyhow::Result<(String, Entry)> {
        let stored = store.get(id)?.with_context(|| no_entry(id, &store))?;
        Ok((std::fs::read_to_string(&stored.text)?, stored.entry))
    };
    let ((old_text, old), (new_text, new)) = (text(&older)?, text(&newer)?);
    let diff = similar::TextDiff::from_lines(&old_text, &new_text);
    if diff.ratio() >= 1.0 {
        crate::output::line(&format!("{} and {} are the same response", old.id, new.id));
        return Ok(Exit::Success);
    }
    let unified = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("{} ({})", old.id, old.at), &format!("{} ({})", new.id, new.at))
        .to_string();
    let styled = unified
        .lines()
        .map(|line| {
            let style = match line.as_bytes().first() {
                Some(b'+') if !line.starts_with("+++") => anstyle::AnsiColor::Green.on_default(),
                Some(b'-') if !line.starts_with("---") => anstyle::AnsiColor::Red.on_default(),
                Some(b'@') => anstyle::AnsiColor::Cyan.on_default(),
                _ => anstyle::Style::new(),
            };
            format!("{style}{line}{style:#}")
        })
        .collect::<Vec<_>>()
        .join("\n");
    crate::output::line(&styled);
    // As diff(1): 1 when the responses differ.
    Ok(Exit::Failed)
}

/// The store of `file`'s project and the ids of its request's newest two responses.
fn newest_two(file: &Path, args: &DiffArgs) -> anyhow::Result<(Store, String, String)> {
    anyhow::ensure!(
        args.name.is_some() || args.index.is_some(),
        "say which request of {} with --name or --index",
        file.display()
    );
    let store = store_of(Some(file))?;
    let absolute = absolute(file)?;
    let entries =
        store.list(&Filter { file: Some(&absolute), index: args.index, name: args.name.as_deref(), limit: Some(2) })?;
    match entries.as_slice() {
        [newer, older] => Ok((store, older.id.clone(), newer.id.clone())),
        _ => anyhow::bail!(
            "the request has {} stored responses in {}; two are needed (hint: send it again, or `volley run --history`)",
            entries.len(),
            store.dir().display()
        ),
    }
}

/// The store of the project of `file`, else of the current directory.
fn store_of(file: Option<&Path>) -> anyhow::Result<Store> {
    let probe = match file {
        Some(file) => absolute(file)?,
        None => std::env::current_dir()?.join("x.http"),
    };
    Store::for_file(&probe).context("no cache directory for the history: neither XDG_CACHE_HOME nor HOME is set")
}

fn absolute(file: &Path) -> anyhow::Result<PathBuf> {
    Ok(std::path::absolute(file)?)
}

fn no_entry(id: &str, store: &Store) -> String {
    format!(
        "no stored response `{id}` in {} (hint: `volley history list`; the last responses of each request are kept)",
        store.dir().display()
    )
}
