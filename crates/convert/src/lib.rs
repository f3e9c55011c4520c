//! Conversions between `.http` files and other tools' formats, one module behind every
//! front end (`volley import` / `volley export`, the language server's cURL paste, Copy
//! as cURL and import command).
//!
//! Every importer reads its source into [`HttpRequest`]s (written as `.http` text by
//! `http.rs`) and returns a [`Conversion`]: the files to write, a generated
//! `volley.jsonc` when the source had variables or servers, and what could not be
//! converted, each with where it was and why. Nothing is dropped in silence: what is
//! left out is a [`Unconverted`] entry, and usually a `#` comment in the request too.
//!
//! - cURL: [`curl`] (the parser and writer, the crate `volley-curl` re-exported; the
//!   engine adds the command of a built request), wrapped by `curl_import.rs`;
//! - HAR 1.2: `har.rs`; Postman collections v2.1: `postman.rs`; Insomnia exports v4:
//!   `insomnia.rs`; OpenAPI 3.0 and 3.1 (JSON or YAML): `openapi.rs`.

pub use volley_curl as curl;

mod curl_import;
mod har;
mod http;
mod insomnia;
mod openapi;
mod postman;

use std::collections::BTreeMap;

pub use http::{HttpBody, HttpField, HttpRequest, config_text, file_name, http_text};

/// The formats `volley import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A cURL command line (POSIX shell, Windows `cmd` or PowerShell quoting).
    Curl,
    /// An HTTP Archive (HAR 1.2), as browsers' developer tools save it.
    Har,
    /// A Postman collection, format v2.1 (v2.0 reads the same).
    Postman,
    /// An Insomnia export, format v4.
    Insomnia,
    /// An OpenAPI description, 3.0 or 3.1, JSON or YAML.
    OpenApi,
}

impl Format {
    /// Every format, in the order of the documentation.
    pub const ALL: [Format; 5] = [Format::Curl, Format::Har, Format::Postman, Format::Insomnia, Format::OpenApi];

    /// The name on the command line: `curl`, `har`, `postman`, `insomnia`, `openapi`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Format::Curl => "curl",
            Format::Har => "har",
            Format::Postman => "postman",
            Format::Insomnia => "insomnia",
            Format::OpenApi => "openapi",
        }
    }

    /// The format of a name given by [`Format::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.name() == name)
    }
}

/// What an import produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conversion {
    /// The `.http` files to write: a relative path (`/`-separated) → its text.
    pub files: BTreeMap<String, String>,
    /// The text of a `volley.jsonc` to write beside them, when the source had variables
    /// or servers (profiles).
    pub config: Option<String>,
    /// What was not converted, in the order met.
    pub unconverted: Vec<Unconverted>,
}

/// One thing of the source that was not converted, or not exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unconverted {
    /// Where it was in the source: `item "Users / Create user"`, `paths./users.post`,
    /// `entries[3]`, or the option of a cURL command.
    pub location: String,
    /// What was left out or changed, and why.
    pub reason: String,
}

impl std::fmt::Display for Unconverted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.location, self.reason)
    }
}

/// A source that cannot be read at all (as opposed to parts of it not converted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConvertError {
    /// Why, in one sentence.
    pub message: String,
}

impl ConvertError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

/// Converts `source`, the text of a file (or command) in `format`, to `.http` files.
/// `stem` names the file of a source that has no name of its own (a cURL command,
/// a HAR capture): `request` gives `request.http`.
///
/// ```
/// use volley_convert::{Format, import};
///
/// let conversion = import(Format::Curl, "$ curl -u ada:pw https://example.com/me", "me").unwrap();
/// assert_eq!(
///     conversion.files["me.http"],
///     "# @no-redirect\nGET https://example.com/me\nAuthorization: Basic ada:pw\n"
/// );
/// assert!(conversion.unconverted.is_empty());
/// ```
pub fn import(format: Format, source: &str, stem: &str) -> Result<Conversion, ConvertError> {
    match format {
        Format::Curl => curl_import::import(source, stem),
        Format::Har => har::import(source, stem),
        Format::Postman => postman::import(source),
        Format::Insomnia => insomnia::import(source),
        Format::OpenApi => openapi::import(source),
    }
}

