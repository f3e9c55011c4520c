//! Request bodies on the wire: inline text, `< file` (as is) and `<@ file` (with `{{ }}`
//! substituted), url-encoded forms and multipart forms with files.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use volley_syntax::{Body, BodyPart, FileBody, FormBody, FormValue, GraphQlBody, PartsBody, Span};

use crate::error::BuildError;
use crate::interpolate::Renderer;
use crate::io::{Io, normalize};

/// A body and the `Content-Type` it implies (used when the request sets none, or, for
/// multipart, to add the boundary).
#[derive(Debug, Default)]
pub(crate) struct BuiltBody {
    pub(crate) bytes: Bytes,
    pub(crate) content_type: Option<String>,
    /// `true` when `content_type` must replace a written `multipart/form-data` without
    /// a boundary.
    pub(crate) replaces_multipart: bool,
}

/// Where files named by the request are looked for.
pub(crate) struct Files<'a> {
    pub(crate) io: &'a dyn Io,
    /// The directory of the `.http` file.
    pub(crate) base: &'a Path,
    /// The project's root, outside which no file is read; `None`: any file.
    pub(crate) root: Option<&'a Path>,
}

impl Files<'_> {
    fn resolve(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        if path.is_absolute() { normalize(path) } else { normalize(&self.base.join(path)) }
    }

    /// `path` resolved, when it is inside the project (or any path is allowed).
    pub(crate) fn inside(&self, path: &str, span: Span) -> Result<PathBuf, BuildError> {
        let resolved = self.resolve(path);
        if let Some(root) = self.root
            && !resolved.starts_with(root)
        {
            return Err(BuildError::ExternalFile { path: resolved, root: root.to_path_buf(), span });
        }
        Ok(resolved)
    }

    pub(crate) fn read(&self, path: &str, span: Span) -> Result<(PathBuf, Vec<u8>), BuildError> {
        let resolved = self.inside(path, span)?;
        let bytes =
            self.io.read(&resolved).map_err(|source| BuildError::File { path: resolved.clone(), span, source })?;
        Ok((resolved, bytes))
    }
}

/// Builds the body. `written_content_type` is the request's own `Content-Type` value.
pub(crate) async fn build_body(
    body: &Body,
    renderer: &mut Renderer<'_>,
    files: &Files<'_>,
    written_content_type: Option<&str>,
) -> Result<BuiltBody, BuildError> {
    match body {
        Body::None => Ok(BuiltBody::default()),
        Body::Inline(template) => {
            let text = renderer.render(template).await?;
            let text = LineBreaks::of(written_content_type).apply(text);
            Ok(BuiltBody { bytes: Bytes::from(text), ..BuiltBody::default() })
        }
        Body::File(file) => file_body(file, renderer, files).await,
        Body::Form(form) if form.multipart => multipart(form, renderer, files, written_content_type).await,
        Body::Form(form) => urlencoded(form, renderer).await,
        Body::Parts(parts) => parts_body(parts, renderer, files, written_content_type).await,
        Body::GraphQl(graphql) => graphql_body(graphql, renderer).await,
    }
}

/// What happens to the line breaks of a body's text (never to the bytes of a file it
/// includes), by the request's `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineBreaks {
    /// Sent as written.
    Keep,
    /// `multipart/*`: every line break is CRLF, as RFC 2046 and RFC 7578 require.
    Crlf,
    /// `application/x-www-form-urlencoded`: a line starting with `&` continues the line
    /// before it, without the line break and the indentation (REST Client).
    JoinAmpersands,
}

impl LineBreaks {
    fn of(content_type: Option<&str>) -> LineBreaks {
        let essence = content_type.map(|value| value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
        match essence.as_deref() {
            Some(essence) if essence.starts_with("multipart/") => LineBreaks::Crlf,
            Some("application/x-www-form-urlencoded") => LineBreaks::JoinAmpersands,
            _ => LineBreaks::Keep,
        }
    }

    fn apply(self, text: String) -> String {
        match self {
            LineBreaks::Keep => text,
            LineBreaks::Crlf => crlf(&text),
            LineBreaks::JoinAmpersands => join_ampersand_lines(&text),
        }
    }
}

/// Every line break (`\n`, `\r\n`, lone `\r`) as `\r\n`.
fn crlf(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '\r' => {
                characters.next_if_eq(&'\n');
                out.push_str("\r\n");
            }
            '\n' => out.push_str("\r\n"),
            other => out.push(other),
        }
    }
    out
}

