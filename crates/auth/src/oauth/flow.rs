//! A token for a configuration: from the process's [`TokenCache`] (or the on-disk
//! token cache), refreshed with its refresh token when it is about to expire, else got
//! by its grant. Grants run here: client credentials (the secret as HTTP Basic, or in
//! the body), resource-owner password, refresh; the authorization code and the device
//! code in `interactive.rs`; the token endpoint's requests and answers in `wire.rs`.
//! Where an issuer is given instead of a token endpoint, the endpoint comes from its
//! `OpenID` discovery document (`/.well-known/openid-configuration`, kept per issuer).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::HeaderValue;
use http::header::ACCEPT;
use parking_lot::Mutex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::config::{Grant, OAuthConfig};
use super::prompt::{AuthPrompt, CommandPrompt, scoped_prompt};
use super::token::Token;
use super::transport::{SideRequest, TokenTransport};

/// A token is renewed this long before it expires.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// The tokens a client got, by configuration, and the discovery documents it read, by
/// issuer. Shared by a client's forks (the execution server's sessions).
#[derive(Default)]
pub struct TokenCache {
    tokens: Mutex<HashMap<String, Token>>,
    discovered: Mutex<HashMap<String, Arc<Value>>>,
}

impl std::fmt::Debug for TokenCache {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Its keys hold the configurations' secrets.
        formatter.debug_struct("TokenCache").finish_non_exhaustive()
    }
}

/// Why a flow gave no token.
#[derive(Debug)]
pub enum FlowError<E> {
    /// The flow's own failure (a setting missing or wrong, a refusal of the
    /// authorization server, a person who did not sign in in time): what, and how to
    /// set it right when there is something to say.
    Failed { message: String, hint: Option<String> },
    /// The request was cancelled while the flow waited for a person.
    Cancelled,
    /// A request of the flow failed on its way: the transport's error, as it is.
    Transport(E),
}

impl<E: std::fmt::Display> std::fmt::Display for FlowError<E> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlowError::Failed { message, .. } => formatter.write_str(message),
            FlowError::Cancelled => formatter.write_str("cancelled"),
            FlowError::Transport(error) => error.fmt(formatter),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for FlowError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FlowError::Transport(error) => Some(error),
            _ => None,
        }
    }
}

/// The flow's own failure.
pub(super) fn failed<E>(message: &str, hint: Option<String>) -> FlowError<E> {
    FlowError::Failed { message: message.to_owned(), hint }
}

/// What the flows of one request run with: the process's caches, the front end's
/// prompt, and the request's transport, timeout and cancellation.
pub struct Flow<'a, T> {
    /// The tokens and discovery documents of the client and its forks.
    pub cache: &'a TokenCache,
    /// The on-disk token cache (`volley run --token-cache`), if any.
    pub token_cache: Option<&'a Path>,
    /// The front end's prompt; the task's ([`with_prompt`](super::with_prompt)) goes
    /// over it, [`CommandPrompt`] without either.
    pub prompt: Option<&'a Arc<dyn AuthPrompt>>,
    /// How the flow's requests go out: as the request that needs the token would.
    pub transport: &'a T,
    /// The request's timeout, which a sign-in in the browser and a device code's
    /// approval end within.
    pub timeout: Duration,
    /// The request's cancellation.
    pub cancel: Option<&'a CancellationToken>,
}

