//! From a request definition to the request on the wire: URL, headers and body with
//! every `{{ }}` substituted, defaults applied, credentials written in clear encoded
//! (`credentials.rs`), `Cookie` lines joined into one header.

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, COOKIE, HOST, USER_AGENT};
use http::{HeaderMap, HeaderName, HeaderValue};
use volley_syntax::Request;

use crate::body::{BuiltBody, Files, build_body};
use crate::credentials::{self, Authorization, ClientCertificate};
use crate::error::BuildError;
use crate::interpolate::Renderer;
use volley_auth::digest::DigestCredentials;
use volley_auth::sigv4::AwsCredentials;

/// The `User-Agent` sent when neither the request nor the defaults set one.
pub const DEFAULT_USER_AGENT: &str = concat!("volley/", env!("CARGO_PKG_VERSION"));

/// A request ready to send.
#[derive(Debug, Clone)]
pub(crate) struct BuiltRequest {
    pub(crate) method: http::Method,
    pub(crate) url: url::Url,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) version: Option<http::Version>,
    /// `Authorization: Digest user password` and where it is written: answered when
    /// the server challenges.
    pub(crate) digest: Option<(DigestCredentials, volley_syntax::Span)>,
    /// `Authorization: AWS <key> <secret> …` and where it is written: the request is
    /// signed once every header is final (`sign_aws`).
    pub(crate) aws: Option<(AwsCredentials, volley_syntax::Span)>,
    /// httpyac's `X-ClientCert: …` and where it is written: the client certificate of
    /// this request's connection; the header is not sent.
    pub(crate) client_certificate: Option<(ClientCertificate, volley_syntax::Span)>,
}

impl BuiltRequest {
    /// Signs the request with its AWS credentials, when it has some: the last step of
    /// building, after the protocol's own headers. `now` is `YYYYMMDDTHHMMSSZ`.
    pub(crate) fn sign_aws(&mut self, now: &str) -> Result<(), BuildError> {
        let Some((credentials, span)) = self.aws.take() else { return Ok(()) };
        sign_aws(&self.method, &self.url, &mut self.headers, &self.body, &(credentials, span), now)
    }
}

/// Signs a request with AWS Signature V4 (`now`: `YYYYMMDDTHHMMSSZ`), an error located
/// at the `Authorization` header when it cannot be.
pub(crate) fn sign_aws(
    method: &http::Method,
    url: &url::Url,
    headers: &mut HeaderMap,
    body: &Bytes,
    (credentials, span): &(AwsCredentials, volley_syntax::Span),
    now: &str,
) -> Result<(), BuildError> {
    volley_auth::sigv4::sign(method, url, headers, body, credentials, now).map_err(|reason| BuildError::Credentials {
        code: volley_syntax::Code::InvalidCredentials,
        reason: format!("cannot sign with AWS Signature V4: {reason}"),
        hint: "name the scope: `Authorization: AWS <key> <secret> region:eu-west-1 service:execute-api`".to_owned(),
        span: *span,
    })
}

/// What an `Authorization` value written in clear becomes.
enum Credentials {
    /// The encoded `Basic` value.
    Basic(String),
    /// Kept aside for the server's challenge; the header is not sent.
    Digest(DigestCredentials),
    /// Kept aside to sign the final request; the header is replaced by the signature.
    Aws(AwsCredentials),
}

/// Reads an `Authorization` value (see `credentials.rs`); `None` sends it as written.
/// The token of a `Basic` pair made with a `$secret` joins the secrets.
fn authorization(
    value: &str,
    secrets: &mut Vec<String>,
    span: volley_syntax::Span,
) -> Result<Option<Credentials>, BuildError> {
    match credentials::interpret(value, secrets) {
        Ok(Authorization::AsWritten) => Ok(None),
        Ok(Authorization::Basic(basic)) => {
            if basic.secret {
                secrets.push(basic.token);
            }
            Ok(Some(Credentials::Basic(basic.value)))
        }
        Ok(Authorization::Digest(credentials)) => Ok(Some(Credentials::Digest(credentials))),
        Ok(Authorization::Aws(credentials)) => {
            secrets.extend(credentials.secrets().map(str::to_owned));
            Ok(Some(Credentials::Aws(credentials)))
        }
        Err(refusal) => Err(refused(refusal, span)),
    }
}

/// A refusal of `credentials.rs` as the error of the header at `span`.
fn refused(refusal: credentials::Refusal, span: volley_syntax::Span) -> BuildError {
    BuildError::Credentials { code: refusal.code(), reason: refusal.reason, hint: refusal.hint, span }
}

