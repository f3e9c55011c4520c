//! OpenAPI 3.0 and 3.1 descriptions, JSON or YAML (read by `serde_norway`): one request
//! per operation, in a `.http` file per first tag (untagged operations in a file named
//! after the API). Path, query, header and cookie parameters are `{{variables}}`, their
//! examples or defaults the variables' values in a generated `volley.jsonc`, where every
//! server is a profile setting `baseUrl`. A request body is its example (the media
//! type's `example`, its first `examples` entry, else one made from the schema).
//! Security schemes become headers with variables: HTTP basic and bearer, API keys
//! (header, query, cookie); OAuth 2 and `OpenID` Connect as a bearer token. Local `$ref`s
//! are followed; external ones, callbacks and webhooks are reported.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::http::{HttpBody, HttpField, HttpRequest, config_text, file_name, http_text};
use super::{Conversion, ConvertError, Notes, str_at};

/// The methods of a path item, in the order they are written out.
const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// How deep a schema is walked to make an example (recursive schemas stop there).
const MAX_DEPTH: usize = 8;

pub(super) fn import(source: &str) -> Result<Conversion, ConvertError> {
    let spec: Value = if source.trim_start().starts_with('{') {
        serde_json::from_str(source)
            .map_err(|error| ConvertError::new(format!("not an OpenAPI description: invalid JSON: {error}")))?
    } else {
        serde_norway::from_str(source)
            .map_err(|error| ConvertError::new(format!("not an OpenAPI description: invalid YAML: {error}")))?
    };
    let version = str_at(&spec, "openapi").unwrap_or_default();
    if !(version.starts_with("3.0") || version.starts_with("3.1")) {
        let found = str_at(&spec, "swagger").map_or_else(
            || format!("`openapi: {version}`"),
            |swagger| format!("Swagger {swagger}, the format before OpenAPI 3"),
        );
        return Err(ConvertError::new(format!("not an OpenAPI 3.0 or 3.1 description: {found}")));
    }
    let title = spec.pointer("/info/title").and_then(Value::as_str).unwrap_or("api").to_owned();
    let mut importer = Importer { spec: &spec, notes: Notes::default(), variables: BTreeMap::new() };
    let profiles = importer.servers();
    let mut files: BTreeMap<String, Vec<HttpRequest>> = BTreeMap::new();
    for (path, item) in spec.get("paths").and_then(Value::as_object).into_iter().flatten() {
        let location = format!("paths.{path}");
        let Some(item) = importer.resolve(item, &location) else { continue };
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            let location = format!("{location}.{method}");
            let request = importer.operation(path, method, item, operation, &location);
            let tag = operation.pointer("/tags/0").and_then(Value::as_str).unwrap_or(&title);
            files.entry(format!("{}.http", file_name(tag))).or_default().push(request);
        }
        for key in item.as_object().into_iter().flat_map(Map::keys) {
            if !METHODS.contains(&key.as_str()) && !matches!(key.as_str(), "parameters" | "summary" | "description") {
                importer.notes.add(&location, format!("`{key}` of the path item is not converted"));
            }
        }
    }
    for name in spec.get("webhooks").and_then(Value::as_object).into_iter().flat_map(Map::keys) {
        importer.notes.add(&format!("webhooks.{name}"), "a webhook is a request the API sends: not converted");
    }
    let mut conversion = Conversion {
        files: files.into_iter().map(|(path, requests)| (path, http_text(&requests))).collect(),
        ..Conversion::default()
    };
    conversion.config =
        Some(config_text(&format!("the OpenAPI description \"{title}\""), &importer.variables, &profiles));
    conversion.unconverted = importer.notes.into_vec();
    Ok(conversion)
}

struct Importer<'a> {
    spec: &'a Value,
    notes: Notes,
    variables: BTreeMap<String, Value>,
}

