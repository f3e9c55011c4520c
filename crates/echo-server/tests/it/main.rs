//! The integration tests of `volley-echo-server` in one binary (dependencies linked once), a module per concern.

// `GrpcServer` exists with the feature `grpc` only (`cargo test --workspace` has it: crates/grpc
// asks for it).
#[cfg(feature = "grpc")]
mod grpc;
mod raw;
mod routes;
mod streaming;
