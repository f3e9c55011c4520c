//! The filesystem as the engine sees it: `.http` files, body files, config files. The
//! real disk by default; memory (over the disk, or alone) for the language server and
//! the execution server, which run text that is not saved.

use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use parking_lot::RwLock;

/// Read access to files. Paths are absolute or relative to the process's working
/// directory; the engine resolves references in a `.http` file against its directory
/// before asking.
pub trait Io: Send + Sync + fmt::Debug {
    /// The content of a file.
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>>;

    /// `true` when `path` is a file that [`Io::read`] can read.
    fn is_file(&self, path: &Path) -> bool;

    /// `true` when `path` exists, file or directory (used to find the project root, a
    /// directory with `.git`).
    fn exists(&self, path: &Path) -> bool {
        self.is_file(path)
    }

    /// When the file last changed, if the filesystem knows: a client re-reads a cached
    /// configuration whose files changed. `None` (the default) when it cannot tell;
    /// a configuration is then kept until the engine is told to reload it.
    fn modified(&self, path: &Path) -> Option<SystemTime> {
        let _ = path;
        None
    }

    /// The names of the files in the directory `path` (httpyac's per-environment `.env`
    /// files are found by their names). Empty (the default) when it cannot tell.
    fn file_names(&self, path: &Path) -> Vec<String> {
        let _ = path;
        Vec::new()
    }

    /// Writes `content` to the file `path`, its directories made as needed: a response
    /// saved by `>> ./file`. Refused by default; [`RealFs`] writes to the disk.
    fn write(&self, path: &Path, content: &[u8]) -> std::io::Result<()> {
        let _ = (path, content);
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "this filesystem is read-only"))
    }
}

/// The real filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl Io for RealFs {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn modified(&self, path: &Path) -> Option<SystemTime> {
        std::fs::metadata(path).and_then(|metadata| metadata.modified()).ok()
    }

    fn write(&self, path: &Path, content: &[u8]) -> std::io::Result<()> {
        if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, content)
    }

    fn file_names(&self, path: &Path) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(path) else { return Vec::new() };
        entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file() || kind.is_symlink()))
            .filter_map(|entry| entry.file_name().into_string().ok())
            .collect()
    }
}

/// Files held in memory, optionally over another [`Io`] (usually [`RealFs`]) that
/// answers for the paths memory does not have: an editor's unsaved buffers over the
/// project on disk.
///
/// ```
/// use std::path::Path;
/// use volley_io::{Io, MemoryFs, RealFs};
///
/// let files = MemoryFs::over(RealFs);
/// files.insert("/project/api.http", "GET https://example.com\n");
/// assert_eq!(files.read(Path::new("/project/./api.http")).unwrap(), b"GET https://example.com\n");
/// assert!(files.is_file(Path::new("/project/api.http")));
/// ```
#[derive(Clone, Default)]
pub struct MemoryFs {
    files: Arc<RwLock<HashMap<PathBuf, Versioned>>>,
    fallback: Option<Arc<dyn Io>>,
}

/// The content of a [`MemoryFs`] file that is made when the file is read, not when it
/// is inserted: the language server's unsaved buffer, shared with its document (a
/// rope, cheap to clone) instead of copied into memory after every keystroke.
pub trait Contents: Send + Sync + fmt::Debug {
    /// The file's bytes.
    fn bytes(&self) -> Vec<u8>;
}

impl fmt::Debug for MemoryFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.files.read().len();
        f.debug_struct("MemoryFs").field("files", &count).field("fallback", &self.fallback).finish()
    }
}

impl MemoryFs {
    /// An empty in-memory filesystem with nothing behind it.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// An in-memory filesystem over `fallback`.
    #[must_use]
    pub fn over(fallback: impl Io + 'static) -> Self {
        Self { files: Arc::default(), fallback: Some(Arc::new(fallback)) }
    }

    /// Adds or replaces a file.
    pub fn insert(&self, path: impl AsRef<Path>, content: impl Into<Vec<u8>>) {
        self.insert_held(path.as_ref(), Held::Bytes(content.into()));
    }

    /// Adds or replaces a file whose bytes are made when it is read (see [`Contents`]).
    pub fn insert_contents(&self, path: impl AsRef<Path>, contents: Arc<dyn Contents>) {
        self.insert_held(path.as_ref(), Held::Contents(contents));
    }

    fn insert_held(&self, path: &Path, held: Held) {
        let version = VERSIONS.fetch_add(1, Ordering::Relaxed);
        let replaced = self.files.write().insert(normalize(path), (held, version));
        // A large replaced content is freed after the lock is released.
        drop(replaced);
    }

