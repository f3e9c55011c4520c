//! OAuth 2.0 and `OpenID` Connect tokens for requests: httpyac's `Authorization: oauth2
//! [grant] [prefix]` (and `openid …`), read from the `<prefix>_tokenEndpoint`,
//! `<prefix>_clientId`, … variables. The configuration is read while the request is
//! built (`interpolate/oauth`); the token is got when the request is sent
//! ([`Client::authorize`]) by the grant flows of `volley-auth`, whose requests go
//! through the client's own transport (the request's TLS settings, proxies and timeout:
//! [`SideTransport`]), and kept for the process in the client's
//! [`TokenCache`](volley_auth::oauth::TokenCache).

use bytes::Bytes;
use http::HeaderValue;
use tokio_util::sync::CancellationToken;
pub use volley_auth::oauth::{
    AuthPrompt, CommandPrompt, DeviceCode, NoBrowserPrompt, clear_token_cache, default_token_cache, with_prompt,
};
use volley_auth::oauth::{
    Flow, FlowError, MAX_ANSWER_BYTES, OAuthConfig, SideAnswer, SideRequest, Token, TokenTransport,
};

use crate::client::Client;
use crate::error::{BuildError, Error, TransportError};
use crate::prepared::{Exchange, PreparedRequest};

impl Client {
    /// Gets the tokens `prepared` needs (from the cache, by refresh, or by their grant)
    /// and puts each in place of its placeholder (headers, URL, body); the tokens join
    /// the request's secrets.
    pub(crate) async fn authorize(
        &self,
        prepared: &mut PreparedRequest,
        cancel: Option<&CancellationToken>,
    ) -> Result<(), Error> {
        let Some(mut pending) = prepared.auth.take() else { return Ok(()) };
        for (wanted, span) in &pending.tokens {
            let token = self.token_for(prepared, &wanted.config, *span, cancel).await?;
            let value = if wanted.id_token || wanted.config.use_id_token {
                token.id.clone().ok_or_else(|| {
                    auth_error(
                        *span,
                        "the authorization server gave no ID token",
                        Some("ask for one with the `openid` scope".to_owned()),
                    )
                })?
            } else {
                token.access.clone()
            };
            replace_placeholder(prepared, &wanted.placeholder, *span, &value)?;
            pending.secrets.add_value(value);
        }
        if let Some(aws) = &pending.aws {
            let now = crate::build::aws_datetime(time::OffsetDateTime::now_utc());
            crate::build::sign_aws(&prepared.method, &prepared.url, &mut prepared.headers, &prepared.body, aws, &now)?;
        }
        if !prepared.redactor.reveals_all() {
            prepared.redactor = pending.secrets.redactor();
        }
        prepared.secrets = pending.secrets;
        Ok(())
    }

    /// The token of `config` for `prepared` (written at `span`), by `volley-auth`'s flows
    /// with this client's caches and prompt.
    async fn token_for(
        &self,
        prepared: &PreparedRequest,
        config: &OAuthConfig,
        span: volley_syntax::Span,
        cancel: Option<&CancellationToken>,
    ) -> Result<Token, Error> {
        let flow = Flow {
            cache: &self.inner.oauth,
            token_cache: self.inner.config.token_cache.as_deref(),
            prompt: self.inner.config.auth_prompt.as_ref(),
            transport: &SideTransport { client: self, prepared },
            timeout: prepared.timeout,
            cancel,
        };
        flow.token(config).await.map_err(|error| match error {
            FlowError::Failed { message, hint } => auth_error(span, &message, hint),
            FlowError::Cancelled => Error::Cancelled,
            FlowError::Transport(error) => error,
        })
    }
}

/// The flows' requests (discovery, token, device authorization), sent through the
/// client as `prepared` would be.
struct SideTransport<'a> {
    client: &'a Client,
    prepared: &'a PreparedRequest,
}

impl TokenTransport for SideTransport<'_> {
    type Error = Error;

    async fn send(&self, request: SideRequest, cancel: Option<&CancellationToken>) -> Result<SideAnswer, Error> {
        let response = self.client.exchange(side_request(self.prepared, request), cancel).await?;
        let status = http::StatusCode::from_u16(response.status()).unwrap_or(http::StatusCode::BAD_GATEWAY);
        let body = response
            .bytes()
            .await
            .map_err(|error| Error::Transport(TransportError::Other { message: error.to_string() }))?;
        if body.len() > MAX_ANSWER_BYTES {
            return Err(Error::Transport(TransportError::Other {
                message: format!("the authorization server's answer is larger than {MAX_ANSWER_BYTES} bytes"),
            }));
        }
        Ok(SideAnswer { status, headers: response.headers().clone(), body })
    }
}

/// A request of the flow, sent as `prepared` would be (its TLS settings, proxies,
/// timeout), without its cookies, scripts, checks or name.
fn side_request(prepared: &PreparedRequest, request: SideRequest) -> PreparedRequest {
    let SideRequest { method, url, headers, body } = request;
    PreparedRequest {
        method,
        url,
        headers,
        body,
        timeout: prepared.timeout,
        follow_redirects: false,
        validate_ssl: prepared.validate_ssl,
        use_cookies: false,
        redactor: prepared.redactor.clone(),
        secrets: prepared.secrets.clone(),
        assertions: Vec::new(),
        exchange: Exchange::Http,
        name: None,
        also_named: Vec::new(),
        max_body_bytes: Some(MAX_ANSWER_BYTES + 1),
        spill_dir: None,
        config_path: prepared.config_path.clone(),
        version: None,
        network: prepared.network.clone(),
        digest: None,
        cookie_jar: None,
        logs: Vec::new(),
        scripts: None,
        save_to: Vec::new(),
        sleep: None,
        rate_limit: None,
        auth: None,
    }
}

/// `value` in place of `placeholder` (a token's, written at `span`) in the headers, the
/// URL and the body.
fn replace_placeholder(
    prepared: &mut PreparedRequest,
    placeholder: &str,
    span: volley_syntax::Span,
    value: &str,
) -> Result<(), Error> {
    for header in prepared.headers.values_mut() {
        if let Ok(text) = header.to_str()
            && text.contains(placeholder)
        {
            *header = HeaderValue::from_str(&text.replace(placeholder, value))
                .map_err(|_| auth_error(span, "the token has characters a header cannot carry", None))?;
        }
    }
    if prepared.url.as_str().contains(placeholder) {
        let replaced = prepared.url.as_str().replace(placeholder, value);
        prepared.url = url::Url::parse(&replaced)
            .map_err(|error| auth_error(span, &format!("the URL with the token is not a URL: {error}"), None))?;
    }
    if memchr::memmem::find(&prepared.body, placeholder.as_bytes()).is_some() {
        let text = String::from_utf8_lossy(&prepared.body).replace(placeholder, value);
        prepared.body = Bytes::from(text);
    }
    Ok(())
}

/// An error of the flow, at the `Authorization` header (or the `{{$auth.token(…)}}`).
fn auth_error(span: volley_syntax::Span, message: &str, hint: Option<String>) -> Error {
    Error::Build(BuildError::Auth { message: message.to_owned(), hint: hint.unwrap_or_default(), span })
}
