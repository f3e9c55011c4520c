//! What httpyac's `Authorization: oauth2 [grant] [prefix]` (or `openid …`) asks for,
//! read from the variables `<prefix>_tokenEndpoint`, `<prefix>_clientId`, … (prefix
//! `oauth2` when none is written; a variable missing under the prefix is looked up
//! under `oauth2_` too, as httpyac does).

use crate::credentials::Refusal;
use crate::error::BuildError;
use crate::interpolate::Renderer;

/// The grants run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grant {
    /// `client_credentials` (httpyac's default; `client`).
    ClientCredentials,
    /// `password`: the resource owner's user name and password.
    Password,
    /// `authorization_code` (`code`): a browser, a loopback redirect.
    AuthorizationCode,
    /// `device_code` (`device`): a code a person enters elsewhere.
    DeviceCode,
}

impl Grant {
    fn name(self) -> &'static str {
        match self {
            Grant::ClientCredentials => "client_credentials",
            Grant::Password => "password",
            Grant::AuthorizationCode => "authorization_code",
            Grant::DeviceCode => "device_code",
        }
    }
}

/// One token's configuration.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct OAuthConfig {
    pub(crate) grant: Grant,
    /// The variables' prefix (`oauth2`), for messages.
    pub(crate) prefix: String,
    pub(crate) token_endpoint: Option<String>,
    pub(crate) issuer: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    /// The client secret in the body (`client_secret_post`) rather than as HTTP Basic.
    pub(crate) secret_in_body: bool,
    pub(crate) scope: Option<String>,
    pub(crate) audience: Option<String>,
    pub(crate) resource: Option<String>,
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) authorization_endpoint: Option<String>,
    pub(crate) device_endpoint: Option<String>,
    /// Where the authorization server sends the browser back (a loopback URL).
    pub(crate) redirect_uri: Option<String>,
    /// PKCE with S256 for the authorization code.
    pub(crate) use_pkce: bool,
    /// The client secret with the device authorization request too.
    pub(crate) device_code_secret: bool,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("OAuthConfig")
            .field("grant", &self.grant)
            .field("prefix", &self.prefix)
            .field("token_endpoint", &self.token_endpoint)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("scope", &self.scope)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// What tells two configurations' tokens apart: every field (a changed secret is
    /// another configuration).
    pub(crate) fn cache_key(&self) -> String {
        let field = |value: &Option<String>| value.clone().unwrap_or_default();
        [
            self.grant.name().to_owned(),
            field(&self.token_endpoint),
            field(&self.issuer),
            self.client_id.clone(),
            field(&self.client_secret),
            self.secret_in_body.to_string(),
            field(&self.scope),
            field(&self.audience),
            field(&self.resource),
            field(&self.username),
            field(&self.password),
            field(&self.authorization_endpoint),
            field(&self.device_endpoint),
            field(&self.redirect_uri),
            self.use_pkce.to_string(),
        ]
        .join("\u{1f}")
    }

    /// The values that are secret: the client secret and the password.
    pub(crate) fn secrets(&self) -> impl Iterator<Item = &str> {
        self.client_secret.iter().chain(&self.password).map(String::as_str)
    }
}

/// The default prefix of httpyac's variables.
const DEFAULT_PREFIX: &str = "oauth2";

/// The grant and the variables' prefix of `Authorization: <scheme> <rest>` (scheme
/// `oauth2` or `openid`: `[grant] [prefix]`), or why Volley does not run it.
pub(crate) fn parse_form(scheme: &str, rest: &str) -> Result<(Grant, String), Refusal> {
    let mut words = rest.split_whitespace().peekable();
    let grant = match words.peek().map(|word| word.to_ascii_lowercase()) {
        Some(word) if matches!(word.as_str(), "client" | "client_credentials") => {
            words.next();
            Grant::ClientCredentials
        }
        Some(word) if word == "password" => {
            words.next();
            Grant::Password
        }
        Some(word) if matches!(word.as_str(), "code" | "authorization_code") => {
            words.next();
            Grant::AuthorizationCode
        }
        Some(word) if matches!(word.as_str(), "device" | "device_code") => {
            words.next();
            Grant::DeviceCode
        }
        Some(word) if matches!(word.as_str(), "implicit" | "hybrid") => {
            return Err(Refusal {
                reason: format!("httpyac's `{scheme} {word}` (the {word} grant) is not run by Volley"),
                hint: "Volley runs `client_credentials`, `password`, `authorization_code` and `device_code`; the \
                       implicit grant returns the token in the browser's URL, which OAuth 2.1 drops"
                    .to_owned(),
                unsupported: true,
            });
        }
        _ => Grant::ClientCredentials,
    };
    let mut prefix = DEFAULT_PREFIX.to_owned();
    if let Some(word) = words.peek()
        && !word.eq_ignore_ascii_case("token_exchange")
    {
        (*word).clone_into(&mut prefix);
        words.next();
    }
    if let Some(word) = words.next() {
        let exchange = word.eq_ignore_ascii_case("token_exchange");
        let reason = if exchange {
            format!("httpyac's token exchange (`{scheme} … token_exchange …`) is not run by Volley")
        } else {
            format!("`{word}` after the prefix `{prefix}` is not part of httpyac's `{scheme}` form")
        };
        return Err(Refusal {
            reason,
            hint: format!(
                "write `Authorization: {scheme} [client_credentials|password|authorization_code|device_code] [prefix]`"
            ),
            unsupported: exchange,
        });
    }
    Ok((grant, prefix))
}

