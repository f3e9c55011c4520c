//! [`Execute`]: what a local `Client` (volley-engine) and a `RemoteClient`
//! (volley-remote) both do, so that a front end runs requests the same way here or
//! through an execution server.

use std::path::Path;

use volley_syntax::{Document, Request};

use crate::error::Error;
use crate::options::RunOptions;
use crate::response::Response;
use crate::transport::BoxFuture;

/// Runs `.http` definitions, locally (volley-engine's `Client`) or through an execution
/// server (volley-remote's `RemoteClient`).
///
/// ```
/// use volley_model::{Execute, RunOptions};
///
/// async fn status(executor: &dyn Execute, text: &str) -> Result<u16, volley_model::Error> {
///     Ok(executor.run_string(text, RunOptions::default()).await?.status())
/// }
/// # drop(status);
/// ```
pub trait Execute: Send + Sync {
    /// Reads the `.http` file at `path` and runs the selected request.
    fn run<'a>(&'a self, path: &'a Path, options: RunOptions) -> BoxFuture<'a, Result<Response, Error>>;

    /// Runs the selected request of `content` (`.http` text).
    fn run_string<'a>(&'a self, content: &'a str, options: RunOptions) -> BoxFuture<'a, Result<Response, Error>>;

    /// Runs `request` of `document`, parsed from `text` (read from `source_path`). The
    /// options' selection is ignored.
    fn run_parsed<'a>(
        &'a self,
        text: &'a str,
        document: &'a Document,
        request: &'a Request,
        source_path: Option<&'a Path>,
        options: RunOptions,
    ) -> BoxFuture<'a, Result<Response, Error>>;

    /// Finishes what the executor started (a remote client's flow); nothing for a local
    /// client.
    fn close(&self) -> BoxFuture<'_, Result<(), Error>>;
}
