//! `impl Execute for Client`: the local executor behind [`Execute`] (the trait is
//! volley-model's; the remote client's impl is volley-remote's).

use std::path::Path;

use volley_syntax::{Document, Request};

use crate::client::{Client, RunOptions};
use crate::error::Error;
use crate::response::Response;
use crate::transport::BoxFuture;
pub use volley_model::execute::Execute;

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
