//! OAuth 2.0 and `OpenID` Connect tokens for requests: httpyac's `Authorization: oauth2
//! [grant] [prefix]` (and `openid …`), read from the `<prefix>_tokenEndpoint`,
//! `<prefix>_clientId`, … variables. The configuration is read while the request is
//! built (`config.rs`); the token is got when the request is sent ([`Client::authorize`]),
//! through the client's own transport (its TLS settings, proxies and timeout), and kept
//! for the process in the client's [`TokenCache`], reused until shortly before it
//! expires, then refreshed with its refresh token when there is one, else got anew.
//!
//! Grants run here: client credentials (the secret as HTTP Basic, or in the body),
//! resource-owner password, refresh. Where an issuer is given instead of a token
//! endpoint, the endpoint comes from its `OpenID` discovery document
//! (`/.well-known/openid-configuration`, kept per issuer).

mod config;
mod interactive;
mod prompt;
mod store;
mod token;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::HeaderValue;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use parking_lot::Mutex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub(crate) use config::{Grant, OAuthConfig, parse_form, read_config, read_entry};
pub use prompt::{AuthPrompt, CommandPrompt, DeviceCode, NoBrowserPrompt};
pub use store::{clear_token_cache, default_token_cache};
pub(crate) use token::Token;

use crate::client::Client;
use crate::error::{BuildError, Error};
use crate::prepare::{Exchange, PreparedRequest};
use crate::redact::Secrets;

/// A token is renewed this long before it expires.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// The largest token or discovery answer read.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// A token a request needs: where it is used, the request holds `placeholder`, which
/// the token replaces when the request is sent.
#[derive(Debug, Clone)]
pub(crate) struct PendingToken {
    pub(crate) config: OAuthConfig,
    /// `$auth.idToken`: the ID token rather than the access token.
    pub(crate) id_token: bool,
    pub(crate) placeholder: String,
    /// Where it is written (the `Authorization` header, the `{{$auth.token(…)}}`).
    pub(crate) span: volley_syntax::Span,
}

impl PendingToken {
    /// A token to get with `config`, used at `span`; its placeholder is random, so no
    /// text of the request holds it by chance.
    pub(crate) fn new(config: OAuthConfig, id_token: bool, span: volley_syntax::Span) -> Self {
        let placeholder = format!("volley-pending-token-{}", interactive::random_text(18).replace(['-', '_'], "x"));
        Self { config, id_token, placeholder, span }
    }
}

/// What a prepared request still needs before it is sent: its tokens.
#[derive(Debug, Clone)]
pub(crate) struct PendingAuth {
    pub(crate) tokens: Vec<PendingToken>,
    /// The request's secrets, to which the tokens are added.
    pub(crate) secrets: Secrets,
}

