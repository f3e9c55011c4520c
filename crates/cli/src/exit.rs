//! The documented exit codes (see `volley --help` and docs/cli.md).

use std::process::ExitCode;

/// How a command ended. When several things went wrong, [`Exit::worst`] keeps the one
/// the documentation puts first: 3, then 4, then 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Exit {
    /// 0: everything passed.
    #[default]
    Success,
    /// 1: an assertion failed or is invalid (`run`); a file has errors (`check`).
    Failed,
    /// 2: bad arguments, an unreadable input, no such request.
    Usage,
    /// 3: a request was refused (errors, an unconfirmed `# @note`), a file has errors
    /// outside any request, or a request could not be built.
    Invalid,
    /// 4: a transport failure: refused, DNS, TLS, timeout.
    Transport,
    /// The code of a command `volley echo-server` ran.
    Code(u8),
}

impl Exit {
    /// The code of a run stopped with Ctrl-C (128 + SIGINT, as shells report it).
    pub(crate) const INTERRUPTED: u8 = 130;

    /// The code of the process.
    pub(crate) fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Invalid => 3,
            Exit::Transport => 4,
            Exit::Code(code) => code,
        }
    }

    /// Rank by the documented priority (higher wins).
    fn rank(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failed => 1,
            Exit::Transport => 2,
            Exit::Invalid => 3,
            Exit::Usage | Exit::Code(_) => 4,
        }
    }

    /// The one of `self` and `other` that decides the exit code.
    #[must_use]
    pub(crate) fn worst(self, other: Exit) -> Exit {
        if other.rank() > self.rank() { other } else { self }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}

#[cfg(test)]
mod tests {
    use super::Exit;

    #[test]
    fn priority_is_3_then_4_then_1() {
        assert_eq!(Exit::Failed.worst(Exit::Transport), Exit::Transport);
        assert_eq!(Exit::Transport.worst(Exit::Invalid), Exit::Invalid);
        assert_eq!(Exit::Invalid.worst(Exit::Failed), Exit::Invalid);
        assert_eq!(Exit::Success.worst(Exit::Failed), Exit::Failed);
    }
}
