//! What the remote client sends to `POST /execute` (and `/execute/sse`,
//! `/execute/ws`): the body of a run, its `basePath` and its timeout as the server
//! takes them.

use std::ops::{Deref, DerefMut};
use std::path::{Component, Path};
use std::time::Duration;

use serde::Serialize;
use volley_protocol::ExecuteRequest;

use volley_model::{RunOptions, Selection};

/// The smallest `timeoutMs` the server takes.
const MIN_TIMEOUT_MS: u64 = 100;
/// The largest `timeoutMs` the server takes.
pub(crate) const MAX_TIMEOUT_MS: u64 = 300_000;

/// The body of `POST /execute`, `/execute/sse` and `/execute/ws`: the protocol's
/// [`ExecuteRequest`], built from a run's options.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub(crate) struct ExecuteBody(ExecuteRequest);

impl Deref for ExecuteBody {
    type Target = ExecuteRequest;

    fn deref(&self) -> &ExecuteRequest {
        &self.0
    }
}

impl DerefMut for ExecuteBody {
    fn deref_mut(&mut self) -> &mut ExecuteRequest {
        &mut self.0
    }
}

impl ExecuteBody {
    /// The body of one run: selection, variables (the run's, its overrides on top),
    /// profile and timeout (the run's, else the client's), redirects and TLS checks
    /// when the run sets them.
    pub(crate) fn new(
        content: &str,
        base_path: Option<String>,
        options: &RunOptions,
        defaults: Defaults<'_>,
        ids: (&str, &str),
    ) -> Self {
        let (request_name, request_index) = match &options.request {
            Selection::First => (None, None),
            Selection::Name(name) => (Some(name.clone()), None),
            Selection::Index(index) => (None, Some(u64::try_from(*index).unwrap_or(u64::MAX))),
        };
        let mut variables = options.variables.clone();
        variables.extend(options.overrides.iter().map(|(name, value)| (name.clone(), value.clone())));
        // A `run` line's variables, above all (the CLI refuses `{{ }}` in them here).
        variables.extend(options.command_variables.iter().map(|(name, value)| (name.clone(), value.clone())));
        Self(ExecuteRequest {
            content: Some(content.to_owned()),
            base_path,
            request_name,
            request_index,
            session_id: Some(ids.0.to_owned()),
            flow_id: Some(ids.1.to_owned()),
            profile: options.profile.as_deref().or(defaults.profile).map(str::to_owned),
            variables: (!variables.is_empty()).then_some(variables),
            timeout_ms: options.timeout.or(defaults.timeout).map(timeout_ms),
            follow_redirects: options.follow_redirects,
            validate_ssl: options.validate_ssl,
            ..ExecuteRequest::default()
        })
    }
}

/// What a run takes from the client's configuration when it does not say.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Defaults<'a> {
    pub(crate) profile: Option<&'a str>,
    pub(crate) timeout: Option<Duration>,
}

/// A timeout in the milliseconds the server takes (100..=300000).
pub(crate) fn timeout_ms(timeout: Duration) -> u64 {
    u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX).clamp(MIN_TIMEOUT_MS, MAX_TIMEOUT_MS)
}

/// The `basePath` of a run from the `.http` file it comes from: the file's directory
/// when the path is relative and never goes up (`..`), so the server, which shares
/// the working directory, resolves `< file` references the same way; `None` otherwise
/// (absolute paths, `..`, names that are not UTF-8). A file in the working directory
/// gives `"."`. Separators are `/` on every platform.
#[must_use]
pub(crate) fn base_path(file: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in file.parent()?.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(if parts.is_empty() { ".".to_owned() } else { parts.join("/") })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn base_path_rule() {
        assert_eq!(base_path(Path::new("a.http")).as_deref(), Some("."));
        assert_eq!(base_path(Path::new("./a.http")).as_deref(), Some("."));
        assert_eq!(base_path(Path::new("api/a.http")).as_deref(), Some("api"));
        assert_eq!(base_path(Path::new("./api/v1/a.http")).as_deref(), Some("api/v1"));
        assert_eq!(base_path(Path::new("../a.http")), None);
        assert_eq!(base_path(Path::new("api/../a.http")), None);
        assert_eq!(base_path(Path::new("/abs/a.http")), None);
        assert_eq!(base_path(Path::new("")), None);
    }

    #[test]
    fn execute_body_fields() {
        let options = RunOptions { follow_redirects: Some(false), ..RunOptions::default() }
            .name("login")
            .variable("user", "ada")
            .variable("shared", "run")
            .timeout(Duration::from_millis(5));
        let mut options = options;
        options.overrides.insert("shared".to_owned(), json!("override"));
        let defaults = Defaults { profile: Some("dev"), timeout: Some(Duration::from_secs(1)) };
        let body = ExecuteBody::new("GET http://x/\n", Some("api".to_owned()), &options, defaults, ("s_1", "f_1"));
        assert_eq!(
            serde_json::to_value(&body).expect("serializes"),
            json!({
                "content": "GET http://x/\n", "basePath": "api", "requestName": "login",
                "sessionId": "s_1", "flowId": "f_1", "profile": "dev",
                "variables": {"user": "ada", "shared": "override"},
                "timeoutMs": 100, "followRedirects": false,
            })
        );

        let options = RunOptions::default().index(2).profile("prod");
        let mut options = options;
        options.validate_ssl = Some(false);
        let defaults = Defaults { profile: Some("dev"), timeout: Some(Duration::from_secs(900)) };
        let body = ExecuteBody::new("", None, &options, defaults, ("s", "f"));
        assert_eq!(
            serde_json::to_value(&body).expect("serializes"),
            json!({"content": "", "requestIndex": 2, "sessionId": "s", "flowId": "f", "profile": "prod",
                   "timeoutMs": 300_000, "validateSSL": false})
        );
    }
}
