//! The integration tests of `volley-observe` in one binary (dependencies linked once), a module per concern.

mod live;
mod render;
