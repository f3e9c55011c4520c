//! `POST /import/{source}/preview` and `/apply`: another format converted into `.http`
//! files of the workspace, in the shapes of t-req's routes, by the converters
//! (`volley_convert`, those of `volley import`): `curl`, `har`, `postman`,
//! `insomnia`, `openapi`; any other source is a `400`. The files are written as
//! `/workspace/file` writes them (confined, atomic, announced).

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
use volley_convert::Format;

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
    /// Write the source's variables and servers (profiles) as `volley.jsonc` in
    /// `outputDir`, when it has some and there is no such file there yet.
    #[serde(default)]
    pub(crate) merge_variables: bool,
    // t-req's `force` is accepted and changes nothing: a source that does not convert
    // makes no file, and what converts only in part is written with its notes.
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
    params(("source" = String, Path)),
    responses((status = 200, description = "`{result: {written, skipped, renamed, failed, variablesMerged, variableMergeInstructions?}, diagnostics, stats: {requestCount, fileCount, diagnosticCount}}`: what apply would do, nothing written"),
        (status = 400, description = "VALIDATION_ERROR: an unknown source, no `planOptions`", body = ErrorBody),
        (status = 409, description = "FILE_EXISTS: a file that exists, with `onConflict: fail`", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status = 422, description = "`{diagnostics, stats}`: the input did not convert")))]
pub(crate) async fn preview(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(source): Path<String>,
    ApiJson(body): ApiJson<PreviewRequest>,
) -> Result<Response, ApiError> {
    let import = Import { input: body.input, convert: body.convert_options, options: body.plan_options };
    run_blocking(state, access, source, import, false).await
}

#[utoipa::path(post, path = "/import/{source}/apply", tag = "workspace", request_body = ApplyRequest,
    params(("source" = String, Path)),
    responses((status = 200, description = "`{result, diagnostics, stats}` as preview, the files written"),
        (status = 400, description = "VALIDATION_ERROR: an unknown source, no `applyOptions`", body = ErrorBody),
        (status = 409, description = "FILE_EXISTS: a file that exists, with `onConflict: fail`", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status = 422, description = "`{diagnostics, stats}`: the input did not convert")))]
pub(crate) async fn apply(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(source): Path<String>,
    ApiJson(body): ApiJson<ApplyRequest>,
) -> Result<Response, ApiError> {
    let import = Import { input: body.input, convert: body.convert_options, options: body.apply_options };
    run_blocking(state, access, source, import, true).await
}

/// Converting a large collection and writing its files is blocking work.
async fn run_blocking(
    state: AppState,
    access: Access,
    source: String,
    import: Import,
    apply: bool,
) -> Result<Response, ApiError> {
    tokio::task::spawn_blocking(move || run(&state, &access, &source, import, apply))
        .await
        .map_err(|error| ApiError::internal(&error))?
}

/// Either body, read.
struct Import {
    input: String,
    convert: Option<Map<String, Value>>,
    options: ImportOptions,
}

fn run(state: &AppState, access: &Access, source: &str, body: Import, apply: bool) -> Result<Response, ApiError> {
    access.require_full()?;
    let Some(format) = Format::from_name(source) else {
        let known: Vec<&str> = Format::ALL.iter().map(|format| format.name()).collect();
        return Err(ApiError::validation(format!("unknown import source `{source}`; one of {}", known.join(", "))));
    };
    let options = body.options;
    if body.input.len() > state.config.max_body_size {
        return Err(ApiError::payload_too_large("the input is larger than this server reads"));
    }
    let convert = body.convert.unwrap_or_default();
    let text_option = |name: &str| {
        convert.get(name).and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty()).map(str::to_owned)
    };
    // t-req names a cURL import `curl-request.http`; the sources without a name of
    // their own (cURL, HAR) take `fileName`, the others name their files themselves.
    let default_stem = if format == Format::Curl { "curl-request" } else { "import" };
    let stem = slug(&text_option("fileName").unwrap_or_else(|| default_stem.to_owned()));
    let conversion = match volley_convert::import(format, &body.input, &stem) {
        Ok(conversion) => conversion,
        Err(error) => {
            let diagnostics = json!([{ "code": "invalid-input", "severity": "error", "message": error.message }]);
            let answer = json!({ "diagnostics": diagnostics, "stats": { "requestCount": 0, "fileCount": 0, "diagnosticCount": 1 } });
            return Ok((StatusCode::UNPROCESSABLE_ENTITY, Json(answer)).into_response());
        }
    };
    let diagnostics: Vec<Value> = conversion
        .unconverted
        .iter()
        .map(|entry| json!({ "code": "unconverted", "severity": "warning", "message": entry.reason, "sourcePath": entry.location }))
        .collect();
    let directory = options.output_dir.trim().trim_matches('/');
    let under = |name: &str| {
        if directory.is_empty() || directory == "." { name.to_owned() } else { format!("{directory}/{name}") }
    };
    let request_name = text_option("requestName").filter(|_| format == Format::Curl && conversion.files.len() == 1);
    let mut request_count = 0;
    let mut converted = Vec::new();
    for (name, text) in &conversion.files {
        let text = match &request_name {
            Some(request) => format!("# @name {request}\n{text}"),
            None => text.clone(),
        };
        request_count +=
            crate::routes::workspace::parse(&text, &state.config).map_or(0, |document| document.requests().count());
        converted.push(Converted { relative: under(name), text });
    }

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
    // The source's variables and servers: a `volley.jsonc` beside the files, written
    // only when asked (`mergeVariables`) and only where there is none (a JSONC file
    // someone wrote is not merged into by a program).
    let (mut variables_merged, mut instructions) = (false, None);
    if let Some(config) = &conversion.config {
        let relative = under("volley.jsonc");
        let target = state.workspace.resolve_new(&relative)?;
        if !options.merge_variables {
            instructions = Some(format!(
                "the source has variables: import again with mergeVariables: true to write {relative}, or add them to your configuration:\n{config}"
            ));
        } else if std::fs::symlink_metadata(&target).is_ok() {
            instructions = Some(format!(
                "{relative} exists and is not changed: add these variables and profiles to it:\n{config}"
            ));
        } else {
            variables_merged = true;
            plan.push((target, relative, config.clone(), false));
        }
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
    let mut result = json!({
        "written": written,
        "skipped": skipped,
        "renamed": renamed,
        "failed": [],
        "variablesMerged": variables_merged,
    });
    if let Some(instructions) = instructions {
        result["variableMergeInstructions"] = Value::String(instructions);
    }
    let answer = json!({
        "result": result,
        "stats": { "requestCount": request_count, "fileCount": conversion.files.len(), "diagnosticCount": diagnostics.len() },
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
    if slug.is_empty() { "import".to_owned() } else { slug.chars().take(80).collect() }
}
