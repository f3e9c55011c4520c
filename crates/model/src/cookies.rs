//! The cookie jar: RFC 6265 storage and matching (domain, path, secure, expiry) by the
//! `cookie_store` crate, cookies taken from every response of a redirect chain, and
//! optional persistence to a JSON file written atomically.

use std::fmt;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cookie_store::{CookieStore, RawCookie};
use parking_lot::{Mutex, MutexGuard};

/// A cookie jar shared by every request of a client (clones share the jar).
///
/// ```
/// use volley_model::CookieJar;
///
/// let jar = CookieJar::new();
/// let url = url::Url::parse("https://example.com/app").unwrap();
/// jar.store(&url, ["session=abc; Path=/; HttpOnly"]);
/// assert_eq!(jar.header_for(&url).as_deref(), Some("session=abc"));
/// assert_eq!(jar.header_for(&url::Url::parse("https://other.example.org/").unwrap()), None);
/// ```
#[derive(Clone, Default)]
pub struct CookieJar {
    store: Arc<Mutex<CookieStore>>,
    path: Option<Arc<PathBuf>>,
}

impl fmt::Debug for CookieJar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CookieJar").field("cookies", &self.len()).field("path", &self.path).finish_non_exhaustive()
    }
}

/// A cookie jar file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[error("cookie jar `{}`: {message}", path.display())]
pub struct CookieJarError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// A configuration's `cookies` (`volley.jsonc`): whether to keep a jar, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieSettings {
    /// `enabled` (default `true`): whether front ends keep a cookie jar.
    pub enabled: bool,
    /// `jarPath`: where the jar is persisted, resolved against the config's directory.
    pub jar_path: Option<PathBuf>,
}

impl Default for CookieSettings {
    fn default() -> Self {
        Self { enabled: true, jar_path: None }
    }
}

/// `(domain, path, name, value)` of a cookie of the store.
fn held(cookie: &cookie_store::Cookie<'_>) -> (String, String, String, String) {
    let domain = cookie.domain().unwrap_or_default().to_owned();
    let path = cookie.path().unwrap_or_default().to_owned();
    (domain, path, cookie.name().to_owned(), cookie.value().to_owned())
}

impl CookieJar {
    /// An empty jar in memory.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A jar persisted to `path`: loaded now when the file exists, written by
    /// [`CookieJar::save`] (the engine saves after every request that changed it).
    pub fn persistent(path: impl Into<PathBuf>) -> Result<Self, CookieJarError> {
        let path = path.into();
        let store = match std::fs::File::open(&path) {
            Ok(file) => cookie_store::serde::json::load_all(BufReader::new(file))
                .map_err(|error| CookieJarError { path: path.clone(), message: format!("cannot load: {error}") })?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => CookieStore::default(),
            Err(error) => return Err(CookieJarError { path, message: format!("cannot read: {error}") }),
        };
        Ok(Self { store: Arc::new(Mutex::new(store)), path: Some(Arc::new(path)) })
    }

    /// The jar a configuration's `cookies` settings ask for: none when disabled, a
    /// persistent jar at `jarPath`, else one in memory. Front ends call this so that
    /// they all read the settings the same way.
    pub fn from_settings(settings: &CookieSettings) -> Result<Option<Self>, CookieJarError> {
        if !settings.enabled {
            return Ok(None);
        }
        match &settings.jar_path {
            Some(path) => Self::persistent(path).map(Some),
            None => Ok(Some(Self::new())),
        }
    }

    /// The jar of a run, by the rule every front end follows: the file `explicit` names
    /// (`volley run --cookie-jar`, the language server's `cookieJar` setting), else what
    /// the configuration's `cookies` settings ask for ([`CookieJar::from_settings`]),
    /// else one in memory.
    ///
    /// `config` is the engine's `Config` (whose `cookies` it reads), or anything else
    /// that has [`CookieSettings`].
    pub fn chosen(
        explicit: Option<&Path>,
        config: Option<&impl AsRef<CookieSettings>>,
    ) -> Result<Option<Self>, CookieJarError> {
        match (explicit, config) {
            (Some(path), _) => Self::persistent(path).map(Some),
            (None, Some(config)) => Self::from_settings(config.as_ref()),
            (None, None) => Ok(Some(Self::new())),
        }
    }

