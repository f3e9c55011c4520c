//! `/workspace/*`: the `.http` files of the workspace, the requests of one, and reading,
//! creating, updating and deleting a file, in the shapes of t-req's server (its terminal
//! and web UIs list and edit the workspace through them). Paths are confined exactly as
//! `path` in `/execute` (`workspace.rs`); writes replace the file at once (a temporary
//! file renamed over it) and are announced to observers (`workspaceFileChanged`).
//! Scoped tokens are refused: they run requests inside their flow, nothing more.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query, State};
use http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use volley_protocol::ErrorCode;
use volley_syntax::{Document, LineIndex, Protocol, Request};

use crate::auth::Access;
use crate::error::ApiError;
use crate::routes::events::query_error;
use crate::state::AppState;
use crate::wire::{ApiJson, ErrorBody};

/// Directories never listed (t-req's defaults): tools' and builds' own trees.
const IGNORED_DIRECTORIES: [&str; 8] =
    [".git", "node_modules", ".treq", "dist", "build", "target", "vendor", "__pycache__"];
/// The most files `/workspace/files` lists: the walk stops there.
pub(crate) const MAX_LISTED_FILES: usize = 10_000;
/// The deepest directory the walk enters.
const MAX_DEPTH: usize = 32;
/// The extensions of the files the workspace routes write and delete.
pub(crate) const WRITABLE_EXTENSIONS: [&str; 2] = ["http", "rest"];

/// `GET /workspace/files`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkspaceFiles {
    /// The `.http` and `.rest` files, most recently modified first.
    pub(crate) files: Vec<WorkspaceFile>,
    /// The workspace's absolute path.
    pub(crate) workspace_root: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkspaceFile {
    /// Relative to the workspace, `/`-separated.
    pub(crate) path: String,
    /// The file name.
    pub(crate) name: String,
    /// How many requests the file holds (0 when it cannot be read or parsed in budget).
    pub(crate) request_count: usize,
    /// Milliseconds since the Unix epoch.
    pub(crate) last_modified: u64,
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    /// Comma-separated more directory names or paths to leave out (`fixtures,api/old`).
    ignore: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PathQuery {
    /// Relative to the workspace.
    path: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct DeleteQuery {
    /// Relative to the workspace; a `.http` or `.rest` file.
    #[param(pattern = r"(^|/)[^/]+\.([hH][tT][tT][pP]|[rR][eE][sS][tT])$")]
    path: String,
}

/// `GET /workspace/requests`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WorkspaceRequests {
    pub(crate) path: String,
    pub(crate) requests: Vec<WorkspaceRequest>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WorkspaceRequest {
    /// The `requestIndex` of `/execute`.
    pub(crate) index: usize,
    /// `# @name`, else the `###` separator's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) name: Option<String>,
    pub(crate) method: String,
    /// As written (variables not substituted), a password in it hidden.
    pub(crate) url: String,
    /// `http`, `sse` or `ws`.
    #[schema(value_type = String, example = "http")]
    pub(crate) protocol: &'static str,
    /// The line of the request line, from 1 (a Volley addition).
    pub(crate) line: u32,
}

/// A file's text (`GET` and `POST /workspace/file`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileContent {
    pub(crate) path: String,
    pub(crate) content: String,
    /// Milliseconds since the Unix epoch.
    pub(crate) last_modified: u64,
}

/// The body of `POST /workspace/file`.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct CreateFile {
    /// Relative to the workspace; `.http` or `.rest`.
    #[schema(pattern = r"(^|/)[^/]+\.([hH][tT][tT][pP]|[rR][eE][sS][tT])$")]
    pub(crate) path: String,
    /// Empty by default.
    pub(crate) content: Option<String>,
}

/// The body of `PUT /workspace/file`.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct UpdateFile {
    /// Relative to the workspace; `.http` or `.rest`.
    #[schema(pattern = r"(^|/)[^/]+\.([hH][tT][tT][pP]|[rR][eE][sS][tT])$")]
    pub(crate) path: String,
    pub(crate) content: String,
}

/// A file that exists already.
pub(crate) fn file_exists(path: &str) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, ErrorCode::FileExists, format!("`{path}` already exists"))
}

#[utoipa::path(get, path = "/workspace/files", tag = "workspace", params(ListQuery),
    responses((status = 200, body = WorkspaceFiles), (status = 401, body = ErrorBody),
        (status = 403, description = "FORBIDDEN: a scoped token", body = ErrorBody)))]
