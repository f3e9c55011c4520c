//! The response history: every response an editor sends (through `volley lsp`) and every
//! response of `volley run --history` is kept in one store per project, so that any two
//! can be opened and compared, whichever front end sent them.
//!
//! A store is a directory under the user's cache (`$XDG_CACHE_HOME/volley/history/`,
//! else `~/.cache/volley/history/`), one per project root ([`project_root`]: the nearest
//! directory above the file with a `volley.jsonc`, a `.git` or an `http-client.env.json`).
//! It holds `index.jsonl` (one [`Entry`] per line, oldest first) and, per entry, its
//! headers and body. It is bounded: the last [`Limits::per_request`] responses of each
//! request, at most [`Limits::max_bytes`] in all, each body at most [`Limits::max_body`]
//! (oldest dropped first). Writers take an advisory lock, so an editor and a terminal
//! run can record at once.
//!
//! What is recorded is what the caller passes: the callers redact secrets first, as
//! everywhere else.

mod pretty;

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

pub use pretty::pretty_json;

/// How much a store keeps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Responses kept per request (of one file, by name or else by position).
    pub per_request: usize,
    /// Bytes of headers and bodies kept in all.
    pub max_bytes: u64,
    /// Bytes of one body kept (the rest is cut, and the entry says so).
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { per_request: 10, max_bytes: 100 * 1024 * 1024, max_body: 16 * 1024 * 1024 }
    }
}

/// Who sent a recorded response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// An editor, through the language server.
    Editor,
    /// `volley run --history`.
    Cli,
}

/// Which request of which file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRef {
    /// 0-based position among the file's requests.
    pub index: usize,
    /// `# @name`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The method.
    pub method: String,
    /// The URL as written.
    pub url: String,
    /// The request line, 0-based.
    pub line: u32,
}

/// Why a send has no response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The error's kind (`connection_refused`, `timeout`, …).
    pub kind: String,
    /// What happened.
    pub message: String,
}

/// One stored response, as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Unique in the store; sorts by time.
    pub id: String,
    /// When it was recorded: RFC 3339, UTC, milliseconds.
    pub at: String,
    /// Who sent it.
    pub source: Source,
    /// The `.http` file, absolute.
    pub file: PathBuf,
    /// Which request.
    pub request: RequestRef,
    /// The status code, when there is a response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The reason phrase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_text: Option<String>,
    /// `HTTP/1.1`, `HTTP/2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_version: Option<String>,
    /// The `Content-Type` of the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Why there is no response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Failure>,
    /// From sending to the end of the body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// The bytes of the body kept.
    pub body_bytes: u64,
    /// The body was longer than what is kept (by the sender or by the store).
    pub truncated: bool,
    /// The bytes of headers and body on disk, for the store's bound.
    #[serde(default)]
    pub stored_bytes: u64,
}

/// A response to record.
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    /// The status code.
    pub status: u16,
    /// The reason phrase.
    pub status_text: &'a str,
    /// `HTTP/1.1`, `HTTP/2`.
    pub http_version: &'a str,
    /// In order, repeated names kept, secrets already hidden.
    pub headers: &'a [(String, String)],
    /// The body (or what the sender kept of it), secrets already hidden.
    pub body: &'a [u8],
    /// The sender kept only part of the body.
    pub truncated: bool,
}

/// What [`Store::record`] stores.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    /// Who sent it.
    pub source: Source,
    /// The `.http` file, absolute.
    pub file: &'a Path,
    /// Which request.
    pub request: RequestRef,
    /// The response, or why there is none.
    pub outcome: Result<Response<'a>, Failure>,
    /// From sending to the end of the body.
    pub duration_ms: Option<f64>,
}

/// Which entries [`Store::list`] answers.
#[derive(Debug, Clone, Default)]
pub struct Filter<'a> {
    /// Of this file only.
    pub file: Option<&'a Path>,
    /// Of the request at this position only.
    pub index: Option<usize>,
    /// Of the request of this name only.
    pub name: Option<&'a str>,
    /// At most this many (the newest).
    pub limit: Option<usize>,
}

/// One entry with the files that hold it.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The entry.
    pub entry: Entry,
    /// The response as text, for reading and for diffing: the status line, the headers,
    /// a blank line and the body (JSON indented).
    pub text: PathBuf,
    /// The body's bytes as stored (absent for an error).
    pub body: Option<PathBuf>,
}

/// A history directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    limits: Limits,
}

/// The project root of a `.http` file: the nearest directory at or above the file's
/// with a `volley.jsonc` (or `volley.json`), a `.git` or an `http-client.env.json`; else
/// the file's directory. The language server and the CLI find the same one.
#[must_use]
pub fn project_root(file: &Path) -> PathBuf {
    let start = file.parent().unwrap_or(file);
    for directory in start.ancestors() {
        let marked = ["volley.jsonc", "volley.json", ".git", "http-client.env.json"]
            .iter()
            .any(|marker| directory.join(marker).exists());
        if marked {
            return directory.to_path_buf();
        }
    }
    start.to_path_buf()
}

