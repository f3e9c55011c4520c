//! The flow's own requests: the token endpoint's form posts (client authentication as
//! HTTP Basic or in the body), their answers (a token, or an OAuth error answer), sent
//! through the [`TokenTransport`].

use std::time::Instant;

use bytes::Bytes;
use http::HeaderValue;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;

use super::config::OAuthConfig;
use super::flow::{Flow, FlowError, failed};
use super::token::Token;
use super::transport::{SideRequest, TokenTransport};

impl<T: TokenTransport> Flow<'_, T> {
    /// Posts `form` to the token endpoint with the client's credentials; the token of
    /// a successful answer, else the OAuth error it gave.
    pub(super) async fn token_request(
        &self,
        config: &OAuthConfig,
        endpoint: &url::Url,
        form: Vec<(&str, String)>,
    ) -> Result<Token, FlowError<T::Error>> {
        match self.post_token(config, endpoint, form).await? {
            Answer::Token(token) => Ok(token),
            Answer::Refused { status, json, .. } => Err(oauth_error_answer(config, endpoint, status, json.as_ref())),
        }
    }

    /// Posts `form` to the token endpoint with the client's credentials (HTTP Basic,
    /// or in the body; a public client's id in the body).
    pub(super) async fn post_token(
        &self,
        config: &OAuthConfig,
        endpoint: &url::Url,
        mut form: Vec<(&str, String)>,
    ) -> Result<Answer, FlowError<T::Error>> {
        let mut basic = None;
        match (&config.client_secret, config.secret_in_body) {
            (Some(secret), false) => {
                // RFC 6749 §2.3.1: each part form-encoded, then `Basic`.
                let encode = |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
                let token = crate::basic_token(encode(&config.client_id).as_bytes(), encode(secret).as_bytes());
                basic = Some(format!("Basic {token}"));
            }
            (Some(secret), true) => {
                form.push(("client_id", config.client_id.clone()));
                form.push(("client_secret", secret.clone()));
            }
            (None, _) => form.push(("client_id", config.client_id.clone())),
        }
        let (status, answer) = self.post(endpoint, form, basic).await?;
        let json: Option<Value> = serde_json::from_slice(&answer).ok();
        if !status.is_success() {
            let error = json.as_ref().and_then(|json| json.get("error")).and_then(Value::as_str).map(str::to_owned);
            return Ok(Answer::Refused { status, json, error });
        }
        Token::from_answer(json.as_ref(), Instant::now()).map(Answer::Token).ok_or_else(|| {
            failed(&format!("the token endpoint {endpoint} answered {status} without an `access_token`"), None)
        })
    }

    /// Posts a form without client authentication (the device authorization request).
    pub(super) async fn post_form(
        &self,
        endpoint: &url::Url,
        form: Vec<(&str, String)>,
    ) -> Result<(http::StatusCode, Bytes), FlowError<T::Error>> {
        self.post(endpoint, form, None).await
    }

    async fn post(
        &self,
        endpoint: &url::Url,
        form: Vec<(&str, String)>,
        basic: Option<String>,
    ) -> Result<(http::StatusCode, Bytes), FlowError<T::Error>> {
        let mut headers = http::HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(value) = basic.and_then(|basic| HeaderValue::from_str(&basic).ok()) {
            headers.insert(AUTHORIZATION, value);
        }
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form.iter()).finish();
        let request =
            SideRequest { method: http::Method::POST, url: endpoint.clone(), headers, body: Bytes::from(body) };
        self.side_exchange(request).await
    }

    /// Sends a request of the flow (discovery, token) and reads its answer whole.
    pub(super) async fn side_exchange(
        &self,
        request: SideRequest,
    ) -> Result<(http::StatusCode, Bytes), FlowError<T::Error>> {
        let answer = self.transport.send(request, self.cancel).await.map_err(FlowError::Transport)?;
        Ok((answer.status, answer.body))
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

/// An OAuth error answer (RFC 6749 §5.2) as the flow's failure.
pub(super) fn oauth_error_answer<E>(
    config: &OAuthConfig,
    endpoint: &url::Url,
    status: http::StatusCode,
    json: Option<&Value>,
) -> FlowError<E> {
    let field = |name: &str| json.and_then(|json| json.get(name)).and_then(Value::as_str);
    let mut message = format!("the token endpoint {endpoint} answered {status}");
    if let Some(error) = field("error") {
        let description = field("error_description").map(|text| format!(" ({text})")).unwrap_or_default();
        message = format!("{message}: {error}{description}");
    }
    let prefix = &config.prefix;
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
    failed(&message, hint)
}
