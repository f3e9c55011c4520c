//! The workspace: the one directory the server reads from. Paths from clients are
//! relative to it; absolute paths, `..` escapes and symlinks that lead out are refused,
//! and the engine reads through [`WorkspaceFs`], which refuses them too (a `< file`
//! body reference in submitted text cannot read `/etc/passwd`).

use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use volley_engine::Io;
use volley_engine::io::RealFs;
use volley_protocol::ErrorCode;

use crate::error::ApiError;

/// Marks a read refused because the path is outside the workspace.
#[derive(Debug)]
pub(crate) struct OutsideWorkspace;

impl std::fmt::Display for OutsideWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the path is outside the workspace")
    }
}

impl std::error::Error for OutsideWorkspace {}

/// The workspace root, canonical.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    pub(crate) root: PathBuf,
}

impl Workspace {
    pub(crate) fn new(root: &Path) -> std::io::Result<Self> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"));
        }
        Ok(Self { root })
    }

    /// `relative` inside the workspace, canonical; 403 for escapes, 404 when missing.
    pub(crate) fn resolve(&self, relative: &str) -> Result<PathBuf, ApiError> {
        let path = Path::new(relative);
        let escapes = path.is_absolute()
            || path.components().any(|component| matches!(component, Component::ParentDir | Component::Prefix(_)));
        if escapes {
            return Err(ApiError::outside_workspace(relative));
        }
        let joined = self.root.join(path);
        let canonical = joined.canonicalize().map_err(|_| {
            ApiError::new(
                http::StatusCode::NOT_FOUND,
                ErrorCode::FileNotFound,
                format!("`{relative}` does not exist in the workspace"),
            )
        })?;
        if !canonical.starts_with(&self.root) {
            return Err(ApiError::outside_workspace(relative));
        }
        Ok(canonical)
    }

    /// Where a file that does not exist yet would be created: `relative` refused as in
    /// [`resolve`](Self::resolve), and its deepest existing directory, symlinks
    /// followed, inside the workspace. The directories after it do not exist, so none of
    /// them is a link. 400 when the path names the workspace itself or ends in `.`.
    pub(crate) fn resolve_new(&self, relative: &str) -> Result<PathBuf, ApiError> {
        let path = Path::new(relative);
        let escapes = path.is_absolute()
            || path.components().any(|component| matches!(component, Component::ParentDir | Component::Prefix(_)));
        if escapes {
            return Err(ApiError::outside_workspace(relative));
        }
        let parts: Vec<&std::ffi::OsStr> = path
            .components()
            .filter_map(|component| match component {
                Component::Normal(part) => Some(part),
                _ => None,
            })
            .collect();
        if parts.is_empty() || relative.ends_with('/') {
            return Err(ApiError::validation(format!("`{relative}` does not name a file")));
        }
        let mut existing = self.root.clone();
        let mut rest = parts.as_slice();
        while let Some((first, others)) = rest.split_first() {
            let next = existing.join(first);
            if std::fs::symlink_metadata(&next).is_err() {
                break;
            }
            existing = next;
            rest = others;
        }
        let canonical = existing.canonicalize().map_err(|error| ApiError::internal(&error))?;
        if !canonical.starts_with(&self.root) {
            return Err(ApiError::outside_workspace(relative));
        }
        Ok(rest.iter().fold(canonical, |path, part| path.join(part)))
    }

    /// Whether `path` (absolute) is inside the workspace once symlinks are followed;
    /// a path that does not exist is judged by its text.
    pub(crate) fn contains(&self, path: &Path) -> bool {
        self.lexically_contains(path) && self.really_contains(path)
    }

    /// Whether the path's text, `.` and `..` resolved, is inside (no filesystem access).
    fn lexically_contains(&self, path: &Path) -> bool {
        volley_engine::io::normalize(path).starts_with(&self.root)
    }

    /// Whether the path is inside once its symlinks are followed (a path that does not
    /// exist is judged by its text).
    fn really_contains(&self, path: &Path) -> bool {
        match path.canonicalize() {
            Ok(canonical) => canonical.starts_with(&self.root),
            Err(_) => true,
        }
    }
}

