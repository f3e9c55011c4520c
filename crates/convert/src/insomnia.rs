//! Insomnia exports, format v4 (`"__export_format": 4`): each top-level folder
//! (`request_group`) one `.http` file, the requests outside folders a file named after
//! the workspace; the base environment's data as variables and each sub-environment as
//! a profile of a generated `volley.jsonc`. Nunjucks variables (`{{ _.name }}`) become
//! `{{name}}`; template tags (`{% … %}`) other than `uuid` are reported. GraphQL bodies
//! are sent as the JSON Insomnia keeps. Scripts, other resource kinds (gRPC, WebSocket,
//! unit tests, API specs, cookie jars) and other auth types are reported.

use std::collections::BTreeMap;

use serde_json::Value;

use super::http::{HttpBody, HttpField, HttpRequest, config_text, file_name, http_text};
use super::{Conversion, ConvertError, Notes, parse_json, str_at};

pub(super) fn import(source: &str) -> Result<Conversion, ConvertError> {
    let export = parse_json(source, "an Insomnia export")?;
    if export.get("__export_format").and_then(Value::as_u64) != Some(4) {
        return Err(ConvertError::new("not an Insomnia export v4: `__export_format` is not 4"));
    }
    let resources = export
        .get("resources")
        .and_then(Value::as_array)
        .ok_or_else(|| ConvertError::new("not an Insomnia export v4: it has no `resources` list"))?;
    let by_id: BTreeMap<&str, &Value> =
        resources.iter().filter_map(|resource| Some((str_at(resource, "_id")?, resource))).collect();
    let kind = |resource: &Value| str_at(resource, "_type").unwrap_or_default().to_owned();
    let workspaces: Vec<&Value> = resources.iter().filter(|resource| kind(resource) == "workspace").collect();
    let workspace_name = workspaces.first().and_then(|workspace| str_at(workspace, "name")).unwrap_or("insomnia");
    let mut notes = Notes::default();
    let mut variables = BTreeMap::new();
    let mut profiles = BTreeMap::new();
    let mut files: BTreeMap<String, Vec<HttpRequest>> = BTreeMap::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    for resource in resources {
        let id = str_at(resource, "_id").unwrap_or_default();
        let location = format!("{} \"{}\"", kind(resource), str_at(resource, "name").unwrap_or(id));
        match kind(resource).as_str() {
            "workspace" => {}
            "request_group" => {
                // Folder environments and auth would apply to the folder's requests only:
                // Volley has no such scope.
                if resource.get("environment").and_then(Value::as_object).is_some_and(|data| !data.is_empty()) {
                    notes.add(
                        &location,
                        "the folder's environment is not converted: move its variables to volley.jsonc",
                    );
                }
                if resource.pointer("/authentication/type").is_some() {
                    notes.add(&location, "the folder's authentication is not converted: add it to its requests");
                }
            }
            "environment" => {
                let parent = str_at(resource, "parentId").and_then(|parent| by_id.get(parent));
                let data: BTreeMap<String, Value> = resource
                    .get("data")
                    .and_then(Value::as_object)
                    .map(|data| data.iter().map(|(key, value)| (key.clone(), nunjucks_value(value))).collect())
                    .unwrap_or_default();
                if parent.is_some_and(|parent| kind(parent) == "environment") {
                    let name = str_at(resource, "name").unwrap_or(id);
                    profiles.insert(name.to_owned(), data);
                } else {
                    variables.extend(data);
                }
            }
            "request" => {
                let (folder, title) = folders(resource, &by_id);
                let request = convert_request(resource, &title, &location, &mut notes);
                let file = folder.unwrap_or_else(|| workspace_name.to_owned());
                files.entry(format!("{}.http", file_name(&file))).or_default().push(request);
            }
            other => *skipped.entry(other.to_owned()).or_default() += 1,
        }
    }
    for (kind, count) in skipped {
        notes.add("resources", format!("{count} `{kind}` resource(s): not converted"));
    }
    let mut conversion = Conversion {
        files: files.into_iter().map(|(path, requests)| (path, http_text(&requests))).collect(),
        ..Conversion::default()
    };
    if !variables.is_empty() || !profiles.is_empty() {
        conversion.config =
            Some(config_text(&format!("the Insomnia workspace \"{workspace_name}\""), &variables, &profiles));
    }
    conversion.unconverted = notes.into_vec();
    Ok(conversion)
}

