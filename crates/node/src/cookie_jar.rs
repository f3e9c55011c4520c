//! `NativeCookieJar`: a cookie jar that several clients share (the engine's
//! [`CookieJar`](volley_engine::CookieJar); clones share one store).

use napi_derive::napi;
use volley_engine::CookieJar;

/// A cookie jar, in memory or kept in a file. Clients created with the same jar send
/// and store the same cookies.
#[napi]
#[derive(Debug, Default)]
pub struct NativeCookieJar {
    pub(crate) jar: CookieJar,
}

/// One cookie of a jar.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct NativeCookie {
    /// The name.
    pub name: String,
    /// The value.
    pub value: String,
    /// The domain it is sent to.
    pub domain: String,
    /// The path it is sent under.
    pub path: String,
}

#[napi]
#[allow(clippy::needless_pass_by_value)] // napi hands JavaScript strings over owned.
impl NativeCookieJar {
    /// An empty jar in memory, or with `path` a jar kept in that file: loaded now when
    /// it exists (an unreadable file is an error), written after every request that
    /// changed it (as JSON, session cookies included).
    #[napi(constructor)]
    pub fn new(path: Option<String>) -> napi::Result<Self> {
        let jar = match path {
            None => CookieJar::new(),
            Some(path) => CookieJar::persistent(path)
                .map_err(|error| napi::Error::new(napi::Status::InvalidArg, error.to_string()))?,
        };
        Ok(Self { jar })
    }

    /// The file the jar is kept in, if any.
    #[napi(getter)]
    #[must_use]
    pub fn path(&self) -> Option<String> {
        self.jar.path().map(|path| path.to_string_lossy().into_owned())
    }

    /// The unexpired cookies held.
    #[napi]
    #[must_use]
    pub fn cookies(&self) -> Vec<NativeCookie> {
        self.jar
            .cookies()
            .into_iter()
            .map(|(domain, path, name, value)| NativeCookie { name, value, domain, path })
            .collect()
    }

    /// Forgets every cookie.
    #[napi]
    pub fn clear(&self) {
        self.jar.clear();
    }

    /// Stores a `Set-Cookie` value as received from `url` (written to the jar's file,
    /// if it has one); `false` when it was not kept (not a cookie, or one `url` may not set).
    #[napi]
    pub fn set_cookie(&self, cookie: String, url: String) -> napi::Result<bool> {
        let url = parse_url(&url)?;
        let pair = cookie.split(';').next().and_then(|pair| pair.split_once('='));
        let parsed = self.jar.store(&url, [cookie.as_str()]) > 0;
        // Refused (another host's domain, say) when it is not held afterwards.
        let stored = parsed
            && pair.is_some_and(|(name, value)| {
                self.jar.cookies().iter().any(|held| held.2 == name.trim() && held.3 == value.trim())
            });
        self.jar.save().map_err(|error| napi::Error::new(napi::Status::GenericFailure, error.to_string()))?;
        Ok(stored)
    }

    /// The cookies a request to `url` sends.
    #[napi]
    pub fn cookies_for(&self, url: String) -> napi::Result<Vec<NativeCookie>> {
        let url = parse_url(&url)?;
        Ok(self
            .jar
            .cookies_for(&url)
            .into_iter()
            .map(|(domain, path, name, value)| NativeCookie { name, value, domain, path })
            .collect())
    }

    /// The `Cookie` header a request to `url` sends (`""` when none).
    #[napi]
    pub fn cookie_string(&self, url: String) -> napi::Result<String> {
        Ok(self.jar.header_for(&parse_url(&url)?).unwrap_or_default())
    }

    /// Every cookie, session ones included, as JSON text.
    #[napi]
    #[must_use]
    pub fn to_json(&self) -> String {
        self.jar.to_json()
    }

    /// Replaces every cookie by those of `json` (as `toJson` writes it).
    #[napi]
    pub fn replace_from_json(&self, json: String) -> napi::Result<()> {
        self.jar.replace_from_json(&json).map_err(|error| napi::Error::new(napi::Status::InvalidArg, error))
    }
}

fn parse_url(text: &str) -> napi::Result<url::Url> {
    url::Url::parse(text)
        .map_err(|error| napi::Error::new(napi::Status::InvalidArg, format!("`{text}` is not a URL: {error}")))
}
