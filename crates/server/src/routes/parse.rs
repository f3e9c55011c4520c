//! `POST /parse`: the requests and diagnostics of a text or of a workspace file, from
//! Volley's parser, in the shape of t-req's route (its UIs show diagnostics and edit
//! bodies with it). Nothing is substituted or sent.

use axum::Json;
use axum::extract::{Extension, State};
use http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::ToSchema;
use volley_protocol::ErrorCode;
use volley_syntax::{Body, Diagnostic, Document, FormValue, Request, Span};

use crate::auth::Access;
use crate::error::ApiError;
use crate::routes::workspace::{parse as parse_text, read_text, request_name};
use crate::state::AppState;
use crate::wire::{ApiJson, ErrorBody};

/// The body of `POST /parse`: exactly one of `content` and `path`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ParseRequest {
    /// `.http` text.
    pub(crate) content: Option<String>,
    /// A workspace file, relative to it.
    pub(crate) path: Option<String>,
    /// Default `true`: the diagnostics are listed.
    pub(crate) include_diagnostics: Option<bool>,
    /// Default `false`: each request's `body` and source `spans` (byte offsets) too.
    pub(crate) include_body_content: Option<bool>,
}

/// The answer: `{requests: [{request, diagnostics}], diagnostics, resolved}`; `request`
/// as t-req shapes it (`index`, `name`, `method`, `url`, `headers`, `hasBody`,
/// `hasFormData`, `hasBodyFile`, `meta`, and with `includeBodyContent` `body` and `spans`).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ParseResponse {
    #[schema(value_type = Vec<Object>)]
    pub(crate) requests: Vec<Value>,
    /// `{severity, code, message, range: {start: {line, column}, end}}`, lines and
    /// columns from 0.
    #[schema(value_type = Vec<Object>)]
    pub(crate) diagnostics: Vec<Value>,
    /// `{workspaceRoot, projectRoot, httpFilePath?, basePath}`.
    #[schema(value_type = Object)]
    pub(crate) resolved: Value,
}

#[utoipa::path(post, path = "/parse", tag = "workspace", request_body = ParseRequest,
    responses((status = 200, body = ParseResponse),
        (status = 400, description = "VALIDATION_ERROR, CONTENT_OR_PATH_REQUIRED", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 404, description = "FILE_NOT_FOUND", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE, PARSE_BUDGET_EXCEEDED", body = ErrorBody)))]
pub(crate) async fn parse(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    ApiJson(body): ApiJson<ParseRequest>,
) -> Result<Json<ParseResponse>, ApiError> {
    access.require_full()?;
    let root = state.workspace.root.display().to_string();
    let (text, mut resolved) = match (&body.content, &body.path) {
        (Some(content), None) => {
            if content.len() > state.config.max_body_size {
                return Err(ApiError::payload_too_large("the content is larger than this server reads"));
            }
            (content.clone(), json!({ "workspaceRoot": root, "projectRoot": root, "basePath": root }))
        }
        (None, Some(path)) => {
            let text = read_text(&state, path)?;
            let file = state.workspace.resolve(path)?;
            let base = file.parent().map_or_else(|| root.clone(), |parent| parent.display().to_string());
            (text, json!({ "workspaceRoot": root, "projectRoot": root, "httpFilePath": path, "basePath": base }))
        }
        _ => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                ErrorCode::ContentOrPathRequired,
                "give exactly one of `content` and `path`",
            ));
        }
    };
    let config = state.config.clone();
    let include_diagnostics = body.include_diagnostics.unwrap_or(true);
    let include_body = body.include_body_content.unwrap_or(false);
    let answer = tokio::task::spawn_blocking(move || {
        let document = parse_text(&text, &config)?;
        Some(describe(&document, &text, include_diagnostics, include_body))
    })
    .await
    .map_err(|error| ApiError::internal(&error))?;
    let (requests, diagnostics) = answer.ok_or_else(|| {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::ParseBudgetExceeded,
            "the text is too large to parse within this server's budget",
        )
    })?;
    if let Some(config_root) = project_root(&state) {
        resolved["projectRoot"] = Value::String(config_root);
    }
    Ok(Json(ParseResponse { requests, diagnostics, resolved }))
}

/// The directory of the workspace's `volley.jsonc`, when there is one.
fn project_root(state: &AppState) -> Option<String> {
    let io = crate::workspace::WorkspaceFs { workspace: state.workspace.clone() };
    let config = volley_engine::config::Config::discover(&io, &state.workspace.root, &state.config.environment)
        .ok()
        .flatten()?;
    let directory = config.directory().to_path_buf();
    directory.starts_with(&state.workspace.root).then(|| directory.display().to_string())
}

