//! Postman collections, format v2.1 (v2.0 reads the same): each top-level folder one
//! `.http` file (nested folders named in the titles, `Folder / Request`), the requests
//! outside folders a file named after the collection; collection variables and path
//! variables (`:id`) in a generated `volley.jsonc`. Auth (basic, bearer, API key,
//! digest) is inherited from the folders and the collection as Postman does. Scripts use
//! Postman's `pm` API, which Volley's JetBrains-style scripts do not have: they are kept
//! as comments and reported, as are saved example responses and other auth types.

use std::collections::BTreeMap;

use serde_json::Value;

use super::http::{HttpBody, HttpField, HttpRequest, comment_lines, config_text, file_name, http_text};
use super::{Conversion, ConvertError, Notes, parse_json, str_at};

pub(super) fn import(source: &str) -> Result<Conversion, ConvertError> {
    let collection = parse_json(source, "a Postman collection")?;
    let info = collection
        .get("info")
        .filter(|_| collection.get("item").is_some_and(Value::is_array))
        .ok_or_else(|| ConvertError::new("not a Postman collection v2.1: it has no `info` and `item` list"))?;
    if let Some(schema) = str_at(info, "schema")
        && !schema.contains("v2.")
    {
        return Err(ConvertError::new(format!("not a Postman collection v2.1 or v2.0: its schema is `{schema}`")));
    }
    let name = str_at(info, "name").unwrap_or("collection");
    let mut importer = Importer::default();
    for variable in collection.get("variable").and_then(Value::as_array).into_iter().flatten() {
        importer.variable(variable, "variable");
    }
    let mut top = Vec::new();
    let mut files = BTreeMap::new();
    let root = Scope { title: String::new(), auth: collection.get("auth").cloned(), location: String::new() };
    let mut comments = Vec::new();
    importer.scripts(&collection, "collection", &mut comments);
    importer.inherited_comments = comments;
    for item in collection.get("item").and_then(Value::as_array).into_iter().flatten() {
        let item_name = str_at(item, "name").unwrap_or("request");
        if item.get("item").is_some() {
            let mut requests = Vec::new();
            importer.folder(item, &root, &mut requests);
            files.insert(format!("{}.http", file_name(item_name)), http_text(&requests));
        } else {
            top.extend(importer.request(item, &root));
        }
    }
    if !top.is_empty() {
        files.insert(format!("{}.http", file_name(name)), http_text(&top));
    }
    // The collection's description heads each file (comments before the first `###`).
    if let Some(text) = description(info.get("description")) {
        let head = comment_lines(&text);
        for file in files.values_mut() {
            file.insert_str(0, &format!("{head}\n"));
        }
    }
    let mut conversion = Conversion { files, ..Conversion::default() };
    if !importer.variables.is_empty() {
        conversion.config =
            Some(config_text(&format!("the Postman collection \"{name}\""), &importer.variables, &BTreeMap::new()));
    }
    conversion.unconverted = importer.notes.into_vec();
    Ok(conversion)
}

/// What the enclosing folders give a request.
#[derive(Debug, Clone)]
struct Scope {
    /// `Folder / Sub / ` before the request's name.
    title: String,
    /// The nearest auth set (`noauth` included), inherited.
    auth: Option<Value>,
    /// `item "Folder / Sub"`.
    location: String,
}

#[derive(Debug, Default)]
struct Importer {
    notes: Notes,
    variables: BTreeMap<String, Value>,
    /// Comments for the next request: the scripts of the folders above it.
    inherited_comments: Vec<String>,
}

impl Importer {
    fn variable(&mut self, variable: &Value, location: &str) {
        let Some(key) = str_at(variable, "key").or_else(|| str_at(variable, "id")) else { return };
        if variable.get("disabled").and_then(Value::as_bool) == Some(true) {
            self.notes.add(location, format!("the disabled variable `{key}` is left out"));
            return;
        }
        let value = match variable.get("value") {
            Some(Value::String(text)) => Value::String(text.clone()),
            Some(Value::Null) | None => Value::String(String::new()),
            Some(other) => other.clone(),
        };
        self.variables.insert(key.to_owned(), value);
    }

