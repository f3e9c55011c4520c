//! The integration tests of `volley-server` in one binary (dependencies linked once), a module per concern.

mod budget;
mod cluster;
mod connections;
mod grpc;
mod oauth;
mod openapi;
mod redaction;
mod remote;
mod remote_ws;
mod router;
mod scripts;
mod sockets;
mod support;
mod ws_sessions;