/// The top-level folder of a request (its file) and its title (`Folder / Sub / Name`).
fn folders(request: &Value, by_id: &BTreeMap<&str, &Value>) -> (Option<String>, String) {
    let mut names = Vec::new();
    let mut parent = str_at(request, "parentId");
    // A cycle of parents cannot be longer than the resources.
    for _ in 0..by_id.len() {
        let Some(group) =
            parent.and_then(|id| by_id.get(id)).filter(|group| str_at(group, "_type") == Some("request_group"))
        else {
            break;
        };
        names.push(str_at(group, "name").unwrap_or("folder").to_owned());
        parent = str_at(group, "parentId");
    }
    names.reverse();
    let name = str_at(request, "name").unwrap_or("request");
    let top = names.first().cloned();
    names.push(name.to_owned());
    (top, names.join(" / "))
}

fn convert_request(resource: &Value, title: &str, location: &str, notes: &mut Notes) -> HttpRequest {
    let method = str_at(resource, "method").unwrap_or("GET");
    let mut url = nunjucks(str_at(resource, "url").unwrap_or_default(), location, notes);
    let query: Vec<String> = enabled(resource.get("parameters"))
        .filter_map(|param| {
            let name = nunjucks(str_at(param, "name")?, location, notes);
            Some(format!("{name}={}", nunjucks(str_at(param, "value").unwrap_or_default(), location, notes)))
        })
        .collect();
    if !query.is_empty() {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&query.join("&"));
    }
    let mut request = HttpRequest::new(method, &url);
    request.title = Some(title.to_owned());
    for (list, what) in [("parameters", "the query parameter"), ("headers", "the header")] {
        for entry in disabled(resource.get(list)) {
            let name = str_at(entry, "name").unwrap_or_default();
            let value = str_at(entry, "value").unwrap_or_default();
            request.comments.push(format!("disabled in Insomnia, not sent: {what} `{name}: {value}`"));
        }
    }
    if let Some(description) = str_at(resource, "description").filter(|text| !text.trim().is_empty()) {
        request.comments.push(description.to_owned());
    }
    for header in enabled(resource.get("headers")) {
        let Some(name) = str_at(header, "name").filter(|name| !name.is_empty()) else { continue };
        let value = nunjucks(str_at(header, "value").unwrap_or_default(), location, notes);
        request.headers.push((name.to_owned(), value));
    }
    if let Some(auth) = resource.get("authentication").filter(|auth| auth.get("type").is_some()) {
        authentication(auth, &mut request, location, notes);
    }
    if let Some(body) = resource.get("body") {
        convert_body(body, &mut request, location, notes);
    }
    for (key, what) in [("preRequestScript", "pre-request script"), ("afterResponseScript", "after-response script")] {
        if let Some(script) = str_at(resource, key).filter(|script| !script.trim().is_empty()) {
            notes.add(location, format!("Insomnia {what} kept as a comment: Insomnia's script API is not Volley's"));
            request.comments.push(format!("Insomnia {what}, not run:\n{script}"));
        }
    }
    if str_at(resource, "settingFollowRedirects") == Some("off") {
        request.directives.push("no-redirect".to_owned());
    }
    request
}

/// The entries of a list that are not `disabled`.
fn enabled(list: Option<&Value>) -> impl Iterator<Item = &Value> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|entry| entry.get("disabled").and_then(Value::as_bool) != Some(true))
}

/// The entries of a list that are `disabled`.
fn disabled(list: Option<&Value>) -> impl Iterator<Item = &Value> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|entry| entry.get("disabled").and_then(Value::as_bool) == Some(true))
}

fn authentication(auth: &Value, request: &mut HttpRequest, location: &str, notes: &mut Notes) {
    if auth.get("disabled").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let text = |key: &str| nunjucks(str_at(auth, key).unwrap_or_default(), location, &mut Notes::default());
    let header = match str_at(auth, "type").unwrap_or_default() {
        "none" | "" => return,
        "basic" => ("Authorization".to_owned(), format!("Basic {}:{}", text("username"), text("password"))),
        "digest" => ("Authorization".to_owned(), format!("Digest {} {}", text("username"), text("password"))),
        "bearer" => {
            let prefix = str_at(auth, "prefix").filter(|prefix| !prefix.is_empty()).unwrap_or("Bearer");
            ("Authorization".to_owned(), format!("{prefix} {}", text("token")))
        }
        "apikey" => {
            let (key, value) = (text("key"), text("value"));
            match str_at(auth, "addTo").unwrap_or("header") {
                "queryParams" => {
                    request.add_query(&key, &value);
                    return;
                }
                "cookie" => ("Cookie".to_owned(), format!("{key}={value}")),
                _ => (key, value),
            }
        }
        other => {
            let reason =
                notes.add(location, format!("`{other}` authentication is not converted: add its header by hand"));
            request.comments.push(reason);
            return;
        }
    };
    request.headers.push(header);
}