impl<'a> Importer<'a> {
    /// `baseUrl` from the first server; every server a profile.
    fn servers(&mut self) -> BTreeMap<String, BTreeMap<String, Value>> {
        let mut profiles = BTreeMap::new();
        let servers = self.spec.get("servers").and_then(Value::as_array).cloned().unwrap_or_default();
        if servers.is_empty() {
            self.notes.add("servers", "no server: `baseUrl` is set to http://localhost");
            self.variables.insert("baseUrl".to_owned(), json!("http://localhost"));
        }
        for (index, server) in servers.iter().enumerate() {
            let mut url = str_at(server, "url").unwrap_or_default().to_owned();
            for (name, variable) in server.get("variables").and_then(Value::as_object).into_iter().flatten() {
                let default = variable.get("default").map(text).unwrap_or_default();
                url = url.replace(&format!("{{{name}}}"), &default);
            }
            let url = url.trim_end_matches('/').to_owned();
            if !url.contains("://") {
                self.notes.add(
                    &format!("servers[{index}]"),
                    format!("`{url}` is relative to where the description is served: write the host in volley.jsonc"),
                );
            }
            if index == 0 {
                self.variables.insert("baseUrl".to_owned(), json!(url));
            }
            let name = str_at(server, "description").map_or_else(|| format!("server{}", index + 1), file_name);
            profiles.insert(name, BTreeMap::from([("baseUrl".to_owned(), json!(url))]));
        }
        profiles
    }

