//! The requests of an import written as `.http` text, and the generated `volley.jsonc`.
//! Everything an importer could not say in a request goes in `#` comment lines above its
//! request line: a comment after the body would be sent as body text.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A request to write, as an importer read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpRequest {
    /// The text after `###`: names the request for `--name` and the editors.
    pub title: Option<String>,
    /// `#` comment lines above the request line (without the `# `): notes, a description,
    /// a script kept as text.
    pub comments: Vec<String>,
    /// Directive lines (without `# @`): `no-redirect`, `timeout 5 s`.
    pub directives: Vec<String>,
    /// The method, upper case.
    pub method: String,
    /// The URL, with `{{variables}}`.
    pub url: String,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: HttpBody,
}

/// The body of an [`HttpRequest`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum HttpBody {
    /// No body.
    #[default]
    None,
    /// Text sent as written.
    Text(String),
    /// A file sent as it is (`< ./path`).
    File(String),
    /// `name = value` fields: urlencoded, or multipart when a field is a file or the
    /// `Content-Type` says so.
    Form(Vec<HttpField>),
}

/// One field of [`HttpBody::Form`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpField {
    /// The name.
    pub name: String,
    /// The value, or a file's path when `file`.
    pub value: String,
    /// The value is the path of a file to upload.
    pub file: bool,
    /// The file name sent instead of the file's own.
    pub filename: Option<String>,
}

impl HttpField {
    /// A text field.
    #[must_use]
    pub fn text(name: &str, value: &str) -> Self {
        Self { name: name.to_owned(), value: value.to_owned(), file: false, filename: None }
    }
}

impl HttpRequest {
    /// A request with no headers and no body.
    #[must_use]
    pub fn new(method: &str, url: &str) -> Self {
        Self { method: method.to_ascii_uppercase(), url: url.to_owned(), ..Self::default() }
    }

    /// Adds `name=value` to the URL's query, as written (no encoding: either may be a
    /// `{{variable}}`).
    pub fn add_query(&mut self, name: &str, value: &str) {
        self.url.push(if self.url.contains('?') { '&' } else { '?' });
        self.url.push_str(name);
        self.url.push('=');
        self.url.push_str(value);
    }

    /// `true` when a header `name` is set (any case).
    #[must_use]
    pub fn has_header(&self, name: &str) -> bool {
        self.headers.iter().any(|(header, _)| header.eq_ignore_ascii_case(name))
    }

    /// The request as `.http` text, ending with a line break, without a `###` line.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        for comment in &self.comments {
            text.push_str(&comment_lines(comment));
        }
        for directive in &self.directives {
            let _ = writeln!(text, "# @{directive}");
        }
        let _ = writeln!(text, "{} {}", self.method, one_line(&self.url));
        for (name, value) in &self.headers {
            let _ = writeln!(text, "{}: {}", one_line(name), one_line(value));
        }
        match &self.body {
            HttpBody::None => {}
            HttpBody::Text(body) => {
                text.push('\n');
                text.push_str(body);
                if !body.ends_with('\n') {
                    text.push('\n');
                }
            }
            HttpBody::File(path) => {
                let _ = write!(text, "\n< {}\n", relative(path));
            }
            HttpBody::Form(fields) => {
                text.push('\n');
                for field in fields {
                    let name = one_line(&field.name);
                    match (field.file, &field.filename) {
                        (true, Some(filename)) => {
                            let _ = writeln!(text, "{name} = @{} | {}", relative(&field.value), one_line(filename));
                        }
                        (true, None) => {
                            let _ = writeln!(text, "{name} = @{}", relative(&field.value));
                        }
                        (false, _) => {
                            let _ = writeln!(text, "{name} = {}", one_line(&field.value));
                        }
                    }
                }
            }
        }
        text
    }
}

/// `text` as `# ` comment lines, each ending with a line break.
#[must_use]
pub(super) fn comment_lines(text: &str) -> String {
    let mut lines = String::new();
    for line in text.lines() {
        // `# @` would be read as a directive.
        let line = if line.trim_start().starts_with('@') { format!(" {line}") } else { line.to_owned() };
        let _ = writeln!(lines, "# {}", line.trim_end());
    }
    lines
}

