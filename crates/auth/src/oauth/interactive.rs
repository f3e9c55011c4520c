//! The grants that need a person: the authorization code (RFC 6749 §4.1, with PKCE
//! S256 from RFC 7636 when asked for) through a loopback redirect listener (RFC 8252),
//! and the device authorization grant (RFC 8628). Both end within the request's
//! timeout; the front end's part is its [`AuthPrompt`](super::AuthPrompt).

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::OAuthConfig;
use super::flow::{Flow, FlowError, failed};
use super::prompt::DeviceCode;
use super::random::random_text;
use super::token::Token;
use super::transport::TokenTransport;
use super::wire::{Answer, oauth_error_answer};

/// httpyac's default redirect URL.
const DEFAULT_REDIRECT: &str = "http://localhost:3000/callback";

/// The most of a request the listener reads before giving up on it.
const MAX_CALLBACK_BYTES: usize = 16 * 1024;

/// The S256 challenge of a PKCE verifier.
fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()))
}

/// The loopback listener of the authorization-code grant, bound before the browser is
/// opened; `redirect_uri` is what the authorization request names.
struct Loopback {
    listener: TcpListener,
    path: String,
    redirect_uri: String,
}

impl Loopback {
    /// Binds 127.0.0.1 (or `::1`) on the redirect URL's port, or on a free one when it
    /// names none; the redirect URL must be `http` on a loopback host.
    async fn bind(redirect: &str) -> Result<Loopback, String> {
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
    async fn wait(self, deadline: Instant) -> Result<Vec<(String, String)>, String> {
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
fn poll_interval(answer: Option<u64>) -> Duration {
    Duration::from_secs(answer.unwrap_or(5).max(1))
}

impl<T: TokenTransport> Flow<'_, T> {
    /// The authorization-code grant: the browser sent to the authorization endpoint,
    /// the code taken on the loopback redirect (its `state` checked), exchanged.
    pub(super) async fn authorization_code(
        &self,
        config: &OAuthConfig,
        token_endpoint: &url::Url,
    ) -> Result<Token, FlowError<T::Error>> {
        if !self.prompt().has_browser() {
            return Err(failed(
                "the authorization-code grant needs a person at a browser, and this process has none (an execution \
                 server)",
                Some(
                    "run the request from the editor or `volley run`, or use a grant without a browser \
                      (`client_credentials`, `password`, `device_code`)"
                        .to_owned(),
                ),
            ));
        }
        let written = config.authorization_endpoint.clone();
        let mut url = self.endpoint(config, written, ("authorization_endpoint", "authorizationEndpoint")).await?;
        let redirect = config.redirect_uri.as_deref().unwrap_or(DEFAULT_REDIRECT);
        let loopback = Loopback::bind(redirect).await.map_err(|message| {
            failed(&message, Some(format!("set `{}_redirectUri` to `http://127.0.0.1/callback` (any free port) or a free port of this machine", config.prefix)))
        })?;
        let state = random_text(16);
        let verifier = config.use_pkce.then(|| random_text(32));
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &config.client_id)
                .append_pair("redirect_uri", &loopback.redirect_uri)
                .append_pair("state", &state);
            if let Some(scope) = &config.scope {
                query.append_pair("scope", scope);
            }
            if let Some(verifier) = &verifier {
                query.append_pair("code_challenge", &pkce_challenge(verifier));
                query.append_pair("code_challenge_method", "S256");
            }
        }
        let deadline = tokio::time::Instant::now() + self.timeout;
        let redirect_uri = loopback.redirect_uri.clone();
        self.prompt().open_browser(url.as_str());
        let redirected = tokio::select! {
            redirected = loopback.wait(deadline) => redirected,
            () = cancelled(self.cancel) => return Err(FlowError::Cancelled),
        };
        let pairs = redirected.map_err(|message| {
            failed(
                &format!("{message} ({} s, the request's timeout, waiting for the sign-in at {})", self.timeout.as_secs(), without_query(&url)),
                Some("sign in in the browser that opened (VOLLEY_BROWSER or BROWSER names it), or give the request more time (`# @timeout 5m`)".to_owned()),
            )
        })?;
        let get = |name: &str| pairs.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
        if let Some(error) = get("error") {
            let description = get("error_description").map(|text| format!(" ({text})")).unwrap_or_default();
            return Err(failed(
                &format!("the authorization server refused the sign-in: {error}{description}"),
                Some(format!(
                    "check `{0}_clientId`, `{0}_scope` and that `{0}_redirectUri` is registered for the client",
                    config.prefix
                )),
            ));
        }
        if get("state").as_deref() != Some(state.as_str()) {
            return Err(failed(
                "the redirect's `state` is not the one sent: the answer is not to this sign-in, and is not used",
                Some(
                    "sign in again from this request; another sign-in may have used the same redirect port".to_owned(),
                ),
            ));
        }
        let code = get("code").ok_or_else(|| failed("the redirect to Volley has no `code`", None))?;
        let mut form =
            vec![("grant_type", "authorization_code".to_owned()), ("code", code), ("redirect_uri", redirect_uri)];
        if let Some(verifier) = verifier {
            form.push(("code_verifier", verifier));
        }
        self.token_request(config, token_endpoint, form).await
    }