/// The history directory of a project root: `$XDG_CACHE_HOME/volley/history/NAME-HASH`
/// (else under `$HOME/.cache`), where NAME is the root's last component and HASH a hash
/// of its whole path. `None` without either variable.
#[must_use]
pub fn default_dir(root: &Path) -> Option<PathBuf> {
    let cache =
        std::env::var_os("XDG_CACHE_HOME").filter(|value| !value.is_empty()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|value| !value.is_empty()).map(|home| Path::new(&home).join(".cache"))
        })?;
    let name: String = root.file_name().map_or_else(
        || "root".to_owned(),
        |name| name.to_string_lossy().chars().map(|c| if c.is_alphanumeric() || c == '-' { c } else { '_' }).collect(),
    );
    Some(
        cache
            .join("volley")
            .join("history")
            .join(format!("{name}-{:016x}", fnv1a(root.as_os_str().as_encoded_bytes()))),
    )
}

/// FNV-1a, 64 bits: a hash that stays the same across builds (the directory name must).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

const INDEX: &str = "index.jsonl";

impl Store {
    /// The store in `dir` (created on the first record).
    #[must_use]
    pub fn new(dir: PathBuf, limits: Limits) -> Self {
        Self { dir, limits }
    }

    /// The store of the project of `file`, with the default limits; `None` when there is
    /// no cache directory.
    #[must_use]
    pub fn for_file(file: &Path) -> Option<Self> {
        default_dir(&project_root(file)).map(|dir| Self::new(dir, Limits::default()))
    }

    /// Where it is.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stores a response (or a failure), then drops what is over the limits. Answers the
    /// new entry.
    pub fn record(&self, record: &Record<'_>) -> io::Result<Entry> {
        fs::create_dir_all(&self.dir)?;
        let _lock = self.lock()?;
        let id = new_id();
        let mut entry = Entry {
            id: id.clone(),
            at: now(),
            source: record.source,
            file: record.file.to_path_buf(),
            request: record.request.clone(),
            status: None,
            status_text: None,
            http_version: None,
            content_type: None,
            error: None,
            duration_ms: record.duration_ms,
            body_bytes: 0,
            truncated: false,
            stored_bytes: 0,
        };
        match &record.outcome {
            Ok(response) => {
                let kept = &response.body[..response.body.len().min(self.limits.max_body)];
                let headers = serde_json::to_vec(response.headers)?;
                write_new(&self.dir.join(format!("{id}.headers.json")), &headers)?;
                write_new(&self.dir.join(format!("{id}.body")), kept)?;
                entry.status = Some(response.status);
                entry.status_text = Some(response.status_text.to_owned()).filter(|text| !text.is_empty());
                entry.http_version = Some(response.http_version.to_owned()).filter(|text| !text.is_empty());
                entry.content_type = response
                    .headers
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
                    .map(|(_, value)| value.clone());
                entry.body_bytes = kept.len() as u64;
                entry.truncated = response.truncated || kept.len() < response.body.len();
                entry.stored_bytes = (headers.len() + kept.len()) as u64;
            }
            Err(failure) => entry.error = Some(failure.clone()),
        }
        let mut entries = self.read_index()?;
        entries.push(entry.clone());
        let dropped = self.prune(&mut entries);
        self.write_index(&entries)?;
        for old in dropped {
            self.remove_files(&old.id);
        }
        Ok(entry)
    }

    /// The entries that match `filter`, newest first.
    pub fn list(&self, filter: &Filter<'_>) -> io::Result<Vec<Entry>> {
        let mut entries: Vec<Entry> = self
            .read_index()?
            .into_iter()
            .rev()
            .filter(|entry| filter.file.is_none_or(|file| entry.file == file))
            .filter(|entry| filter.index.is_none_or(|index| entry.request.index == index))
            .filter(|entry| filter.name.is_none_or(|name| entry.request.name.as_deref() == Some(name)))
            .collect();
        if let Some(limit) = filter.limit {
            entries.truncate(limit);
        }
        Ok(entries)
    }

    /// The entry `id` with its files (the text view written on first use); `None` when
    /// the store has no such entry.
    pub fn get(&self, id: &str) -> io::Result<Option<Stored>> {
        let Some(entry) = self.read_index()?.into_iter().find(|entry| entry.id == id) else {
            return Ok(None);
        };
        let text = self.dir.join(format!("{id}.txt"));
        let body = entry.error.is_none().then(|| self.dir.join(format!("{id}.body")));
        if !text.exists() {
            let view = self.text_view(&entry)?;
            fs::write(&text, view)?;
        }
        Ok(Some(Stored { entry, text, body }))
    }