impl<T> std::fmt::Debug for Flow<'_, T> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Flow")
            .field("cache", self.cache)
            .field("token_cache", &self.token_cache)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl<T: TokenTransport> Flow<'_, T> {
    /// The token of `config`: the one kept while it is fresh, else refreshed with its
    /// refresh token (a refusal falls back to the grant), else got by its grant; kept
    /// for the process, and in the on-disk cache when there is one.
    pub async fn token(&self, config: &OAuthConfig) -> Result<Token, FlowError<T::Error>> {
        let key = config.cache_key();
        let mut cached = self.cache.tokens.lock().get(&key).cloned();
        if cached.is_none()
            && let Some(path) = self.token_cache
        {
            cached = super::store::load(path, &key);
            if let Some(token) = &cached {
                self.cache.tokens.lock().insert(key.clone(), token.clone());
            }
        }
        if let Some(token) = &cached
            && token.fresh(Instant::now(), EXPIRY_MARGIN)
        {
            return Ok(token.clone());
        }
        let token_endpoint = self.token_endpoint(config).await?;
        if let Some(refresh) = cached.and_then(|token| token.refresh) {
            let mut form = vec![("grant_type", "refresh_token".to_owned()), ("refresh_token", refresh.clone())];
            if let Some(scope) = &config.scope {
                form.push(("scope", scope.clone()));
            }
            // A refresh the server refuses (revoked, expired) falls back to the grant.
            if let Ok(mut token) = self.token_request(config, &token_endpoint, form).await {
                token.refresh.get_or_insert(refresh);
                self.remember(key, &token);
                return Ok(token);
            }
        }
        let form = match config.grant {
            Grant::AuthorizationCode => {
                let token = self.authorization_code(config, &token_endpoint).await?;
                self.remember(key, &token);
                return Ok(token);
            }
            Grant::DeviceCode => {
                let token = self.device_code(config, &token_endpoint).await?;
                self.remember(key, &token);
                return Ok(token);
            }
            Grant::ClientCredentials => vec![("grant_type", "client_credentials".to_owned())],
            Grant::Password => {
                let (Some(username), Some(password)) = (&config.username, &config.password) else {
                    return Err(failed(
                        "the password grant needs a user name and a password",
                        Some(format!(
                            "set `{0}_username` and `{0}_password` (best `{{{{$secret …}}}}`)",
                            config.prefix
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
        for (name, value) in [("scope", &config.scope), ("audience", &config.audience), ("resource", &config.resource)]
        {
            if let Some(value) = value {
                form.push((name, value.clone()));
            }
        }
        let token = self.token_request(config, &token_endpoint, form).await?;
        self.remember(key, &token);
        Ok(token)
    }

    /// The token endpoint: written, else from the issuer's discovery document.
    async fn token_endpoint(&self, config: &OAuthConfig) -> Result<url::Url, FlowError<T::Error>> {
        let written = config.token_endpoint.clone();
        self.endpoint(config, written, ("token_endpoint", "tokenEndpoint")).await
    }

    /// An endpoint: `written`, else the discovery document's `names.0` (the variable
    /// that would name it is `<prefix>_<names.1>`).
    pub(super) async fn endpoint(
        &self,
        config: &OAuthConfig,
        written: Option<String>,
        names: (&str, &str),
    ) -> Result<url::Url, FlowError<T::Error>> {
        let (field, variable) = names;
        if let Some(endpoint) = written {
            return url::Url::parse(&endpoint).map_err(|error| {
                failed(&format!("`{}_{variable}` (`{endpoint}`) is not a URL: {error}", config.prefix), None)
            });
        }
        let Some(issuer) = &config.issuer else {
            return Err(failed(
                &format!(
                    "no {}: neither `{1}_{variable}` nor `{1}_issuer` is set",
                    field.replace('_', " "),
                    config.prefix
                ),
                Some(format!("set `{0}_{variable}`, or `{0}_issuer` for OpenID discovery", config.prefix)),
            ));
        };
        let document = self.discover(issuer).await?;
        let endpoint = document
            .get(field)
            .and_then(Value::as_str)
            .ok_or_else(|| failed(&format!("the discovery document of `{issuer}` names no `{field}`"), None))?;
        url::Url::parse(endpoint)
            .map_err(|error| failed(&format!("the discovered {field} `{endpoint}` is not a URL: {error}"), None))
    }

    /// Keeps `token` for the process, and in the on-disk cache when there is one.
    fn remember(&self, key: String, token: &Token) {
        if let Some(path) = self.token_cache {
            // A cache that cannot be written costs a sign-in later, nothing else.
            if let Err(error) = super::store::save(path, &key, token) {
                tracing::warn!("cannot write the token cache {}: {error}", path.display());
            }
        }
        self.cache.tokens.lock().insert(key, token.clone());
    }

    /// The prompt of the front end.
    pub(super) fn prompt(&self) -> Arc<dyn AuthPrompt> {
        scoped_prompt().or_else(|| self.prompt.cloned()).unwrap_or_else(|| Arc::new(CommandPrompt))
    }

    /// The `OpenID` discovery document of `issuer`, read once per cache.
    async fn discover(&self, issuer: &str) -> Result<Arc<Value>, FlowError<T::Error>> {
        if let Some(document) = self.cache.discovered.lock().get(issuer) {
            return Ok(Arc::clone(document));
        }
        let address = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        let url = url::Url::parse(&address)
            .map_err(|error| failed(&format!("the issuer `{issuer}` is not a URL: {error}"), None))?;
        let mut headers = http::HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let request = SideRequest { method: http::Method::GET, url, headers, body: Bytes::new() };
        let (status, body) = self.side_exchange(request).await?;
        let document: Value = serde_json::from_slice(&body).map_err(|_| {
            failed(
                &format!("OpenID discovery at {address} answered {status} without a JSON document"),
                Some(
                    "check the issuer: its discovery document is at `<issuer>/.well-known/openid-configuration`"
                        .to_owned(),
                ),
            )
        })?;
        if !status.is_success() {
            return Err(failed(&format!("OpenID discovery at {address} answered {status}"), None));
        }
        let document = Arc::new(document);
        self.cache.discovered.lock().insert(issuer.to_owned(), Arc::clone(&document));
        Ok(document)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::oauth::SideAnswer;

    /// A token endpoint that gives a token to every request and keeps what it was sent.
    #[derive(Default)]
    struct Endpoint(Mutex<Vec<SideRequest>>);

    impl TokenTransport for Endpoint {
        type Error = String;

        async fn send(&self, request: SideRequest, _: Option<&CancellationToken>) -> Result<SideAnswer, String> {
            self.0.lock().push(request);
            let body = Bytes::from_static(br#"{"access_token": "token-1", "expires_in": 3600}"#);
            Ok(SideAnswer { status: http::StatusCode::OK, headers: http::HeaderMap::new(), body })
        }
    }

    fn configuration(grant: Grant) -> OAuthConfig {
        let values: HashMap<&str, Option<String>> = [
            ("tokenEndpoint", "https://sso.example/token"),
            ("clientId", "app"),
            ("clientSecret", "s3cret"),
            ("scope", "api"),
        ]
        .into_iter()
        .map(|(name, value)| (name, Some(value.to_owned())))
        .collect();
        OAuthConfig::from_values(grant, "oauth2".to_owned(), &values).unwrap()
    }

    #[tokio::test]
    async fn a_token_is_got_through_the_transport_once_per_configuration() {
        let (cache, endpoint) = (TokenCache::default(), Endpoint::default());
        let flow = Flow {
            cache: &cache,
            token_cache: None,
            prompt: None,
            transport: &endpoint,
            timeout: Duration::from_secs(5),
            cancel: None,
        };
        let config = configuration(Grant::ClientCredentials);
        assert_eq!(flow.token(&config).await.unwrap().access, "token-1");
        assert_eq!(flow.token(&config).await.unwrap().access, "token-1");
        {
            let sent = endpoint.0.lock();
            assert_eq!(sent.len(), 1, "the second token comes from the cache");
            assert_eq!((sent[0].method.as_str(), sent[0].url.as_str()), ("POST", "https://sso.example/token"));
            assert_eq!(sent[0].body, "grant_type=client_credentials&scope=api");
            assert_eq!(sent[0].headers["authorization"], "Basic YXBwOnMzY3JldA==");
        }
        let Err(FlowError::Failed { message, hint }) = flow.token(&configuration(Grant::Password)).await else {
            panic!("the password grant needs a user name");
        };
        assert_eq!(message, "the password grant needs a user name and a password");
        assert!(hint.unwrap().contains("`oauth2_username`"));
    }
}