    /// The device authorization grant: the code shown, the token endpoint polled at the
    /// server's interval (slower after `slow_down`) until the code is approved, refused
    /// or expired, or the request's timeout.
    pub(super) async fn device_code(
        &self,
        config: &OAuthConfig,
        token_endpoint: &url::Url,
    ) -> Result<Token, FlowError<T::Error>> {
        let written = config.device_endpoint.clone();
        let endpoint = self.endpoint(config, written, ("device_authorization_endpoint", "deviceCodeEndpoint")).await?;
        let mut form = vec![("client_id", config.client_id.clone())];
        if let Some(scope) = &config.scope {
            form.push(("scope", scope.clone()));
        }
        if config.device_code_secret
            && let Some(secret) = &config.client_secret
        {
            form.push(("client_secret", secret.clone()));
        }
        let (status, answer) = self.post_form(&endpoint, form).await?;
        let json: Option<Value> = serde_json::from_slice(&answer).ok();
        if !status.is_success() {
            return Err(oauth_error_answer(config, &endpoint, status, json.as_ref()));
        }
        let text =
            |name: &str| json.as_ref().and_then(|json| json.get(name)).and_then(Value::as_str).map(str::to_owned);
        let number = |name: &str| json.as_ref().and_then(|json| json.get(name)).and_then(Value::as_u64);
        let (Some(device_code), Some(user_code)) = (text("device_code"), text("user_code")) else {
            return Err(failed(
                &format!(
                    "the device authorization endpoint {endpoint} answered {status} without `device_code` and `user_code`"
                ),
                None,
            ));
        };
        let verification_uri = text("verification_uri").or_else(|| text("verification_url")).unwrap_or_default();
        let expires_in = Duration::from_secs(number("expires_in").unwrap_or(600));
        self.prompt().show_device_code(&DeviceCode {
            user_code,
            verification_uri,
            verification_uri_complete: text("verification_uri_complete"),
            expires_in,
        });
        let mut interval = poll_interval(number("interval"));
        let started = tokio::time::Instant::now();
        let deadline = started + expires_in.min(self.timeout);
        loop {
            if tokio::time::Instant::now() + interval > deadline {
                return Err(failed(
                    &format!(
                        "the device code was not approved within {} s",
                        deadline.duration_since(started).as_secs()
                    ),
                    Some(
                        "enter the code where it says, sooner, or give the request more time (`# @timeout 5m`)"
                            .to_owned(),
                    ),
                ));
            }
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                () = cancelled(self.cancel) => return Err(FlowError::Cancelled),
            }
            let form = vec![
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code".to_owned()),
                ("device_code", device_code.clone()),
            ];
            match self.post_token(config, token_endpoint, form).await? {
                Answer::Token(token) => return Ok(token),
                Answer::Refused { error, .. } if error.as_deref() == Some("authorization_pending") => {}
                Answer::Refused { error, .. } if error.as_deref() == Some("slow_down") => {
                    interval += Duration::from_secs(5);
                }
                Answer::Refused { status, json, .. } => {
                    return Err(oauth_error_answer(config, token_endpoint, status, json.as_ref()));
                }
            }
        }
    }
}

/// Resolves when `cancel` is cancelled; never without one.
async fn cancelled(cancel: Option<&CancellationToken>) {
    match cancel {
        Some(cancel) => cancel.cancelled().await,
        None => std::future::pending().await,
    }
}

/// A URL without its query (an authorization request's parameters are long).
fn without_query(url: &url::Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.to_string()
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