/// The tokens a client got, by configuration, and the discovery documents it read, by
/// issuer. Shared by a client's forks (the execution server's sessions).
#[derive(Debug, Default)]
pub(crate) struct TokenCache {
    tokens: Mutex<HashMap<String, Token>>,
    discovered: Mutex<HashMap<String, Arc<Value>>>,
}

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
        if !prepared.redactor.reveals_all() {
            prepared.redactor = pending.secrets.redactor();
        }
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
            cached = store::load(path, &key);
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

    /// The authorization-code grant: the browser sent to the authorization endpoint,
    /// the code taken on the loopback redirect (its `state` checked), exchanged.
    async fn authorization_code(
        &self,
        prepared: &PreparedRequest,
        pending: &PendingToken,
        token_endpoint: &url::Url,
        cancel: Option<&CancellationToken>,
    ) -> Result<Token, Error> {
        let config = &pending.config;
        if !self.prompt().has_browser() {
            return Err(auth_error(
                pending,
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
        let mut url = self
            .endpoint(prepared, pending, written, ("authorization_endpoint", "authorizationEndpoint"), cancel)
            .await?;
        let redirect = config.redirect_uri.as_deref().unwrap_or(interactive::DEFAULT_REDIRECT);
        let loopback = interactive::Loopback::bind(redirect).await.map_err(|message| {
            auth_error(pending, &message, Some(format!("set `{}_redirectUri` to `http://127.0.0.1/callback` (any free port) or a free port of this machine", config.prefix)))
        })?;
        let state = interactive::random_text(16);
        let verifier = config.use_pkce.then(|| interactive::random_text(32));
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
                query.append_pair("code_challenge", &interactive::pkce_challenge(verifier));
                query.append_pair("code_challenge_method", "S256");
            }
        }
        let deadline = tokio::time::Instant::now() + prepared.timeout;
        let redirect_uri = loopback.redirect_uri.clone();
        self.prompt().open_browser(url.as_str());
        let redirected = tokio::select! {
            redirected = loopback.wait(deadline) => redirected,
            () = cancelled(cancel) => return Err(Error::Cancelled),
        };
        let pairs = redirected.map_err(|message| {
            auth_error(
                pending,
                &format!("{message} ({} s, the request's timeout, waiting for the sign-in at {})", prepared.timeout.as_secs(), without_query(&url)),
                Some("sign in in the browser that opened (VOLLEY_BROWSER or BROWSER names it), or give the request more time (`# @timeout 5m`)".to_owned()),
            )
        })?;
        let get = |name: &str| pairs.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
        if let Some(error) = get("error") {
            let description = get("error_description").map(|text| format!(" ({text})")).unwrap_or_default();
            return Err(auth_error(
                pending,
                &format!("the authorization server refused the sign-in: {error}{description}"),
                Some(format!(
                    "check `{0}_clientId`, `{0}_scope` and that `{0}_redirectUri` is registered for the client",
                    config.prefix
                )),
            ));
        }
        if get("state").as_deref() != Some(state.as_str()) {
            return Err(auth_error(
                pending,
                "the redirect's `state` is not the one sent: the answer is not to this sign-in, and is not used",
                Some(
                    "sign in again from this request; another sign-in may have used the same redirect port".to_owned(),
                ),
            ));
        }
        let code = get("code").ok_or_else(|| auth_error(pending, "the redirect to Volley has no `code`", None))?;
        let mut form =
            vec![("grant_type", "authorization_code".to_owned()), ("code", code), ("redirect_uri", redirect_uri)];
        if let Some(verifier) = verifier {
            form.push(("code_verifier", verifier));
        }
        self.token_request(prepared, pending, token_endpoint, form, cancel).await
    }

    /// The device authorization grant: the code shown, the token endpoint polled at the
    /// server's interval (slower after `slow_down`) until the code is approved, refused
    /// or expired, or the request's timeout.
    async fn device_code(
        &self,
        prepared: &PreparedRequest,
        pending: &PendingToken,
        token_endpoint: &url::Url,
        cancel: Option<&CancellationToken>,
    ) -> Result<Token, Error> {
        let config = &pending.config;
        let written = config.device_endpoint.clone();
        let endpoint = self
            .endpoint(prepared, pending, written, ("device_authorization_endpoint", "deviceCodeEndpoint"), cancel)
            .await?;
        let mut form = vec![("client_id", config.client_id.clone())];
        if let Some(scope) = &config.scope {
            form.push(("scope", scope.clone()));
        }
        if config.device_code_secret
            && let Some(secret) = &config.client_secret
        {
            form.push(("client_secret", secret.clone()));
        }
        let (status, answer) = self.post_form(prepared, &endpoint, form, cancel).await?;
        let json: Option<Value> = serde_json::from_slice(&answer).ok();
        if !status.is_success() {
            return Err(oauth_error_answer(pending, &endpoint, status, json.as_ref()));
        }
        let text =
            |name: &str| json.as_ref().and_then(|json| json.get(name)).and_then(Value::as_str).map(str::to_owned);
        let number = |name: &str| json.as_ref().and_then(|json| json.get(name)).and_then(Value::as_u64);
        let (Some(device_code), Some(user_code)) = (text("device_code"), text("user_code")) else {
            return Err(auth_error(
                pending,
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
        let mut interval = interactive::poll_interval(number("interval"));
        let started = tokio::time::Instant::now();
        let deadline = started + expires_in.min(prepared.timeout);
        loop {
            if tokio::time::Instant::now() + interval > deadline {
                return Err(auth_error(
                    pending,
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
                () = cancelled(cancel) => return Err(Error::Cancelled),
            }
            let form = vec![
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code".to_owned()),
                ("device_code", device_code.clone()),
            ];
            match self.post_token(prepared, pending, token_endpoint, form, cancel).await? {
                Answer::Token(token) => return Ok(token),
                Answer::Refused { error, .. } if error.as_deref() == Some("authorization_pending") => {}
                Answer::Refused { error, .. } if error.as_deref() == Some("slow_down") => {
                    interval += Duration::from_secs(5);
                }
                Answer::Refused { status, json, .. } => {
                    return Err(oauth_error_answer(pending, token_endpoint, status, json.as_ref()));
                }
            }
        }
    }

    /// Keeps `token` for the process, and in the on-disk cache when there is one.
    fn remember(&self, key: String, token: &Token) {
        if let Some(path) = &self.inner.config.token_cache {
            // A cache that cannot be written costs a sign-in later, nothing else.
            if let Err(error) = store::save(path, &key, token) {
                tracing::warn!("cannot write the token cache {}: {error}", path.display());
            }
        }
        self.inner.oauth.tokens.lock().insert(key, token.clone());
    }

    /// The prompt of this client's front end.
    fn prompt(&self) -> Arc<dyn AuthPrompt> {
        self.inner.config.auth_prompt.clone().unwrap_or_else(|| Arc::new(CommandPrompt))
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

    /// Posts `form` to the token endpoint with the client's credentials; the token of
    /// a successful answer, else the OAuth error it gave.
    async fn token_request(
        &self,
        prepared: &PreparedRequest,
        pending: &PendingToken,
        endpoint: &url::Url,
        form: Vec<(&str, String)>,
        cancel: Option<&CancellationToken>,
    ) -> Result<Token, Error> {
        match self.post_token(prepared, pending, endpoint, form, cancel).await? {
            Answer::Token(token) => Ok(token),
            Answer::Refused { status, json, .. } => Err(oauth_error_answer(pending, endpoint, status, json.as_ref())),
        }
    }

    /// Posts `form` to the token endpoint with the client's credentials (HTTP Basic,
    /// or in the body; a public client's id in the body).
    async fn post_token(
        &self,
        prepared: &PreparedRequest,
        pending: &PendingToken,
        endpoint: &url::Url,
        mut form: Vec<(&str, String)>,
        cancel: Option<&CancellationToken>,
    ) -> Result<Answer, Error> {
        let config = &pending.config;
        let mut basic = None;
        match (&config.client_secret, config.secret_in_body) {
            (Some(secret), false) => {
                // RFC 6749 §2.3.1: each part form-encoded, then `Basic`.
                let encode = |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
                basic = Some(
                    crate::credentials::basic(encode(&config.client_id).as_bytes(), encode(secret).as_bytes(), true)
                        .value,
                );
            }
            (Some(secret), true) => {
                form.push(("client_id", config.client_id.clone()));
                form.push(("client_secret", secret.clone()));
            }
            (None, _) => form.push(("client_id", config.client_id.clone())),
        }
        let (status, answer) = self.post(prepared, endpoint, form, basic, cancel).await?;
        let json: Option<Value> = serde_json::from_slice(&answer).ok();
        if !status.is_success() {
            let error = json.as_ref().and_then(|json| json.get("error")).and_then(Value::as_str).map(str::to_owned);
            return Ok(Answer::Refused { status, json, error });
        }
        Token::from_answer(json.as_ref(), Instant::now()).map(Answer::Token).ok_or_else(|| {
            auth_error(
                pending,
                &format!("the token endpoint {endpoint} answered {status} without an `access_token`"),
                None,
            )
        })
    }

    /// Posts a form without client authentication (the device authorization request).
    async fn post_form(
        &self,
        prepared: &PreparedRequest,
        endpoint: &url::Url,
        form: Vec<(&str, String)>,
        cancel: Option<&CancellationToken>,
    ) -> Result<(http::StatusCode, Bytes), Error> {
        self.post(prepared, endpoint, form, None, cancel).await
    }

    async fn post(
        &self,
        prepared: &PreparedRequest,
        endpoint: &url::Url,
        form: Vec<(&str, String)>,
        basic: Option<String>,
        cancel: Option<&CancellationToken>,
    ) -> Result<(http::StatusCode, Bytes), Error> {
        let mut headers = http::HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(value) = basic.and_then(|basic| HeaderValue::from_str(&basic).ok()) {
            headers.insert(AUTHORIZATION, value);
        }
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form.iter()).finish();
        let request = side_request(prepared, http::Method::POST, endpoint.clone(), headers, Bytes::from(body));
        self.side_exchange(request, cancel).await
    }

    /// Sends a request of the flow (discovery, token) and reads its answer whole.
    async fn side_exchange(
        &self,
        request: PreparedRequest,
        cancel: Option<&CancellationToken>,
    ) -> Result<(http::StatusCode, Bytes), Error> {
        let response = self.exchange(request, cancel).await?;
        let status = http::StatusCode::from_u16(response.status()).unwrap_or(http::StatusCode::BAD_GATEWAY);
        let body = response
            .bytes()
            .await
            .map_err(|error| Error::Transport(crate::error::TransportError::Other { message: error.to_string() }))?;
        if body.len() > MAX_ANSWER_BYTES {
            return Err(Error::Transport(crate::error::TransportError::Other {
                message: format!("the authorization server's answer is larger than {MAX_ANSWER_BYTES} bytes"),
            }));
        }
        Ok((status, body))
    }
}

/// What a token endpoint answered.
enum Answer {
    Token(Token),
    /// An error answer: its status, its JSON, its `error`.
    Refused {
        status: http::StatusCode,
        json: Option<Value>,
        error: Option<String>,
    },
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

/// A request of the flow, sent as `prepared` would be (its TLS settings, proxies,
/// timeout), without its cookies, scripts, checks or name.
fn side_request(
    prepared: &PreparedRequest,
    method: http::Method,
    url: url::Url,
    headers: http::HeaderMap,
    body: Bytes,
) -> PreparedRequest {
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
        assertions: Vec::new(),
        exchange: Exchange::Http,
        name: None,
        max_body_bytes: Some(MAX_ANSWER_BYTES + 1),
        config_path: prepared.config_path.clone(),
        version: None,
        network: prepared.network.clone(),
        digest: None,
        cookie_jar: None,
        logs: Vec::new(),
        scripts: None,
        auth: None,
    }
}

/// An OAuth error answer (RFC 6749 §5.2) as an error of the request's header.
fn oauth_error_answer(
    pending: &PendingToken,
    endpoint: &url::Url,
    status: http::StatusCode,
    json: Option<&Value>,
) -> Error {
    let field = |name: &str| json.and_then(|json| json.get(name)).and_then(Value::as_str);
    let mut message = format!("the token endpoint {endpoint} answered {status}");
    if let Some(error) = field("error") {
        let description = field("error_description").map(|text| format!(" ({text})")).unwrap_or_default();
        message = format!("{message}: {error}{description}");
    }
    let prefix = &pending.config.prefix;
    let hint = match field("error") {
        Some("invalid_client" | "unauthorized_client") => Some(format!(
            "check `{prefix}_clientId` and `{prefix}_clientSecret`, and how the server wants the secret: \
             `{prefix}_useAuthorizationHeader` false sends it in the body"
        )),
        Some("invalid_grant") => Some(format!("check `{prefix}_username` and `{prefix}_password`, or the code")),
        Some("invalid_scope") => Some(format!("check `{prefix}_scope`")),
        Some("unsupported_grant_type") => Some("the server does not allow this grant for this client".to_owned()),
        _ => None,
    };
    auth_error(pending, &message, hint)
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