/// Requests as the text of one `.http` file: each after a `###` line with its title,
/// separated by a blank line.
#[must_use]
pub fn http_text(requests: &[HttpRequest]) -> String {
    let mut text = String::new();
    for (index, request) in requests.iter().enumerate() {
        if index > 0 {
            text.push('\n');
        }
        match &request.title {
            Some(title) => {
                let _ = writeln!(text, "### {}", one_line(title));
            }
            None => text.push_str("###\n"),
        }
        text.push_str(&request.to_text());
    }
    text
}

/// A `volley.jsonc` with `variables` and `profiles` (each a map of variables), under a
/// comment naming its source.
#[must_use]
pub fn config_text(
    source: &str,
    variables: &BTreeMap<String, serde_json::Value>,
    profiles: &BTreeMap<String, BTreeMap<String, serde_json::Value>>,
) -> String {
    // Written by hand so that `variables` comes before `profiles`.
    let pretty =
        |value: serde_json::Value| serde_json::to_string_pretty(&value).unwrap_or_default().replace('\n', "\n  ");
    let mut entries = Vec::new();
    if !variables.is_empty() {
        entries.push(format!("  \"variables\": {}", pretty(serde_json::json!(variables))));
    }
    if !profiles.is_empty() {
        let profiles: serde_json::Map<String, serde_json::Value> = profiles
            .iter()
            .map(|(name, variables)| (name.clone(), serde_json::json!({ "variables": variables })))
            .collect();
        entries.push(format!("  \"profiles\": {}", pretty(serde_json::Value::Object(profiles))));
    }
    format!("// Generated by `volley import` from {source}.\n{{\n{}\n}}\n", entries.join(",\n"))
}

/// A file name (without extension) for `title`: letters, digits, `-` and `_`, the rest
/// as `-`; `requests` when nothing is left.
#[must_use]
pub fn file_name(title: &str) -> String {
    let mut name = String::new();
    for character in title.trim().chars() {
        if character.is_alphanumeric() || character == '_' || character == '-' {
            name.push(character);
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_matches('-').to_owned();
    if name.is_empty() { "requests".to_owned() } else { name }
}

/// A path written so that Volley reads it as one: `./` before a relative one.
fn relative(path: &str) -> String {
    if path.starts_with('/') || path.starts_with("./") || path.starts_with("../") || path.starts_with("{{") {
        path.to_owned()
    } else {
        format!("./{path}")
    }
}

/// Text on one line: line breaks written `\n`.
fn one_line(text: &str) -> String {
    text.replace('\r', "\\r").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_comments_directives_headers_and_bodies() {
        let mut request = HttpRequest::new("post", "{{base}}/users");
        request.title = Some("Create user".to_owned());
        request.comments = vec!["a script:\n@keep(it)".to_owned()];
        request.directives = vec!["no-redirect".to_owned()];
        request.headers.push(("Content-Type".to_owned(), "multipart/form-data".to_owned()));
        request.body = HttpBody::Form(vec![
            HttpField::text("name", "Ada"),
            HttpField { name: "photo".to_owned(), value: "me.png".to_owned(), file: true, filename: None },
        ]);
        let get = HttpRequest::new("GET", "https://h/x\ny");
        assert_eq!(
            http_text(&[request, get]),
            "### Create user\n# a script:\n#  @keep(it)\n# @no-redirect\nPOST {{base}}/users\n\
             Content-Type: multipart/form-data\n\nname = Ada\nphoto = @./me.png\n\n###\nGET https://h/x\\ny\n"
        );
    }

    #[test]
    fn names_files_and_configs() {
        assert_eq!(file_name("Users / Create (v2)"), "Users-Create-v2");
        assert_eq!(file_name("  / "), "requests");
        let variables = BTreeMap::from([("base".to_owned(), serde_json::json!("https://h"))]);
        let profiles = BTreeMap::from([("prod".to_owned(), variables.clone())]);
        assert_eq!(
            config_text("x.json", &variables, &profiles),
            "// Generated by `volley import` from x.json.\n{\n  \"variables\": {\n    \"base\": \"https://h\"\n  },\n  \
             \"profiles\": {\n    \"prod\": {\n      \"variables\": {\n        \"base\": \"https://h\"\n      }\n    }\n  }\n}\n"
        );
    }
}
