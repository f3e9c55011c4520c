//! Volley's JavaScript sandbox: QuickJS (through rquickjs) with the JetBrains HTTP
//! Client script API (`client`, `request`, `response`, httpyac's additions) loaded from
//! `api.js`, bounded in time and memory, with no file system, network or process.
//!
//! It knows nothing of requests: a script runs over `input`, the JSON the engine
//! makes of the request, response and variables, and gives back an [`Output`] (the
//! variables and globals it set, its tests and logs, how long it asked to sleep) or a
//! [`Failure`] located in the script. [`Realm`]s are reused between scripts of one
//! client; [`syntax_error`] checks a script without running it, for the editors.
//! [`evaluate_config`] reads httpyac's JavaScript configuration for its data, in a
//! runtime of its own.

mod check;
mod clock;
mod config;
mod failure;
mod sandbox;

pub use check::{SyntaxError, syntax_error};
pub use config::evaluate_config;
pub use failure::{Failure, FailureKind};
pub use sandbox::{Limits, Output, Realm, Run, Script, TestOutcome};