/// Reads `Authorization: <scheme> <rest>` (scheme `oauth2` or `openid`) with the
/// variables `renderer` sees. A refusal for a grant Volley does not run.
pub(crate) async fn read_config(
    scheme: &str,
    rest: &str,
    renderer: &mut Renderer<'_>,
    span: volley_syntax::Span,
) -> Result<OAuthConfig, BuildError> {
    let (grant, prefix) = parse_form(scheme, rest).map_err(|refusal| refused(refusal, span))?;
    let mut read = Reader { renderer, prefix: &prefix, span };
    let client_id = read.text("clientId").await?;
    let config = OAuthConfig {
        grant,
        token_endpoint: read.text("tokenEndpoint").await?,
        issuer: read.text("issuer").await?,
        client_secret: read.text("clientSecret").await?,
        secret_in_body: read.text("useAuthorizationHeader").await?.is_some_and(|value| is_false(&value)),
        scope: read.text("scope").await?,
        audience: read.text("audience").await?,
        resource: read.text("resource").await?,
        username: read.text("username").await?,
        password: read.text("password").await?,
        authorization_endpoint: read.text("authorizationEndpoint").await?,
        device_endpoint: read.text("deviceCodeEndpoint").await?,
        redirect_uri: read.text("redirectUri").await?,
        use_pkce: read.text("usePkce").await?.is_some_and(|value| !is_false(&value)),
        device_code_secret: read.text("useDeviceCodeClientSecret").await?.is_some_and(|value| !is_false(&value)),
        client_id: client_id.ok_or_else(|| BuildError::Auth {
            message: format!("`{scheme}` needs a client id: `{prefix}_clientId` is not set"),
            hint: format!(
                "set `{prefix}_clientId`, `{prefix}_clientSecret` and `{prefix}_tokenEndpoint` (or `{prefix}_issuer`) \
                 as variables (volley.jsonc, the profile, the file's `@{prefix}_clientId = …`)"
            ),
            span,
        })?,
        prefix,
    };
    renderer.secrets.extend(config.secrets().map(str::to_owned));
    Ok(config)
}

fn is_false(value: &str) -> bool {
    matches!(value.trim().to_ascii_lowercase().as_str(), "false" | "0" | "no" | "off")
}

fn refused(refusal: Refusal, span: volley_syntax::Span) -> BuildError {
    BuildError::Credentials { code: refusal.code(), reason: refusal.reason, hint: refusal.hint, span }
}

/// Looks up `<prefix>_<name>`, then `oauth2_<name>`.
struct Reader<'a, 'r> {
    renderer: &'a mut Renderer<'r>,
    prefix: &'a str,
    span: volley_syntax::Span,
}

impl Reader<'_, '_> {
    async fn text(&mut self, name: &str) -> Result<Option<String>, BuildError> {
        let mut prefixes = vec![self.prefix];
        if self.prefix != DEFAULT_PREFIX {
            prefixes.push(DEFAULT_PREFIX);
        }
        for prefix in prefixes {
            let value = self.renderer.optional_variable(&format!("{prefix}_{name}"), self.span).await?;
            if let Some(value) = value.map(|value| value.trim().to_owned()).filter(|value| !value.is_empty()) {
                return Ok(Some(value));
            }
        }
        Ok(None)
    }
}
