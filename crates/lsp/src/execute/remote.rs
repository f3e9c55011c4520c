//! Sending through an execution server (`volley serve`) instead of in this process: the
//! `server` setting, the one `RemoteClient` of the language server, and a send through
//! it mapped to the same outcome as a local send.
//!
//! One client per language server, so one session on the server: it holds the
//! variables, the chained responses and the cookies of every send, whatever the
//! document or workspace folder (as the local client holds chaining for the whole
//! session). A new setting (another URL or token) starts a new client, so a new
//! session; the old one's flow is finished. The server reads the document's text as
//! sent (unsaved edits included) but its own files: `< file` references, `volley.jsonc`
//! and `.env` files are found in the server's workspace, from the document's directory
//! relative to its workspace folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use serde_json::Value;
use volley_engine::report::Exchange;
use volley_engine::{Error, RemoteClient, RemoteConfig, RunOptions};
use volley_syntax::Request;

use super::{Sender, describe, error_info};
use crate::outcome::{ErrorInfo, MAX_BODY_BYTES, Outcome, RequestInfo, SentInfo};

/// The label of the flow a language server's client creates on the server.
const FLOW_LABEL: &str = "volley lsp";

/// What settings say of the execution server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Setting {
    /// Nothing.
    Unsaid,
    /// None: requests are sent from this process (`null`, `""` or an empty `url`).
    Nothing,
    /// This server, with this token (else the environment's `VOLLEY_TOKEN`).
    Server { url: String, token: Option<String> },
}

/// The `server` setting: `{"volley": {"server": {"url": …, "token": …}}}` or
/// `{"server": …}`; a string is the URL alone.
pub(crate) fn setting(settings: &Value) -> Setting {
    let section = settings.get("volley").unwrap_or(settings);
    let Some(value) = section.get("server") else { return Setting::Unsaid };
    let text = |value: Option<&Value>| {
        value.and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty()).map(str::to_owned)
    };
    let (url, token) = match value {
        Value::String(_) => (text(Some(value)), None),
        Value::Object(fields) => (text(fields.get("url")), text(fields.get("token"))),
        _ => (None, None),
    };
    match url {
        Some(url) => Setting::Server { url, token },
        None => Setting::Nothing,
    }
}

/// The execution server of the session, when one is set. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub(crate) struct Remote {
    inner: Arc<Mutex<Option<Connection>>>,
}

/// The client of the set server, or why the setting cannot make one.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    /// The URL as the setting writes it.
    pub(crate) url: String,
    token: Option<String>,
    pub(crate) client: Result<RemoteClient, String>,
}

impl Remote {
    /// Applies the `server` setting. A new server or token replaces the client (a new
    /// session); the one replaced is returned, for its flow to be finished.
    pub(crate) fn set(&self, setting: Setting) -> Option<Connection> {
        let (url, token) = match setting {
            Setting::Unsaid => return None,
            Setting::Nothing => return self.inner.lock().take(),
            Setting::Server { url, token } => (url, token),
        };
        let mut current = self.inner.lock();
        if current.as_ref().is_some_and(|connection| connection.url == url && connection.token == token) {
            return None;
        }
        let client = connect(&url, token.clone());
        current.replace(Connection { url, token, client })
    }

    /// The connection sends go through; `None`: they are sent from this process.
    pub(crate) fn connection(&self) -> Option<Connection> {
        self.inner.lock().clone()
    }
}

/// A client for the server at `url`: the token given, else the environment's, as the
/// engine reads it for `volley run --server` (`VOLLEY_TOKEN`).
fn connect(url: &str, token: Option<String>) -> Result<RemoteClient, String> {
    let token = token.or_else(|| {
        let mut environment = RemoteConfig::default();
        environment.fill_from_env();
        environment.token
    });
    let config = RemoteConfig { token, flow_label: Some(FLOW_LABEL.to_owned()), ..RemoteConfig::new(url) };
    RemoteClient::new(config).map_err(|error| {
        format!(
            "the `server` setting: {error} (hint: write the base URL of `volley serve`, like http://127.0.0.1:4097)"
        )
    })
}

/// Sends `request` of the sender's document through `connection`: refused here by the
/// rule of every front end (with the diagnostics a local send shows), else run by the
/// server in the session, its answer mapped as a local response is.
pub(crate) async fn send(
    sender: &Sender<'_>,
    connection: &Connection,
    request: &Request,
    info: RequestInfo,
) -> Outcome {
    let server = Some(connection.url.clone());
    let refused = |error: ErrorInfo| Outcome {
        request: info.clone(),
        server: server.clone(),
        sent: None,
        response: None,
        error: Some(error),
        logs: Vec::new(),
        history_id: None,
    };
    let client = match &connection.client {
        Ok(client) => client,
        Err(message) => return refused(ErrorInfo::new("server", message.clone())),
    };
    if let Some(refusal) = sender.document.refusal_of(request) {
        let error = Error::Invalid { diagnostics: refusal.into_diagnostics() };
        return refused(error_info(&error, request, sender.text));
    }
    let options = RunOptions::default()
        .profile_or_default(sender.profile)
        .cancel(sender.cancel.clone())
        .max_body_bytes(MAX_BODY_BYTES);
    let source = sender.path.and_then(|path| relative_to_folder(path, sender.folders));
    let run =
        volley_engine::Execute::run_parsed(client, sender.text, sender.document, request, source.as_deref(), options);
    match run.await {
        Ok(response) => {
            let exchange = Exchange::new(&response, sender.text);
            // The answer gives the method and the URL of the request as sent, no more.
            let mut sent = SentInfo::new(exchange.request.clone(), None);
            sent.partial = true;
            let (response, logs) = describe(&response, exchange, &sender.listen(request)).await;
            Outcome {
                request: info,
                server,
                sent: Some(sent),
                response: Some(response),
                error: None,
                logs,
                history_id: None,
            }
        }
        Err(error) => refused(remote_error(&error, request, sender.text, client)),
    }
}

