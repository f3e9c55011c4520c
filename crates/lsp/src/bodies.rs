//! Where the language server writes bodies longer than an outcome keeps (4 MiB): one
//! directory per server under the system's temporary directory, each body a file that
//! the editor opens or copies ("open the full body", "save as") instead of holding it.
//! The newest [`KEPT`] files stay; the directory goes at shutdown.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// How many body files stay: the editor's last responses.
const KEPT: usize = 8;

/// The body files of one server.
#[derive(Debug, Clone)]
pub(crate) struct Bodies {
    dir: PathBuf,
}

impl Default for Bodies {
    fn default() -> Self {
        static SERVERS: AtomicU32 = AtomicU32::new(0);
        let number = SERVERS.fetch_add(1, Ordering::Relaxed);
        Self { dir: std::env::temp_dir().join(format!("volley-lsp-{}-{number}-bodies", std::process::id())) }
    }
}

impl Bodies {
    /// The directory (created by the engine when a body is written).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Removes all but the newest [`KEPT`] body files.
    pub(crate) fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
            .collect();
        if files.len() <= KEPT {
            return;
        }
        files.sort();
        for (_, path) in &files[..files.len() - KEPT] {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Removes the directory and its files (at shutdown).
    pub(crate) fn remove_all(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