    /// The file the jar is persisted to, if any.
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref().map(PathBuf::as_path)
    }

    fn lock(&self) -> MutexGuard<'_, CookieStore> {
        self.store.lock()
    }

    /// The `Cookie` header value for a request to `url`, when any cookie matches.
    #[must_use]
    pub fn header_for(&self, url: &url::Url) -> Option<String> {
        let store = self.lock();
        let pairs: Vec<String> = store.get_request_values(url).map(|(name, value)| format!("{name}={value}")).collect();
        (!pairs.is_empty()).then(|| pairs.join("; "))
    }

    /// Stores the cookies of `Set-Cookie` header values received from `url`; returns
    /// how many were accepted.
    pub fn store<'a>(&self, url: &url::Url, set_cookie: impl IntoIterator<Item = &'a str>) -> usize {
        let cookies: Vec<RawCookie<'static>> =
            set_cookie.into_iter().filter_map(|value| RawCookie::parse(value.to_owned()).ok()).collect();
        let count = cookies.len();
        if count > 0 {
            self.lock().store_response_cookies(cookies.into_iter(), url);
        }
        count
    }

    /// Number of unexpired cookies.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().iter_unexpired().count()
    }

    /// `true` when the jar holds no unexpired cookie.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(domain, path, name, value)` of every unexpired cookie.
    #[must_use]
    pub fn cookies(&self) -> Vec<(String, String, String, String)> {
        self.lock().iter_unexpired().map(held).collect()
    }

    /// `(domain, path, name, value)` of the unexpired cookies a request to `url` sends.
    #[must_use]
    pub fn cookies_for(&self, url: &url::Url) -> Vec<(String, String, String, String)> {
        self.lock().matches(url).into_iter().map(held).collect()
    }

    /// Removes every cookie.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Every cookie (session cookies included) as the JSON text a persistent jar's file
    /// holds: what a server sharing its sessions between instances stores.
    #[must_use]
    pub fn to_json(&self) -> String {
        let mut content = Vec::new();
        // Writing into a vector fails only when a cookie does not serialise.
        let _ = cookie_store::serde::json::save_incl_expired_and_nonpersistent(&self.lock(), &mut content);
        String::from_utf8(content).unwrap_or_default()
    }

    /// Replaces every cookie by those of `json` (as [`CookieJar::to_json`] writes it).
    pub fn replace_from_json(&self, json: &str) -> Result<(), String> {
        let store = cookie_store::serde::json::load_all(json.as_bytes()).map_err(|error| error.to_string())?;
        *self.lock() = store;
        Ok(())
    }

    /// Writes the jar to its file (session cookies included), atomically: to a
    /// temporary file beside it, then renamed over it. Does nothing for a jar without a
    /// file.
    pub fn save(&self) -> Result<(), CookieJarError> {
        let Some(path) = self.path.as_deref() else {
            return Ok(());
        };
        let error = |message: String| CookieJarError { path: path.clone(), message };
        let mut content = Vec::new();
        cookie_store::serde::json::save_incl_expired_and_nonpersistent(&self.lock(), &mut content)
            .map_err(|failure| error(format!("cannot serialize: {failure}")))?;
        if let Some(directory) = path.parent().filter(|directory| !directory.as_os_str().is_empty()) {
            std::fs::create_dir_all(directory)
                .map_err(|failure| error(format!("cannot create its directory: {failure}")))?;
        }
        let temporary = path.with_extension(format!("tmp-{}", std::process::id()));
        std::fs::write(&temporary, &content).map_err(|failure| error(format!("cannot write: {failure}")))?;
        std::fs::rename(&temporary, path).map_err(|failure| {
            let _ = std::fs::remove_file(&temporary);
            error(format!("cannot replace: {failure}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> url::Url {
        url::Url::parse(text).unwrap()
    }

    #[test]
    fn json_round_trip_keeps_session_cookies_and_their_rules() {
        let jar = CookieJar::new();
        let site = url("https://app.example.com/api/login");
        jar.store(&site, ["sid=1; Path=/api; Secure; HttpOnly", "pref=dark; Path=/; Max-Age=3600"]);
        let copy = CookieJar::new();
        copy.store(&site, ["old=1; Path=/"]);
        copy.replace_from_json(&jar.to_json()).expect("loads");
        let mut sent: Vec<String> = copy
            .header_for(&url("https://app.example.com/api/x"))
            .unwrap_or_default()
            .split("; ")
            .map(str::to_owned)
            .collect();
        sent.sort();
        assert_eq!(sent, ["pref=dark", "sid=1"], "the old cookie is gone, both new ones are sent");
        assert_eq!(copy.header_for(&url("http://app.example.com/api/x")).as_deref(), Some("pref=dark"));
        assert!(copy.replace_from_json("not json").is_err());
    }

    #[test]
    fn follows_domain_path_secure_and_expiry_rules() {
        let jar = CookieJar::new();
        let site = url("https://app.example.com/api/login");
        jar.store(
            &site,
            [
                "a=1; Path=/",
                "b=2; Path=/api",
                "c=3; Path=/other",
                "d=4; Domain=example.com; Path=/",
                "s=5; Path=/; Secure",
                "gone=6; Path=/; Max-Age=0",
                "foreign=7; Domain=other.org",
            ],
        );
        let header = jar.header_for(&url("https://app.example.com/api/users")).unwrap();
        for expected in ["a=1", "b=2", "d=4", "s=5"] {
            assert!(header.contains(expected), "{header}");
        }
        assert!(!header.contains("c=3") && !header.contains("gone") && !header.contains("foreign"), "{header}");
        let plain = jar.header_for(&url("http://app.example.com/")).unwrap();
        assert!(!plain.contains("s=5"), "secure cookies stay off plain HTTP: {plain}");
        let sibling = jar.header_for(&url("https://www.example.com/")).unwrap();
        assert_eq!(sibling, "d=4");
    }

    #[test]
    fn settings_choose_no_jar_a_memory_jar_or_a_file() {
        assert!(CookieJar::from_settings(&CookieSettings { enabled: false, jar_path: None }).unwrap().is_none());
        let memory = CookieJar::from_settings(&CookieSettings::default()).unwrap().unwrap();
        assert!(memory.path().is_none());
        let path = std::env::temp_dir().join(format!("volley-settings-jar-{}.json", std::process::id()));
        let settings = CookieSettings { enabled: true, jar_path: Some(path.clone()) };
        assert_eq!(CookieJar::from_settings(&settings).unwrap().unwrap().path(), Some(path.as_path()));
    }

    #[test]
    fn persists_session_cookies_atomically() {
        let directory = std::env::temp_dir().join(format!("volley-jar-{}", std::process::id()));
        let path = directory.join("nested/cookies.json");
        let jar = CookieJar::persistent(&path).unwrap();
        assert!(jar.is_empty());
        jar.store(&url("http://localhost/"), ["session=abc; Path=/"]);
        jar.save().unwrap();
        let reloaded = CookieJar::persistent(&path).unwrap();
        assert_eq!(reloaded.header_for(&url("http://localhost/x")).as_deref(), Some("session=abc"));
        std::fs::write(&path, "not json").unwrap();
        assert!(CookieJar::persistent(&path).is_err());
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
