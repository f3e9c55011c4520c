//! A request written as one curl command line: `curl -X METHOD 'url' -H 'Name: value'
//! --data-raw '…'`, every word quoted for a POSIX shell.

use std::fmt::Write as _;
use std::path::PathBuf;

use bytes::Bytes;
use http::header::CONTENT_TYPE;

use super::command::FormField;
use super::quote::quote;

/// What a curl command sends: the request as built, not yet sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurlRequest {
    /// The method.
    pub method: http::Method,
    /// The URL.
    pub url: String,
    /// The headers, in order, repeated names kept.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: CurlBody,
    /// The HTTP version the request asks for.
    pub version: Option<http::Version>,
    /// `user` and `password` of `Authorization: Digest user password`, answered during
    /// the exchange (`--digest --user`).
    pub digest: Option<(String, String)>,
    /// TLS certificates are not checked (`--insecure`).
    pub insecure: bool,
}

/// The body of a [`CurlRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CurlBody {
    /// No body.
    None,
    /// Text (`--data-raw`).
    Text(String),
    /// A file sent as it is (`--data-binary @path`).
    File(PathBuf),
    /// Bytes that are not text: a command line cannot carry them.
    Binary(Bytes),
    /// A multipart form: `--form-string name=value` and `-F 'name=@path;filename=x'`
    /// (curl writes its own `Content-Type` with the boundary).
    Form(Vec<FormField>),
}

/// A curl command line and what it could not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurlCommand {
    /// One line, for a POSIX shell.
    pub command: String,
    /// What of the request the command leaves out, one sentence each.
    pub warnings: Vec<String>,
}

impl CurlRequest {
    /// The same request with `body`.
    #[must_use]
    pub fn body(self, body: CurlBody) -> Self {
        Self { body, ..self }
    }
}

/// `request` as one curl command line. `HEAD` is written `--head` (curl waits for a body
/// after `-X HEAD`); a body without a `Content-Type` gets `-H 'Content-Type:'`, which
/// keeps curl from adding its form type.
///
/// ```
/// use volley_curl::{CurlBody, CurlRequest, to_curl};
///
/// let request = CurlRequest {
///     method: http::Method::POST,
///     url: "https://example.com/users?active=1".to_owned(),
///     headers: vec![("Content-Type".to_owned(), "application/json".to_owned())],
///     body: CurlBody::Text(r#"{"name": "O'Hara"}"#.to_owned()),
///     version: None,
///     digest: None,
///     insecure: false,
/// };
/// assert_eq!(
///     to_curl(&request).command,
///     r#"curl -X POST 'https://example.com/users?active=1' -H 'Content-Type: application/json' --data-raw '{"name": "O'\''Hara"}'"#
/// );
/// ```
#[must_use]
pub fn to_curl(request: &CurlRequest) -> CurlCommand {
    let mut command = String::from("curl");
    let mut warnings = Vec::new();
    if request.method == http::Method::HEAD {
        command.push_str(" --head");
    } else {
        let _ = write!(command, " -X {}", quote(request.method.as_str()));
    }
    let _ = write!(command, " {}", quote(&request.url));
    match request.version {
        Some(http::Version::HTTP_2) => command.push_str(" --http2"),
        Some(http::Version::HTTP_11) => command.push_str(" --http1.1"),
        Some(http::Version::HTTP_10) => command.push_str(" --http1.0"),
        Some(http::Version::HTTP_3) => command.push_str(" --http3"),
        _ => {}
    }
    let form = matches!(request.body, CurlBody::Form(_));
    for (name, value) in &request.headers {
        // curl sends a form's type with its own boundary.
        if form && name.eq_ignore_ascii_case(CONTENT_TYPE.as_str()) && value.starts_with("multipart/form-data") {
            continue;
        }
        let _ = write!(command, " -H {}", quote(&format!("{name}: {value}")));
    }
    let has_content_type = request.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case(CONTENT_TYPE.as_str()));
    let body_word = match &request.body {
        CurlBody::None => None,
        CurlBody::Text(text) => Some(format!("--data-raw {}", quote(text))),
        CurlBody::File(path) => Some(format!("--data-binary {}", quote(&format!("@{}", path.display())))),
        CurlBody::Binary(bytes) => {
            warnings.push(format!(
                "the body ({} bytes) is not text and cannot be written on a command line: it is left out; \
                 save it to a file and add `--data-binary @file`",
                bytes.len()
            ));
            None
        }
        CurlBody::Form(fields) => {
            for field in fields {
                if field.file {
                    let mut value = format!("{}=@{}", field.name, field.value);
                    if let Some(filename) = &field.filename {
                        let _ = write!(value, ";filename={filename}");
                    }
                    let _ = write!(command, " -F {}", quote(&value));
                } else {
                    // `--form-string`: a value starting with `@` or `<` is text, not a file.
                    let _ = write!(command, " --form-string {}", quote(&format!("{}={}", field.name, field.value)));
                }
            }
            None
        }
    };
    if let Some(word) = body_word {
        if !has_content_type {
            command.push_str(" -H 'Content-Type:'");
        }
        command.push(' ');
        command.push_str(&word);
    }
    if let Some((user, password)) = &request.digest {
        let _ = write!(command, " --digest --user {}", quote(&format!("{user}:{password}")));
    }
    if request.insecure {
        command.push_str(" --insecure");
    }
    CurlCommand { command, warnings }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: http::Method, body: CurlBody) -> CurlRequest {
        CurlRequest {
            method,
            url: "http://127.0.0.1:8088/echo".to_owned(),
            headers: vec![("X-Quote".to_owned(), "it's".to_owned())],
            body,
            version: None,
            digest: None,
            insecure: false,
        }
    }

    #[test]
    fn writes_method_url_headers_and_body() {
        let command = to_curl(&request(http::Method::PUT, CurlBody::Text("a'b".to_owned()))).command;
        assert_eq!(
            command,
            r"curl -X PUT http://127.0.0.1:8088/echo -H 'X-Quote: it'\''s' -H 'Content-Type:' --data-raw 'a'\''b'"
        );
        let head = to_curl(&request(http::Method::HEAD, CurlBody::None)).command;
        assert_eq!(head, r"curl --head http://127.0.0.1:8088/echo -H 'X-Quote: it'\''s'");
    }

    #[test]
    fn files_versions_digest_and_binary_bodies() {
        let mut file = request(http::Method::POST, CurlBody::File(PathBuf::from("/tmp/my body.json")));
        file.version = Some(http::Version::HTTP_2);
        file.digest = Some(("ada".to_owned(), "pa ss".to_owned()));
        file.insecure = true;
        assert_eq!(
            to_curl(&file).command,
            "curl -X POST http://127.0.0.1:8088/echo --http2 -H 'X-Quote: it'\\''s' -H 'Content-Type:' \
             --data-binary '@/tmp/my body.json' --digest --user 'ada:pa ss' --insecure"
        );
        let binary = to_curl(&request(http::Method::POST, CurlBody::Binary(Bytes::from_static(&[0xff, 0]))));
        assert!(!binary.command.contains("--data"), "{}", binary.command);
        assert_eq!(binary.warnings.len(), 1);
        assert!(binary.warnings[0].contains("2 bytes"), "{:?}", binary.warnings);
    }
}
