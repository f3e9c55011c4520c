//! Helpers shared by the test modules: the language server over stdio, `volley serve`
//! as a process, and several of them behind nginx sharing one Redis.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

pub(crate) mod clients;
pub(crate) mod cluster;
pub(crate) mod serve;
pub(crate) mod stdio;
