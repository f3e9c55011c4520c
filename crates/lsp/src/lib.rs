//! The language server of `.http` files (`volley lsp`): the only crate that knows LSP.
//! Documents are kept in step with the editor incrementally (`documents.rs`), features
//! are computed on snapshots with the syntax crate and the engine, and every conversion
//! to LSP types is in `convert.rs`.

mod answers;
mod backend;
mod bodies;
mod commands;
mod completion;
mod convert;
mod cookies;
mod copy;
mod diagnostics;
mod discovery;
mod documents;
mod execute;
pub mod filter;
mod formatting;
mod grpc;
mod history;
mod hover;
mod import;
mod jsonc;
mod listen;
mod lookup;
mod model;
mod navigation;
mod opening;
mod outcome;
mod parsed;
mod paste;
mod preview;
mod progress;
mod prompt;
#[cfg(test)]
mod random_edits;
mod scope;
mod script_api;
mod script_context;
mod server;
mod settings;

pub use backend::Backend;
use tower_lsp_server::{ClientSocket, LspService, Server};

/// The service and its client socket, for driving the server in tests or over any
/// transport (`tower_lsp_server::Server::new(input, output, socket).serve(service)`).
#[must_use]
pub fn service() -> (LspService<Backend>, ClientSocket) {
    LspService::build(Backend::new).custom_method("window/workDoneProgress/cancel", Backend::cancel_progress).finish()
}

/// Serves the language server on stdin/stdout until the client sends `exit` (or closes
/// stdin). Returns `true` when `shutdown` came first, the clean end of a session (LSP
/// asks for exit code 0 then, 1 otherwise). Logs go to stderr only: stdout carries the
/// protocol.
pub async fn serve_stdio() -> bool {
    let (service, socket) = service();
    let backend = service.inner().clone();
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket).serve(service).await;
    backend.is_shut_down()
}
