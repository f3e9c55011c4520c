//! The integration tests of `volley-test-support` in one binary (dependencies linked once), a module per concern.

mod raw;
mod routes;
mod streaming;
