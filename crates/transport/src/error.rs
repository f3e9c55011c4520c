//! The errors of the exchange itself, after the request was built: the network, TLS,
//! certificates and proxies, WebSocket handshakes, redirects, each with what to try.

use std::time::Duration;

/// The exchange failed after the request was built.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// No response within the timeout (connection, headers and body together).
    #[error("timed out after {} ms", after.as_millis())]
    Timeout {
        /// The timeout that expired.
        after: Duration,
    },
    /// A WebSocket handshake did not finish within its connect timeout.
    #[error("the WebSocket handshake timed out after {} ms", after.as_millis())]
    HandshakeTimeout {
        /// The connect timeout that expired.
        after: Duration,
    },
    /// The host refused the connection.
    #[error("connection refused by {host}")]
    ConnectionRefused {
        /// `host:port`.
        host: String,
    },
    /// The host name could not be resolved.
    #[error("cannot resolve host `{host}`: {message}")]
    Dns {
        /// The host name.
        host: String,
        /// What the resolver said.
        message: String,
    },
    /// The TLS handshake failed (certificate, protocol).
    #[error("TLS error with {host}: {message}")]
    Tls {
        /// `host:port`.
        host: String,
        /// What went wrong.
        message: String,
    },
    /// The server answered a WebSocket handshake with something else than 101.
    #[error("the WebSocket handshake was refused with status {status}{message}")]
    Handshake {
        /// The status of the answer.
        status: u16,
        /// `: ` and the start of the answer's body, or nothing.
        message: String,
    },
    /// Too many redirects.
    #[error("more than {limit} redirects")]
    TooManyRedirects {
        /// The limit.
        limit: usize,
    },
    /// A CA bundle, client certificate or key could not be used.
    #[error("{}: {message}", path.display())]
    Certificate {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        message: String,
        /// What to do about it.
        hint: String,
    },
    /// The proxy could not be reached, refused the connection or the tunnel.
    #[error("proxy {proxy}: {message}")]
    Proxy {
        /// The proxy's URL, its password hidden.
        proxy: String,
        /// What went wrong.
        message: String,
    },
    /// Anything else (connection reset, protocol error, invalid redirect).
    #[error("{message}")]
    Other {
        /// What went wrong.
        message: String,
    },
}

/// What to try after a TLS failure, by what rustls said.
fn tls_hint(message: &str) -> &'static str {
    let lower = message.to_ascii_lowercase();
    if message.contains("UnknownIssuer") {
        "the certificate is signed by a CA this machine does not trust: add the CA's PEM bundle with \
         `--cacert FILE` or volley.jsonc `tls.ca`; for a development server with a self-signed certificate, \
         use --insecure"
    } else if message.contains("CertificateRequired")
        || message.contains("HandshakeFailure")
        || message.contains("no client certificate")
    {
        "the server wants a client certificate: name one with `--cert FILE --key FILE` or volley.jsonc `tls.hosts`"
    } else if message.contains("InvalidContentType") || lower.contains("corrupt message") {
        "the server answered without TLS: it is a plaintext server (`http://`; for gRPC `grpc://`, or \
         Kulala's `# @grpc-plaintext`)"
    } else if lower.contains("expired") {
        "the server's certificate has expired (or this machine's clock is wrong)"
    } else if message.contains("NotValidForName") || lower.contains("not valid for name") {
        "the certificate is for another host name: use the name it was issued for"
    } else if message.contains("UnknownCA") || message.contains("BadCertificate") {
        "the server does not accept the client certificate: is it signed by the CA this server trusts?"
    } else {
        "for a development server with a self-signed certificate, use --insecure"
    }
}

impl TransportError {
    /// The same error with every text it shows passed through `clean`: the engine hides
    /// the secrets it knows of this way, so no message of the network carries them out.
    #[must_use]
    pub fn map_texts(self, clean: impl Fn(String) -> String) -> Self {
        match self {
            TransportError::ConnectionRefused { host } => TransportError::ConnectionRefused { host: clean(host) },
            TransportError::Dns { host, message } => TransportError::Dns { host: clean(host), message: clean(message) },
            TransportError::Tls { host, message } => TransportError::Tls { host: clean(host), message: clean(message) },
            TransportError::Handshake { status, message } => {
                TransportError::Handshake { status, message: clean(message) }
            }
            TransportError::Other { message } => TransportError::Other { message: clean(message) },
            TransportError::Certificate { path, message, hint } => {
                TransportError::Certificate { path, message: clean(message), hint }
            }
            TransportError::Proxy { proxy, message } => {
                TransportError::Proxy { proxy: clean(proxy), message: clean(message) }
            }
            other @ (TransportError::Timeout { .. }
            | TransportError::HandshakeTimeout { .. }
            | TransportError::TooManyRedirects { .. }) => other,
        }
    }