fn convert_body(body: &Value, request: &mut HttpRequest, location: &str, notes: &mut Notes) {
    let mime = str_at(body, "mimeType").unwrap_or_default();
    let content_type = |request: &mut HttpRequest, value: &str| {
        if !value.is_empty() && !request.has_header("content-type") {
            request.headers.push(("Content-Type".to_owned(), value.to_owned()));
        }
    };
    if mime == "application/x-www-form-urlencoded" || mime == "multipart/form-data" {
        let mut fields = Vec::new();
        for param in enabled(body.get("params")) {
            let name = nunjucks(str_at(param, "name").unwrap_or_default(), location, notes);
            if str_at(param, "type") == Some("file") {
                let path = str_at(param, "fileName").unwrap_or_default();
                fields.push(HttpField { name, value: path.to_owned(), file: true, filename: None });
            } else {
                let value = nunjucks(str_at(param, "value").unwrap_or_default(), location, notes);
                fields.push(HttpField { name, value, file: false, filename: None });
            }
        }
        if mime == "multipart/form-data" {
            request.headers.retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
            request.headers.push(("Content-Type".to_owned(), mime.to_owned()));
        }
        request.body = HttpBody::Form(fields);
        return;
    }
    if let Some(path) = str_at(body, "fileName").filter(|path| !path.is_empty()) {
        content_type(request, mime);
        request.body = HttpBody::File(path.to_owned());
        return;
    }
    let Some(text) = str_at(body, "text").filter(|text| !text.is_empty()) else { return };
    let text = nunjucks(text, location, notes);
    if mime == "application/graphql" {
        // Insomnia keeps a GraphQL request as the JSON it sends.
        content_type(request, "application/json");
    } else {
        content_type(request, mime);
    }
    request.body = HttpBody::Text(text);
}

/// An environment value: strings with their variables converted, the rest as is.
fn nunjucks_value(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(nunjucks(text, "", &mut Notes::default())),
        other => other.clone(),
    }
}

/// Insomnia's Nunjucks templates as Volley's: `{{ _.name }}` and `{{ name }}` become
/// `{{name}}`, `{% uuid 'v4' %}` becomes `{{$uuid}}`; other tags are kept and reported.
fn nunjucks(text: &str, location: &str, notes: &mut Notes) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let variable = rest.find("{{");
        let tag = rest.find("{%");
        match (variable, tag) {
            (Some(at), _) if tag.is_none_or(|tag| at < tag) => {
                out.push_str(&rest[..at]);
                let Some(end) = rest[at..].find("}}") else {
                    out.push_str(&rest[at..]);
                    break;
                };
                let inner = rest[at + 2..at + end].trim();
                let inner = inner.strip_prefix("_.").unwrap_or(inner);
                out.push_str("{{");
                out.push_str(inner);
                out.push_str("}}");
                rest = &rest[at + end + 2..];
            }
            (_, Some(at)) => {
                out.push_str(&rest[..at]);
                let Some(end) = rest[at..].find("%}") else {
                    out.push_str(&rest[at..]);
                    break;
                };
                let tag = &rest[at..at + end + 2];
                let words: Vec<&str> = tag[2..tag.len() - 2].split_whitespace().collect();
                let format = words.get(1).map(|word| word.trim_matches([',', '\'', '"']));
                let resolver = match (words.first().copied(), format) {
                    (Some("uuid"), _) => Some("$uuid"),
                    (Some("now"), Some("iso-8601")) => Some("$isoTimestamp"),
                    (Some("now"), Some("millis")) => Some("$timestampMs"),
                    (Some("now"), Some("unix")) => Some("$timestamp"),
                    _ => None,
                };
                if let Some(resolver) = resolver {
                    out.push_str("{{");
                    out.push_str(resolver);
                    out.push_str("}}");
                } else {
                    if !location.is_empty() {
                        notes.add(location, format!("the template tag `{tag}` is not converted"));
                    }
                    out.push_str(tag);
                }
                rest = &rest[at + end + 2..];
            }
            _ => {
                out.push_str(rest);
                break;
            }
        }
    }
    out
}