/// `path` relative to the innermost workspace folder holding it: the directory the
/// server is asked to read files from (`basePath`), in its own workspace. `None` for a
/// document outside every folder (the server's workspace root).
fn relative_to_folder(path: &Path, folders: &[PathBuf]) -> Option<PathBuf> {
    let folder = folders.iter().find(|folder| path.starts_with(folder))?;
    path.strip_prefix(folder).ok().map(Path::to_path_buf)
}

/// A failed send through the server as the editor shows it. An upstream failure keeps
/// the kind a local send gives it (`connection_refused`, `timeout`, …); a failure to
/// reach the server itself is `server-unreachable`, naming it, and the server's other
/// refusals are `server` (an invalid token: `server-unauthorized`).
fn remote_error(error: &Error, request: &Request, text: &str, client: &RemoteClient) -> ErrorInfo {
    let url = client.server_url();
    match error {
        Error::Transport(_) => ErrorInfo::new(
            "server-unreachable",
            format!(
                "{error} (hint: check that `volley serve` is running at {url}, or change the language server's \
                 `server` setting)"
            ),
        ),
        Error::Server { code, kind: Some(kind), message, .. }
            if code == "EXECUTE_ERROR" || code == "VALIDATION_ERROR" =>
        {
            ErrorInfo::new(kind, message.clone())
        }
        Error::Server { status: 401 | 403, .. } => ErrorInfo::new(
            "server-unauthorized",
            format!(
                "{error} (hint: give the token of `volley serve` at {url} in the `server` setting's `token`, or in \
                 VOLLEY_TOKEN)"
            ),
        ),
        Error::Server { message, .. } if message.contains("basePath") || message.contains("in the workspace") => {
            ErrorInfo::new(
                "server",
                format!(
                    "{error} (hint: the server reads files from the document's directory relative to its workspace \
                     folder: start `volley serve --workspace` on that folder)"
                ),
            )
        }
        Error::Server { .. } => ErrorInfo::new("server", error.to_string()),
        _ => error_info(error, request, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_setting_is_an_object_or_a_url() {
        let server =
            |url: &str, token: Option<&str>| Setting::Server { url: url.to_owned(), token: token.map(str::to_owned) };
        assert_eq!(
            setting(&json!({"volley": {"server": {"url": "http://127.0.0.1:4097", "token": "t"}}})),
            server("http://127.0.0.1:4097", Some("t"))
        );
        assert_eq!(setting(&json!({"server": " http://h:1 "})), server("http://h:1", None));
        assert_eq!(setting(&json!({"server": {"url": "http://h:1", "token": ""}})), server("http://h:1", None));
        assert_eq!(setting(&json!({"volley": {"server": {"url": "", "token": "t"}}})), Setting::Nothing);
        assert_eq!(setting(&json!({"server": null})), Setting::Nothing);
        assert_eq!(setting(&json!({"profile": "dev"})), Setting::Unsaid);
    }

    #[test]
    fn a_new_url_or_token_replaces_the_client_and_nothing_ends_it() {
        let remote = Remote::default();
        let set = |url: &str, token: Option<&str>| {
            remote.set(Setting::Server { url: url.to_owned(), token: token.map(str::to_owned) })
        };
        assert!(set("http://127.0.0.1:1", None).is_none());
        assert!(set("http://127.0.0.1:1", None).is_none(), "the same setting keeps the client");
        assert!(set("http://127.0.0.1:1", Some("t")).is_some());
        assert!(remote.connection().is_some_and(|connection| connection.client.is_ok()));
        assert!(remote.set(Setting::Unsaid).is_none());
        assert!(remote.set(Setting::Nothing).is_some());
        assert!(remote.connection().is_none());
        assert!(set("not a url", None).is_none());
        let message = remote.connection().and_then(|connection| connection.client.err()).unwrap_or_default();
        assert!(message.contains("`server` setting"), "{message}");
    }

    #[test]
    fn files_are_found_from_the_workspace_folder() {
        let folders = [PathBuf::from("/w/inner"), PathBuf::from("/w")];
        assert_eq!(relative_to_folder(Path::new("/w/inner/a/b.http"), &folders), Some(PathBuf::from("a/b.http")));
        assert_eq!(relative_to_folder(Path::new("/w/c.http"), &folders), Some(PathBuf::from("c.http")));
        assert_eq!(relative_to_folder(Path::new("/elsewhere/d.http"), &folders), None);
    }
}
