//! OAuth 2.0 and `OpenID` Connect tokens for requests: httpyac's `Authorization: oauth2
//! [grant] [prefix]` (and `openid …`), read from the `<prefix>_tokenEndpoint`,
//! `<prefix>_clientId`, … variables. The configuration is read while the request is
//! built (`config.rs`); the token is got when the request is sent ([`Client::authorize`]),
//! through the client's own transport (its TLS settings, proxies and timeout), and kept
//! for the process in the client's [`TokenCache`], reused until shortly before it
//! expires, then refreshed with its refresh token when there is one, else got anew.
//!
//! Grants run here: client credentials (the secret as HTTP Basic, or in the body),
//! resource-owner password, refresh; the authorization code and the device code in
//! `interactive.rs`; the token endpoint's requests and answers in `wire.rs`. Where an issuer is given instead of a token
//! endpoint, the endpoint comes from its `OpenID` discovery document
//! (`/.well-known/openid-configuration`, kept per issuer).

mod interactive;
mod wire;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::HeaderValue;
use http::header::ACCEPT;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::interpolate::oauth::{Grant, PendingToken};
pub(crate) use volley_auth::oauth::Token;
pub use volley_auth::oauth::{
    AuthPrompt, CommandPrompt, DeviceCode, NoBrowserPrompt, clear_token_cache, default_token_cache, with_prompt,
};
use wire::side_request;

use crate::client::Client;
use crate::error::{BuildError, Error};
use crate::prepared::PreparedRequest;

