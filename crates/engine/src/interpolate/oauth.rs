//! What httpyac's `Authorization: oauth2 [grant] [prefix]` (or `openid …`) asks for,
//! read from the variables `<prefix>_tokenEndpoint`, `<prefix>_clientId`, … (prefix
//! `oauth2` when none is written; a variable missing under the prefix is looked up
//! under `oauth2_` too, as httpyac does), or from a configuration's `auth` entry
//! (`{{$auth.token NAME}}`), into `volley-auth`'s [`OAuthConfig`].
//!
//! Part of interpolation, not of the grants (`volley_auth::oauth`, run by
//! `crate::oauth`): the values of a configuration are templates the [`Renderer`]
//! substitutes, and the renderer reads a configuration when it meets
//! `{{$auth.token …}}`. The grants take what is read here.

use std::collections::HashMap;

use volley_auth::oauth::{Grant, OAuthConfig};

use super::Renderer;
use crate::config::AuthEntry;
use crate::config::auth::FIELDS;
use crate::credentials::Refusal;
use crate::error::BuildError;

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
