//! The connection to the execution server: its base URL, the bearer token on every
//! call, JSON bodies, non-2xx answers as [`Error::Server`] and failures to reach it as
//! transport errors that name it.

use std::time::Duration;

use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::answer;
use crate::error::{Error, TransportError};

/// How long a connection to the server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The execution server as the remote client calls it.
pub(crate) struct Server {
    /// The base URL, validated.
    base: url::Url,
    http: reqwest::Client,
    token: Option<String>,
}

impl Server {
    /// A server at `url` (checked: `http` or `https`, a host, no query); no network.
    pub(crate) fn new(url: &str, token: Option<String>) -> Result<Self, Error> {
        let base = parse_server_url(url)?;
        crate::transport::install_crypto_provider();
        let mut builder =
            reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).connect_timeout(CONNECT_TIMEOUT);
        if base.scheme() == "http" {
            // Plain HTTP only: no root certificates to load.
            builder = builder.tls_certs_only(std::iter::empty());
        }
        let http = builder.build().map_err(|error| {
            Error::Transport(TransportError::Other {
                message: format!("cannot set up the client of the execution server: {}", causes(&error)),
            })
        })?;
        Ok(Self { base, http, token })
    }

    /// The base URL.
    pub(crate) fn base(&self) -> &url::Url {
        &self.base
    }

    /// The bearer token of every call, if the server needs one.
    pub(crate) fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// A call whose 2xx answer is JSON.
    pub(crate) async fn call_json<T: DeserializeOwned>(
        &self,
        method: http::Method,
        segments: &[&str],
        body: Option<&(impl Serialize + ?Sized)>,
        timeout: Duration,
    ) -> Result<T, Error> {
        let answer = self.call(method, segments, body, Some(timeout)).await?;
        let bytes = answer.bytes().await.map_err(|error| self.transport_error(&error, timeout))?;
        serde_json::from_slice(&bytes).map_err(|error| self.unexpected_answer(&format!("invalid JSON: {error}")))
    }

    /// A call whose answer is 2xx (any other status is [`Error::Server`]); `timeout`
    /// covers the whole answer, body included.
    pub(crate) async fn call(
        &self,
        method: http::Method,
        segments: &[&str],
        body: Option<&(impl Serialize + ?Sized)>,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, Error> {
        self.call_on(method, segments, body, timeout, None).await
    }

    /// [`call`](Self::call) of an execute route run on `content` (its errors read by
    /// [`check_execute_status`](Self::check_execute_status)).
    pub(crate) async fn call_on(
        &self,
        method: http::Method,
        segments: &[&str],
        body: Option<&(impl Serialize + ?Sized)>,
        timeout: Option<Duration>,
        content: Option<&str>,
    ) -> Result<reqwest::Response, Error> {
        let mut request = self.request(method, self.endpoint(segments), body);
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        let answer = request.send().await.map_err(|error| self.transport_error(&error, timeout.unwrap_or_default()))?;
        self.check_execute_status(answer, content).await
    }

    /// A request to the server: the bearer token, a JSON body.
    pub(crate) fn request(
        &self,
        method: http::Method,
        url: url::Url,
        body: Option<&(impl Serialize + ?Sized)>,
    ) -> reqwest::RequestBuilder {
        let mut request = self.http.request(method, url).header(ACCEPT, "application/json");
        if let Some(token) = &self.token {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(body) = body {
            // Serializing maps and strings cannot fail.
            let bytes = serde_json::to_vec(body).unwrap_or_default();
            request = request.header(CONTENT_TYPE, "application/json").body(bytes);
        }
        request
    }

    /// The answer when it is 2xx, else the server's error; for an execute route run on
    /// `content`, an error about the text reads as the engine's own where it can
    /// ([`answer::execute_error`]).
    pub(crate) async fn check_execute_status(
        &self,
        answer: reqwest::Response,
        content: Option<&str>,
    ) -> Result<reqwest::Response, Error> {
        if answer.status().is_success() {
            return Ok(answer);
        }
        let status = answer.status().as_u16();
        let body = answer.bytes().await.unwrap_or_default();
        Err(match content {
            Some(content) => answer::execute_error(status, &body, content),
            None => answer::server_error(status, &body),
        })
    }

    /// The URL of a route: the base URL's path, then `segments` (each percent-encoded).
    pub(crate) fn endpoint(&self, segments: &[&str]) -> url::Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    /// A failure to talk to the server itself, naming it (`timeout`: the one that
    /// applied, zero for none).
    pub(crate) fn transport_error(&self, error: &reqwest::Error, timeout: Duration) -> Error {
        let server = &self.base;
        if error.is_timeout() && !timeout.is_zero() {
            return Error::Transport(TransportError::Timeout { after: timeout });
        }
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
        while let Some(current) = cause {
            if let Some(io) = current.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return Error::Transport(TransportError::ConnectionRefused {
                    host: format!("the execution server at {server}"),
                });
            }
            cause = current.source();
        }
        Error::Transport(TransportError::Other {
            message: format!("cannot reach the execution server at {server}: {}", causes(error)),
        })
    }

    /// A 2xx answer without the protocol's shape.
    pub(crate) fn unexpected_answer(&self, problem: &str) -> Error {
        Error::Transport(TransportError::Other {
            message: format!("the execution server at {} sent an unexpected answer: {problem}", self.base),
        })
    }
}

/// The server URL, checked: `http` or `https` with a host.
fn parse_server_url(text: &str) -> Result<url::Url, Error> {
    let invalid = |reason: &str| {
        Error::Transport(TransportError::Other { message: format!("invalid execution server URL `{text}`: {reason}") })
    };
    let url = url::Url::parse(text.trim()).map_err(|error| invalid(&error.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("a host is needed"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("a server URL has no query or fragment"));
    }
    Ok(url)
}

/// An error with its causes, `a: b: c`, without repeats.
pub(crate) fn causes(error: &dyn std::error::Error) -> String {
    crate::transport::describe(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_are_checked() {
        for bad in ["", "127.0.0.1:4097", "ftp://host/", "http://host/?token=x", "http://host/#x"] {
            assert!(Server::new(bad, None).is_err(), "{bad}");
        }
        let server = Server::new("http://127.0.0.1:4097/prefix/", None).expect("valid");
        assert_eq!(
            server.endpoint(&["session", "a/b", "variables"]).as_str(),
            "http://127.0.0.1:4097/prefix/session/a%2Fb/variables"
        );
        let server = Server::new(" http://127.0.0.1:4097 ", None).expect("valid");
        assert_eq!(server.endpoint(&["execute", "sse"]).as_str(), "http://127.0.0.1:4097/execute/sse");
    }
}