/// The real filesystem, limited to the workspace.
#[derive(Debug, Clone)]
pub(crate) struct WorkspaceFs {
    pub(crate) workspace: Workspace,
}

impl Io for WorkspaceFs {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        if !self.workspace.contains(path) {
            return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, OutsideWorkspace));
        }
        RealFs.read(path)
    }

    // Existence first: configuration discovery probes mostly files that are not there,
    // and one `stat` answers that; only what exists is followed through its symlinks.
    fn is_file(&self, path: &Path) -> bool {
        self.workspace.lexically_contains(path) && RealFs.is_file(path) && self.workspace.really_contains(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.workspace.lexically_contains(path) && RealFs.exists(path) && self.workspace.really_contains(path)
    }

    fn modified(&self, path: &Path) -> Option<SystemTime> {
        if self.workspace.contains(path) { RealFs.modified(path) } else { None }
    }

    fn file_names(&self, path: &Path) -> Vec<String> {
        if self.workspace.contains(path) { RealFs.file_names(path) } else { Vec::new() }
    }

    /// Inside the workspace only (a response saved by `>> ./file`).
    fn write(&self, path: &Path, content: &[u8]) -> std::io::Result<()> {
        let parent = path.parent().unwrap_or(path);
        let inside = self.workspace.lexically_contains(path)
            && std::iter::successors(Some(parent), |directory| directory.parent())
                .find(|directory| directory.exists())
                .is_some_and(|existing| self.workspace.really_contains(existing));
        if !inside {
            return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, OutsideWorkspace));
        }
        RealFs.write(path, content)
    }
}

/// Whether an engine file error is a refused read outside the workspace.
pub(crate) fn is_outside(error: &std::io::Error) -> bool {
    error.get_ref().is_some_and(<dyn std::error::Error + Send + Sync>::is::<OutsideWorkspace>)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_refused() {
        let directory = std::env::temp_dir().join(format!("volley-ws-{}", std::process::id()));
        let root = directory.join("root");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("sub/a.http"), "GET http://x\n").expect("write");
        std::fs::write(directory.join("outside.txt"), "secret").expect("write");
        let workspace = Workspace::new(&root).expect("workspace");
        assert!(workspace.resolve("sub/a.http").is_ok());
        for path in ["/etc/passwd", "../outside.txt", "sub/../../outside.txt"] {
            assert_eq!(workspace.resolve(path).expect_err(path).code, "PATH_OUTSIDE_WORKSPACE", "{path}");
        }
        assert_eq!(workspace.resolve("missing.http").expect_err("missing").code, "FILE_NOT_FOUND");
        assert_eq!(workspace.resolve_new("new/dir/c.http").expect("new"), workspace.root.join("new/dir/c.http"));
        for path in ["/tmp/c.http", "../c.http", "sub/../../c.http"] {
            assert_eq!(workspace.resolve_new(path).expect_err(path).code, "PATH_OUTSIDE_WORKSPACE", "{path}");
        }
        assert_eq!(workspace.resolve_new(".").expect_err("the root").code, "VALIDATION_ERROR");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(directory.join("outside.txt"), root.join("link.txt")).expect("symlink");
            assert_eq!(workspace.resolve("link.txt").expect_err("link").code, "PATH_OUTSIDE_WORKSPACE");
            std::os::unix::fs::symlink(&directory, root.join("out")).expect("symlink");
            assert_eq!(workspace.resolve_new("out/c.http").expect_err("out").code, "PATH_OUTSIDE_WORKSPACE");
            let fs = WorkspaceFs { workspace: workspace.clone() };
            let refused = fs.read(&workspace.root.join("link.txt")).expect_err("refused");
            assert!(is_outside(&refused));
        }
        let fs = WorkspaceFs { workspace: workspace.clone() };
        assert!(is_outside(&fs.read(&directory.join("outside.txt")).expect_err("outside")));
        assert!(fs.read(&workspace.root.join("sub/a.http")).is_ok());
        let _ = std::fs::remove_dir_all(&directory);
    }
}
