//! The `.http` files a command works on: paths as given, directories searched.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// The files named, with directories expanded to the `.http`/`.rest` files below them
/// (hidden directories, `node_modules` and `target` skipped), in a stable order.
pub(crate) fn collect_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        let metadata = std::fs::metadata(path).with_context(|| format!("cannot read `{}`", path.display()))?;
        if metadata.is_dir() {
            let before = files.len();
            walk(path, &mut files).with_context(|| format!("cannot read directory `{}`", path.display()))?;
            files[before..].sort();
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        bail!("no .http or .rest files found in the given directories");
    }
    Ok(files)
}

fn walk(directory: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(directory)? {
        let path = entry?.path();
        let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && name != "node_modules" && name != "target" {
                walk(&path, files)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "http" || ext == "rest") {
            files.push(path);
        }
    }
    Ok(())
}
