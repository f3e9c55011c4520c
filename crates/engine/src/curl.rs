//! cURL command lines (`volley_curl`, re-exported here) and the command of a
//! request as a run sends it ([`CurlExport`]): the request's own body kept as curl should
//! send it (a file as `--data-binary @path`, a multipart form as `-F` fields), and its
//! secrets hidden when asked. Shared by `volley export curl` and the language server's
//! Copy as cURL.

use std::path::Path;

use http::header::CONTENT_TYPE;
use volley_syntax::{Body, FormValue, Request};

pub use volley_curl::*;

use crate::prepared::PreparedRequest;
use crate::redact::Redactor;

/// The curl command of what the engine builds: a [`CurlRequest`] from a
/// [`PreparedRequest`], and with the secrets a [`Redactor`] knows hidden. A trait
/// because the command's types belong to `volley-curl`, which knows nothing of the
/// engine: `use volley_engine::curl::CurlExport as _;` then call
/// `CurlRequest::from_prepared(…)`.
pub trait CurlExport: Sized {
    /// The request `prepared` would send (the engine's cookies included when the caller
    /// added them, see [`PreparedRequest::add_jar_cookies`]). A body of text is
    /// [`CurlBody::Text`]; give a file body's path with [`CurlRequest::body`] to send the
    /// file itself.
    #[must_use]
    fn from_prepared(prepared: &PreparedRequest) -> Self;

    /// The request `prepared` (built from `request` of a file in `directory`) sends:
    /// a body read as it is from a file (`< ./path`, path without variables) is that
    /// file; a multipart form is its fields, with the values as built and each file by
    /// its path. Anything else is the bytes as built.
    #[must_use]
    fn from_request(prepared: &PreparedRequest, request: &Request, directory: Option<&Path>) -> Self;

    /// The same request with its secrets replaced by `[REDACTED]` (credential headers
    /// whole, known secret values wherever they are), as `redactor` shows them.
    #[must_use]
    fn redacted(self, redactor: &Redactor) -> Self;
}

impl CurlExport for CurlRequest {
    fn from_prepared(prepared: &PreparedRequest) -> Self {
        let headers = prepared
            .headers
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
            .collect();
        let body = if prepared.body.is_empty() {
            CurlBody::None
        } else {
            match std::str::from_utf8(&prepared.body) {
                Ok(text) if !text.contains('\0') => CurlBody::Text(text.to_owned()),
                _ => CurlBody::Binary(prepared.body.clone()),
            }
        };
        Self {
            method: prepared.method.clone(),
            url: prepared.url.to_string(),
            headers,
            body,
            version: prepared.version(),
            digest: prepared.digest_credentials().map(|(user, password)| (user.to_owned(), password.to_owned())),
            insecure: !prepared.validate_ssl,
        }
    }

    fn from_request(prepared: &PreparedRequest, request: &Request, directory: Option<&Path>) -> Self {
        let curl = Self::from_prepared(prepared);
        match &request.body {
            Body::File(file) if !file.substitute => {
                if let (Some(path), Some(directory)) = (file.path.as_literal(), directory) {
                    return curl.body(CurlBody::File(crate::io::normalize(&directory.join(path.trim()))));
                }
                curl
            }
            Body::Form(form) if form.multipart => {
                let content_type = prepared.headers.get(CONTENT_TYPE).and_then(|value| value.to_str().ok());
                let parts = content_type.and_then(boundary).map(|boundary| parts(&prepared.body, &boundary));
                let Some(parts) = parts.filter(|parts| parts.len() == form.fields.len()) else {
                    return curl;
                };
                let mut fields = Vec::with_capacity(parts.len());
                for (field, part) in form.fields.iter().zip(parts) {
                    match &field.value {
                        FormValue::Text(_) => fields.push(FormField {
                            name: field.name.value.clone(),
                            value: String::from_utf8_lossy(&part.content).into_owned(),
                            file: false,
                            filename: None,
                        }),
                        FormValue::File { path, .. } => {
                            // A path with variables cannot be named here: the bytes as built.
                            let (Some(path), Some(directory)) = (path.as_literal(), directory) else {
                                return curl;
                            };
                            fields.push(FormField {
                                name: field.name.value.clone(),
                                value: crate::io::normalize(&directory.join(path.trim())).display().to_string(),
                                file: true,
                                filename: part.filename,
                            });
                        }
                    }
                }
                curl.body(CurlBody::Form(fields))
            }
            _ => curl,
        }
    }

    fn redacted(self, redactor: &Redactor) -> Self {
        let redact = |text: &str| redactor.redact(text).into_owned();
        let headers = self
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), redactor.header(name, value).into_owned()))
            .collect();
        let body = match self.body {
            CurlBody::Text(text) => CurlBody::Text(redact(&text)),
            CurlBody::Form(fields) => CurlBody::Form(
                fields
                    .into_iter()
                    .map(|field| if field.file { field } else { FormField { value: redact(&field.value), ..field } })
                    .collect(),
            ),
            other => other,
        };
        let digest = if redactor.reveals_all() {
            self.digest
        } else {
            self.digest.map(|(user, _)| (user, crate::redact::REDACTED.to_owned()))
        };
        Self { url: redact(&self.url), headers, body, digest, ..self }
    }
}

/// The `boundary` parameter of a multipart `Content-Type`.
fn boundary(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim().eq_ignore_ascii_case("boundary").then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// One part of a multipart body.
struct Part {
    filename: Option<String>,
    content: Vec<u8>,
}

/// The parts of a multipart `body` as the engine builds it (CRLF line breaks).
fn parts(body: &[u8], boundary: &str) -> Vec<Part> {
    let delimiter = format!("--{boundary}\r\n");
    let mut parts = Vec::new();
    let mut rest = body;
    let Some(start) = find(rest, delimiter.as_bytes()) else {
        return parts;
    };
    rest = &rest[start + delimiter.len()..];
    let next_delimiter = format!("\r\n--{boundary}");
    while let Some(end) = find(rest, next_delimiter.as_bytes()) {
        let part = &rest[..end];
        let (head, content) = match find(part, b"\r\n\r\n") {
            Some(at) => (&part[..at], &part[at + 4..]),
            None => (part, &[][..]),
        };
        let head = String::from_utf8_lossy(head);
        let filename = head
            .split("; ")
            .find_map(|parameter| parameter.strip_prefix("filename=\""))
            .and_then(|value| value.split('"').next())
            .map(str::to_owned);
        parts.push(Part { filename, content: content.to_vec() });
        rest = &rest[end + next_delimiter.len()..];
        match rest.strip_prefix(b"\r\n") {
            Some(after) => rest = after,
            None => break,
        }
    }
    parts
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_parts_of_a_multipart_body() {
        let body = b"--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nline 1\r\nline 2\r\n--b\r\n\
                     Content-Disposition: form-data; name=\"f\"; filename=\"x.txt\"\r\nContent-Type: text/plain\r\n\r\n\
                     file\r\n--b--\r\n";
        let parts = parts(body, "b");
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].content, b"line 1\r\nline 2");
        assert_eq!(parts[0].filename, None);
        assert_eq!(parts[1].filename.as_deref(), Some("x.txt"));
        assert_eq!(parts[1].content, b"file");
        assert_eq!(boundary("multipart/form-data; boundary=\"b\"").as_deref(), Some("b"));
    }
}