    fn folder(&mut self, folder: &Value, scope: &Scope, requests: &mut Vec<HttpRequest>) {
        let name = str_at(folder, "name").unwrap_or("folder");
        let inner = Scope {
            title: format!("{}{name} / ", scope.title),
            auth: folder.get("auth").filter(|auth| !auth.is_null()).cloned().or_else(|| scope.auth.clone()),
            location: format!("item \"{}{name}\"", scope.title),
        };
        for variable in folder.get("variable").and_then(Value::as_array).into_iter().flatten() {
            self.variable(variable, &inner.location);
        }
        let before = self.inherited_comments.len();
        let mut comments = Vec::new();
        self.scripts(folder, &inner.location, &mut comments);
        self.inherited_comments.extend(comments);
        for item in folder.get("item").and_then(Value::as_array).into_iter().flatten() {
            if item.get("item").is_some() {
                self.folder(item, &inner, requests);
            } else {
                requests.extend(self.request(item, &inner));
            }
        }
        self.inherited_comments.truncate(before);
    }

    /// The request of an item; `None` for an item that has none (reported).
    fn request(&mut self, item: &Value, scope: &Scope) -> Option<HttpRequest> {
        let name = str_at(item, "name").unwrap_or("request");
        let location = format!("item \"{}{name}\"", scope.title);
        let request = match item.get("request") {
            Some(Value::String(url)) => serde_json::json!({ "method": "GET", "url": url }),
            Some(request) => request.clone(),
            None => {
                self.notes.add(&location, "an item without a request: not converted");
                return None;
            }
        };
        for variable in item.get("variable").and_then(Value::as_array).into_iter().flatten() {
            self.variable(variable, &location);
        }
        let method = str_at(&request, "method").unwrap_or("GET");
        let url = self.url(request.get("url"), &location);
        let mut converted = HttpRequest::new(method, &url);
        converted.title = Some(format!("{}{name}", scope.title));
        converted.comments.clone_from(&self.inherited_comments);
        if let Some(description) = description(request.get("description").or_else(|| item.get("description"))) {
            converted.comments.push(description);
        }
        for header in request.get("header").and_then(Value::as_array).into_iter().flatten() {
            let (Some(key), value) = (str_at(header, "key"), str_at(header, "value").unwrap_or_default()) else {
                continue;
            };
            if header.get("disabled").and_then(Value::as_bool) == Some(true) {
                converted.comments.push(format!("disabled in Postman, not sent: {key}: {value}"));
            } else {
                converted.headers.push((key.to_owned(), value.to_owned()));
            }
        }
        // No auth (or `null`) inherits; `noauth` stops the inheritance.
        let auth = request.get("auth").filter(|auth| !auth.is_null()).cloned().or_else(|| scope.auth.clone());
        if let Some(auth) = auth {
            self.auth(&auth, &mut converted, &location);
        }
        if let Some(body) = request.get("body") {
            self.body(body, &mut converted, &location);
        }
        let mut comments = Vec::new();
        self.scripts(item, &location, &mut comments);
        converted.comments.extend(comments);
        for (setting, value) in item.get("protocolProfileBehavior").and_then(Value::as_object).into_iter().flatten() {
            match (setting.as_str(), value) {
                ("followRedirects", Value::Bool(false)) => converted.directives.push("no-redirect".to_owned()),
                ("followRedirects", Value::Bool(true)) => {}
                _ => {
                    let reason =
                        self.notes.add(&location, format!("the setting `{setting}: {value}` is not converted"));
                    converted.comments.push(reason);
                }
            }
        }
        let examples = item.get("response").and_then(Value::as_array).map_or(0, Vec::len);
        if examples > 0 {
            self.notes.add(&location, format!("{examples} saved example response(s): not converted"));
        }
        self.dynamic_variables(&mut converted, &location);
        Some(converted)
    }

    /// The URL: `raw`, or built from its parts; `:name` path segments as `{{name}}`,
    /// their values as variables.
    fn url(&mut self, url: Option<&Value>, location: &str) -> String {
        let Some(url) = url else { return String::new() };
        if let Value::String(raw) = url {
            return raw.clone();
        }
        let raw = str_at(url, "raw").map_or_else(|| url_from_parts(url), str::to_owned);
        for variable in url.get("variable").and_then(Value::as_array).into_iter().flatten() {
            self.variable(variable, location);
        }
        path_variables(&raw)
    }

