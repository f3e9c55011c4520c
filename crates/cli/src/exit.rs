//! The documented exit codes (see `volley --help`).

use std::process::ExitCode;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Exit {
    /// Everything passed.
    Success,
    /// Bad arguments or an unreadable input.
    Usage,
    /// A file has errors.
    FileErrors,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(match exit {
            Exit::Success => 0,
            Exit::Usage => 2,
            Exit::FileErrors => 3,
        })
    }
}
