//! The integration tests of `volley-lsp` in one binary (dependencies linked once), a module per concern.

mod code_action;
mod completion_hover;
mod compose;
mod cookies;
mod curl;
mod grpc;
mod history;
mod import;
mod large;
mod navigation;
mod network;
mod oauth;
mod outcome;
mod protocol;
mod script_sends;
mod scripts;
mod send;
mod support;