    fn auth(&mut self, auth: &Value, request: &mut HttpRequest, location: &str) {
        let kind = str_at(auth, "type").unwrap_or("noauth");
        let parameter = |key: &str| -> String {
            match auth.get(kind) {
                // v2.1: a list of `{key, value}`.
                Some(Value::Array(list)) => list
                    .iter()
                    .find(|entry| str_at(entry, "key") == Some(key))
                    .and_then(|entry| entry.get("value"))
                    .map(value_text)
                    .unwrap_or_default(),
                // v2.0: an object.
                Some(object) => object.get(key).map(value_text).unwrap_or_default(),
                None => String::new(),
            }
        };
        match kind {
            "noauth" => {}
            "basic" => request.headers.push((
                "Authorization".to_owned(),
                format!("Basic {}:{}", parameter("username"), parameter("password")),
            )),
            "bearer" => request.headers.push(("Authorization".to_owned(), format!("Bearer {}", parameter("token")))),
            "digest" => request.headers.push((
                "Authorization".to_owned(),
                format!("Digest {} {}", parameter("username"), parameter("password")),
            )),
            "apikey" => {
                let (key, value) = (parameter("key"), parameter("value"));
                if parameter("in") == "query" {
                    request.add_query(&key, &value);
                } else {
                    request.headers.push((key, value));
                }
            }
            other => {
                let reason =
                    self.notes.add(location, format!("`{other}` auth is not converted: add its header by hand"));
                request.comments.push(reason);
            }
        }
    }

    fn body(&mut self, body: &Value, request: &mut HttpRequest, location: &str) {
        let mode = str_at(body, "mode").unwrap_or_default();
        if body.get("disabled").and_then(Value::as_bool) == Some(true) {
            request.comments.push("the body is disabled in Postman: not sent".to_owned());
            return;
        }
        let content_type = |request: &mut HttpRequest, value: &str| {
            if !request.has_header("content-type") {
                request.headers.push(("Content-Type".to_owned(), value.to_owned()));
            }
        };
        match mode {
            "raw" => {
                let text = str_at(body, "raw").unwrap_or_default();
                if text.is_empty() {
                    return;
                }
                let language = body.pointer("/options/raw/language").and_then(Value::as_str).unwrap_or("text");
                let mime = match language {
                    "json" => "application/json",
                    "xml" => "application/xml",
                    "html" => "text/html",
                    "javascript" => "application/javascript",
                    _ => "text/plain",
                };
                content_type(request, mime);
                request.body = HttpBody::Text(text.to_owned());
            }
            "urlencoded" | "formdata" => {
                let mut fields = Vec::new();
                let mut multipart = mode == "formdata";
                for field in body.get(mode).and_then(Value::as_array).into_iter().flatten() {
                    let key = str_at(field, "key").unwrap_or_default();
                    if field.get("disabled").and_then(Value::as_bool) == Some(true) {
                        request.comments.push(format!("disabled in Postman, not sent: the field `{key}`"));
                        continue;
                    }
                    if str_at(field, "type") == Some("file") {
                        multipart = true;
                        let source = match field.get("src") {
                            Some(Value::String(path)) => Some(path.clone()),
                            Some(Value::Array(paths)) => {
                                if paths.len() > 1 {
                                    let reason = self.notes.add(
                                        location,
                                        format!("the field `{key}` has {} files: only the first is sent", paths.len()),
                                    );
                                    request.comments.push(reason);
                                }
                                paths.first().and_then(Value::as_str).map(str::to_owned)
                            }
                            _ => None,
                        };
                        let Some(source) = source else {
                            let reason = self.notes.add(location, format!("the file field `{key}` names no file"));
                            request.comments.push(reason);
                            continue;
                        };
                        fields.push(HttpField { name: key.to_owned(), value: source, file: true, filename: None });
                    } else {
                        fields.push(HttpField::text(key, str_at(field, "value").unwrap_or_default()));
                    }
                }
                if fields.iter().any(|field| field.value.contains('\n')) {
                    let reason = self
                        .notes
                        .add(location, "a form value has a line break, which a `name = value` line cannot hold");
                    request.comments.push(reason);
                }
                if multipart {
                    request.headers.retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
                    request.headers.push(("Content-Type".to_owned(), "multipart/form-data".to_owned()));
                }
                request.body = HttpBody::Form(fields);
            }
            "file" => {
                if let Some(path) = body.pointer("/file/src").and_then(Value::as_str) {
                    request.body = HttpBody::File(path.to_owned());
                } else {
                    let reason = self.notes.add(location, "a file body that names no file");
                    request.comments.push(reason);
                }
            }
            "graphql" => {
                let query = body.pointer("/graphql/query").and_then(Value::as_str).unwrap_or_default();
                let variables = body.pointer("/graphql/variables").and_then(Value::as_str).unwrap_or_default().trim();
                content_type(request, "application/json");
                request.body = HttpBody::Text(graphql_json(query, variables));
            }
            "" => {}
            other => {
                let reason = self.notes.add(location, format!("a `{other}` body is not converted"));
                request.comments.push(reason);
            }
        }
    }