/// Collects the unconverted entries of one importer.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    entries: Vec<Unconverted>,
}

impl Notes {
    /// Records `reason` at `location`; returns the reason, for a `#` comment in the request.
    pub(crate) fn add(&mut self, location: &str, reason: impl Into<String>) -> String {
        let reason = reason.into();
        self.entries.push(Unconverted { location: location.to_owned(), reason: reason.clone() });
        reason
    }

    pub(crate) fn into_vec(self) -> Vec<Unconverted> {
        self.entries
    }
}

/// Parses JSON, or says which format it should have been.
pub(crate) fn parse_json(source: &str, what: &str) -> Result<serde_json::Value, ConvertError> {
    serde_json::from_str(source).map_err(|error| ConvertError::new(format!("not {what}: invalid JSON: {error}")))
}

/// A JSON value's string at `key`, when it is one.
pub(crate) fn str_at<'a>(value: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(serde_json::Value::as_str)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }

    /// Compares a conversion with the files `<stem>.expected/<path>` and the notes with
    /// `<stem>.expected/unconverted.txt`; `VOLLEY_BLESS=1` writes them instead.
    fn check(format: Format, source: &str, stem: &str) {
        let conversion = import(format, &fixture(source), stem).unwrap_or_else(|error| panic!("{source}: {error}"));
        let expected =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import").join(format!("{stem}.expected"));
        let mut actual: BTreeMap<String, String> = conversion.files.clone();
        if let Some(config) = &conversion.config {
            actual.insert("volley.jsonc".to_owned(), config.clone());
        }
        let notes: String = conversion.unconverted.iter().map(|entry| entry.to_string() + "\n").collect();
        actual.insert("unconverted.txt".to_owned(), notes);
        if std::env::var_os("VOLLEY_BLESS").is_some() {
            std::fs::remove_dir_all(&expected).ok();
            std::fs::create_dir_all(&expected).unwrap();
            for (path, text) in &actual {
                std::fs::write(expected.join(path), text).unwrap();
            }
        }
        let mut written: Vec<String> = std::fs::read_dir(&expected)
            .unwrap_or_else(|error| panic!("{}: {error} (bless with VOLLEY_BLESS=1)", expected.display()))
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        written.sort();
        assert_eq!(written, actual.keys().cloned().collect::<Vec<_>>(), "{stem}: the files");
        for (path, text) in &actual {
            let want = std::fs::read_to_string(expected.join(path)).unwrap();
            assert_eq!(text, &want, "{stem}/{path}");
        }
        // What is written parses without errors.
        for (path, text) in &conversion.files {
            let document = volley_syntax::parse(text);
            let errors: Vec<_> = document
                .diagnostics
                .iter()
                .filter(|diagnostic| diagnostic.severity == volley_syntax::Severity::Error)
                .collect();
            assert!(errors.is_empty(), "{stem}/{path}: {errors:?}\n{text}");
        }
        if let Some(config) = &conversion.config {
            let json = config.lines().filter(|line| !line.starts_with("//")).collect::<Vec<_>>().join("\n");
            serde_json::from_str::<serde_json::Value>(&json).unwrap_or_else(|error| panic!("{stem}: {error}"));
        }
    }

    #[test]
    fn insomnia_export() {
        check(Format::Insomnia, "shop.insomnia.json", "insomnia");
        assert!(import(Format::Insomnia, "{\"__export_format\": 3, \"resources\": []}", "x").is_err());
    }

    #[test]
    fn openapi_descriptions() {
        check(Format::OpenApi, "petstore-3.0.yaml", "openapi-3.0");
        check(Format::OpenApi, "notes-3.1.json", "openapi-3.1");
        assert!(import(Format::OpenApi, "swagger: '2.0'\ninfo: {title: x}\n", "x").is_err());
        assert!(import(Format::OpenApi, "{", "x").is_err());
    }

    #[test]
    fn postman_collection() {
        check(Format::Postman, "shop.postman_collection.json", "postman");
        assert!(import(Format::Postman, "{\"info\": {}}", "x").is_err());
        assert!(import(Format::Postman, "{\"info\": {\"schema\": \"https://x/v1.0.0/\"}, \"item\": []}", "x").is_err());
    }
}
