//! What a script is handed (read by `api.js`): the globals, the variables known to the
//! request, its environment, the request as written (and as sent, for handlers) and
//! the response's status, headers and content type (its body goes separately, as text).

use serde::Serialize;
use serde_json::{Map, Value};
use volley_syntax::{Body, Request};

/// The data of one script run.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Input {
    /// The client's variables (`client.global`).
    pub(crate) globals: Map<String, Value>,
    /// What `request.variables.get` and `tryGetSubstituted` know: the variables of
    /// every layer and the file's literal variables, request variables over them.
    pub(crate) variables: Map<String, Value>,
    /// `request.environment.get`: the active profile's variables over the
    /// configuration's (the JetBrains environment).
    pub(crate) environment: Map<String, Value>,
    pub(crate) request: RequestView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) response: Option<ResponseView>,
    /// The `.http` file (httpyac's scripts see it as `__filename`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
    /// 32 random bytes as hex, fresh for each script: httpyac's `crypto.randomBytes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) entropy: Option<String>,
}

/// The request, as written and (in handlers) as sent.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestView {
    pub(crate) method: String,
    /// The URL as written.
    pub(crate) url: String,
    /// The URL as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sent_url: Option<String>,
    /// Name, value as written, and value as sent when known.
    pub(crate) headers: Vec<Vec<String>>,
    /// The body as written (a body in place only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) body: Option<String>,
    /// The body as sent, when it is text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sent_body: Option<String>,
}

impl RequestView {
    /// `request` as written.
    pub(crate) fn written(request: &Request) -> Self {
        let headers =
            request.headers.iter().map(|header| vec![header.name.to_source(), header.value.to_source()]).collect();
        let body = match &request.body {
            Body::Inline(template) => Some(template.to_source()),
            _ => None,
        };
        Self {
            method: request.method.value.as_str().to_owned(),
            url: request.url.to_source(),
            headers,
            body,
            ..Self::default()
        }
    }

    /// The same request with what was sent: the URL, each header's value (matched by
    /// name, in order) and the body when it is UTF-8 text.
    pub(crate) fn sent(mut self, url: &url::Url, headers: &http::HeaderMap, body: &[u8]) -> Self {
        self.sent_url = Some(url.to_string());
        let mut taken: Vec<(String, usize)> = Vec::new();
        for header in &mut self.headers {
            let name = header[0].to_ascii_lowercase();
            let index = taken.iter().filter(|(seen, _)| *seen == name).count();
            if let Some(value) = headers.get_all(name.as_str()).iter().nth(index).and_then(|value| value.to_str().ok())
            {
                header.push(value.to_owned());
            }
            taken.push((name, index));
        }
        self.sent_body = std::str::from_utf8(body).ok().filter(|text| !text.is_empty()).map(str::to_owned);
        self
    }
}

/// The response a handler sees.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResponseView {
    pub(crate) status: u16,
    /// Name and value, in order, repeated headers kept.
    pub(crate) headers: Vec<(String, String)>,
    /// `application/json` (lowercase, without parameters), empty when there is no
    /// `Content-Type`.
    pub(crate) mime_type: String,
    /// The `charset` parameter, when there is one.
    pub(crate) charset: Option<String>,
}

impl ResponseView {
    pub(crate) fn new(status: u16, headers: &http::HeaderMap) -> Self {
        let pairs = headers
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
            .collect();
        let content_type = headers.get(http::header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
        let mime_type = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        let charset = crate::response::charset_of(content_type);
        Self { status, headers: pairs, mime_type, charset }
    }
}
