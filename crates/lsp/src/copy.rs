//! `volley.copyAsCurl`: a request built exactly as `volley.send` would send it now
//! (`Sender::prepare`: the active profile, the session's earlier responses, the jar's
//! cookies), not sent, written as one curl command line by the engine's writer
//! (`volley_engine::curl`). Secrets are not redacted: the user copies the command to run
//! it. With the `server` setting the command is still built here (copying sends
//! nothing): a warning says that the execution server's session (its variables,
//! chained responses and cookies) and its files are not in it.

use serde::Serialize;
use volley_engine::curl::{CurlExport as _, CurlRequest};
use volley_syntax::Request;

use crate::execute::Sender;

/// The answer of `volley.copyAsCurl`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Copied {
    /// One line, for a POSIX shell.
    pub(crate) curl: String,
    /// What the command leaves out, one sentence each.
    pub(crate) warnings: Vec<String>,
}

/// The answer of `volley.snippet`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Snippet {
    pub(crate) language: String,
    pub(crate) code: String,
    /// What the code leaves out, one sentence each.
    pub(crate) warnings: Vec<String>,
}

/// `request` as a curl command line, or the message of the error that keeps it from
/// being built.
pub(crate) async fn copy_as_curl(sender: &Sender<'_>, request: &Request) -> Result<Copied, String> {
    let written = write(sender, request, "curl").await?;
    Ok(Copied { curl: written.code, warnings: written.warnings })
}

/// `request` as code of `language` (`curl`, `fetch`, `python`, `go`), built as
/// [`copy_as_curl`] builds it.
pub(crate) async fn write(sender: &Sender<'_>, request: &Request, language: &str) -> Result<Snippet, String> {
    let (mut prepared, _) = sender.prepare(request).await.map_err(|error| error.message)?;
    prepared.add_jar_cookies();
    // A file goes as the file and a multipart form as `-F` fields, as `volley export curl` writes them.
    let directory = sender.path.and_then(std::path::Path::parent);
    let curl = CurlRequest::from_request(&prepared, request, directory);
    let Some(mut command) = volley_engine::curl::snippet(&curl, language) else {
        return Err(format!("no code snippet for `{language}`: use one of curl, fetch, python, go"));
    };
    if let Some(connection) = sender.remote {
        command.warnings.push(format!(
            "built by the language server, not by the execution server at {}: the variables, earlier responses and \
             cookies of its session, and its configuration, are not in the command",
            connection.url
        ));
    }
    Ok(Snippet { language: language.to_owned(), code: command.command, warnings: command.warnings })
}