/// `name=foo\n&password=bar` → `name=foo&password=bar`: the line break and the spaces
/// before a line that starts with `&` are dropped.
fn join_ampersand_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['\n', '\r']) {
        let (line, after) = rest.split_at(at);
        let after_break = after.strip_prefix("\r\n").or_else(|| after.get(1..)).unwrap_or_default();
        let next_line = after_break.trim_start_matches([' ', '\t']);
        out.push_str(line);
        if next_line.starts_with('&') {
            rest = next_line;
        } else {
            out.push_str(&after[..after.len() - after_break.len()]);
            rest = after_break;
        }
    }
    out.push_str(rest);
    out
}

/// Text with `< ./file` lines: the text (its line breaks by the `Content-Type`) and the
/// files' bytes as they are.
async fn parts_body(
    body: &PartsBody,
    renderer: &mut Renderer<'_>,
    files: &Files<'_>,
    written_content_type: Option<&str>,
) -> Result<BuiltBody, BuildError> {
    let line_breaks = LineBreaks::of(written_content_type);
    let mut out = Vec::new();
    for part in &body.parts {
        match part {
            BodyPart::Text(template) => {
                let text = renderer.render(template).await?;
                out.extend_from_slice(line_breaks.apply(text).as_bytes());
            }
            BodyPart::File(file) => out.extend_from_slice(&file_body(file, renderer, files).await?.bytes),
        }
    }
    Ok(BuiltBody { bytes: Bytes::from(out), ..BuiltBody::default() })
}

/// `{"query": …, "operationName": …, "variables": …}` (the last two when there are a
/// named operation and variables), sent as `application/json` unless the request says
/// otherwise.
async fn graphql_body(body: &GraphQlBody, renderer: &mut Renderer<'_>) -> Result<BuiltBody, BuildError> {
    let mut query = renderer.render(&body.query).await?;
    for fragment in &body.fragments {
        // httpyac joins them with one line break.
        query.push('\n');
        query.push_str(fragment);
    }
    let mut json = format!("{{\"query\":{}", serde_json::Value::String(query));
    // In httpyac's order: the operation's name, then its variables.
    if let Some(name) = &body.operation_name {
        json.push_str(",\"operationName\":");
        json.push_str(&serde_json::Value::String(name.clone()).to_string());
    }
    if let Some(template) = &body.variables {
        let text = renderer.render(template).await?;
        let variables: serde_json::Value = serde_json::from_str(&text).map_err(|error| BuildError::InvalidBody {
            message: format!("the GraphQL variables are not valid JSON: {error}"),
            span: template.span,
        })?;
        if !variables.is_object() {
            return Err(BuildError::InvalidBody {
                message: "the GraphQL variables must be a JSON object (`{\"id\": 1}`)".to_owned(),
                span: template.span,
            });
        }
        json.push_str(",\"variables\":");
        // As written, keys in their order, without the spaces between tokens (httpyac's
        // `JSON.stringify(JSON.parse(…))`).
        json.push_str(&compact_json(&text));
    }
    json.push('}');
    Ok(BuiltBody {
        bytes: Bytes::from(json),
        content_type: Some("application/json".to_owned()),
        replaces_multipart: false,
    })
}

/// Valid JSON `text` without the white space between its tokens; strings, and the order
/// of keys, as written.
fn compact_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for character in text.chars() {
        if in_string {
            out.push(character);
            if escaped {
                escaped = false;
            } else if character == '\\' {
                escaped = true;
            } else if character == '"' {
                in_string = false;
            }
        } else if character == '"' {
            in_string = true;
            out.push(character);
        } else if !character.is_whitespace() {
            out.push(character);
        }
    }
    out
}

async fn file_body(file: &FileBody, renderer: &mut Renderer<'_>, files: &Files<'_>) -> Result<BuiltBody, BuildError> {
    let path = renderer.render(&file.path).await?;
    let (resolved, bytes) = files.read(&path, file.path.span)?;
    let content_type = mime_guess::from_path(&resolved).first().map(|mime| mime.essence_str().to_owned());
    if !file.substitute {
        return Ok(BuiltBody { bytes: Bytes::from(bytes), content_type, replaces_multipart: false });
    }
    let encoding = match &file.encoding {
        Some(label) => encoding_rs::Encoding::for_label(label.as_bytes()).ok_or_else(|| BuildError::Resolver {
            name: "file".to_owned(),
            message: format!("unknown encoding `{label}` (use a WHATWG label: utf-8, latin1, windows-1252, …)"),
            span: file.span,
        })?,
        None => encoding_rs::UTF_8,
    };
    let (text, _, _) = encoding.decode(&bytes);
    let (template, diagnostics) = volley_syntax::parse_template(&text);
    if let Some(problem) = diagnostics.first() {
        return Err(BuildError::Interpolation {
            message: format!("{}:{}: {}", resolved.display(), problem.span, problem.message),
            span: file.span,
        });
    }
    // Spans of errors in the file's text point into that file: the error is reported at
    // the `<@` line, naming the place in the file.
    let substituted = renderer.render(&template).await.map_err(|error| BuildError::Included {
        path: resolved.clone(),
        span: file.span,
        source: Box::new(error),
    })?;
    Ok(BuiltBody { bytes: Bytes::from(substituted), content_type, replaces_multipart: false })
}

