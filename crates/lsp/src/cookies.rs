//! The cookie jars of a language-server session: one per workspace folder (documents
//! outside every folder share one more), so that every send of a folder carries the
//! cookies of the sends before it, as `volley run` does for one run.
//!
//! A jar is chosen by the engine's rule (`CookieJar::chosen`): the `cookieJar` setting
//! (a file, in the format of `volley run --cookie-jar`; a relative path is taken from
//! the folder), else the `cookies` settings of the folder's configuration, else one in
//! memory. Invariant: two folders whose jar is the same file share one `CookieJar`, so
//! neither overwrites the other's cookies when it saves.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use volley_engine::CookieJar;

/// The jars of the session, made on first use and kept until the setting changes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Jars {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    /// The workspace folders, longest first (the innermost folder holding a file wins).
    folders: Vec<PathBuf>,
    /// The `cookieJar` setting.
    setting: Option<PathBuf>,
    /// By folder (`None`: outside every folder); `None` when the configuration turns
    /// cookies off.
    jars: HashMap<Option<PathBuf>, Option<CookieJar>>,
}

impl Jars {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// Sets the workspace folders (`initialize`, `workspace/didChangeWorkspaceFolders`).
    pub(crate) fn set_folders(&self, folders: impl IntoIterator<Item = PathBuf>) {
        let mut inner = self.lock();
        inner.folders = folders.into_iter().collect();
        inner.folders.sort_by_key(|folder| std::cmp::Reverse(folder.as_os_str().len()));
        inner.folders.dedup();
    }

    /// The workspace folders.
    pub(crate) fn folders(&self) -> Vec<PathBuf> {
        self.lock().folders.clone()
    }

    /// Applies the `cookieJar` setting. A change starts new jars.
    pub(crate) fn set_file(&self, setting: Setting) {
        let file = match setting {
            Setting::Unsaid => return,
            Setting::Nothing => None,
            Setting::File(file) => Some(file),
        };
        let mut inner = self.lock();
        if inner.setting != file {
            inner.setting = file;
            inner.jars.clear();
        }
    }

    /// The jar of the document at `path` (`None` when its configuration turns cookies
    /// off), made on first use; `config` finds the configuration of a folder. An error
    /// says why the jar file cannot be read.
    pub(crate) fn jar_for(
        &self,
        path: Option<&Path>,
        config: impl FnOnce(&Path) -> Option<volley_engine::config::Config>,
    ) -> Result<Option<CookieJar>, String> {
        let mut inner = self.lock();
        let folder = path.and_then(|path| inner.folders.iter().find(|folder| path.starts_with(folder)).cloned());
        if let Some(jar) = inner.jars.get(&folder) {
            return Ok(jar.clone());
        }
        let file = inner.setting.as_ref().map(|file| match &folder {
            Some(folder) if file.is_relative() => folder.join(file),
            _ => file.clone(),
        });
        // The same file as another folder's jar: that jar.
        let shared = file
            .as_deref()
            .and_then(|file| inner.jars.values().flatten().find(|jar| jar.path() == Some(file)).cloned().map(Some));
        let jar = if let Some(jar) = shared {
            jar
        } else {
            let directory = folder.clone().or_else(|| path.and_then(Path::parent).map(Path::to_path_buf));
            let config = match (&file, directory) {
                (None, Some(directory)) => config(&directory),
                _ => None,
            };
            CookieJar::chosen(file.as_deref(), config.as_ref()).map_err(|error| error.to_string())?
        };
        inner.jars.insert(folder, jar.clone());
        Ok(jar)
    }

    /// Empties the jar of the document at `path`, or every jar: how many cookies were
    /// removed, and why a jar file could not be saved empty.
    pub(crate) fn clear(&self, which: Which<'_>) -> (usize, Vec<String>) {
        let inner = self.lock();
        let jars: Vec<CookieJar> = match which {
            Which::Document(path) => {
                let folder =
                    path.and_then(|path| inner.folders.iter().find(|folder| path.starts_with(folder)).cloned());
                inner.jars.get(&folder).cloned().flatten().into_iter().collect()
            }
            Which::Every => inner.jars.values().flatten().cloned().collect(),
        };
        drop(inner);
        let mut files: Vec<PathBuf> = Vec::new();
        let (mut cleared, mut errors) = (0, Vec::new());
        for jar in jars {
            // A jar shared by folders (one file) counts once.
            if let Some(file) = jar.path() {
                if files.iter().any(|seen| seen == file) {
                    continue;
                }
                files.push(file.to_path_buf());
            }
            cleared += jar.len();
            jar.clear();
            if let Err(error) = jar.save() {
                errors.push(error.to_string());
            }
        }
        (cleared, errors)
    }
}

/// Which jars `volley.clearCookies` empties.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Which<'a> {
    /// The jar of the document at this path (a document without one: outside every folder).
    Document(Option<&'a Path>),
    /// Every jar.
    Every,
}

/// What settings say of the cookie jar file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Setting {
    /// Nothing.
    Unsaid,
    /// No file (`null` or `""`).
    Nothing,
    /// This file.
    File(PathBuf),
}

/// The `cookieJar` setting: `{"volley": {"cookieJar": …}}` or `{"cookieJar": …}`.
pub(crate) fn setting(settings: &serde_json::Value) -> Setting {
    let section = settings.get("volley").unwrap_or(settings);
    match section.get("cookieJar") {
        None => Setting::Unsaid,
        Some(value) => value
            .as_str()
            .filter(|path| !path.is_empty())
            .map_or(Setting::Nothing, |path| Setting::File(PathBuf::from(path))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_setting_is_read_from_the_volley_section_or_the_top() {
        assert_eq!(setting(&json!({"volley": {"cookieJar": "a.json"}})), Setting::File(PathBuf::from("a.json")));
        assert_eq!(setting(&json!({"cookieJar": ""})), Setting::Nothing);
        assert_eq!(setting(&json!({"profile": "dev"})), Setting::Unsaid);
    }

    #[test]
    fn the_innermost_folder_decides_and_outside_files_share_one_jar() {
        let jars = Jars::default();
        jars.set_folders([PathBuf::from("/w"), PathBuf::from("/w/inner")]);
        let jar = |path: &str| jars.jar_for(Some(Path::new(path)), |_| None).unwrap().unwrap();
        let url = url::Url::parse("http://127.0.0.1/").unwrap();
        jar("/w/inner/a.http").store(&url, ["k=1"]);
        assert_eq!(jar("/w/inner/deep/b.http").len(), 1);
        assert_eq!(jar("/w/c.http").len(), 0);
        jar("/elsewhere/d.http").store(&url, ["k=2"]);
        assert_eq!(jar("/other/e.http").len(), 1);
        assert_eq!(jars.clear(Which::Document(Some(Path::new("/w/inner/x.http")))), (1, Vec::new()));
        assert_eq!(jars.clear(Which::Every), (1, Vec::new()));
    }
}
