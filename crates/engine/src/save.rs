//! Saving a response body where the request says (`>> ./file`: a new file each time,
//! `>>! ./file`: over it), as JetBrains', httpyac's and Kulala's files write it. The
//! path was resolved and checked against the project's root when the request was built.

use std::path::{Path, PathBuf};

use crate::io::Io;
use crate::response::Response;

/// Where one response body goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SaveTarget {
    pub(crate) path: PathBuf,
    /// `>>!`: replace the file; `>>`: a new file beside it when it exists.
    pub(crate) overwrite: bool,
}

/// The most numbered names tried for a new file (`name-1.json` … ).
const MOST_NUMBERS: usize = 10_000;

/// Writes `response`'s body to `target`; the line the run's log gets, saying where or
/// why not.
pub(crate) fn save(io: &dyn Io, target: &SaveTarget, response: &Response) -> String {
    let Some(body) = response.body.read() else {
        return format!(
            "the response was not saved to {}: a streamed response (events, WebSocket) has no body to save",
            target.path.display()
        );
    };
    let path = if target.overwrite { Some(target.path.clone()) } else { free_name(io, &target.path) };
    let Some(path) = path else {
        return format!("the response was not saved: {MOST_NUMBERS} files named like {} exist", target.path.display());
    };
    match io.write(&path, body) {
        Ok(()) => format!("response saved to {} ({} bytes)", path.display(), body.len()),
        Err(error) => format!("the response was not saved to {}: {error}", path.display()),
    }
}

/// `path` when nothing is there, else the first of `name-1.ext`, `name-2.ext`, … that is free.
fn free_name(io: &dyn Io, path: &Path) -> Option<PathBuf> {
    if !io.exists(path) {
        return Some(path.to_path_buf());
    }
    let stem = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    let extension = path.extension().map(|extension| format!(".{}", extension.to_string_lossy())).unwrap_or_default();
    (1..=MOST_NUMBERS)
        .map(|number| path.with_file_name(format!("{stem}-{number}{extension}")))
        .find(|candidate| !io.exists(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_name_is_numbered_before_the_extension() {
        let files = crate::io::MemoryFs::new();
        let path = Path::new("/p/out.json");
        assert_eq!(free_name(&files, path), Some(path.to_path_buf()));
        files.insert(path, "1");
        assert_eq!(free_name(&files, path), Some(PathBuf::from("/p/out-1.json")));
        files.insert("/p/out-1.json", "2");
        assert_eq!(free_name(&files, path), Some(PathBuf::from("/p/out-2.json")));
    }
}
