//! [`Execute`]: what a local [`Client`] and a [`RemoteClient`] both do, so that a front
//! end runs requests the same way here or through an execution server.

use std::path::Path;

use volley_syntax::{Document, Request};

use crate::client::{Client, RunOptions, Selection};
use crate::error::Error;
use crate::remote::RemoteClient;
use crate::response::Response;
use crate::transport::BoxFuture;

/// Runs `.http` definitions, locally ([`Client`]) or through an execution server
/// ([`RemoteClient`]).
///
/// ```
/// use volley_engine::{Client, ClientConfig, Execute, RunOptions};
///
/// async fn status(executor: &dyn Execute, text: &str) -> Result<u16, volley_engine::Error> {
///     Ok(executor.run_string(text, RunOptions::default()).await?.status())
/// }
/// let local: Box<dyn Execute> = Box::new(Client::new(ClientConfig::default()));
/// # drop((local, status));
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

impl Execute for Client {
    fn run<'a>(&'a self, path: &'a Path, options: RunOptions) -> BoxFuture<'a, Result<Response, Error>> {
        Box::pin(Client::run(self, path, options))
    }

    fn run_string<'a>(&'a self, content: &'a str, options: RunOptions) -> BoxFuture<'a, Result<Response, Error>> {
        Box::pin(Client::run_string(self, content, options))
    }

    fn run_parsed<'a>(
        &'a self,
        _text: &'a str,
        document: &'a Document,
        request: &'a Request,
        source_path: Option<&'a Path>,
        options: RunOptions,
    ) -> BoxFuture<'a, Result<Response, Error>> {
        Box::pin(self.run_request(document, request, source_path, options))
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }
}

impl Execute for RemoteClient {
    fn run<'a>(&'a self, path: &'a Path, options: RunOptions) -> BoxFuture<'a, Result<Response, Error>> {
        Box::pin(RemoteClient::run(self, path, options))
    }

    fn run_string<'a>(&'a self, content: &'a str, options: RunOptions) -> BoxFuture<'a, Result<Response, Error>> {
        Box::pin(RemoteClient::run_string(self, content, options))
    }

    /// The server parses the text again: the request goes by its position, with the
    /// file's path for relative paths and the configuration.
    fn run_parsed<'a>(
        &'a self,
        text: &'a str,
        _document: &'a Document,
        request: &'a Request,
        source_path: Option<&'a Path>,
        mut options: RunOptions,
    ) -> BoxFuture<'a, Result<Response, Error>> {
        options.request = Selection::Index(request.index);
        if let Some(path) = source_path {
            options.source_path = Some(path.to_path_buf());
        }
        Box::pin(RemoteClient::run_string(self, text, options))
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(RemoteClient::close(self))
    }
}