/// Adds the cookies of a `Cookie` line to the one `Cookie` header (RFC 6265 §5.4: a
/// request has one, its pairs joined with `; `).
fn append_cookies(headers: &mut HeaderMap, written: &str) {
    let written = written.trim().trim_end_matches(';').trim_end().as_bytes();
    let joined = match headers.get(COOKIE) {
        Some(_) if written.is_empty() => return,
        Some(existing) if !existing.is_empty() => [existing.as_bytes(), b"; ", written].concat(),
        _ => written.to_vec(),
    };
    if let Ok(value) = HeaderValue::from_bytes(&joined) {
        headers.insert(COOKIE, value);
    }
}

/// Builds `request`. `defaults` are added for the headers the request does not set.
pub(crate) async fn build(
    request: &Request,
    renderer: &mut Renderer<'_>,
    files: &Files<'_>,
    defaults: &[(String, String)],
) -> Result<BuiltRequest, BuildError> {
    let method =
        http::Method::from_bytes(request.method.value.as_str().as_bytes()).map_err(|_| BuildError::Interpolation {
            message: format!("invalid method `{}`", request.method.value),
            span: request.method.span,
        })?;

    let mut headers = HeaderMap::new();
    let mut content_type_written = None;
    let mut digest = None;
    let mut aws = None;
    let mut client_certificate = None;
    let mut oauth = false;
    let grpc_request = matches!(request.protocol, volley_syntax::Protocol::Grpc(_));
    for header in &request.headers {
        let name = renderer.render(&header.name).await?;
        if grpc_request && name.trim().eq_ignore_ascii_case(CHANNEL_CREDENTIALS) {
            return Err(channel_credentials(header.span));
        }
        let mut value = renderer.render(&header.value).await?;
        let invalid = |reason: &str| BuildError::InvalidHeader {
            name: name.clone(),
            reason: reason.to_owned(),
            span: header.span,
        };
        let header_name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| invalid("not a valid header name (letters, digits and !#$%&'*+-.^_`|~)"))?;
        match credentials::client_certificate_header(&name, &value) {
            Some(Ok(certificate)) => {
                renderer.secrets.extend(certificate.passphrase.iter().cloned());
                client_certificate = Some((certificate, header.span));
                continue;
            }
            Some(Err(refusal)) => return Err(refused(refusal, header.span)),
            None => {}
        }
        if header_name == AUTHORIZATION {
            if let Some((scheme, rest)) = credentials::oauth_scheme(&value) {
                let config = crate::interpolate::oauth::read_config(scheme, rest, renderer, header.span).await?;
                let token = volley_auth::oauth::PendingToken::new(config, false);
                value = format!("Bearer {}", token.placeholder);
                renderer.tokens.push((token, header.span));
                oauth = true;
            }
            match authorization(&value, &mut renderer.secrets, header.span)? {
                Some(Credentials::Basic(encoded)) => value = encoded,
                Some(Credentials::Digest(credentials)) => {
                    digest = Some((credentials, header.span));
                    continue;
                }
                Some(Credentials::Aws(credentials)) => {
                    aws = Some((credentials, header.span));
                    continue;
                }
                None => {}
            }
        }
        let header_value = HeaderValue::from_bytes(value.as_bytes())
            .map_err(|_| invalid("the value contains a line break or another control character"))?;
        if header_name == CONTENT_TYPE {
            content_type_written = Some(value.clone());
        }
        if header_name == COOKIE {
            append_cookies(&mut headers, &value);
            continue;
        }
        headers.append(header_name, header_value);
    }

    let grpc = match &request.protocol {
        volley_syntax::Protocol::Grpc(options) => Some(options),
        _ => None,
    };
    let mut url = match grpc {
        Some(options) => grpc_url(request, options.plaintext, renderer).await?,
        None => build_url(request, renderer, &headers).await?,
    };
    // `user:password@` goes as a `Basic` header (as curl sends it), never in the URL; a
    // header the request writes itself wins.
    if let Some((user, password)) = credentials::take_from_url(&mut url)
        && !headers.contains_key(AUTHORIZATION)
        && digest.is_none()
        && aws.is_none()
        && !oauth
    {
        let basic = credentials::basic(&user, &password, true);
        renderer.secrets.push(basic.token.clone());
        if let Ok(value) = HeaderValue::from_str(&basic.value) {
            headers.insert(AUTHORIZATION, value);
        }
    }

    // A gRPC call's messages are rendered one by one (`crate::grpc`).
    let body = if grpc.is_some() {
        BuiltBody { bytes: Bytes::new(), content_type: None, replaces_multipart: false }
    } else {
        build_body(&request.body, renderer, files, content_type_written.as_deref()).await?
    };
    if let Some(content_type) = &body.content_type {
        let value = HeaderValue::from_str(content_type).map_err(|_| BuildError::InvalidHeader {
            name: "Content-Type".to_owned(),
            reason: "not a valid header value".to_owned(),
            span: request.line_span,
        })?;
        if content_type_written.is_none() || body.replaces_multipart {
            headers.insert(CONTENT_TYPE, value);
        }
    }
    for (name, value) in defaults {
        let (Ok(name), Ok(mut value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) else {
            continue;
        };
        if headers.contains_key(&name) || (name == AUTHORIZATION && (digest.is_some() || aws.is_some())) {
            continue;
        }
        if name == AUTHORIZATION
            && let Some((scheme, rest)) = credentials::oauth_scheme(value.to_str().unwrap_or_default())
        {
            let (scheme, rest) = (scheme.to_owned(), rest.to_owned());
            let config = crate::interpolate::oauth::read_config(&scheme, &rest, renderer, request.line_span).await?;
            let token = volley_auth::oauth::PendingToken::new(config, false);
            if let Ok(bearer) = HeaderValue::from_str(&format!("Bearer {}", token.placeholder)) {
                headers.insert(AUTHORIZATION, bearer);
            }
            renderer.tokens.push((token, request.line_span));
            continue;
        }
        if credentials::client_certificate_header(name.as_str(), value.to_str().unwrap_or_default()).is_some() {
            return Err(BuildError::Credentials {
                code: volley_syntax::Code::UnsupportedAuth,
                reason: format!("the default header `{name}` is httpyac's client certificate header"),
                hint: "give the configuration's client certificates in volley.jsonc `tls.hosts`".to_owned(),
                span: request.line_span,
            });
        }
        if name == AUTHORIZATION {
            let written = value.to_str().unwrap_or_default().to_owned();
            match authorization(&written, &mut renderer.secrets, request.line_span)? {
                Some(Credentials::Basic(encoded)) => {
                    value = HeaderValue::from_str(&encoded).unwrap_or(value);
                }
                Some(Credentials::Digest(credentials)) => {
                    digest = Some((credentials, request.line_span));
                    continue;
                }
                Some(Credentials::Aws(credentials)) => {
                    aws = Some((credentials, request.line_span));
                    continue;
                }
                None => {}
            }
        }
        headers.insert(name, value);
    }
    if !headers.contains_key(USER_AGENT) {
        headers.insert(USER_AGENT, HeaderValue::from_static(DEFAULT_USER_AGENT));
    }

    let version = request.http_version.as_ref().and_then(|version| match version.value.as_str() {
        "HTTP/2" | "HTTP/2.0" => Some(http::Version::HTTP_2),
        "HTTP/1.1" | "HTTP/1.0" | "HTTP/1" => Some(http::Version::HTTP_11),
        _ => None,
    });
    Ok(BuiltRequest { method, url, headers, body: body.bytes, version, digest, aws, client_certificate })
}