pub(crate) async fn files(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<WorkspaceFiles>, ApiError> {
    access.require_full()?;
    let Query(query) = query.map_err(|rejection| query_error(&rejection))?;
    let ignore: Vec<String> = query
        .ignore
        .iter()
        .flat_map(|list| list.split(','))
        .map(|pattern| pattern.trim().trim_matches('/').to_owned())
        .filter(|pattern| !pattern.is_empty())
        .collect();
    let root = state.workspace.root.clone();
    let config = state.config.clone();
    // Reading and parsing every file is blocking work.
    let files = tokio::task::spawn_blocking(move || list_files(&root, &ignore, &config))
        .await
        .map_err(|error| ApiError::internal(&error))?;
    Ok(Json(WorkspaceFiles { files, workspace_root: state.workspace.root.display().to_string() }))
}

/// The `.http` and `.rest` files under `root`, symlinks not followed, the ignored
/// directories and hidden ones left out. Their requests are counted within one parse
/// budget for the whole listing (the server's time budget of one parse): a workspace
/// of many large files is listed in bounded time, the files after the budget with a
/// count of 0.
fn list_files(root: &Path, ignore: &[String], config: &crate::config::ServerConfig) -> Vec<WorkspaceFile> {
    let deadline = std::time::Instant::now() + config.parse_budget;
    let mut files = Vec::new();
    let mut pending = vec![(root.to_path_buf(), 0_usize)];
    while let Some((directory, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else { continue };
        for entry in entries.flatten() {
            if files.len() >= MAX_LISTED_FILES {
                return sorted(files);
            }
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            let Some(relative) = relative_text(root, &path) else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_ignored(&relative, ignore) {
                continue;
            }
            if kind.is_dir() {
                if depth < MAX_DEPTH && !name.starts_with('.') && !IGNORED_DIRECTORIES.contains(&name.as_str()) {
                    pending.push((path, depth + 1));
                }
            } else if kind.is_file() && is_writable(&path) {
                let metadata = entry.metadata().ok();
                let size = metadata.as_ref().map_or(0, std::fs::Metadata::len);
                let request_count = if size <= config.max_body_size as u64 && std::time::Instant::now() < deadline {
                    std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|text| parse_until(&text, config, deadline))
                        .map_or(0, |document| document.requests().count())
                } else {
                    0
                };
                files.push(WorkspaceFile {
                    path: relative,
                    name,
                    request_count,
                    last_modified: modified_ms(metadata.as_ref()),
                });
            }
        }
    }
    sorted(files)
}

fn sorted(mut files: Vec<WorkspaceFile>) -> Vec<WorkspaceFile> {
    files.sort_by(|a, b| b.last_modified.cmp(&a.last_modified).then_with(|| a.path.cmp(&b.path)));
    files
}

/// t-req's rule: a pattern leaves out the path equal to it and everything under a
/// directory path that ends in it.
fn is_ignored(relative: &str, ignore: &[String]) -> bool {
    ignore.iter().any(|pattern| {
        relative == pattern
            || relative.strip_prefix(pattern.as_str()).is_some_and(|rest| rest.starts_with('/'))
            || relative.contains(&format!("/{pattern}/"))
            || relative.ends_with(&format!("/{pattern}"))
    })
}

/// Parses within the server's budget; `None` over it.
pub(crate) fn parse(text: &str, config: &crate::config::ServerConfig) -> Option<Document> {
    parse_until(text, config, std::time::Instant::now() + config.parse_budget)
}

/// Parses within the server's tree memory and until `deadline`; `None` over either.
fn parse_until(text: &str, config: &crate::config::ServerConfig, deadline: std::time::Instant) -> Option<Document> {
    let budget = volley_syntax::Budget { deadline: Some(deadline), tree_bytes: Some(config.parse_memory) };
    volley_syntax::parse_within(text, budget).ok()
}

/// `path` relative to `root`, `/`-separated; `None` when not valid UTF-8.
pub(crate) fn relative_text(root: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = relative.components().map(|component| component.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

fn is_writable(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| WRITABLE_EXTENSIONS.iter().any(|writable| extension.eq_ignore_ascii_case(writable)))
}

fn modified_ms(metadata: Option<&std::fs::Metadata>) -> u64 {
    metadata
        .and_then(|metadata| metadata.modified().ok())
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

#[utoipa::path(get, path = "/workspace/requests", tag = "workspace", params(PathQuery),
    responses((status = 200, body = WorkspaceRequests),
        (status = 400, description = "VALIDATION_ERROR: no `path`, not UTF-8", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 404, description = "FILE_NOT_FOUND", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE, PARSE_BUDGET_EXCEEDED", body = ErrorBody)))]
pub(crate) async fn requests(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    query: Result<Query<PathQuery>, QueryRejection>,
) -> Result<Json<WorkspaceRequests>, ApiError> {
    access.require_full()?;
    let Query(PathQuery { path }) = query.map_err(|rejection| query_error(&rejection))?;
    let text = read_text(&state, &path)?;
    let document = parse(&text, &state.config).ok_or_else(|| {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::ParseBudgetExceeded,
            format!("`{path}` is too large to parse within this server's budget"),
        )
    })?;
    let lines = LineIndex::new(&text);
    let requests = document.requests().map(|request| listed(&document, request, &lines)).collect();
    Ok(Json(WorkspaceRequests { path, requests }))
}

fn listed(document: &Document, request: &Request, lines: &LineIndex) -> WorkspaceRequest {
    WorkspaceRequest {
        index: request.index,
        name: request_name(document, request),
        method: request.method.value.as_str().to_owned(),
        url: volley_engine::redact::redact_url_password(&request.url.to_source()).into_owned(),
        protocol: protocol_name(&request.protocol),
        line: lines.position(request.line_span.start).line + 1,
    }
}

/// `# @name`, else the title of the `###` separator above the request.
pub(crate) fn request_name(document: &Document, request: &Request) -> Option<String> {
    request.name.as_ref().map(|name| name.value.clone()).or_else(|| {
        let block = document.blocks.get(request.block)?;
        block.separator.as_ref()?.name.as_ref().map(|name| name.value.clone())
    })
}

pub(crate) fn protocol_name(protocol: &Protocol) -> &'static str {
    match protocol {
        Protocol::Http => "http",
        Protocol::Sse(_) => "sse",
        Protocol::WebSocket(_) => "ws",
        Protocol::Grpc(_) => "grpc",
    }
}

/// The text of an existing workspace file, within the body size limit.
pub(crate) fn read_text(state: &AppState, path: &str) -> Result<String, ApiError> {
    let file = state.workspace.resolve(path)?;
    let not_found = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::FileNotFound,
            format!("`{path}` is not a file of the workspace"),
        )
    };
    let metadata = std::fs::metadata(&file).map_err(|_| not_found())?;
    if !metadata.is_file() {
        return Err(not_found());
    }
    if metadata.len() > state.config.max_body_size as u64 {
        return Err(ApiError::payload_too_large(format!(
            "`{path}` is larger than the {} bytes this server reads",
            state.config.max_body_size
        )));
    }
    let bytes = std::fs::read(&file).map_err(|error| {
        tracing::warn!(path = %file.display(), "cannot read: {error}");
        not_found()
    })?;
    String::from_utf8(bytes).map_err(|_| ApiError::validation(format!("`{path}` is not UTF-8 text")))
}

#[utoipa::path(get, path = "/workspace/file", tag = "workspace", params(PathQuery),
    responses((status = 200, body = FileContent),
        (status = 400, description = "VALIDATION_ERROR: no `path`, not UTF-8", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 404, description = "FILE_NOT_FOUND", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody)))]