    /// The item's `prerequest` and `test` scripts, as comments (reported).
    fn scripts(&mut self, item: &Value, location: &str, comments: &mut Vec<String>) {
        for event in item.get("event").and_then(Value::as_array).into_iter().flatten() {
            let listen = str_at(event, "listen").unwrap_or("script");
            let script = match event.pointer("/script/exec") {
                Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n"),
                Some(Value::String(text)) => text.clone(),
                _ => String::new(),
            };
            if script.trim().is_empty() {
                continue;
            }
            let what = if listen == "prerequest" { "pre-request script" } else { "test script" };
            let location = if location.is_empty() { "collection" } else { location };
            self.notes.add(
                location,
                format!("Postman {what} kept as a comment: Postman's `pm` API is not Volley's script API"),
            );
            comments.push(format!("Postman {what} ({location}), not run:\n{script}"));
        }
    }

    /// Postman's `{{$name}}` variables: those Volley has the same are kept (`$guid`,
    /// `$timestamp`, `$randomInt`, `$isoTimestamp`), `$randomUUID` becomes `$uuid` and
    /// `$randomEmail` `$random.email`, the others are reported.
    fn dynamic_variables(&mut self, request: &mut HttpRequest, location: &str) {
        let mut texts: Vec<&mut String> = vec![&mut request.url];
        for (_, value) in &mut request.headers {
            texts.push(value);
        }
        if let HttpBody::Text(text) = &mut request.body {
            texts.push(text);
        }
        let mut unknown = Vec::new();
        for text in texts {
            *text = text.replace("{{$randomUUID}}", "{{$uuid}}").replace("{{$randomEmail}}", "{{$random.email}}");
            let mut rest = text.as_str();
            while let Some(at) = rest.find("{{$") {
                let name = rest[at + 3..].split("}}").next().unwrap_or_default();
                if !matches!(name, "guid" | "timestamp" | "randomInt" | "isoTimestamp" | "uuid" | "random.email") {
                    unknown.push(format!("{{{{${name}}}}}"));
                }
                rest = &rest[at + 3..];
            }
        }
        for name in unknown {
            let reason = self.notes.add(location, format!("the Postman variable `{name}` has no Volley equivalent"));
            request.comments.push(reason);
        }
    }
}

/// A URL written as its parts (`protocol`, `host`, `path`, `query`), without `raw`.
fn url_from_parts(url: &Value) -> String {
    let join = |key: &str, separator: &str| match url.get(key) {
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(separator),
        Some(Value::String(text)) => text.clone(),
        _ => String::new(),
    };
    let protocol = str_at(url, "protocol").map(|protocol| format!("{protocol}://")).unwrap_or_default();
    let mut raw = format!("{protocol}{}/{}", join("host", "."), join("path", "/"));
    let query: Vec<String> = url
        .get("query")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|param| param.get("disabled").and_then(Value::as_bool) != Some(true))
        .filter_map(|param| {
            let key = str_at(param, "key")?;
            Some(match str_at(param, "value") {
                Some(value) => format!("{key}={value}"),
                None => key.to_owned(),
            })
        })
        .collect();
    if !query.is_empty() {
        raw.push('?');
        raw.push_str(&query.join("&"));
    }
    raw
}

/// `:name` path segments as `{{name}}`.
fn path_variables(url: &str) -> String {
    let (before_query, query) = url.split_once('?').map_or((url, None), |(path, query)| (path, Some(query)));
    let segments: Vec<String> = before_query
        .split('/')
        .map(|segment| match segment.strip_prefix(':') {
            Some(name) if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                format!("{{{{{name}}}}}")
            }
            _ => segment.to_owned(),
        })
        .collect();
    let mut url = segments.join("/");
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

/// A description (text, or `{content}`) for a comment.
fn description(value: Option<&Value>) -> Option<String> {
    let text = match value? {
        Value::String(text) => text.clone(),
        other => str_at(other, "content")?.to_owned(),
    };
    (!text.trim().is_empty()).then_some(text)
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A GraphQL request's JSON body: `variables` as written when it is JSON (or has `{{`),
/// left out when empty.
pub(super) fn graphql_json(query: &str, variables: &str) -> String {
    let query = Value::String(query.to_owned());
    if variables.is_empty() {
        format!("{{\"query\": {query}}}")
    } else {
        format!("{{\"query\": {query}, \"variables\": {variables}}}")
    }
}