/// The URL: substituted, given `http://` when written without a scheme, and built from
/// the `Host` header for a path-only request line (`GET /users` + `Host: api.local`).
async fn build_url(
    request: &Request,
    renderer: &mut Renderer<'_>,
    headers: &HeaderMap,
) -> Result<url::Url, BuildError> {
    let websocket = matches!(request.protocol, volley_syntax::Protocol::WebSocket(_));
    let written = renderer.render(&request.url).await?;
    let written = written.trim();
    let default_scheme = if websocket { "ws" } else { "http" };
    let candidate = if written.contains("://") {
        written.to_owned()
    } else if written.starts_with('/') {
        // A path: after the `Host` header (https for ports 443 and 8443), else after the
        // variable `host` (httpyac's convention: `@host = https://api.example.com`).
        if let Some(host) = headers.get(HOST).and_then(|host| host.to_str().ok()) {
            let host = host.trim();
            let secure = matches!(host.rsplit_once(':'), Some((_, "443" | "8443")));
            let scheme = match (websocket, secure) {
                (false, false) => "http",
                (false, true) => "https",
                (true, false) => "ws",
                (true, true) => "wss",
            };
            format!("{scheme}://{host}{written}")
        } else if let Some(host) = renderer.optional_variable("host", request.url.span).await? {
            let host = host.trim().trim_end_matches('/');
            if host.contains("://") {
                format!("{host}{written}")
            } else {
                format!("{default_scheme}://{host}{written}")
            }
        } else {
            return Err(BuildError::InvalidUrl {
                url: credentials::redact_url_password(written).into_owned(),
                reason: "a path without a host needs a `Host` header or a variable `host`".to_owned(),
                hint: None,
                span: request.url.span,
            });
        }
    } else {
        format!("{default_scheme}://{written}")
    };
    // A ws(s):// URL that only shows after substitution is a WebSocket too: the caller
    // looks at the scheme.
    // Parsed once: the problem's check reads the same result (a load sends this path
    // thousands of times a second).
    let parsed = crate::parsed_urls::parse(&candidate);
    if let Some((reason, hint)) =
        crate::url_rule::url_problem_of(written, &candidate, parsed.as_ref().map_err(|error| *error))
    {
        return Err(BuildError::InvalidUrl {
            url: credentials::redact_url_password(written).into_owned(),
            reason,
            hint,
            span: request.url.span,
        });
    }
    let mut url = parsed.map_err(|error| BuildError::InvalidUrl {
        url: credentials::redact_url_password(written).into_owned(),
        reason: error.to_string(),
        hint: None,
        span: request.url.span,
    })?;
    // `@ws` on an http(s) URL: the WebSocket URL of the same place.
    if websocket && matches!(url.scheme(), "http" | "https") {
        let scheme = if url.scheme() == "https" { "wss" } else { "ws" };
        let _ = url.set_scheme(scheme);
    }
    Ok(url)
}