    /// What to try, when something can be said: for TLS failures by what the handshake
    /// said (an unknown CA, a client certificate wanted or refused, an expired one).
    #[must_use]
    pub fn hint(&self) -> Option<String> {
        let hint = match self {
            TransportError::ConnectionRefused { .. } => "is the server running? check the host and port of the URL",
            TransportError::Timeout { after } => {
                let millis = (after.as_millis() * 2).max(1000);
                return Some(format!(
                    "allow more time: `# @timeout {}` on the request, or `--timeout {millis}`",
                    longer(*after)
                ));
            }
            TransportError::HandshakeTimeout { after } => {
                return Some(format!("allow more time: `# @ws-connect-timeout {}` on the request", longer(*after)));
            }
            TransportError::Dns { .. } => "check the host name, or the variable that gives it",
            TransportError::Tls { message, .. } => tls_hint(message),
            TransportError::TooManyRedirects { .. } => "add `# @no-redirect` to see the first response",
            TransportError::Handshake { .. } => {
                "the server did not accept the WebSocket upgrade: check the URL and the headers it needs"
            }
            TransportError::Certificate { hint, .. } => return Some(hint.clone()),
            TransportError::Proxy { message, .. } => {
                if message.contains("407") {
                    "the proxy wants credentials: `http://user:{{$secret PROXY_PASSWORD}}@host:port` in volley.jsonc \
                     `proxy`"
                } else {
                    "check the proxy's URL (`--proxy`, volley.jsonc `proxy`, `HTTP_PROXY`/`HTTPS_PROXY`), or reach \
                     the host directly with `--noproxy HOST`"
                }
            }
            TransportError::Other { .. } => return None,
        };
        Some(hint.to_owned())
    }

    /// A stable name for the kind (`timeout`, `connection_refused`, `dns`, `tls`,
    /// `too_many_redirects`, `websocket_handshake`, `certificate`, `proxy`, `other`), as the server reports it in `details.kind`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            TransportError::Timeout { .. } | TransportError::HandshakeTimeout { .. } => "timeout",
            TransportError::ConnectionRefused { .. } => "connection_refused",
            TransportError::Dns { .. } => "dns",
            TransportError::Tls { .. } => "tls",
            TransportError::TooManyRedirects { .. } => "too_many_redirects",
            TransportError::Handshake { .. } => "websocket_handshake",
            TransportError::Certificate { .. } => "certificate",
            TransportError::Proxy { .. } => "proxy",
            TransportError::Other { .. } => "other",
        }
    }
}

/// A timeout twice as long as `after` (a second at least), written as a directive takes it.
fn longer(after: Duration) -> String {
    let millis = (after.as_millis() * 2).max(1000);
    if millis.is_multiple_of(1000) { format!("{} s", millis / 1000) } else { format!("{millis} ms") }
}

/// An error about a certificate or key file, with what went wrong and a hint.
#[must_use]
pub fn certificate_error(path: &std::path::Path, problem: &str, hint: &str) -> TransportError {
    TransportError::Certificate { path: path.to_path_buf(), message: problem.to_owned(), hint: hint.to_owned() }
}

/// What rustls said, without the "unexpected error" it puts before the messages of
/// our verifier (which names the unknown issuer).
#[must_use]
pub fn tls_message(error: &rustls::Error) -> String {
    match error {
        rustls::Error::General(message) => message.clone(),
        other => other.to_string(),
    }
}

/// `host:port` of a URL, for messages.
#[must_use]
pub fn host_of(url: &url::Url) -> String {
    match (url.host_str(), url.port_or_known_default()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        _ => url.as_str().to_owned(),
    }
}

/// Sorts an error of any HTTP client by its chain of causes; `timed_out` when the client
/// says it gave up waiting.
pub fn classify_chain(error: &(dyn std::error::Error + 'static), host: &str, timed_out: bool) -> TransportError {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut messages = Vec::new();
    while let Some(current) = cause {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return TransportError::ConnectionRefused { host: host.to_owned() };
            }
            // A TLS alert after the handshake (a refused client certificate under TLS 1.3)
            // arrives as an I/O error on the connection.
            if let Some(tls) = io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
                return TransportError::Tls { host: host.to_owned(), message: tls_message(tls) };
            }
        }
        if let Some(tls) = current.downcast_ref::<rustls::Error>() {
            return TransportError::Tls { host: host.to_owned(), message: tls_message(tls) };
        }
        messages.push(current.to_string());
        cause = current.source();
    }
    let text = messages.join(": ");
    let lower = text.to_ascii_lowercase();
    if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
    {
        let hostname = host.rsplit_once(':').map_or(host, |(name, _)| name).to_owned();
        let message = messages.last().cloned().unwrap_or_default();
        return TransportError::Dns { host: hostname, message };
    }
    if lower.contains("certificate")
        || lower.contains("tls")
        || lower.contains("handshake")
        || lower.contains("fatal alert")
    {
        let message = messages.last().cloned().unwrap_or_default();
        // rustls puts this before the messages of our verifier (see `tls_message`).
        let message = message.strip_prefix("unexpected error: ").map_or(message.clone(), str::to_owned);
        return TransportError::Tls { host: host.to_owned(), message };
    }
    if timed_out {
        return TransportError::Other { message: format!("{host}: {text}") };
    }
    TransportError::Other { message: format!("{host}: {}", describe(error)) }
}

/// The error with its causes, `a: b: c`, without repeats.
pub fn describe(error: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cause: Option<&dyn std::error::Error> = Some(error);
    while let Some(current) = cause {
        let text = current.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        cause = current.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::TransportError;

    #[test]
    fn a_tls_handshake_answered_in_plaintext_says_so() {
        let error = TransportError::Tls {
            host: "localhost:50051".to_owned(),
            message: "received corrupt message of type InvalidContentType".to_owned(),
        };
        let hint = error.hint().unwrap();
        assert!(hint.starts_with("the server answered without TLS: it is a plaintext server"), "{hint}");
    }
}