pub(crate) async fn read(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    query: Result<Query<PathQuery>, QueryRejection>,
) -> Result<Json<FileContent>, ApiError> {
    access.require_full()?;
    let Query(PathQuery { path }) = query.map_err(|rejection| query_error(&rejection))?;
    let content = read_text(&state, &path)?;
    let last_modified =
        modified_ms(state.workspace.resolve(&path).ok().and_then(|file| std::fs::metadata(file).ok()).as_ref());
    Ok(Json(FileContent { path, content, last_modified }))
}

#[utoipa::path(post, path = "/workspace/file", tag = "workspace", request_body = CreateFile,
    responses((status = 201, body = FileContent),
        (status = 400, description = "VALIDATION_ERROR: not a `.http` or `.rest` path", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 409, description = "FILE_EXISTS", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody)))]
pub(crate) async fn create(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    ApiJson(body): ApiJson<CreateFile>,
) -> Result<(StatusCode, Json<FileContent>), ApiError> {
    access.require_full()?;
    let content = body.content.unwrap_or_default();
    check_writable(&state, &body.path, &content)?;
    let target = state.workspace.resolve_new(&body.path)?;
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(file_exists(&body.path));
    }
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|error| ApiError::internal(&error))?;
    }
    write_atomically(&target, &content, true)
        .map_err(|error| if error.code == ErrorCode::FileExists { file_exists(&body.path) } else { error })?;
    let path = relative_text(&state.workspace.root, &target).unwrap_or(body.path);
    state.hub.announce_file(&path, "created");
    let last_modified = modified_ms(std::fs::metadata(&target).ok().as_ref());
    Ok((StatusCode::CREATED, Json(FileContent { path, content, last_modified })))
}

