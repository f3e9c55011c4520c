//! HTTP methods of the request line.

use std::fmt;

use serde::Serialize;

/// A request method. The nine of the spec are recognised in any case; anything else is
/// kept as written and reported as `unknown-method`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "String")]
pub enum Method {
    /// `GET` (also a bare URL and the `WEBSOCKET` of the JetBrains client).
    Get,
    /// `HEAD`.
    Head,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `DELETE`.
    Delete,
    /// `CONNECT`.
    Connect,
    /// `OPTIONS`.
    Options,
    /// `TRACE`.
    Trace,
    /// `PATCH`.
    Patch,
    /// Anything else, upper-cased.
    Other(String),
}

impl Method {
    /// The nine methods of the spec, upper case.
    pub const KNOWN: [&'static str; 9] =
        ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "CONNECT"];

    /// The method for a word of the request line (case-insensitive).
    #[must_use]
    pub fn from_word(word: &str) -> Method {
        let upper = word.to_ascii_uppercase();
        match upper.as_str() {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "CONNECT" => Method::Connect,
            "OPTIONS" => Method::Options,
            "TRACE" => Method::Trace,
            "PATCH" => Method::Patch,
            _ => Method::Other(upper),
        }
    }

    /// The method name, upper case.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Connect => "CONNECT",
            Method::Options => "OPTIONS",
            Method::Trace => "TRACE",
            Method::Patch => "PATCH",
            Method::Other(name) => name,
        }
    }

    /// `false` for [`Method::Other`].
    #[must_use]
    pub fn is_known(&self) -> bool {
        !matches!(self, Method::Other(_))
    }

    /// The methods of the IANA HTTP Method Registry beyond the nine of the spec
    /// (the methods of `WebDAV` and `CalDAV`, `QUERY` …), upper case. Written in any case, they are sent upper
    /// case.
    pub const REGISTERED: [&'static str; 31] = [
        "ACL",
        "BASELINE-CONTROL",
        "BIND",
        "CHECKIN",
        "CHECKOUT",
        "COPY",
        "LABEL",
        "LINK",
        "LOCK",
        "MERGE",
        "MKACTIVITY",
        "MKCALENDAR",
        "MKCOL",
        "MKREDIRECTREF",
        "MKWORKSPACE",
        "MOVE",
        "ORDERPATCH",
        "PRI",
        "PROPFIND",
        "PROPPATCH",
        "QUERY",
        "REBIND",
        "REPORT",
        "SEARCH",
        "UNBIND",
        "UNCHECKOUT",
        "UNLINK",
        "UNLOCK",
        "UPDATE",
        "UPDATEREDIRECTREF",
        "VERSION-CONTROL",
    ];

    /// `true` for the nine of the spec and the other registered methods, in any case.
    #[must_use]
    pub fn is_registered(word: &str) -> bool {
        Method::KNOWN.iter().chain(Method::REGISTERED.iter()).any(|name| name.eq_ignore_ascii_case(word))
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Method> for String {
    fn from(method: Method) -> Self {
        method.as_str().to_owned()
    }
}