async fn urlencoded(form: &FormBody, renderer: &mut Renderer<'_>) -> Result<BuiltBody, BuildError> {
    // Rendered first: the serializer is not `Send` and must not live across an await
    // (the servers run builds on a multi-threaded runtime).
    let mut pairs = Vec::with_capacity(form.fields.len());
    for field in &form.fields {
        let FormValue::Text(value) = &field.value else { continue };
        pairs.push((&field.name.value, renderer.render(value).await?));
    }
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in &pairs {
        serializer.append_pair(name, value);
    }
    Ok(BuiltBody {
        bytes: Bytes::from(serializer.finish()),
        content_type: Some("application/x-www-form-urlencoded".to_owned()),
        replaces_multipart: false,
    })
}

async fn multipart(
    form: &FormBody,
    renderer: &mut Renderer<'_>,
    files: &Files<'_>,
    written_content_type: Option<&str>,
) -> Result<BuiltBody, BuildError> {
    let written_boundary = written_content_type.and_then(boundary_of);
    let boundary = written_boundary.clone().unwrap_or_else(|| format!("volley-{}", uuid::Uuid::new_v4().simple()));
    let mut out: Vec<u8> = Vec::new();
    for field in &form.fields {
        out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let name = escape_quoted(&field.name.value);
        match &field.value {
            FormValue::Text(value) => {
                let value = renderer.render(value).await?;
                out.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes());
                out.extend_from_slice(value.as_bytes());
            }
            FormValue::File { path, filename } => {
                let written = renderer.render(path).await?;
                let (resolved, bytes) = files.read(&written, path.span)?;
                let filename = match filename {
                    Some(filename) => renderer.render(filename).await?,
                    None => resolved.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default(),
                };
                let mime = mime_guess::from_path(&resolved).first_or_octet_stream();
                out.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{name}\"; filename=\"{}\"\r\nContent-Type: {}\r\n\r\n",
                        escape_quoted(&filename),
                        mime.essence_str()
                    )
                    .as_bytes(),
                );
                out.extend_from_slice(&bytes);
            }
        }
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok(BuiltBody {
        bytes: Bytes::from(out),
        content_type: Some(format!("multipart/form-data; boundary={boundary}")),
        replaces_multipart: written_boundary.is_none(),
    })
}

/// The `boundary` parameter of a `Content-Type` value.
fn boundary_of(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim().eq_ignore_ascii_case("boundary").then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// A form-data name or filename for inside quotes (WHATWG: `"`, CR and LF
/// percent-encoded).
fn escape_quoted(text: &str) -> String {
    text.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphql_variables_keep_their_order_without_spaces() {
        let text = "{ \"z\": 1,\n  \"a\": \"x y\\\" z\", \"list\": [ 1, 2 ] }";
        assert_eq!(super::compact_json(text), "{\"z\":1,\"a\":\"x y\\\" z\",\"list\":[1,2]}");
    }

    #[test]
    fn line_breaks_by_content_type() {
        assert_eq!(LineBreaks::of(Some("multipart/form-data; boundary=x")), LineBreaks::Crlf);
        assert_eq!(LineBreaks::of(Some("Multipart/Mixed")), LineBreaks::Crlf);
        assert_eq!(
            LineBreaks::of(Some("application/x-www-form-urlencoded; charset=utf-8")),
            LineBreaks::JoinAmpersands
        );
        assert_eq!(LineBreaks::of(Some("application/json")), LineBreaks::Keep);
        assert_eq!(LineBreaks::of(None), LineBreaks::Keep);
        assert_eq!(crlf("a\nb\r\nc\rd\n"), "a\r\nb\r\nc\r\nd\r\n");
        assert_eq!(join_ampersand_lines("name=foo\n&password=bar\r\n  &x=1"), "name=foo&password=bar&x=1");
        assert_eq!(join_ampersand_lines("a=1\nb=2\n\n&c=3"), "a=1\nb=2\n&c=3", "only the break right before `&`");
        assert_eq!(join_ampersand_lines("no breaks"), "no breaks");
    }

    #[test]
    fn boundaries_and_escapes() {
        assert_eq!(boundary_of("multipart/form-data; boundary=abc").as_deref(), Some("abc"));
        assert_eq!(boundary_of("multipart/form-data; charset=x; Boundary=\"q r\"").as_deref(), Some("q r"));
        assert_eq!(boundary_of("multipart/form-data"), None);
        assert_eq!(escape_quoted("a\"b\nc"), "a%22b%0Ac");
    }
}
