//! The grants that need a person: the authorization code (RFC 6749 §4.1, with PKCE
//! S256 from RFC 7636 when asked for) through a loopback redirect listener (RFC 8252),
//! and the device authorization grant (RFC 8628). Both end within the request's
//! timeout.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use tokio::time::Instant;

/// httpyac's default redirect URL.
pub(crate) const DEFAULT_REDIRECT: &str = "http://localhost:3000/callback";

/// The most of a request the listener reads before giving up on it.
const MAX_CALLBACK_BYTES: usize = 16 * 1024;

/// A random URL-safe string of `bytes` random bytes (state, PKCE verifier).
pub(crate) fn random_text(bytes: usize) -> String {
    use ring::rand::SecureRandom as _;
    let mut buffer = vec![0_u8; bytes];
    // The system's generator; should it ever fail, the thread's (also cryptographic).
    if ring::rand::SystemRandom::new().fill(&mut buffer).is_err() {
        for byte in &mut buffer {
            *byte = rand::random();
        }
    }
    URL_SAFE_NO_PAD.encode(buffer)
}

/// The S256 challenge of a PKCE verifier.
pub(crate) fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()))
}

/// The loopback listener of the authorization-code grant, bound before the browser is
/// opened; `redirect_uri` is what the authorization request names.
pub(crate) struct Loopback {
    listener: TcpListener,
    path: String,
    pub(crate) redirect_uri: String,
}

impl Loopback {
    /// Binds 127.0.0.1 (or `::1`) on the redirect URL's port, or on a free one when it
    /// names none; the redirect URL must be `http` on a loopback host.
    pub(crate) async fn bind(redirect: &str) -> Result<Loopback, String> {
        let url = url::Url::parse(redirect)
            .map_err(|error| format!("the redirect URL `{redirect}` is not a URL: {error}"))?;
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let loopback = matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]" | "::1");
        if url.scheme() != "http" || !loopback {
            return Err(format!(
                "the redirect URL `{redirect}` is not http on this machine (localhost, 127.0.0.1 or [::1]), where \
                 Volley can receive the code"
            ));
        }
        let address = if host.contains(':') { "[::1]" } else { "127.0.0.1" };
        let port = url.port().unwrap_or(0);
        let listener = TcpListener::bind(format!("{address}:{port}"))
            .await
            .map_err(|error| format!("cannot listen on {address}:{port} for the redirect: {error}"))?;
        let bound = listener.local_addr().map_err(|error| error.to_string())?.port();
        let mut redirect_uri = url.clone();
        let _ = redirect_uri.set_port(Some(bound));
        let path = url.path().to_owned();
        Ok(Loopback { listener, path, redirect_uri: redirect_uri.to_string() })
    }

    /// Waits until `deadline` for the redirect to the listener's path; answers the
    /// browser, and gives the redirect's query pairs.
    pub(crate) async fn wait(self, deadline: Instant) -> Result<Vec<(String, String)>, String> {
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.listener.accept()).await;
            let Ok(Ok((mut stream, _))) = accepted else {
                return Err("no redirect came back from the browser in time".to_owned());
            };
            let mut request = Vec::new();
            let mut buffer = [0_u8; 2048];
            let head_read = tokio::time::timeout_at(deadline, async {
                while !request.windows(4).any(|window| window == b"\r\n\r\n") && request.len() < MAX_CALLBACK_BYTES {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(read) => request.extend_from_slice(&buffer[..read]),
                    }
                }
            })
            .await;
            if head_read.is_err() {
                return Err("no redirect came back from the browser in time".to_owned());
            }
            let head = String::from_utf8_lossy(&request);
            let target = head.lines().next().and_then(|line| line.split_whitespace().nth(1)).unwrap_or_default();
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            if path != self.path {
                let _ =
                    stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
                continue;
            }
            let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
            let failed = pairs.iter().any(|(name, _)| name == "error");
            let page = if failed {
                "<!doctype html><title>Volley</title><p>The sign-in was refused. Volley shows why; you can close this window.</p>"
            } else {
                "<!doctype html><title>Volley</title><p>Signed in. You can close this window and go back to Volley.</p>"
            };
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            return Ok(pairs);
        }
    }
}

/// The interval a device flow polls at: the server's, at least 1 s, 5 s by default.
pub(crate) fn poll_interval(answer: Option<u64>) -> Duration {
    Duration::from_secs(answer.unwrap_or(5).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_challenges_follow_rfc_7636() {
        // RFC 7636, appendix B.
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert_eq!(random_text(32).len(), 43);
        assert_ne!(random_text(16), random_text(16));
    }

    #[tokio::test]
    async fn the_loopback_takes_the_redirect_and_nothing_else() {
        let loopback = Loopback::bind("http://127.0.0.1/callback").await.unwrap();
        let redirect = loopback.redirect_uri.clone();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"), "{redirect}");
        let address = redirect.trim_start_matches("http://").split('/').next().unwrap().to_owned();
        let browser = tokio::spawn(async move {
            for target in ["/favicon.ico", "/callback?code=abc&state=xyz"] {
                let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
                stream.write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes()).await.unwrap();
                let mut answer = String::new();
                let _ = stream.read_to_string(&mut answer).await;
            }
        });
        let pairs = loopback.wait(Instant::now() + Duration::from_secs(5)).await.unwrap();
        assert_eq!(pairs, [("code".to_owned(), "abc".to_owned()), ("state".to_owned(), "xyz".to_owned())]);
        browser.await.unwrap();
        let late = Loopback::bind("http://localhost/cb").await.unwrap();
        assert_eq!(
            late.wait(Instant::now() + Duration::from_millis(50)).await.unwrap_err(),
            "no redirect came back from the browser in time"
        );
        assert!(Loopback::bind("https://example.com/cb").await.is_err());
    }
}
