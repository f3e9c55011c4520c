//! What a token is got with: a [`Grant`] and its [`OAuthConfig`] (httpyac's
//! `<prefix>_tokenEndpoint`, `<prefix>_clientId`, … or a configuration's `auth` entry,
//! read by the engine with the request's variables), and the [`PendingToken`] a request
//! holds in place of its token until it is sent.

use std::collections::HashMap;

use super::random::random_text;

/// The grants run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
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
    /// Its name in OAuth 2.0 (`client_credentials`, …).
    #[must_use]
    pub fn name(self) -> &'static str {
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
pub struct OAuthConfig {
    pub grant: Grant,
    /// The variables' prefix (`oauth2`), for messages.
    pub prefix: String,
    pub token_endpoint: Option<String>,
    pub issuer: Option<String>,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// The client secret in the body (`client_secret_post`) rather than as HTTP Basic.
    pub secret_in_body: bool,
    pub scope: Option<String>,
    pub audience: Option<String>,
    pub resource: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    pub authorization_endpoint: Option<String>,
    pub device_endpoint: Option<String>,
    /// Where the authorization server sends the browser back (a loopback URL).
    pub redirect_uri: Option<String>,
    /// PKCE with S256 for the authorization code.
    pub use_pkce: bool,
    /// The client secret with the device authorization request too.
    pub device_code_secret: bool,
    /// `$auth.token` gives the ID token (JetBrains' `Use ID Token`).
    pub use_id_token: bool,
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
    /// The configuration of `grant` from its fields' values, by httpyac's names
    /// (`tokenEndpoint`, `clientId`, …); the name of a field it cannot do without when it
    /// is missing.
    pub fn from_values(
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

    /// What tells two configurations' tokens apart: every field (a changed secret is
    /// another configuration).
    #[must_use]
    pub fn cache_key(&self) -> String {
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
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.client_secret.iter().chain(&self.password).map(String::as_str)
    }
}

fn is_false(value: &str) -> bool {
    matches!(value.trim().to_ascii_lowercase().as_str(), "false" | "0" | "no" | "off")
}

/// A token a request needs: where it is used, the request holds `placeholder`, which
/// the token replaces when the request is sent (where it is written is the engine's to
/// keep).
#[derive(Debug, Clone)]
pub struct PendingToken {
    pub config: OAuthConfig,
    /// `$auth.idToken`: the ID token rather than the access token.
    pub id_token: bool,
    pub placeholder: String,
}

impl PendingToken {
    /// A token to get with `config`; its placeholder is random, so no text of the
    /// request holds it by chance.
    #[must_use]
    pub fn new(config: OAuthConfig, id_token: bool) -> Self {
        let random = random_text(18).replace(['-', '_'], "x");
        let placeholder = format!("volley-pending-token-{random}");
        Self { config, id_token, placeholder }
    }
}
