//! What httpyac's `Authorization: oauth2 [grant] [prefix]` (or `openid …`) asks for,
//! read from the variables `<prefix>_tokenEndpoint`, `<prefix>_clientId`, … (prefix
//! `oauth2` when none is written; a variable missing under the prefix is looked up
//! under `oauth2_` too, as httpyac does), or from a configuration's `auth` entry
//! (`{{$auth.token NAME}}`); and the [`PendingToken`] a request then holds in place of
//! its token.
//!
//! Part of interpolation, not of the grants (`crate::oauth`): the values of a
//! configuration are templates the [`Renderer`] substitutes, and the renderer reads a
//! configuration when it meets `{{$auth.token …}}`. The grants, which send the token
//! requests through the client, take what is read here.

use std::collections::HashMap;

use super::Renderer;
use crate::config::AuthEntry;
use crate::config::auth::FIELDS;
use crate::credentials::Refusal;
use crate::error::BuildError;

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
#[allow(clippy::struct_excessive_bools)] // The switches of the configuration, as written.
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
    /// `$auth.token` gives the ID token (JetBrains' `Use ID Token`).
    pub(crate) use_id_token: bool,
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
        Some(word) if matches!(word.as_str(), "device" | "device_code" | "device_authorization") => {
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
    let mut values = HashMap::new();
    for field in FIELDS {
        values.insert(field, read.text(field).await?);
    }
    let missing = |field: &str| BuildError::Auth {
        message: format!("`{scheme}` needs a client id: `{prefix}_{field}` is not set"),
        hint: format!(
            "set `{prefix}_clientId`, `{prefix}_clientSecret` and `{prefix}_tokenEndpoint` (or `{prefix}_issuer`) as \
             variables (volley.jsonc, the profile, the file's `@{prefix}_clientId = …`)"
        ),
        span,
    };
    let config = OAuthConfig::from_values(grant, prefix.clone(), &values).map_err(missing)?;
    renderer.secrets.extend(config.secrets().map(str::to_owned));
    Ok(config)
}

/// The named configuration `id` (volley.jsonc `auth`, JetBrains' `Security.Auth`) as
/// `{{$auth.token("id")}}` uses it: its values rendered with the request's variables.
pub(crate) async fn read_entry(
    id: &str,
    entry: &AuthEntry,
    renderer: &mut Renderer<'_>,
    span: volley_syntax::Span,
) -> Result<OAuthConfig, BuildError> {
    let grant = entry.grant.trim().to_ascii_lowercase().replace([' ', '-'], "_");
    if grant.is_empty() {
        return Err(BuildError::Auth {
            message: format!("the auth configuration `{id}` names no grant"),
            hint: "set `grant` (volley.jsonc) or `Grant Type` (http-client.env.json): client_credentials, password, \
                   authorization_code or device_code"
                .to_owned(),
            span,
        });
    }
    let (grant, _) = parse_form("auth", &grant).map_err(|refusal| refused(refusal, span))?;
    let mut values = HashMap::new();
    for field in FIELDS {
        values.insert(field, renderer.auth_field(entry, field).await?);
    }
    let config = OAuthConfig::from_values(grant, id.to_owned(), &values).map_err(|field| BuildError::Auth {
        message: format!("the auth configuration `{id}` has no `{field}`"),
        hint: "an OAuth 2.0 configuration needs `clientId` (JetBrains: `Client ID`) and a token endpoint \
               (`tokenEndpoint`/`Token URL`, or `issuer`)"
            .to_owned(),
        span,
    })?;
    renderer.secrets.extend(config.secrets().map(str::to_owned));
    Ok(config)
}

impl OAuthConfig {
    /// The configuration of `grant` from its fields' values; the name of a field it
    /// cannot do without when it is missing.
    fn from_values(
        grant: Grant,
        prefix: String,
        values: &HashMap<&str, Option<String>>,
    ) -> Result<OAuthConfig, &'static str> {
        let text = |name: &str| values.get(name).cloned().flatten();
        let flag = |name: &str| text(name).is_some_and(|value| !is_false(&value));
        Ok(OAuthConfig {
            grant,
            token_endpoint: text("tokenEndpoint"),
            issuer: text("issuer"),
            client_id: text("clientId").ok_or("clientId")?,
            client_secret: text("clientSecret"),
            secret_in_body: text("useAuthorizationHeader").is_some_and(|value| is_false(&value)),
            scope: text("scope"),
            audience: text("audience"),
            resource: text("resource"),
            username: text("username"),
            password: text("password"),
            authorization_endpoint: text("authorizationEndpoint"),
            device_endpoint: text("deviceCodeEndpoint"),
            redirect_uri: text("redirectUri"),
            use_pkce: flag("usePkce"),
            device_code_secret: flag("useDeviceCodeClientSecret"),
            use_id_token: flag("useIdToken"),
            prefix,
        })
    }
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
        let random = volley_auth::oauth::random_text(18).replace(['-', '_'], "x");
        let placeholder = format!("volley-pending-token-{random}");
        Self { config, id_token, placeholder, span }
    }
}