pub(crate) fn describe(
    document: &Document,
    text: &str,
    include_diagnostics: bool,
    include_body: bool,
) -> (Vec<Value>, Vec<Value>) {
    let requests = document
        .requests()
        .map(|request| {
            let diagnostics: Vec<Value> = if include_diagnostics {
                let span = document.blocks.get(request.block).map_or(request.span, |block| block.span);
                document.diagnostics_in(span).map(diagnostic).collect()
            } else {
                Vec::new()
            };
            json!({ "request": request_value(document, request, text, include_body), "diagnostics": diagnostics })
        })
        .collect();
    let diagnostics =
        if include_diagnostics { document.diagnostics.iter().map(diagnostic).collect() } else { Vec::new() };
    (requests, diagnostics)
}

fn request_value(document: &Document, request: &Request, text: &str, include_body: bool) -> Value {
    let mut headers = Map::new();
    for header in &request.headers {
        headers.insert(header.name.to_source(), Value::String(header.value.to_source()));
    }
    let mut meta = Map::new();
    for directive in &request.directives {
        let value = directive.value.as_ref().map(volley_syntax::Template::to_source).unwrap_or_default();
        meta.insert(directive.name.value.clone(), Value::String(value));
    }
    let (has_form, has_file) = match &request.body {
        Body::Form(_) => (true, false),
        Body::File(_) => (false, true),
        Body::Parts(parts) => (false, parts.parts.iter().any(|part| matches!(part, volley_syntax::BodyPart::File(_)))),
        _ => (false, false),
    };
    let mut value = json!({
        "index": request.index,
        "method": request.method.value.as_str(),
        "url": volley_engine::redact::redact_url_password(&request.url.to_source()),
        "headers": headers,
        "hasBody": !matches!(request.body, Body::None),
        "hasFormData": has_form,
        "hasBodyFile": has_file,
        "meta": meta,
    });
    if let Some(name) = request_name(document, request) {
        value["name"] = Value::String(name);
    }
    if include_body {
        value["body"] = body_value(request, text);
        let mut spans = json!({
            "block": offsets(document.blocks.get(request.block).map_or(request.span, |block| block.span)),
            "requestLine": offsets(request.line_span),
            "url": offsets(request.url.span),
        });
        if let (Some(first), Some(last)) = (request.headers.first(), request.headers.last()) {
            spans["headers"] = json!({ "startOffset": first.span.start, "endOffset": last.span.end });
        }
        if let Some(span) = request.body.span() {
            spans["body"] = offsets(span);
        }
        value["spans"] = spans;
    }
    value
}

fn body_value(request: &Request, text: &str) -> Value {
    let content_type =
        request.headers.iter().find(|header| header.is_named("content-type")).map(|header| header.value.to_source());
    let mut body = match &request.body {
        Body::None => return json!({ "kind": "none" }),
        Body::File(file) => json!({ "kind": "file", "path": file.path.to_source() }),
        Body::Form(form) => {
            let fields: Vec<Value> = form
                .fields
                .iter()
                .map(|field| match &field.value {
                    FormValue::Text(value) => {
                        json!({ "name": field.name.value, "value": value.to_source(), "isFile": false })
                    }
                    FormValue::File { path, filename } => {
                        let mut value =
                            json!({ "name": field.name.value, "value": "", "isFile": true, "path": path.to_source() });
                        if let Some(filename) = filename {
                            value["filename"] = Value::String(filename.to_source());
                        }
                        value
                    }
                })
                .collect();
            json!({ "kind": "form-data", "fields": fields })
        }
        other => {
            let source = other.span().map_or("", |span| span.text(text)).to_owned();
            let trimmed = source.trim_start();
            let json_like = trimmed.starts_with('{') || trimmed.starts_with('[');
            json!({ "kind": "inline", "text": source, "isJsonLike": json_like })
        }
    };
    if let Some(content_type) = content_type {
        body["contentType"] = Value::String(content_type);
    }
    body
}

fn offsets(span: Span) -> Value {
    json!({ "startOffset": span.start, "endOffset": span.end })
}

fn diagnostic(diagnostic: &Diagnostic) -> Value {
    let position = |line: u32, column: u32| json!({ "line": line, "column": column });
    json!({
        "severity": diagnostic.severity,
        "code": diagnostic.code.as_str(),
        "message": diagnostic.message,
        "range": {
            "start": position(diagnostic.span.start_position.line, diagnostic.span.start_position.column),
            "end": position(diagnostic.span.end_position.line, diagnostic.span.end_position.column),
        },
    })
}