    /// Removes a file (the fallback answers for it again).
    pub fn remove(&self, path: impl AsRef<Path>) {
        self.files.write().remove(&normalize(path.as_ref()));
    }
}

impl Io for MemoryFs {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let key = normalize(path);
        let held = self.files.read().get(&key).map(|(held, _)| held.clone());
        match held {
            Some(Held::Bytes(content)) => return Ok(content),
            Some(Held::Contents(contents)) => return Ok(contents.bytes()),
            None => {}
        }
        match &self.fallback {
            Some(fallback) => fallback.read(path),
            None => Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file in memory")),
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        let key = normalize(path);
        self.files.read().contains_key(&key) || self.fallback.as_ref().is_some_and(|fallback| fallback.is_file(path))
    }

    fn exists(&self, path: &Path) -> bool {
        let key = normalize(path);
        self.files.read().keys().any(|file| file.starts_with(&key))
            || self.fallback.as_ref().is_some_and(|fallback| fallback.exists(path))
    }

    /// A file in memory changes with each [`MemoryFs::insert`]: its version stands for a
    /// modification time.
    fn modified(&self, path: &Path) -> Option<SystemTime> {
        let key = normalize(path);
        if let Some(version) = self.files.read().get(&key).map(|(_, version)| *version) {
            return Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(version));
        }
        self.fallback.as_ref().and_then(|fallback| fallback.modified(path))
    }

    /// To the filesystem behind, when there is one; else into memory.
    fn write(&self, path: &Path, content: &[u8]) -> std::io::Result<()> {
        if let Some(fallback) = &self.fallback {
            return fallback.write(path, content);
        }
        self.insert(path, content.to_vec());
        Ok(())
    }

    fn file_names(&self, path: &Path) -> Vec<String> {
        let key = normalize(path);
        let mut names: Vec<String> = self
            .files
            .read()
            .keys()
            .filter(|file| file.parent() == Some(key.as_path()))
            .filter_map(|file| file.file_name().and_then(|name| name.to_str()).map(str::to_owned))
            .collect();
        if let Some(fallback) = &self.fallback {
            names.extend(fallback.file_names(path));
        }
        names.sort();
        names.dedup();
        names
    }
}

/// A file's content and the version it got when inserted.
type Versioned = (Held, u64);

/// A [`MemoryFs`] file's content: its bytes, or what makes them when it is read.
#[derive(Debug, Clone)]
enum Held {
    Bytes(Vec<u8>),
    Contents(Arc<dyn Contents>),
}

/// Versions of [`MemoryFs`] files, increasing across all of them.
static VERSIONS: AtomicU64 = AtomicU64::new(1);

/// `path` with `.` removed and `..` applied lexically (no filesystem access).
#[must_use]
pub fn normalize(path: &Path) -> PathBuf {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !normalized.pop() {
                    normalized.push("..");
                }
            }
            other => normalized.push(other),
        }
    }
    normalized
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_answers_before_the_fallback() {
        let directory = std::env::temp_dir().join(format!("volley-io-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let on_disk = directory.join("disk.txt");
        std::fs::write(&on_disk, "disk").unwrap();
        let files = MemoryFs::over(RealFs);
        assert_eq!(files.read(&on_disk).unwrap(), b"disk");
        files.insert(&on_disk, "memory");
        assert_eq!(files.read(&on_disk).unwrap(), b"memory");
        files.remove(&on_disk);
        assert_eq!(files.read(&on_disk).unwrap(), b"disk");

        assert!(MemoryFs::new().read(&on_disk).is_err());
        std::fs::remove_dir_all(&directory).unwrap();
    }

    /// Contents that count how often they are made.
    #[derive(Debug, Default)]
    struct Counted(AtomicU64);

    impl Contents for Counted {
        fn bytes(&self) -> Vec<u8> {
            self.0.fetch_add(1, Ordering::Relaxed);
            b"made".to_vec()
        }
    }

    #[test]
    fn contents_are_made_when_read_not_when_inserted() {
        let files = MemoryFs::new();
        let contents = Arc::new(Counted::default());
        files.insert_contents("/project/api.http", Arc::clone(&contents) as Arc<dyn Contents>);
        assert!(files.is_file(Path::new("/project/api.http")));
        assert_eq!(contents.0.load(Ordering::Relaxed), 0);
        assert_eq!(files.read(Path::new("/project/./api.http")).unwrap(), b"made");
        assert_eq!(contents.0.load(Ordering::Relaxed), 1);
        files.insert("/project/api.http", "bytes");
        assert_eq!(files.read(Path::new("/project/api.http")).unwrap(), b"bytes");
    }

    #[test]
    fn normalizes_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("../x")), PathBuf::from("../x"));
    }
}
