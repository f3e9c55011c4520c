//! The kind of an error, named once for the CLI, the execution server and the editor.

use crate::Error;

/// What kind of error ended a request. [`ErrorKind::of`] is the one place an
/// [`Error`] is classified; each front end spells the kind as its wire format already
/// does ([`ErrorKind::name`] is the CLI's `code`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The `.http` file could not be read.
    ReadFile,
    /// The request is refused; the stable code of its first diagnostic.
    Invalid {
        /// The first diagnostic's code, when there is one.
        first_code: Option<&'static str>,
    },
    /// No request matches the selection.
    Selection,
    /// The configuration file is broken.
    Config,
    /// The request could not be built; the build error's stable code.
    Build {
        /// [`BuildError::code`](crate::BuildError::code).
        code: &'static str,
    },
    /// The exchange failed; [`TransportError::kind`](crate::TransportError::kind)
    /// (`timeout`, `connection_refused`, …).
    Transport {
        /// The transport kind, with underscores.
        kind: &'static str,
    },
    /// The run was cancelled.
    Cancelled,
    /// A token refresh failed.
    TokenRefresh,
    /// The execution server answered with an error.
    Server {
        /// Its stable code (`EXECUTE_ERROR`, …).
        code: String,
        /// For `EXECUTE_ERROR`, the transport kind; for `VALIDATION_ERROR`, the build
        /// error's code.
        kind: Option<String>,
    },
}

impl ErrorKind {
    /// The kind of `error`.
    #[must_use]
    pub fn of(error: &Error) -> Self {
        match error {
            Error::ReadFile { .. } => Self::ReadFile,
            Error::Invalid { diagnostics } => {
                Self::Invalid { first_code: diagnostics.first().map(|diagnostic| diagnostic.code.as_str()) }
            }
            Error::Selection(_) => Self::Selection,
            Error::Config(_) => Self::Config,
            Error::Build(build) => Self::Build { code: build.code() },
            Error::Transport(transport) => Self::Transport { kind: transport.kind() },
            Error::Cancelled => Self::Cancelled,
            Error::TokenRefresh { .. } => Self::TokenRefresh,
            Error::Server { code, kind, .. } => Self::Server { code: code.clone(), kind: kind.clone() },
        }
    }

    /// The stable kebab-case name (`timeout`, `connection-refused`, `undefined-variable`,
    /// `no-such-request`, …): the CLI's error `code`.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Self::ReadFile => "unreadable-file".to_owned(),
            Self::Invalid { first_code } => first_code.unwrap_or("invalid").to_owned(),
            Self::Selection => "no-such-request".to_owned(),
            Self::Config => "config".to_owned(),
            Self::Build { code } => (*code).to_owned(),
            Self::Transport { kind } => kind.replace('_', "-"),
            Self::Cancelled => "cancelled".to_owned(),
            Self::TokenRefresh => "token-refresh".to_owned(),
            Self::Server { code, kind: Some(kind) } if code == "EXECUTE_ERROR" => kind.replace('_', "-"),
            Self::Server { code, kind: Some(kind) } if code == "VALIDATION_ERROR" => kind.clone(),
            Self::Server { code, .. } => code.to_ascii_lowercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorKind;
    use crate::{Error, SelectionError};

    #[test]
    fn kinds_of_a_few_errors() {
        assert_eq!(ErrorKind::of(&Error::Cancelled), ErrorKind::Cancelled);
        assert_eq!(ErrorKind::of(&Error::Cancelled).name(), "cancelled");
        assert_eq!(ErrorKind::of(&Error::Selection(SelectionError::NoRequests)).name(), "no-such-request");
        assert_eq!(ErrorKind::of(&Error::Invalid { diagnostics: Vec::new() }).name(), "invalid");
        let server = Error::Server {
            status: 400,
            code: "EXECUTE_ERROR".to_owned(),
            message: "refused".to_owned(),
            kind: Some("connection_refused".to_owned()),
        };
        assert_eq!(ErrorKind::of(&server).name(), "connection-refused");
        let not_found =
            Error::Server { status: 404, code: "REQUEST_NOT_FOUND".to_owned(), message: "no".to_owned(), kind: None };
        assert_eq!(ErrorKind::of(&not_found).name(), "request-not-found");
    }
}
