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
}