/// How the three tools write a gRPC target, for the errors of one that is not.
pub(crate) const GRPC_TARGET_HINT: &str = "JetBrains and httpyac write `GRPC host:port/package.Service/Method` \
     (`grpcs://` for TLS), Kulala `GRPC host:port package.Service/Method`";

/// httpyac's special header of a gRPC request: its channel's credentials, a JavaScript
/// object set by scripts. Never sent as metadata.
pub(crate) const CHANNEL_CREDENTIALS: &str = "channelCredentials";

/// Why httpyac's `channelCredentials` header is refused.
pub(crate) fn channel_credentials(span: volley_syntax::Span) -> BuildError {
    BuildError::Credentials {
        code: volley_syntax::Code::UnsupportedAuth,
        reason: "httpyac's `channelCredentials` header (a gRPC channel's credentials) is not sent".to_owned(),
        hint: "for TLS write `grpcs://`; a CA, a client certificate or --insecure come from the network settings \
               (--cacert, --cert/--key, volley.jsonc `tls`)"
            .to_owned(),
        span,
    }
}

/// The URL of a gRPC call: its target read as each tool writes it (a path alone after
/// the variable `host`, as httpyac does), written as the `http(s)://host:port/package.Service/Method`
/// the call is posted to.
async fn grpc_url(request: &Request, plaintext: bool, renderer: &mut Renderer<'_>) -> Result<url::Url, BuildError> {
    let written = renderer.render(&request.url).await?;
    let mut written = written.trim().to_owned();
    if written.starts_with('/') {
        match renderer.optional_variable("host", request.url.span).await? {
            Some(host) => written = format!("{}{written}", host.trim().trim_end_matches('/')),
            None => {
                return Err(BuildError::Grpc {
                    message: format!("`{written}` has no server before the method"),
                    hint: Some("write `GRPC host:port/package.Service/Method`, or set a variable `host`".to_owned()),
                    span: request.url.span,
                });
            }
        }
    }
    let target = volley_grpc::Target::parse(&written).map_err(|error| BuildError::Grpc {
        message: error.to_string(),
        hint: Some(GRPC_TARGET_HINT.to_owned()),
        span: request.url.span,
    })?;
    let tls = target.tls.unwrap_or(target.grpcurl_form && !plaintext);
    let scheme = if tls { "https" } else { "http" };
    let has_port = target.authority.rsplit_once(':').is_some_and(|(_, port)| !port.contains(']'));
    let port = if has_port {
        ""
    } else if tls {
        ":443"
    } else {
        ":80"
    };
    let candidate = format!("{scheme}://{}{port}{}", target.authority, target.path());
    url::Url::parse(&candidate).map_err(|error| BuildError::InvalidUrl {
        url: credentials::redact_url_password(&written).into_owned(),
        reason: error.to_string(),
        hint: None,
        span: request.url.span,
    })
}

/// `20150830T123600Z`: the moment a request is signed, as AWS Signature V4 writes it.
pub(crate) fn aws_datetime(now: time::OffsetDateTime) -> String {
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
    )
}
