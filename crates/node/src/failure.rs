//! `NativeFailure`: why a run gave no response, as data the JavaScript layer turns into
//! a `VolleyError` (or an `AbortError` for a cancelled run).

use napi_derive::napi;
use volley_engine::{ConfigError, Error};

/// Why a run gave no response. `kind` is stable (the `VolleyError.kind` values of
/// `packages/client/index.d.ts`): `read_file`, `invalid_request`, `selection`,
/// `config`, `build`, the transport kinds (`timeout`, `connection_refused`, `dns`,
/// `tls`, `too_many_redirects`, `websocket_handshake`, `transport`), `aborted`,
/// `token_refresh`, `server`, `other`.
#[napi(object)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeFailure {
    /// The kind of failure.
    pub kind: String,
    /// A finer stable code where there is one: the diagnostic code of a refused request
    /// (`syntax-error`, …), the build error's (`undefined-variable`, …), the execution
    /// server's (`REQUEST_NOT_FOUND`, …).
    pub code: Option<String>,
    /// What went wrong, lowercase, as the CLI prints it.
    pub message: String,
    /// How to fix it, when there is something to say.
    pub hint: Option<String>,
    /// 1-based line in the `.http` text (or the configuration file) of the fault.
    pub line: Option<u32>,
    /// 1-based column, in bytes of UTF-8, of the fault.
    pub column: Option<u32>,
}

impl NativeFailure {
    fn new(kind: &str, error: &Error) -> Self {
        Self { kind: kind.to_owned(), code: None, message: error.to_string(), hint: None, line: None, column: None }
    }

    fn at(mut self, line: u32, column: u32) -> Self {
        self.line = Some(line + 1);
        self.column = Some(column + 1);
        self
    }

    /// The failure with its column in UTF-16 code units, as JavaScript counts a
    /// string's characters, when it is placed in `text` (the `.http` text that was
    /// run): the engine counts bytes of UTF-8.
    #[must_use]
    pub(crate) fn in_text(mut self, text: &str) -> Self {
        if !matches!(self.kind.as_str(), "build" | "invalid_request") {
            return self;
        }
        let (Some(line), Some(column)) = (self.line, self.column) else { return self };
        let index = volley_syntax::LineIndex::new(text);
        let position = volley_syntax::Position::new(line - 1, column - 1);
        if let Some(offset) = index.offset(position) {
            self.column = Some(index.utf16_column(text, offset) + 1);
        }
        self
    }
}

impl From<&Error> for NativeFailure {
    fn from(error: &Error) -> Self {
        match error {
            Error::ReadFile { .. } => Self::new("read_file", error),
            Error::Invalid { diagnostics } => {
                let failure = Self::new("invalid_request", error);
                match diagnostics.first() {
                    Some(first) => {
                        let position = first.span.start_position;
                        Self { code: Some(first.code.as_str().to_owned()), hint: first.hint.clone(), ..failure }
                            .at(position.line, position.column)
                    }
                    None => failure,
                }
            }
            Error::Selection(_) => Self::new("selection", error),
            Error::Config(config) => {
                let failure = Self::new("config", error);
                match config {
                    // The configuration's positions are 1-based already.
                    ConfigError::Syntax { line, column, .. } => {
                        Self { line: u32::try_from(*line).ok(), column: u32::try_from(*column).ok(), ..failure }
                    }
                    _ => failure,
                }
            }
            Error::Build(build) => {
                let position = build.span().start_position;
                Self {
                    code: Some(build.code().to_owned()),
                    message: build.message(),
                    hint: build.hint(),
                    ..Self::new("build", error)
                }
                .at(position.line, position.column)
            }
            Error::Transport(transport) => match transport.kind() {
                "other" => Self::new("transport", error),
                kind => Self::new(kind, error),
            },
            Error::Cancelled => Self::new("aborted", error),
            Error::TokenRefresh { .. } => Self::new("token_refresh", error),
            // The upstream exchange failed on the server: the transport kind a local run
            // gives (`details.kind`; `other` and `cancelled` are not transport kinds).
            Error::Server { code, kind: Some(kind), .. }
                if code == "EXECUTE_ERROR" && !matches!(kind.as_str(), "other" | "cancelled") =>
            {
                Self { code: Some(code.clone()), ..Self::new(kind, error) }
            }
            // A request the server could not build: the build error's code
            // (`details.code`: `undefined-variable`, …), as a local run and the CLI give it.
            Error::Server { code, kind: Some(build_code), .. } if code == "VALIDATION_ERROR" => {
                Self { code: Some(build_code.clone()), ..Self::new("build", error) }
            }
            Error::Server { code, .. } => Self { code: Some(code.clone()), ..Self::new("server", error) },
            // `Error` is non-exhaustive: a new variant is a failure of its own until it
            // gets a kind here.
            _ => Self::new("other", error),
        }
    }
}

#[cfg(test)]
mod tests {
    use volley_engine::TransportError;

    use super::*;

    #[test]
    fn columns_in_the_text_count_utf16_code_units() {
        let text = "GET https://example.com/\nX-Name: é😀 {{missing}}\n";
        let byte_column = u32::try_from("X-Name: é😀 ".len()).unwrap();
        let failure = NativeFailure::new("build", &Error::Cancelled).at(1, byte_column).in_text(text);
        let utf16_column = u32::try_from("X-Name: é😀 ".encode_utf16().count()).unwrap();
        assert_eq!((failure.line, failure.column), (Some(2), Some(utf16_column + 1)));
        let transport = NativeFailure::new("timeout", &Error::Cancelled).at(1, byte_column).in_text(text);
        assert_eq!(transport.column, Some(byte_column + 1), "only failures placed in the text are converted");
    }

    #[test]
    fn transport_errors_keep_their_kind() {
        let refused = Error::Transport(TransportError::ConnectionRefused { host: "127.0.0.1:9".to_owned() });
        let failure = NativeFailure::from(&refused);
        assert_eq!(failure.kind, "connection_refused");
        assert_eq!(failure.message, "connection refused by 127.0.0.1:9");
        let other = Error::Transport(TransportError::Other { message: "reset".to_owned() });
        assert_eq!(NativeFailure::from(&other).kind, "transport");
    }

    #[test]
    fn failures_on_the_server_keep_the_kind_of_a_local_run() {
        let server = |code: &str, kind: Option<&str>| Error::Server {
            status: 400,
            code: code.to_owned(),
            message: "m".to_owned(),
            kind: kind.map(str::to_owned),
        };
        let refused = NativeFailure::from(&server("EXECUTE_ERROR", Some("connection_refused")));
        assert_eq!((refused.kind.as_str(), refused.code.as_deref()), ("connection_refused", Some("EXECUTE_ERROR")));
        let unbuilt = NativeFailure::from(&server("VALIDATION_ERROR", Some("undefined-variable")));
        assert_eq!((unbuilt.kind.as_str(), unbuilt.code.as_deref()), ("build", Some("undefined-variable")));
        for (code, kind) in [
            ("EXECUTE_ERROR", Some("other")),
            ("EXECUTE_ERROR", Some("cancelled")),
            ("EXECUTE_ERROR", None),
            ("VALIDATION_ERROR", None),
            ("UNAUTHORIZED", None),
        ] {
            let failure = NativeFailure::from(&server(code, kind));
            assert_eq!((failure.kind.as_str(), failure.code.as_deref()), ("server", Some(code)), "{code} {kind:?}");
        }
    }

    #[test]
    fn cancelled_runs_are_aborted() {
        assert_eq!(NativeFailure::from(&Error::Cancelled).kind, "aborted");
    }
}
