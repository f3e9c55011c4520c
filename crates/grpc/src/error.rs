//! Why a call made no answer: the one error of this crate's calls, below the modules
//! that make them.

/// Why a call made no answer.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// A request message that is not the method's input type.
    #[error("request message {number} is not a `{message}`: {reason}")]
    Json {
        /// 1-based.
        number: usize,
        /// The input type's full name.
        message: String,
        /// serde's or prost-reflect's words.
        reason: String,
    },
    /// More request messages than the kind of call takes.
    #[error(
        "a {kind} call sends one message, not {count}: separate messages with `===` only for client-streaming and bidirectional calls"
    )]
    TooManyMessages {
        /// The kind's name.
        kind: &'static str,
        /// How many were written.
        count: usize,
    },
    /// A call over TLS without a TLS configuration.
    #[error(
        "the call is over TLS, and no TLS configuration was given (`grpc://` or Kulala's `# @grpc-plaintext` for plaintext)"
    )]
    Tls,
    /// The TLS handshake failed.
    #[error("TLS with {authority} failed: {reason}")]
    Handshake {
        /// `host:port`.
        authority: String,
        /// rustls's words.
        reason: String,
    },
    /// A metadata name or value HTTP/2 cannot carry.
    #[error("metadata `{0}` cannot be sent: a name is lower-case letters, digits and `-_.`, a value visible ASCII")]
    Metadata(String),
    /// The server could not be reached.
    #[error("cannot connect to {authority}: {reason}")]
    Connect {
        /// `host:port`.
        authority: String,
        /// The system's words.
        reason: String,
    },
    /// The HTTP/2 exchange failed.
    #[error("the HTTP/2 exchange failed: {0}")]
    Http(String),
    /// The answer is not gRPC.
    #[error("the server answered HTTP {status} ({content_type}), not gRPC")]
    NotGrpc {
        /// The HTTP status.
        status: u16,
        /// Its content type.
        content_type: String,
    },
    /// A response message that cannot be read.
    #[error("a response message is not a `{message}`: {reason}")]
    Decode {
        /// The output type's full name.
        message: String,
        /// Why.
        reason: String,
    },
    /// The stream ended in the middle of a message.
    #[error("the server ended the call in the middle of a message")]
    Cut,
    /// A compressed response message (the call asks for none).
    #[error("the server compressed a message although the call asked for no compression")]
    Compressed,
    /// A response over the limits.
    #[error("the response is larger than {0} MiB")]
    TooLarge(usize),
    /// The stream ended without `grpc-status`.
    #[error("the server ended the call without a gRPC status")]
    NoStatus,
}
