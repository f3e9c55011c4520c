//! What preparing a request gives, before it is sent: the [`PreparedRequest`] (the
//! request built, its settings, checks, redactor and what is still to do at send time:
//! its tokens, scripts, saves), the kind of [`Exchange`] it is, and a gRPC call's
//! messages and schema ([`GrpcCall`]). `prepare` makes them; the exchange, the OAuth
//! grants and the gRPC call read them, below the client that runs them.

mod grpc;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::COOKIE;

use crate::assert::PendingAssertion;
use crate::cookies::CookieJar;
use crate::network::Network;
use crate::redact::{Redactor, Secrets};
use crate::script::{self, Scripts};
use volley_auth::digest::DigestCredentials;
use volley_auth::oauth::PendingToken;

pub use grpc::GrpcCall;
pub(crate) use grpc::{GrpcMessage, Reflection, SchemaSource};

/// A request resolved and built, not sent: what [`stages::prepare`](crate::stages::prepare) returns.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    /// The method.
    pub method: http::Method,
    /// The URL.
    pub url: url::Url,
    /// The headers, defaults included (cookies are added when sending).
    pub headers: http::HeaderMap,
    /// The body.
    pub body: Bytes,
    /// The effective timeout.
    pub timeout: Duration,
    /// Whether redirects are followed.
    pub follow_redirects: bool,
    /// Whether TLS certificates are checked.
    pub validate_ssl: bool,
    /// Whether the cookie jar is used.
    pub use_cookies: bool,
    /// What hides this request's secrets from anything shown of it: its `$secret`
    /// values, the values of sensitive-named variables (every layer, `.env` files),
    /// environment variables and credential headers ([`Redactor`](crate::redact::Redactor)). A run's
    /// [`Response`](crate::Response) carries it on.
    pub redactor: Redactor,
    /// The `# @assert` and `??` checks, rendered and parsed, to evaluate on the response.
    pub assertions: Vec<PendingAssertion>,
    /// What kind of exchange it is.
    pub exchange: Exchange,
    /// The request's name, under which its response is kept for chaining.
    pub name: Option<String>,
    /// More names its response is kept under (a `@loop` iteration's `login0`).
    pub also_named: Vec<String>,
    /// Keep at most this many bytes of the response body.
    pub max_body_bytes: Option<usize>,
    /// Where a longer body is written whole (see `RunOptions::spill_body_to`).
    pub spill_dir: Option<PathBuf>,
    /// The configuration file that applied, if any.
    pub config_path: Option<PathBuf>,
    pub(crate) version: Option<http::Version>,
    /// CA bundles, client certificates and proxies, read and rendered; `None` when
    /// nothing sets any.
    pub(crate) network: Option<Arc<Network>>,
    /// `Authorization: Digest user password`: the answer to the server's challenge is
    /// computed during the exchange.
    pub(crate) digest: Option<DigestCredentials>,
    /// The jar the exchange reads and fills (when `use_cookies`): the run's, else the
    /// client's.
    pub(crate) cookie_jar: Option<CookieJar>,
    /// What the pre-request scripts logged (`client.log`), not yet redacted.
    pub(crate) logs: Vec<String>,
    /// The response handlers to run on the response, with what they are handed.
    pub(crate) scripts: Option<Box<PendingScripts>>,
    /// Where the response body is saved (`>> ./file`, `>>! ./file`), in order.
    pub(crate) save_to: Vec<crate::save::SaveTarget>,
    /// `@sleep`: how long to wait before sending.
    pub(crate) sleep: Option<Duration>,
    /// httpyac's `@ratelimit`: how its sends are spaced.
    pub(crate) rate_limit: Option<crate::ratelimit::RateLimit>,
    /// A token to get before sending (httpyac's `Authorization: oauth2 …`).
    pub(crate) auth: Option<PendingAuth>,
    /// The secrets [`redactor`](Self::redactor) was built from: the response's
    /// redactor adds those of the response to them.
    pub(crate) secrets: Secrets,
}