    /// Removes the entries of `file` (every entry without one); answers how many.
    pub fn clear(&self, file: Option<&Path>) -> io::Result<usize> {
        if !self.dir.join(INDEX).exists() {
            return Ok(0);
        }
        let _lock = self.lock()?;
        let (gone, kept): (Vec<Entry>, Vec<Entry>) =
            self.read_index()?.into_iter().partition(|entry| file.is_none_or(|file| entry.file == file));
        self.write_index(&kept)?;
        for entry in &gone {
            self.remove_files(&entry.id);
        }
        Ok(gone.len())
    }

    /// The response of `entry` as text: the status line (or the error), the headers, a
    /// blank line, the body (JSON indented, binary named by its size).
    fn text_view(&self, entry: &Entry) -> io::Result<String> {
        let mut view = String::new();
        if let Some(error) = &entry.error {
            let _ = writeln!(view, "error ({}): {}", error.kind, error.message);
            return Ok(view);
        }
        let version = entry.http_version.as_deref().unwrap_or("HTTP/1.1");
        let status = entry.status.unwrap_or_default();
        view.push_str(
            &format!("{version} {status} {}\n", entry.status_text.as_deref().unwrap_or_default()).replace(" \n", "\n"),
        );
        let headers: Vec<(String, String)> =
            serde_json::from_slice(&fs::read(self.dir.join(format!("{}.headers.json", entry.id)))?).unwrap_or_default();
        for (name, value) in &headers {
            let _ = writeln!(view, "{name}: {value}");
        }
        view.push('\n');
        let body = fs::read(self.dir.join(format!("{}.body", entry.id)))?;
        match std::str::from_utf8(&body) {
            Ok(text) => {
                let json = entry.content_type.as_deref().is_some_and(|kind| kind.contains("json"))
                    || matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['));
                match json.then(|| pretty_json(text)).flatten() {
                    Some(pretty) => view.push_str(&pretty),
                    None => view.push_str(text),
                }
            }
            Err(_) => {
                let _ = write!(view, "[{} bytes of binary data]", body.len());
            }
        }
        if !view.ends_with('\n') {
            view.push('\n');
        }
        if entry.truncated {
            let _ = writeln!(view, "[the body was cut: {} bytes kept]", entry.body_bytes);
        }
        Ok(view)
    }

    /// Drops the entries over the limits (oldest first), answering them.
    fn prune(&self, entries: &mut Vec<Entry>) -> Vec<Entry> {
        let mut keep = vec![true; entries.len()];
        let mut seen: std::collections::HashMap<(PathBuf, String), usize> = std::collections::HashMap::new();
        for (position, entry) in entries.iter().enumerate().rev() {
            let key = entry.request.name.clone().unwrap_or_else(|| format!("#{}", entry.request.index));
            let count = seen.entry((entry.file.clone(), key)).or_default();
            *count += 1;
            if *count > self.limits.per_request {
                keep[position] = false;
            }
        }
        let mut total: u64 =
            entries.iter().zip(&keep).filter(|(_, kept)| **kept).map(|(entry, _)| entry.stored_bytes).sum();
        for (position, entry) in entries.iter().enumerate() {
            if total <= self.limits.max_bytes {
                break;
            }
            // The newest entry stays, whatever its size.
            if keep[position] && position + 1 < entries.len() {
                keep[position] = false;
                total -= entry.stored_bytes;
            }
        }
        let mut dropped = Vec::new();
        let mut position = 0;
        entries.retain(|entry| {
            let kept = keep[position];
            position += 1;
            if !kept {
                dropped.push(entry.clone());
            }
            kept
        });
        dropped
    }

    fn read_index(&self) -> io::Result<Vec<Entry>> {
        let file = match File::open(self.dir.join(INDEX)) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(error),
        };
        // A line that does not read (written by another version) is skipped, not fatal.
        Ok(BufReader::new(file)
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_str(&line).ok())
            .collect())
    }

    fn write_index(&self, entries: &[Entry]) -> io::Result<()> {
        let temporary = self.dir.join(format!(".{INDEX}.{}.tmp", std::process::id()));
        {
            let mut file = io::BufWriter::new(File::create(&temporary)?);
            for entry in entries {
                serde_json::to_writer(&mut file, entry)?;
                file.write_all(b"\n")?;
            }
            file.flush()?;
        }
        fs::rename(temporary, self.dir.join(INDEX))
    }

    fn remove_files(&self, id: &str) {
        for suffix in ["headers.json", "body", "txt"] {
            let _ = fs::remove_file(self.dir.join(format!("{id}.{suffix}")));
        }
    }

    /// The store's advisory lock, held until the answer is dropped.
    fn lock(&self) -> io::Result<File> {
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(self.dir.join(".lock"))?;
        file.lock()?;
        Ok(file)
    }
}

fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)
}

/// A new entry id: the time in milliseconds, the process and a counter, so that ids
/// sort by time and never collide between an editor and a terminal run.
fn new_id() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let millis = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    format!("{millis:013}-{:x}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

fn now() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        now.millisecond()
    )
}

#[cfg(test)]
mod tests;