/// A token is renewed this long before it expires.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// The largest token or discovery answer read.
const MAX_ANSWER_BYTES: usize = 1 << 20;

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
        for wanted in &pending.tokens {
            let token = self.token_for(prepared, wanted, cancel).await?;
            let value = if wanted.id_token || wanted.config.use_id_token {
                token.id.clone().ok_or_else(|| {
                    auth_error(
                        wanted,
                        "the authorization server gave no ID token",
                        Some("ask for one with the `openid` scope".to_owned()),
                    )
                })?
            } else {
                token.access.clone()
            };
            replace_placeholder(prepared, wanted, &value)?;
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

    async fn token_for(
        &self,
        prepared: &PreparedRequest,
        pending: &PendingToken,
        cancel: Option<&CancellationToken>,
    ) -> Result<Token, Error> {
        let cache = &self.inner.oauth;
        let key = pending.config.cache_key();
        let mut cached = cache.tokens.lock().get(&key).cloned();
        if cached.is_none()
            && let Some(path) = &self.inner.config.token_cache
        {
            cached = volley_auth::oauth::load(path, &key);
            if let Some(token) = &cached {
                cache.tokens.lock().insert(key.clone(), token.clone());
            }
        }
        if let Some(token) = &cached
            && token.fresh(Instant::now(), EXPIRY_MARGIN)
        {
            return Ok(token.clone());
        }
        let token_endpoint = self.token_endpoint(prepared, pending, cancel).await?;
        if let Some(refresh) = cached.and_then(|token| token.refresh) {
            let mut form = vec![("grant_type", "refresh_token".to_owned()), ("refresh_token", refresh.clone())];
            if let Some(scope) = &pending.config.scope {
                form.push(("scope", scope.clone()));
            }
            // A refresh the server refuses (revoked, expired) falls back to the grant.
            if let Ok(mut token) = self.token_request(prepared, pending, &token_endpoint, form, cancel).await {
                token.refresh.get_or_insert(refresh);
                self.remember(key, &token);
                return Ok(token);
            }
        }
        let form = match pending.config.grant {
            Grant::AuthorizationCode => {
                let token = self.authorization_code(prepared, pending, &token_endpoint, cancel).await?;
                self.remember(key, &token);
                return Ok(token);
            }
            Grant::DeviceCode => {
                let token = self.device_code(prepared, pending, &token_endpoint, cancel).await?;
                self.remember(key, &token);
                return Ok(token);
            }
            Grant::ClientCredentials => vec![("grant_type", "client_credentials".to_owned())],
            Grant::Password => {
                let (Some(username), Some(password)) = (&pending.config.username, &pending.config.password) else {
                    return Err(auth_error(
                        pending,
                        "the password grant needs a user name and a password",
                        Some(format!(
                            "set `{0}_username` and `{0}_password` (best `{{{{$secret …}}}}`)",
                            pending.config.prefix
                        )),
                    ));
                };
                vec![
                    ("grant_type", "password".to_owned()),
                    ("username", username.clone()),
                    ("password", password.clone()),
                ]
            }
        };
        let mut form = form;
        for (name, value) in [
            ("scope", &pending.config.scope),
            ("audience", &pending.config.audience),
            ("resource", &pending.config.resource),
        ] {
            if let Some(value) = value {
                form.push((name, value.clone()));
            }
        }
        let token = self.token_request(prepared, pending, &token_endpoint, form, cancel).await?;
        self.remember(key, &token);
        Ok(token)
    }

    /// The token endpoint: written, else from the issuer's discovery document.
    async fn token_endpoint(
        &self,
        prepared: &PreparedRequest,
        pending: &PendingToken,
        cancel: Option<&CancellationToken>,
    ) -> Result<url::Url, Error> {
        let written = pending.config.token_endpoint.clone();
        self.endpoint(prepared, pending, written, ("token_endpoint", "tokenEndpoint"), cancel).await
    }

    /// An endpoint: `written`, else the discovery document's `names.0` (the variable
    /// that would name it is `<prefix>_<names.1>`).
    async fn endpoint(
        &self,
        prepared: &PreparedRequest,
        pending: &PendingToken,
        written: Option<String>,
        names: (&str, &str),
        cancel: Option<&CancellationToken>,
    ) -> Result<url::Url, Error> {
        let (field, variable) = names;
        let config = &pending.config;
        if let Some(endpoint) = written {
            return url::Url::parse(&endpoint).map_err(|error| {
                auth_error(
                    pending,
                    &format!("`{}_{variable}` (`{endpoint}`) is not a URL: {error}", config.prefix),
                    None,
                )
            });
        }
        let Some(issuer) = &config.issuer else {
            return Err(auth_error(
                pending,
                &format!(
                    "no {}: neither `{1}_{variable}` nor `{1}_issuer` is set",
                    field.replace('_', " "),
                    config.prefix
                ),
                Some(format!("set `{0}_{variable}`, or `{0}_issuer` for OpenID discovery", config.prefix)),
            ));
        };
        let document = self.discover(prepared, pending, issuer, cancel).await?;
        let endpoint = document.get(field).and_then(Value::as_str).ok_or_else(|| {
            auth_error(pending, &format!("the discovery document of `{issuer}` names no `{field}`"), None)
        })?;
        url::Url::parse(endpoint).map_err(|error| {
            auth_error(pending, &format!("the discovered {field} `{endpoint}` is not a URL: {error}"), None)
        })
    }

    /// Keeps `token` for the process, and in the on-disk cache when there is one.
    fn remember(&self, key: String, token: &Token) {
        if let Some(path) = &self.inner.config.token_cache {
            // A cache that cannot be written costs a sign-in later, nothing else.
            if let Err(error) = volley_auth::oauth::save(path, &key, token) {
                tracing::warn!("cannot write the token cache {}: {error}", path.display());
            }
        }
        self.inner.oauth.tokens.lock().insert(key, token.clone());
    }

    /// The prompt of this client's front end.
    fn prompt(&self) -> Arc<dyn AuthPrompt> {
        volley_auth::oauth::scoped_prompt()
            .or_else(|| self.inner.config.auth_prompt.clone())
            .unwrap_or_else(|| Arc::new(CommandPrompt))
    }

    /// The `OpenID` discovery document of `issuer`, read once per client.
    async fn discover(
        &self,
        prepared: &PreparedRequest,
        pending: &PendingToken,
        issuer: &str,
        cancel: Option<&CancellationToken>,
    ) -> Result<Arc<Value>, Error> {
        if let Some(document) = self.inner.oauth.discovered.lock().get(issuer) {
            return Ok(Arc::clone(document));
        }
        let address = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        let url = url::Url::parse(&address)
            .map_err(|error| auth_error(pending, &format!("the issuer `{issuer}` is not a URL: {error}"), None))?;
        let mut headers = http::HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let request = side_request(prepared, http::Method::GET, url, headers, Bytes::new());
        let (status, body) = self.side_exchange(request, cancel).await?;
        let document: Value = serde_json::from_slice(&body).map_err(|_| {
            auth_error(
                pending,
                &format!("OpenID discovery at {address} answered {status} without a JSON document"),
                Some(
                    "check the issuer: its discovery document is at `<issuer>/.well-known/openid-configuration`"
                        .to_owned(),
                ),
            )
        })?;
        if !status.is_success() {
            return Err(auth_error(pending, &format!("OpenID discovery at {address} answered {status}"), None));
        }
        let document = Arc::new(document);
        self.inner.oauth.discovered.lock().insert(issuer.to_owned(), Arc::clone(&document));
        Ok(document)
    }
}

/// `value` in place of `wanted`'s placeholder in the headers, the URL and the body.
fn replace_placeholder(prepared: &mut PreparedRequest, wanted: &PendingToken, value: &str) -> Result<(), Error> {
    let placeholder = wanted.placeholder.as_str();
    for header in prepared.headers.values_mut() {
        if let Ok(text) = header.to_str()
            && text.contains(placeholder)
        {
            *header = HeaderValue::from_str(&text.replace(placeholder, value))
                .map_err(|_| auth_error(wanted, "the token has characters a header cannot carry", None))?;
        }
    }
    if prepared.url.as_str().contains(placeholder) {
        let replaced = prepared.url.as_str().replace(placeholder, value);
        prepared.url = url::Url::parse(&replaced)
            .map_err(|error| auth_error(wanted, &format!("the URL with the token is not a URL: {error}"), None))?;
    }
    if memchr::memmem::find(&prepared.body, placeholder.as_bytes()).is_some() {
        let text = String::from_utf8_lossy(&prepared.body).replace(placeholder, value);
        prepared.body = Bytes::from(text);
    }
    Ok(())
}

/// An error of the flow, at the `Authorization` header.
fn auth_error(pending: &PendingToken, message: &str, hint: Option<String>) -> Error {
    Error::Build(BuildError::Auth { message: message.to_owned(), hint: hint.unwrap_or_default(), span: pending.span })
}