/// A request sent and its response read, not yet checked: what
/// [`stages::transmit`](crate::stages::transmit) returns and
/// [`stages::finish`](crate::stages::finish) completes into the [`Response`](crate::Response).
#[derive(Debug)]
pub struct Exchanged {
    pub(crate) response: crate::Response,
    pub(crate) pending: Vec<PendingAssertion>,
    pub(crate) name: Option<String>,
    pub(crate) also_named: Vec<String>,
    pub(crate) scripts: Option<Box<PendingScripts>>,
    pub(crate) save_to: Vec<crate::save::SaveTarget>,
    pub(crate) logs: Vec<String>,
    pub(crate) redactor: Redactor,
    pub(crate) jar: Option<CookieJar>,
}

impl Exchanged {
    /// The response as read (its assertions and logs come with `finish`).
    #[must_use]
    pub fn response(&self) -> &crate::Response {
        &self.response
    }

    /// Whether finishing it writes more than the named responses: variables (its
    /// response handlers may set them) or files (its `>>` lines, a cookie jar kept in a
    /// file). A request prepared ahead of it must then be prepared again.
    #[must_use]
    pub fn finish_writes(&self) -> bool {
        self.scripts.is_some() || !self.save_to.is_empty() || self.jar.as_ref().is_some_and(|jar| jar.path().is_some())
    }
}

/// A request's response handlers and their input, the request as written.
#[derive(Debug, Clone)]
pub(crate) struct PendingScripts {
    pub(crate) scripts: Scripts,
    pub(crate) input: script::Input,
}

/// The kind of exchange of a prepared request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exchange {
    /// A request and its whole response.
    Http,
    /// Server-Sent Events: the response streams when it is `text/event-stream`; the
    /// timeout covers the connection and the response head only.
    EventStream,
    /// A WebSocket handshake (`ws://`/`wss://`), then an open connection.
    WebSocket {
        /// `@ws-subprotocols`, in order.
        subprotocols: Vec<String>,
        /// The messages of the definition's body, sent once connected, in order.
        messages: Vec<crate::websocket::WsOutgoing>,
    },
    /// A gRPC call: its messages and where its schema comes from.
    Grpc(Box<GrpcCall>),
}

/// What a prepared request still needs before it is sent: its tokens.
#[derive(Debug, Clone)]
pub(crate) struct PendingAuth {
    /// With where each is written (the `Authorization` header, the `{{$auth.token(…)}}`).
    pub(crate) tokens: Vec<(PendingToken, volley_syntax::Span)>,
    /// The request's secrets, to which the tokens are added.
    pub(crate) secrets: Secrets,
    /// AWS credentials to sign with once the tokens are in place (a signature over a
    /// placeholder would not hold).
    pub(crate) aws: Option<(volley_auth::sigv4::AwsCredentials, volley_syntax::Span)>,
}

impl PreparedRequest {
    /// The HTTP version the request line asked for, if any.
    #[must_use]
    pub fn version(&self) -> Option<http::Version> {
        self.version
    }

    /// The user and password of `Authorization: Digest user password`, which the
    /// exchange answers the server's challenge with (the header is not sent).
    #[must_use]
    pub fn digest_credentials(&self) -> Option<(&str, &str)> {
        self.digest.as_ref().map(|credentials| (credentials.user(), credentials.password()))
    }

    /// Adds the cookies of the request's jar for its URL to its `Cookie` header, as the
    /// exchange does before sending (nothing when it uses no jar): the headers as they
    /// will go out, for a request shown or copied rather than sent.
    pub fn add_jar_cookies(&mut self) {
        let jar = self.cookie_jar.as_ref().filter(|_| self.use_cookies);
        add_jar_cookies(&mut self.headers, jar, &self.url);
    }
}

/// Adds the jar's cookies for `url` to the `Cookie` header the request may have
/// written: one header (RFC 6265 §5.4), the written pairs first.
pub(crate) fn add_jar_cookies(headers: &mut http::HeaderMap, jar: Option<&CookieJar>, url: &url::Url) {
    let Some(cookies) = jar.and_then(|jar| jar.header_for(url)) else { return };
    let mut joined: Vec<u8> = Vec::new();
    for written in headers.get_all(COOKIE) {
        let written = written.as_bytes().trim_ascii();
        let written = written.strip_suffix(b";").unwrap_or(written).trim_ascii_end();
        if !written.is_empty() {
            joined.extend_from_slice(written);
            joined.extend_from_slice(b"; ");
        }
    }
    joined.extend_from_slice(cookies.as_bytes());
    if let Ok(value) = http::HeaderValue::from_bytes(&joined) {
        headers.insert(COOKIE, value);
    }
}
