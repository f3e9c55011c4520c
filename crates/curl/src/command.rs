//! A curl command as read by `parse.rs`: its method, URL, headers and body, and what
//! was not converted (the notes); `to_http.rs` writes it as `.http` text.

/// A curl command, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCurl {
    /// The method (`-X`, else `HEAD` for `-I`, `POST` for data, `PUT` for `-T`, else `GET`).
    pub method: http::Method,
    /// The URL, `http://` added when it has no scheme, the data of `-G` in its query.
    pub url: String,
    /// `--http1.1`, `--http2`, …
    pub version: Option<http::Version>,
    /// The headers, in order (`-H`, `-A`, `-e`, `-b`, `-u`, the type of the data).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: ParsedBody,
    /// `--digest` with `-u`: `user` and `password`, answered when challenged.
    pub digest: Option<(String, String)>,
    /// `-k`: TLS certificates are not checked.
    pub insecure: bool,
    /// `-L`: redirects are followed (curl follows none without it).
    pub follow_redirects: bool,
    /// `-m`: the timeout, in seconds as written.
    pub timeout: Option<String>,
    /// The options not converted and what differs, one sentence each.
    pub notes: Vec<String>,
}

/// The body of a [`ParsedCurl`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedBody {
    /// No body.
    None,
    /// Text, as sent.
    Text(String),
    /// A file sent as it is (`-d @file`, `--data-binary @file`, `-T file`).
    File(String),
    /// `-F` fields: a multipart form.
    Form(Vec<FormField>),
}

/// One `-F name=value` or `-F name=@file;filename=x` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormField {
    /// The field name.
    pub name: String,
    /// The value, or the path of the file.
    pub value: String,
    /// The value is a file's path.
    pub file: bool,
    /// The file name sent (`;filename=`).
    pub filename: Option<String>,
}

/// A command that is not a curl command Volley can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CurlParseError {
    /// Why.
    pub message: String,
}
