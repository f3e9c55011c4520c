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

#[cfg(test)]
mod tests {
    /// A request's future is boxed, and so copied, once per request, and each future
    /// above an await carries the one below: the rare parts (grant flows, gRPC,
    /// WebSocket, prompts) and the exchange's state are boxed where they are awaited, so
    /// that an HTTP request's future stays small (13 KB before).
    #[test]
    fn the_future_of_a_request_stays_small() {
        let client = crate::Client::new(crate::ClientConfig::default());
        let document = volley_syntax::parse("GET http://127.0.0.1:1/\n");
        let request = document.requests().next().expect("a request");
        let run = client.run_request(&document, request, None, crate::RunOptions::default());
        let size = std::mem::size_of_val(&run);
        assert!(size <= 4096, "the future of a request is {size} bytes");
    }
}
