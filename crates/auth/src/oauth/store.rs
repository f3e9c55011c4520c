//! The optional on-disk token cache (`volley run --token-cache`): the tokens of the
//! process's cache written to one JSON file in the user's cache directory, readable by
//! its owner only (0600, its folder 0700), so that a later run reuses a token (or its
//! refresh token) rather than sign in again. A token is filed under the SHA-256 of its
//! configuration, never under the configuration itself (which holds secrets).
//! `volley auth clear` removes the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::token::Token;

/// The file's name in the cache folder.
const FILE_NAME: &str = "tokens.json";

/// The default place: `$XDG_CACHE_HOME/volley/tokens.json`, else
/// `~/.cache/volley/tokens.json` (`%LOCALAPPDATA%\volley` on Windows).
#[must_use]
pub fn default_token_cache() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("LOCALAPPDATA").filter(|_| cfg!(windows)).map(PathBuf::from))
        .or_else(|| {
            std::env::var_os("HOME").filter(|value| !value.is_empty()).map(|home| Path::new(&home).join(".cache"))
        })?;
    Some(base.join("volley").join(FILE_NAME))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    tokens: BTreeMap<String, Stored>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    access: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    /// Seconds since 1970 when it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
}

/// The name a configuration's token is filed under.
fn key_of(cache_key: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, cache_key.as_bytes());
    crate::sigv4::hex(digest.as_ref())
}

fn read(path: &Path) -> File {
    std::fs::read(path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
}

/// The token filed for `cache_key`, with its expiry brought back to this process's clock.
#[must_use]
pub fn load(path: &Path, cache_key: &str) -> Option<Token> {
    let stored = read(path).tokens.remove(&key_of(cache_key))?;
    let now_unix = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    let expires_at = stored.expires_at.map(|at| Instant::now() + Duration::from_secs(at.saturating_sub(now_unix)));
    Some(Token { access: stored.access, refresh: stored.refresh, id: stored.id, expires_at })
}

/// Files `token` for `cache_key`, the file rewritten whole (through a temporary file, so
/// a reader never sees half of it), readable by its owner only. Errors are the
/// caller's to ignore: a cache that cannot be written costs a sign-in, nothing else.
pub fn save(path: &Path, cache_key: &str, token: &Token) -> std::io::Result<()> {
    let mut file = read(path);
    file.version = 1;
    let now = Instant::now();
    let now_unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
    let expires_at = token.expires_at.map(|at| now_unix + at.saturating_duration_since(now).as_secs());
    let stored =
        Stored { access: token.access.clone(), refresh: token.refresh.clone(), id: token.id.clone(), expires_at };
    file.tokens.insert(key_of(cache_key), stored);
    // Drop what expired long ago and cannot be refreshed.
    file.tokens
        .retain(|_, stored| stored.refresh.is_some() || stored.expires_at.is_none_or(|at| at + 86_400 > now_unix));
    let folder = path.parent().unwrap_or_else(|| Path::new("."));
    create_private_folder(folder)?;
    let temporary = folder.join(format!(".{FILE_NAME}.{}", std::process::id()));
    write_private(&temporary, &serde_json::to_vec_pretty(&file).unwrap_or_default())?;
    std::fs::rename(&temporary, path)
}

/// Removes the cache file; whether there was one.
pub fn clear_token_cache(path: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(error),
    }
}

#[cfg(unix)]
fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(folder)
}

#[cfg(not(unix))]
fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    file.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_filed_by_a_hash_readable_by_their_owner_only() {
        let folder = std::env::temp_dir().join(format!("volley-token-store-{}", std::process::id()));
        let path = folder.join("cache").join(FILE_NAME);
        let token = Token {
            access: "access-1".to_owned(),
            refresh: Some("refresh-1".to_owned()),
            id: None,
            expires_at: Some(Instant::now() + Duration::from_secs(600)),
        };
        save(&path, "client_credentials\u{1f}secret-value", &token).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("secret-value"), "the configuration is not in the file: {text}");
        let loaded = load(&path, "client_credentials\u{1f}secret-value").unwrap();
        assert_eq!((loaded.access.as_str(), loaded.refresh.as_deref()), ("access-1", Some("refresh-1")));
        assert!(loaded.fresh(Instant::now(), Duration::from_secs(30)));
        assert!(load(&path, "another configuration").is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        }
        assert!(clear_token_cache(&path).unwrap());
        assert!(!clear_token_cache(&path).unwrap());
        let _ = std::fs::remove_dir_all(folder);
    }
}
