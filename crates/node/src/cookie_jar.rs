//! `NativeCookieJar`: a cookie jar that several clients share (the engine's
//! [`CookieJar`](volley_engine::CookieJar); clones share one store).

use napi_derive::napi;
use volley_engine::CookieJar;

/// A cookie jar in memory. Clients created with the same jar send and store the same
/// cookies.
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
    /// An empty jar.
    #[napi(constructor)]
    #[must_use]
    pub fn new() -> Self {
        Self { jar: CookieJar::new() }
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