#[utoipa::path(put, path = "/workspace/file", tag = "workspace", request_body = UpdateFile,
    responses((status = 200, description = "Updated (an empty body)"),
        (status = 400, description = "VALIDATION_ERROR: not a `.http` or `.rest` path", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 404, description = "FILE_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn update(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    ApiJson(body): ApiJson<UpdateFile>,
) -> Result<StatusCode, ApiError> {
    access.require_full()?;
    let content = body.content;
    check_writable(&state, &body.path, &content)?;
    let target = existing_file(&state, &body.path)?;
    write_atomically(&target, &content, false)?;
    let path = relative_text(&state.workspace.root, &target).unwrap_or(body.path);
    state.hub.announce_file(&path, "updated");
    Ok(StatusCode::OK)
}

#[utoipa::path(delete, path = "/workspace/file", tag = "workspace", params(DeleteQuery),
    responses((status = 204),
        (status = 400, description = "VALIDATION_ERROR: not a `.http` or `.rest` path", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 404, description = "FILE_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn remove(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    query: Result<Query<DeleteQuery>, QueryRejection>,
) -> Result<StatusCode, ApiError> {
    access.require_full()?;
    let Query(DeleteQuery { path }) = query.map_err(|rejection| query_error(&rejection))?;
    if !is_writable(Path::new(&path)) {
        return Err(ApiError::validation(format!("only .http and .rest files are deleted, not `{path}`")));
    }
    // The name in its directory, that directory's symlinks followed: a link is removed
    // itself, never what it points to.
    state.workspace.resolve(&path)?;
    let joined = state.workspace.root.join(&path);
    let (Some(parent), Some(name)) = (joined.parent(), joined.file_name()) else {
        return Err(ApiError::validation(format!("`{path}` does not name a file")));
    };
    let parent = state.workspace.resolve(&relative_text(&state.workspace.root, parent).unwrap_or_default())?;
    let target = parent.join(name);
    if std::fs::symlink_metadata(&target).is_ok_and(|metadata| metadata.is_dir()) {
        return Err(ApiError::validation(format!("`{path}` is a directory")));
    }
    std::fs::remove_file(&target).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::FileNotFound,
            format!("`{path}` does not exist in the workspace"),
        ),
        _ => ApiError::internal(&error),
    })?;
    let path = relative_text(&state.workspace.root, &target).unwrap_or(path);
    state.hub.announce_file(&path, "deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// The rules of every write: a `.http` or `.rest` file, content within the body limit.
pub(crate) fn check_writable(state: &AppState, path: &str, content: &str) -> Result<(), ApiError> {
    if !is_writable(Path::new(path)) {
        return Err(ApiError::validation(format!("only .http and .rest files are written, not `{path}`")));
    }
    if content.len() > state.config.max_body_size {
        return Err(ApiError::payload_too_large(format!(
            "the content has {} bytes, more than the {} this server writes",
            content.len(),
            state.config.max_body_size
        )));
    }
    Ok(())
}

/// An existing regular file of the workspace, symlinks followed (and confined).
fn existing_file(state: &AppState, path: &str) -> Result<PathBuf, ApiError> {
    let target = state.workspace.resolve(path)?;
    if !target.is_file() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::FileNotFound,
            format!("`{path}` is not a file of the workspace"),
        ));
    }
    Ok(target)
}

/// Writes `content` to a temporary file beside `target` and renames it over `target`:
/// a reader sees the old text or the new, never half of it. With `create_new`, an
/// existing `target` (created since the check) is left alone and refused.
pub(crate) fn write_atomically(target: &Path, content: &str, create_new: bool) -> Result<(), ApiError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let directory = target.parent().ok_or_else(|| ApiError::internal(&"a file without a directory"))?;
    let name = target.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = directory.join(format!(
        ".{name}.volley-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| -> std::io::Result<()> {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temporary)?;
        file.write_all(content.as_bytes())?;
        // The replaced file keeps its mode (a 0600 file stays private).
        if !create_new && let Ok(metadata) = std::fs::metadata(target) {
            file.set_permissions(metadata.permissions())?;
        }
        file.sync_all()?;
        if create_new {
            // A hard link fails when the name exists: no file created in between is replaced.
            std::fs::hard_link(&temporary, target)?;
            std::fs::remove_file(&temporary)
        } else {
            std::fs::rename(&temporary, target)
        }
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        if error.kind() == std::io::ErrorKind::AlreadyExists {
            return Err(file_exists(&target.display().to_string()));
        }
        return Err(ApiError::internal(&error));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_ignored;

    #[test]
    fn ignore_patterns_match_whole_path_segments() {
        let ignore = vec!["fixtures".to_owned(), "api/old".to_owned()];
        for path in ["fixtures/a.http", "x/fixtures/a.http", "api/old/a.http", "fixtures"] {
            assert!(is_ignored(path, &ignore), "{path}");
        }
        for path in ["fixtures2/a.http", "api/older/a.http", "my-fixtures/a.http"] {
            assert!(!is_ignored(path, &ignore), "{path}");
        }
    }
}