    /// `value`, its local `$ref` followed; `None` (reported) for an external one.
    fn resolve(&mut self, value: &'a Value, location: &str) -> Option<&'a Value> {
        let mut value = value;
        for _ in 0..16 {
            let Some(reference) = str_at(value, "$ref") else { return Some(value) };
            let Some(pointer) = reference.strip_prefix('#') else {
                self.notes.add(location, format!("the external reference `{reference}` is not followed"));
                return None;
            };
            let pointer = pointer.replace("~1", "/").replace("~0", "~");
            let Some(target) = self.spec.pointer(&pointer) else {
                self.notes.add(location, format!("the reference `{reference}` points nowhere"));
                return None;
            };
            value = target;
        }
        self.notes.add(location, "references that never end");
        None
    }

    fn operation(
        &mut self,
        path: &str,
        method: &str,
        item: &'a Value,
        operation: &'a Value,
        location: &str,
    ) -> HttpRequest {
        let mut url = format!("{{{{baseUrl}}}}{path}");
        let mut request = HttpRequest::new(method, "");
        let operation_id = str_at(operation, "operationId");
        request.title = Some(
            str_at(operation, "summary")
                .or(operation_id)
                .map_or_else(|| format!("{} {path}", method.to_uppercase()), str::to_owned),
        );
        if let Some(id) = operation_id.filter(|id| id.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-')) {
            request.directives.push(format!("name {id}"));
        }
        if let Some(description) = str_at(operation, "description").filter(|text| !text.trim().is_empty()) {
            request.comments.push(description.trim_end().to_owned());
        }
        if operation.get("deprecated").and_then(Value::as_bool) == Some(true) {
            request.comments.push("deprecated".to_owned());
        }
        // Operation parameters replace path-item ones of the same name and place.
        let mut parameters: Vec<&Value> = Vec::new();
        for list in [item.get("parameters"), operation.get("parameters")] {
            for parameter in list.and_then(Value::as_array).into_iter().flatten() {
                let Some(parameter) = self.resolve(parameter, location) else { continue };
                let key = |p: &Value| (str_at(p, "name").map(str::to_owned), str_at(p, "in").map(str::to_owned));
                parameters.retain(|existing| key(existing) != key(parameter));
                parameters.push(parameter);
            }
        }
        let mut query = Vec::new();
        let mut cookies = Vec::new();
        for parameter in parameters {
            let name = str_at(parameter, "name").unwrap_or_default();
            let variable = self.parameter_variable(name, parameter);
            match str_at(parameter, "in").unwrap_or_default() {
                "path" => url = url.replace(&format!("{{{name}}}"), &format!("{{{{{variable}}}}}")),
                "query" => {
                    if parameter.get("required").and_then(Value::as_bool) == Some(true) || has_example(parameter) {
                        query.push(format!("{name}={{{{{variable}}}}}"));
                    } else {
                        request.comments.push(format!("optional query parameter: {name}={{{{{variable}}}}}"));
                    }
                }
                "header" => request.headers.push((name.to_owned(), format!("{{{{{variable}}}}}"))),
                "cookie" => cookies.push(format!("{name}={{{{{variable}}}}}")),
                other => {
                    self.notes.add(location, format!("the parameter `{name}` in `{other}` is not converted"));
                }
            }
        }
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query.join("&"));
        }
        request.url = url;
        self.security(operation, &mut request, location);
        if !cookies.is_empty() {
            request.headers.push(("Cookie".to_owned(), cookies.join("; ")));
        }
        if let Some(body) = operation.get("requestBody")
            && let Some(body) = self.resolve(body, location)
        {
            self.body(body, &mut request, location);
        }
        if operation.get("servers").is_some() {
            let reason = self.notes.add(location, "the operation's own servers are not converted: it uses `baseUrl`");
            request.comments.push(reason);
        }
        for name in operation.get("callbacks").and_then(Value::as_object).into_iter().flat_map(Map::keys) {
            let reason =
                self.notes.add(location, format!("the callback `{name}` is a request the API sends: not converted"));
            request.comments.push(reason);
        }
        request
    }

    /// The variable of a parameter (its name, `-` and `.` made `_`), its value the
    /// parameter's example, its schema's example or default, or its first enum value.
    fn parameter_variable(&mut self, name: &str, parameter: &'a Value) -> String {
        let variable: String = name.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '_' }).collect();
        let schema = parameter.get("schema");
        let example = parameter
            .get("example")
            .or_else(|| {
                parameter
                    .get("examples")
                    .and_then(Value::as_object)
                    .and_then(|examples| examples.values().next()?.get("value"))
            })
            .or_else(|| schema.and_then(|schema| schema.get("example").or_else(|| schema.get("default"))))
            .or_else(|| schema.and_then(|schema| schema.pointer("/examples/0").or_else(|| schema.pointer("/enum/0"))))
            .map_or_else(String::new, text);
        self.variables.entry(variable.clone()).or_insert(json!(example));
        variable
    }

    fn security(&mut self, operation: &Value, request: &mut HttpRequest, location: &str) {
        let requirements = operation.get("security").or_else(|| self.spec.get("security"));
        let Some(requirement) = requirements.and_then(|list| list.get(0)).and_then(Value::as_object) else { return };
        let spec = self.spec;
        for name in requirement.keys() {
            let Some(scheme) = spec.pointer(&format!("/components/securitySchemes/{name}")) else {
                self.notes.add(location, format!("the security scheme `{name}` is not in components.securitySchemes"));
                continue;
            };
            let Some(scheme) = self.resolve(scheme, location) else { continue };
            let kind = str_at(scheme, "type").unwrap_or_default();
            let http_scheme = str_at(scheme, "scheme").unwrap_or_default().to_ascii_lowercase();
            let variables = &mut self.variables;
            match (kind, http_scheme.as_str()) {
                ("http", "basic") => {
                    let header =
                        format!("Basic {}:{}", variable(variables, "username"), variable(variables, "password"));
                    request.headers.push(("Authorization".to_owned(), header));
                }
                ("http", "bearer") => request
                    .headers
                    .push(("Authorization".to_owned(), format!("Bearer {}", variable(variables, "token")))),
                ("apiKey", _) => {
                    let key = str_at(scheme, "name").unwrap_or("api_key");
                    let value = variable(variables, &file_name(key).replace('-', "_"));
                    match str_at(scheme, "in").unwrap_or("header") {
                        "query" => {
                            request.add_query(key, &value);
                        }
                        "cookie" => request.headers.push(("Cookie".to_owned(), format!("{key}={value}"))),
                        _ => request.headers.push((key.to_owned(), value)),
                    }
                }
                ("oauth2" | "openIdConnect", _) => {
                    request
                        .headers
                        .push(("Authorization".to_owned(), format!("Bearer {}", variable(variables, "token"))));
                    self.notes.add(
                        location,
                        format!("`{name}` ({kind}): the token is a variable; Volley does not run the flow"),
                    );
                }
                _ => {
                    let reason = self
                        .notes
                        .add(location, format!("the security scheme `{name}` ({kind} {http_scheme}) is not converted"));
                    request.comments.push(reason);
                }
            }
        }
    }

    fn body(&mut self, body: &'a Value, request: &mut HttpRequest, location: &str) {
        let Some(content) = body.get("content").and_then(Value::as_object) else { return };
        let Some((mime, media)) =
            content.iter().find(|(mime, _)| mime.contains("json")).or_else(|| content.iter().next())
        else {
            return;
        };
        let others: Vec<&str> = content.keys().filter(|other| *other != mime).map(String::as_str).collect();
        if !others.is_empty() {
            let reason = self
                .notes
                .add(location, format!("the body is written as {mime}; also accepted: {}", others.join(", ")));
            request.comments.push(reason);
        }
        let example = match media.get("example") {
            Some(example) => Some(example.clone()),
            None => {
                match media.get("examples").and_then(Value::as_object).and_then(|examples| examples.values().next()) {
                    Some(example) => self.resolve(example, location).and_then(|example| example.get("value")).cloned(),
                    None => media.get("schema").map(|schema| self.example(schema, location, 0)),
                }
            }
        };
        let example = example.unwrap_or(Value::Null);
        let multipart = mime.starts_with("multipart/");
        if multipart || mime == "application/x-www-form-urlencoded" {
            let binary = |name: &str| {
                media.pointer(&format!("/schema/properties/{name}/format")).and_then(Value::as_str) == Some("binary")
                    || media.pointer(&format!("/schema/properties/{name}/contentMediaType")).is_some()
            };
            let mut fields = Vec::new();
            for (name, value) in example.as_object().into_iter().flatten() {
                if multipart && binary(name) {
                    let reason = self
                        .notes
                        .add(location, format!("the file field `{name}` sends `./{name}`: put the file there"));
                    request.comments.push(reason);
                    fields.push(HttpField { name: name.clone(), value: name.clone(), file: true, filename: None });
                } else {
                    fields.push(HttpField::text(name, &text(value)));
                }
            }
            if multipart {
                request.headers.push(("Content-Type".to_owned(), "multipart/form-data".to_owned()));
            }
            request.body = HttpBody::Form(fields);
            return;
        }
        request.headers.push(("Content-Type".to_owned(), mime.clone()));
        request.body = HttpBody::Text(match &example {
            Value::String(text) if !mime.contains("json") => text.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        });
    }

    /// An example value made from a schema: its `example`, `default`, first `enum` or
    /// `examples` value, else one per type (objects with every property).
    fn example(&mut self, schema: &'a Value, location: &str, depth: usize) -> Value {
        let Some(schema) = self.resolve(schema, location) else { return Value::Null };
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        if let Some(example) =
            schema.get("example").or_else(|| schema.get("default")).or_else(|| schema.pointer("/examples/0"))
        {
            return example.clone();
        }
        if let Some(first) = schema.pointer("/enum/0").or_else(|| schema.get("const")) {
            return first.clone();
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            let mut merged = Map::new();
            for part in all {
                if let Value::Object(object) = self.example(part, location, depth + 1) {
                    merged.extend(object);
                }
            }
            return Value::Object(merged);
        }
        if let Some(first) = schema.pointer("/oneOf/0").or_else(|| schema.pointer("/anyOf/0")) {
            return self.example(first, location, depth + 1);
        }
        // 3.1 writes `type` as a list (`[string, "null"]`): the first that is not null.
        let kind = match schema.get("type") {
            Some(Value::Array(kinds)) => {
                kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null").unwrap_or("null")
            }
            Some(Value::String(kind)) => kind.as_str(),
            _ if schema.get("properties").is_some() => "object",
            _ => "string",
        };
        match kind {
            "object" => {
                let mut object = Map::new();
                for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
                    object.insert(name.clone(), self.example(property, location, depth + 1));
                }
                Value::Object(object)
            }
            "array" => match schema.get("items") {
                Some(items) => Value::Array(vec![self.example(items, location, depth + 1)]),
                None => json!([]),
            },
            "integer" | "number" => json!(0),
            "boolean" => json!(false),
            "null" => Value::Null,
            _ => json!(match str_at(schema, "format") {
                Some("date-time") => "2026-01-01T00:00:00Z",
                Some("date") => "2026-01-01",
                Some("email") => "user@example.com",
                Some("uuid") => "00000000-0000-4000-8000-000000000000",
                Some("uri" | "url") => "https://example.com",
                _ => "string",
            }),
        }
    }
}

/// `{{name}}`, the variable declared (empty) when the description has no value for it.
fn variable(variables: &mut BTreeMap<String, Value>, name: &str) -> String {
    variables.entry(name.to_owned()).or_insert(json!(""));
    format!("{{{{{name}}}}}")
}

fn has_example(parameter: &Value) -> bool {
    parameter.get("example").is_some()
        || parameter.get("examples").is_some()
        || parameter.pointer("/schema/example").is_some()
        || parameter.pointer("/schema/default").is_some()
        || parameter.pointer("/schema/examples/0").is_some()
}

/// A value as text: strings as they are, the rest as JSON.
fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
