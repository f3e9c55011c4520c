//! `impl Execute for RemoteClient`: the remote executor behind
//! [`Execute`](volley_model::execute::Execute).

use std::path::Path;

use volley_model::execute::Execute;
use volley_model::{Error, Response, RunOptions, Selection};
use volley_syntax::{Document, Request};
use volley_transport::transport::BoxFuture;

use crate::RemoteClient;

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
