//! `POST /import/{source}/preview` and `/apply`: another format converted into `.http`
//! files of the workspace, in the shapes of t-req's routes. `curl` converts one cURL
//! command with the engine's reader (`volley_engine::curl`, the one behind the language
//! server's "paste as .http"); `postman` answers `501 NOT_IMPLEMENTED` until the
//! engine has a Postman converter; any other source is a `400`. The files are written
//! as `/workspace/file` writes them (confined, atomic, announced).

use axum::Json;
use axum::extract::{Extension, Path, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use utoipa::ToSchema;
use volley_protocol::ErrorCode;

use crate::auth::Access;
use crate::error::ApiError;
use crate::routes::workspace::{check_writable, relative_text, write_atomically};
use crate::state::AppState;
use crate::wire::{ApiJson, ErrorBody};

/// Sources t-req imports that this server does not convert yet.
const NOT_YET: [&str; 1] = ["postman"];

/// What to do with a file that exists.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OnConflict {
    /// The import is refused (`400`).
    #[default]
    Fail,
    /// The file is left as it is and listed in `skipped`.
    Skip,
    /// The file is replaced.
    Overwrite,
    /// The new file gets a free name (`name-1.http`), listed in `renamed`.
    Rename,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ImportOptions {
    /// Where the files go, relative to the workspace (`""` or `.` for its root).
    pub(crate) output_dir: String,
    #[serde(default)]
    pub(crate) on_conflict: OnConflict,
    // t-req's `mergeVariables` and `force` are accepted and have nothing to change: a
    // cURL command has no variables, and one that does not convert makes no file.
}

/// The body of `/import/{source}/preview`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PreviewRequest {
    /// The text to convert (a cURL command).
    pub(crate) input: String,
    /// `fileName` (default `curl-request`) and `requestName` (a `# @name`).
    #[schema(value_type = Option<Object>)]
    pub(crate) convert_options: Option<Map<String, Value>>,
    pub(crate) plan_options: ImportOptions,
}

/// The body of `/import/{source}/apply`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApplyRequest {
    /// The text to convert (a cURL command).
    pub(crate) input: String,
    /// `fileName` (default `curl-request`) and `requestName` (a `# @name`).
    #[schema(value_type = Option<Object>)]
    pub(crate) convert_options: Option<Map<String, Value>>,
    pub(crate) apply_options: ImportOptions,
}

/// One converted file.
struct Converted {
    relative: String,
    text: String,
}

#[utoipa::path(post, path = "/import/{source}/preview", tag = "workspace", request_body = PreviewRequest,
    params(("source" = String, Path, description = "`curl` (`postman` answers 501)")),
    responses((status = 200, description = "`{result: {written, skipped, renamed, failed, variablesMerged}, diagnostics, stats: {requestCount, fileCount, diagnosticCount}}`: what apply would do, nothing written"),
        (status = 400, description = "VALIDATION_ERROR: an unknown source, no `planOptions`", body = ErrorBody),
        (status = 409, description = "FILE_EXISTS: a file that exists, with `onConflict: fail`", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 422, description = "`{diagnostics, stats}`: the input did not convert"),
        (status = 501, description = "NOT_IMPLEMENTED: a source t-req imports that this server does not convert yet", body = ErrorBody)))]
pub(crate) async fn preview(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(source): Path<String>,
    ApiJson(body): ApiJson<PreviewRequest>,
) -> Result<Response, ApiError> {
    run(
        &state,
        &access,
        &source,
        Import { input: body.input, convert: body.convert_options, options: body.plan_options },
        false,
    )
}

#[utoipa::path(post, path = "/import/{source}/apply", tag = "workspace", request_body = ApplyRequest,
    params(("source" = String, Path, description = "`curl` (`postman` answers 501)")),
    responses((status = 200, description = "`{result, diagnostics, stats}` as preview, the files written"),
        (status = 400, description = "VALIDATION_ERROR: an unknown source, no `applyOptions`", body = ErrorBody),
        (status = 409, description = "FILE_EXISTS: a file that exists, with `onConflict: fail`", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 422, description = "`{diagnostics, stats}`: the input did not convert"),
        (status = 501, description = "NOT_IMPLEMENTED", body = ErrorBody)))]
pub(crate) async fn apply(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(source): Path<String>,
    ApiJson(body): ApiJson<ApplyRequest>,
) -> Result<Response, ApiError> {
    run(
        &state,
        &access,
        &source,
        Import { input: body.input, convert: body.convert_options, options: body.apply_options },
        true,
    )
}

/// Either body, read.
struct Import {
    input: String,
    convert: Option<Map<String, Value>>,
    options: ImportOptions,
}

