//! The flow's own requests: the token endpoint's form posts (client authentication as
//! HTTP Basic or in the body), their answers (a token, or an OAuth error answer), sent
//! through the client's transport with the request's network settings.

use std::time::Instant;

use bytes::Bytes;
use http::HeaderValue;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{MAX_ANSWER_BYTES, PendingToken, Token, auth_error};
use crate::client::Client;
use crate::error::Error;
use crate::prepared::{Exchange, PreparedRequest};

impl Client {
    /// Posts `form` to the token endpoint with the client's credentials; the token of
    /// a successful answer, else the OAuth error it gave.
    pub(super) async fn token_request(
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
    pub(super) async fn post_token(
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
    pub(super) async fn post_form(
        &self,
        prepared: &PreparedRequest,
        endpoint: &url::Url,
        form: Vec<(&str, String)>,
        cancel: Option<&CancellationToken>,
    ) -> Result<(http::StatusCode, Bytes), Error> {
        self.post(prepared, endpoint, form, None, cancel).await
    }

    pub(super) async fn post(
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
    pub(super) async fn side_exchange(
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
pub(super) enum Answer {
    Token(Token),
    /// An error answer: its status, its JSON, its `error`.
    Refused {
        status: http::StatusCode,
        json: Option<Value>,
        error: Option<String>,
    },
}

/// A request of the flow, sent as `prepared` would be (its TLS settings, proxies,
/// timeout), without its cookies, scripts, checks or name.
pub(super) fn side_request(
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

/// An OAuth error answer (RFC 6749 §5.2) as an error of the request's header.
pub(super) fn oauth_error_answer(
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
