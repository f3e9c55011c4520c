//! `GET /config` (the workspace's resolved configuration and its profiles, secrets
//! hidden) and `GET /plugins` (Volley has no plugins: an empty list), in the shapes of
//! t-req's routes.

use std::path::Path;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query, State};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::{IntoParams, ToSchema};
use volley_engine::config::{Config, Defaults};
use volley_engine::redact::is_sensitive_variable;
use volley_engine::resolvers::Environment;

use crate::auth::Access;
use crate::error::ApiError;
use crate::routes::events::query_error;
use crate::state::AppState;
use crate::wire::ErrorBody;
use crate::workspace::WorkspaceFs;

/// What a hidden value reads as.
pub(crate) const REDACTED: &str = "[redacted]";

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ConfigQuery {
    /// A profile to apply over the base configuration.
    profile: Option<String>,
    /// A workspace file or directory whose configuration is wanted (the workspace's
    /// own by default).
    path: Option<String>,
}

/// The answer of `GET /config`: `{configPath?, projectRoot, format?, profile?,
/// availableProfiles, layersApplied, resolvedConfig: {variables, defaults, cookies,
/// security, resolverNames}, warnings}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(transparent)]
#[schema(value_type = Object)]
pub(crate) struct ConfigSummary(Value);

#[utoipa::path(get, path = "/config", tag = "workspace", params(ConfigQuery),
    responses((status = 200, body = ConfigSummary),
        (status = 400, description = "VALIDATION_ERROR: a configuration that does not read", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 404, description = "FILE_NOT_FOUND; NOT_FOUND: no such profile", body = ErrorBody)))]
pub(crate) async fn config(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    query: Result<Query<ConfigQuery>, QueryRejection>,
) -> Result<Json<ConfigSummary>, ApiError> {
    access.require_full()?;
    let Query(query) = query.map_err(|rejection| query_error(&rejection))?;
    let directory = match query.path.as_deref().filter(|path| !path.is_empty() && *path != ".") {
        Some(path) => {
            let resolved = state.workspace.resolve(path)?;
            if resolved.is_dir() { resolved } else { resolved.parent().unwrap_or(&state.workspace.root).to_path_buf() }
        }
        None => state.workspace.root.clone(),
    };
    let io = WorkspaceFs { workspace: state.workspace.clone() };
    let invalid = |error: volley_engine::ConfigError| ApiError::validation(error.to_string());
    let found = Config::discover(&io, &directory, &state.config.environment).map_err(invalid)?;
    let root = state.workspace.root.display().to_string();
    // The profiles runs may select: the configuration's and those `.env` files name.
    let probe = volley_engine::Client::new(volley_engine::ClientConfig {
        io: std::sync::Arc::new(io.clone()),
        environment: state.config.environment.clone(),
        ..volley_engine::ClientConfig::default()
    });
    let available = volley_engine::stages::profiles_for(&probe, &directory).map_err(invalid)?;
    let Some(found) = found else {
        if let Some(profile) = &query.profile
            && let Err(error) = volley_engine::stages::profile_for(&probe, &directory, profile)
        {
            return Err(unknown_profile(format!("{error}: no configuration was found")));
        }
        let summary =
            summary(&root, None, query.profile.as_deref(), &available, &Map::new(), &Defaults::default(), &[]);
        return Ok(Json(ConfigSummary(summary)));
    };
    // The same file read without the environment: a value that differs came from
    // `{env:NAME}` and is hidden, whatever its name.
    let bare = Config::discover(&io, &directory, &Environment::fixed([])).ok().flatten();
    let mut variables = hidden(&found.variables, bare.as_ref().map(|bare| &bare.variables));
    let mut defaults = found.defaults.clone();
    let mut resolvers: Vec<String> = found.resolvers.keys().cloned().collect();
    if let Some(name) = &query.profile {
        let profile = volley_engine::stages::profile_for(&probe, &directory, name)
            .map_err(|error| unknown_profile(error.to_string()))?;
        let bare_profile = bare.as_ref().and_then(|bare| bare.profiles.get(name));
        variables.extend(hidden(&profile.variables, bare_profile.map(|profile| &profile.variables)));
        defaults = layered(&defaults, &profile.defaults);
        resolvers.extend(profile.resolvers.keys().cloned());
        resolvers.sort();
        resolvers.dedup();
    }
    let mut answer =
        summary(&root, Some(&found), query.profile.as_deref(), &available, &variables, &defaults, &resolvers);
    if let Some(project) = found.path.parent().filter(|directory| directory.starts_with(&state.workspace.root)) {
        answer["projectRoot"] = Value::String(project.display().to_string());
    }
    Ok(Json(ConfigSummary(answer)))
}

