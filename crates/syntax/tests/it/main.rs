//! The integration tests of `volley-syntax` in one binary (dependencies linked once), a module per concern.

mod diagnostic_docs;
mod fixtures;
mod properties;