fn run(state: &AppState, access: &Access, source: &str, body: Import, apply: bool) -> Result<Response, ApiError> {
    access.require_full()?;
    if NOT_YET.contains(&source) {
        return Err(ApiError::new(
            StatusCode::NOT_IMPLEMENTED,
            ErrorCode::NotImplemented,
            format!("this server does not import `{source}` yet; `curl` is imported"),
        ));
    }
    if source != "curl" {
        return Err(ApiError::validation(format!("unknown import source `{source}`; `curl` is imported")));
    }
    let options = body.options;
    if body.input.len() > state.config.max_body_size {
        return Err(ApiError::payload_too_large("the input is larger than this server reads"));
    }
    let convert = body.convert.unwrap_or_default();
    let text_option = |name: &str| convert.get(name).and_then(Value::as_str).map(str::to_owned);
    let parsed = match volley_engine::curl::parse_curl(&body.input) {
        Ok(parsed) => parsed,
        Err(error) => {
            let diagnostics =
                json!([{ "code": "invalid-curl-command", "severity": "error", "message": error.message }]);
            let answer = json!({ "diagnostics": diagnostics, "stats": { "requestCount": 0, "fileCount": 0, "diagnosticCount": 1 } });
            return Ok((StatusCode::UNPROCESSABLE_ENTITY, Json(answer)).into_response());
        }
    };
    let diagnostics: Vec<Value> = parsed
        .notes
        .iter()
        .map(|note| json!({ "code": "curl-note", "severity": "warning", "message": note }))
        .collect();
    let mut text = parsed.to_http();
    if let Some(name) = text_option("requestName").filter(|name| !name.trim().is_empty()) {
        text = format!("# @name {}\n{text}", name.trim());
    }
    let file_name = format!("{}.http", slug(&text_option("fileName").unwrap_or_else(|| "curl-request".to_owned())));
    let directory = options.output_dir.trim().trim_matches('/');
    let relative =
        if directory.is_empty() || directory == "." { file_name } else { format!("{directory}/{file_name}") };
    let converted = vec![Converted { relative, text }];

    let mut written = Vec::new();
    let mut skipped = Vec::new();
    let mut renamed = Vec::new();
    let mut plan = Vec::new();
    for file in converted {
        check_writable(state, &file.relative, &file.text)?;
        let target = state.workspace.resolve_new(&file.relative)?;
        let exists = std::fs::symlink_metadata(&target).is_ok();
        let (target, relative) = match (exists, options.on_conflict) {
            (false, _) | (true, OnConflict::Overwrite) => (target, file.relative.clone()),
            (true, OnConflict::Skip) => {
                skipped.push(file.relative.clone());
                continue;
            }
            (true, OnConflict::Fail) => {
                return Err(crate::routes::workspace::file_exists(&file.relative)
                    .with_details(json!({ "path": file.relative, "hint": "onConflict: skip, overwrite or rename" })));
            }
            (true, OnConflict::Rename) => {
                let (target, relative) = free_name(state, &file.relative)?;
                renamed.push(json!({ "original": file.relative, "actual": relative }));
                (target, relative)
            }
        };
        written.push(relative.clone());
        plan.push((target, relative, file.text, exists && options.on_conflict == OnConflict::Overwrite));
    }
    if apply {
        for (target, relative, text, overwrite) in &plan {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|error| ApiError::internal(&error))?;
            }
            write_atomically(target, text, !overwrite).map_err(|error| {
                if error.code == ErrorCode::FileExists {
                    crate::routes::workspace::file_exists(relative)
                } else {
                    error
                }
            })?;
            let shown = relative_text(&state.workspace.root, target).unwrap_or_else(|| relative.clone());
            state.hub.announce_file(&shown, if *overwrite { "updated" } else { "created" });
        }
    }
    let answer = json!({
        "result": { "written": written, "skipped": skipped, "renamed": renamed, "failed": [], "variablesMerged": false },
        "stats": { "requestCount": 1, "fileCount": plan.len(), "diagnosticCount": diagnostics.len() },
        "diagnostics": diagnostics,
    });
    Ok(Json(answer).into_response())
}

/// `name-1.http`, `name-2.http`, … : the first that does not exist.
fn free_name(state: &AppState, relative: &str) -> Result<(std::path::PathBuf, String), ApiError> {
    let stem = relative.strip_suffix(".http").unwrap_or(relative);
    for number in 1..1000 {
        let candidate = format!("{stem}-{number}.http");
        let target = state.workspace.resolve_new(&candidate)?;
        if std::fs::symlink_metadata(&target).is_err() {
            return Ok((target, candidate));
        }
    }
    Err(ApiError::validation(format!("no free name for `{relative}`")))
}

/// Lowercase letters, digits and `-`: a file name from any text.
fn slug(text: &str) -> String {
    let mut slug = String::new();
    for character in text.trim().chars() {
        if character.is_ascii_alphanumeric() {
            slug.push(character.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() { "curl-request".to_owned() } else { slug.chars().take(80).collect() }
}
