//! The integration tests of `volley-echo-server` in one binary (dependencies linked once), a module per concern.

mod raw;
mod routes;
mod streaming;