fn unknown_profile(message: String) -> ApiError {
    ApiError::new(http::StatusCode::NOT_FOUND, volley_protocol::ErrorCode::NotFound, message)
}

/// The variables, a value hidden when its name is sensitive or it came from the
/// environment (it differs from `bare`, the same file read without one).
fn hidden(variables: &Map<String, Value>, bare: Option<&Map<String, Value>>) -> Map<String, Value> {
    variables
        .iter()
        .map(|(name, value)| {
            let from_environment = bare.is_none_or(|bare| bare.get(name) != Some(value));
            let shown = if is_sensitive_variable(name) || from_environment {
                Value::String(REDACTED.to_owned())
            } else {
                value.clone()
            };
            (name.clone(), shown)
        })
        .collect()
}

/// The profile's defaults over the base's.
fn layered(base: &Defaults, profile: &Defaults) -> Defaults {
    let mut headers = base.headers.clone();
    for (name, value) in &profile.headers {
        headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
    Defaults {
        headers,
        timeout: profile.timeout.or(base.timeout),
        follow_redirects: profile.follow_redirects.or(base.follow_redirects),
        validate_ssl: profile.validate_ssl.or(base.validate_ssl),
    }
}

fn summary(
    root: &str,
    config: Option<&Config>,
    profile: Option<&str>,
    available: &[String],
    variables: &Map<String, Value>,
    defaults: &Defaults,
    resolvers: &[String],
) -> Value {
    let headers: Map<String, Value> = defaults
        .headers
        .iter()
        .map(|(name, value)| {
            let shown = if volley_engine::redact::is_sensitive_header(name) { REDACTED } else { value.as_str() };
            (name.clone(), Value::String(shown.to_owned()))
        })
        .collect();
    let timeout = defaults.timeout.unwrap_or(volley_engine::stages::DEFAULT_TIMEOUT);
    let (enabled, jar) =
        config.map_or((true, None), |config| (config.cookies.enabled, config.cookies.jar_path.clone()));
    let mode = match (enabled, &jar) {
        (false, _) => "disabled",
        (true, Some(_)) => "persistent",
        (true, None) => "memory",
    };
    let mut cookies = json!({ "enabled": enabled, "mode": mode });
    if let Some(jar) = jar {
        cookies["jarPath"] = Value::String(jar.display().to_string());
    }
    let mut answer = json!({
        "projectRoot": root,
        "availableProfiles": available,
        "layersApplied": [],
        "resolvedConfig": {
            "variables": variables,
            "defaults": {
                "timeoutMs": u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                "followRedirects": defaults.follow_redirects.unwrap_or(true),
                "validateSSL": defaults.validate_ssl.unwrap_or(true),
                "headers": headers,
            },
            "cookies": cookies,
            "security": { "allowExternalFiles": false, "allowPluginsOutsideProject": false },
            "resolverNames": resolvers,
        },
        "warnings": [],
    });
    if let Some(config) = config {
        answer["configPath"] = Value::String(config.path.display().to_string());
        let format =
            if config.path.extension().is_some_and(|extension| extension == "jsonc") { "jsonc" } else { "json" };
        answer["format"] = Value::String(format.to_owned());
        let mut layers = vec![Value::String(file_name(&config.path))];
        if let Some(profile) = profile {
            answer["profile"] = Value::String(profile.to_owned());
            layers.push(Value::String(format!("profile:{profile}")));
        }
        answer["layersApplied"] = Value::Array(layers);
    }
    answer
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned())
}

/// `GET /plugins`: `{plugins: [], count: 0}`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Plugins {
    /// Always empty: Volley has no plugins (`$` resolvers and `volley.jsonc` command
    /// resolvers do their work, listed by `GET /config` as `resolverNames`).
    #[schema(value_type = Vec<Object>)]
    pub(crate) plugins: Vec<Value>,
    pub(crate) count: usize,
}

#[utoipa::path(get, path = "/plugins", tag = "workspace",
    responses((status = 200, body = Plugins), (status = 401, body = ErrorBody),
        (status = 403, description = "FORBIDDEN: a scoped token", body = ErrorBody)))]
pub(crate) async fn plugins(Extension(access): Extension<Access>) -> Result<Json<Plugins>, ApiError> {
    access.require_full()?;
    Ok(Json(Plugins { plugins: Vec::new(), count: 0 }))
}
