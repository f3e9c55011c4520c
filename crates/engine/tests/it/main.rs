//! The integration tests of `volley-engine` in one binary (dependencies linked once), a module per concern.

mod ahead;
mod analysis;
mod assertions;
mod auth_patterns;
mod bodies;
mod client_certificates;
mod compatibility;
mod configuration;
mod credentials;
mod exchange;
mod grpc;
mod network;
mod oauth;
mod resolvers;
mod streaming;
mod support;
mod variables;
