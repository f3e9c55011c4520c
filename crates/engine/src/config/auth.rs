//! Named OAuth 2.0 configurations, used as `{{$auth.token("id")}}` and
//! `{{$auth.idToken("id")}}`: volley.jsonc `auth.<id>` (and a profile's), and JetBrains'
//! and Kulala's `Security.Auth.<id>` of an environment in `http-client.env.json` (and
//! its private file). Both are read into the field names of httpyac's `<prefix>_…`
//! variables, so one implementation (`oauth/config.rs`) runs them all.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::invalid;
use crate::error::ConfigError;

/// One named configuration. Its values may hold `{{…}}` (`{{$secret CLIENT_SECRET}}`, a
/// variable), rendered when a request uses it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthEntry {
    /// `true` for AWS Signature V4 keys (`"type": "aws"`, used as
    /// `{{$auth.aws("id")}}`); else an OAuth 2.0 configuration.
    pub aws: bool,
    /// The grant as written (`client_credentials`, `Authorization Code`, …).
    pub grant: String,
    /// The fields by httpyac's names (`tokenEndpoint`, `clientId`, …).
    pub fields: BTreeMap<String, String>,
}

/// The fields of an `auth` entry of volley.jsonc (httpyac's variable names).
pub(crate) const FIELDS: [&str; 16] = [
    "tokenEndpoint",
    "issuer",
    "clientId",
    "clientSecret",
    "useAuthorizationHeader",
    "scope",
    "audience",
    "resource",
    "username",
    "password",
    "authorizationEndpoint",
    "deviceCodeEndpoint",
    "redirectUri",
    "usePkce",
    "useDeviceCodeClientSecret",
    "useIdToken",
];

/// The fields of an `"type": "aws"` entry.
pub(crate) const AWS_FIELDS: [&str; 5] = ["accessKey", "secretKey", "sessionToken", "region", "service"];

/// A value of an entry as text: strings as they are, booleans and numbers written out.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// volley.jsonc `auth` (at `at`): `{"id": {"grant": …, "<field>": …}}`.
pub(crate) fn volley_auth(value: Value, path: &Path, at: &str) -> Result<BTreeMap<String, AuthEntry>, ConfigError> {
    let Value::Object(entries) = value else {
        return Err(invalid(path, at, "`auth` must be an object of named configurations", None));
    };
    let mut auth = BTreeMap::new();
    for (id, entry) in entries {
        let inner = format!("{at}.{id}");
        let Value::Object(entry) = entry else {
            return Err(invalid(path, &inner, "an auth configuration must be an object", None));
        };
        let mut read = AuthEntry {
            aws: entry.get("type").and_then(Value::as_str).is_some_and(|kind| kind.eq_ignore_ascii_case("aws")),
            ..AuthEntry::default()
        };
        for (key, value) in entry {
            let field = format!("{inner}.{key}");
            let Some(value) = text(&value) else {
                return Err(invalid(path, &field, "must be a string, a boolean or a number", None));
            };
            match key.as_str() {
                "type" if value.eq_ignore_ascii_case("oauth2") || value.eq_ignore_ascii_case("aws") => {}
                name if read.aws && AWS_FIELDS.contains(&name) => {
                    read.fields.insert(key, value);
                }
                name if read.aws => {
                    return Err(invalid(
                        path,
                        &field,
                        format!("unknown key `{name}` of an AWS configuration"),
                        Some(format!("known keys: type, {}", AWS_FIELDS.join(", "))),
                    ));
                }
                "type" => {
                    return Err(invalid(
                        path,
                        &field,
                        format!("`{value}` is not a type Volley runs"),
                        Some("`oauth2` or `aws`".to_owned()),
                    ));
                }
                "grant" => read.grant = value,
                name if FIELDS.contains(&name) => {
                    read.fields.insert(key, value);
                }
                name => {
                    let hint = volley_syntax::closest(name, FIELDS.iter().copied().chain(["type", "grant"]))
                        .map_or_else(
                            || format!("known keys: type, grant, {}", FIELDS.join(", ")),
                            |known| format!("did you mean `{known}`?"),
                        );
                    return Err(invalid(path, &field, format!("unknown key `{name}`"), Some(hint)));
                }
            }
        }
        auth.insert(id, read);
    }
    Ok(auth)
}

/// JetBrains' `Security` of an environment (at `at`): its `Auth.<id>` entries, by
/// JetBrains' names (`Type`, `Grant Type`, `Client ID`, `Token URL`, …).
pub(crate) fn jetbrains_security(
    value: Value,
    path: &Path,
    at: &str,
) -> Result<BTreeMap<String, AuthEntry>, ConfigError> {
    let Value::Object(mut security) = value else {
        return Err(invalid(path, at, "`Security` must be an object", None));
    };
    let mut auth = BTreeMap::new();
    let Some(entries) = security.remove("Auth") else { return Ok(auth) };
    let Value::Object(entries) = entries else {
        return Err(invalid(path, &format!("{at}.Auth"), "`Auth` must be an object of named configurations", None));
    };
    for (id, entry) in entries {
        let inner = format!("{at}.Auth.{id}");
        let Value::Object(entry) = entry else {
            return Err(invalid(path, &inner, "an auth configuration must be an object", None));
        };
        auth.insert(id, jetbrains_entry(entry, path, &inner)?);
    }
    Ok(auth)
}

fn jetbrains_entry(entry: Map<String, Value>, path: &Path, at: &str) -> Result<AuthEntry, ConfigError> {
    let mut read = AuthEntry::default();
    for (key, value) in entry {
        let field = format!("{at}.{key}");
        let name = match key.as_str() {
            "Type" => {
                let kind = text(&value).unwrap_or_default();
                if !kind.eq_ignore_ascii_case("oauth2") {
                    return Err(invalid(
                        path,
                        &field,
                        format!("`{kind}` is not an auth type Volley runs"),
                        Some("`OAuth2`".to_owned()),
                    ));
                }
                continue;
            }
            "Grant Type" => {
                read.grant = text(&value).unwrap_or_default();
                continue;
            }
            "PKCE" => {
                // `true`, or an object naming the method (S256 only).
                let on = match &value {
                    Value::Bool(flag) => *flag,
                    Value::Object(options) => {
                        let method = options.get("Code Challenge Method").and_then(Value::as_str).unwrap_or("S256");
                        if !method.eq_ignore_ascii_case("S256") {
                            return Err(invalid(
                                path,
                                &field,
                                format!("the PKCE method `{method}` is not run by Volley"),
                                Some("`S256`".to_owned()),
                            ));
                        }
                        true
                    }
                    _ => return Err(invalid(path, &field, "`PKCE` must be true, false or an object", None)),
                };
                read.fields.insert("usePkce".to_owned(), on.to_string());
                continue;
            }
            "Client Credentials" => {
                let how = text(&value).unwrap_or_default().to_ascii_lowercase();
                let in_header = match how.as_str() {
                    "basic" => true,
                    "in body" | "body" | "none" => false,
                    _ => {
                        return Err(invalid(
                            path,
                            &field,
                            format!("`{how}` is not `basic`, `in body` or `none`"),
                            None,
                        ));
                    }
                };
                read.fields.insert("useAuthorizationHeader".to_owned(), in_header.to_string());
                continue;
            }
            "Custom Request Parameters" => {
                let Value::Object(parameters) = value else {
                    return Err(invalid(path, &field, "must be an object", None));
                };
                for (parameter, value) in parameters {
                    let value = match &value {
                        Value::Array(items) => items.iter().filter_map(text).collect::<Vec<_>>().join(" "),
                        Value::Object(object) => object.get("Value").and_then(text).unwrap_or_default(),
                        other => text(other).unwrap_or_default(),
                    };
                    match parameter.as_str() {
                        "audience" | "resource" => {
                            read.fields.insert(parameter, value);
                        }
                        other => {
                            return Err(invalid(
                                path,
                                &format!("{field}.{other}"),
                                format!("the custom request parameter `{other}` is not sent by Volley"),
                                Some("Volley sends `audience` and `resource`".to_owned()),
                            ));
                        }
                    }
                }
                continue;
            }
            "Client ID" => "clientId",
            "Client Secret" => "clientSecret",
            "Token URL" => "tokenEndpoint",
            "Auth URL" => "authorizationEndpoint",
            "Redirect URL" => "redirectUri",
            "Scope" => "scope",
            "Device Auth URL" => "deviceCodeEndpoint",
            "Username" => "username",
            "Password" => "password",
            "Use ID Token" => "useIdToken",
            // What an IDE does on its own (when to get and refresh tokens): Volley gets
            // them when a request needs one.
            "Acquire Automatically" | "Start Token Refresh" | "Token Lifetime" => continue,
            other => {
                return Err(invalid(
                    path,
                    &field,
                    format!("`{other}` is not a key of JetBrains' OAuth 2.0 configuration that Volley reads"),
                    Some(
                        "known keys: Type, Grant Type, Client ID, Client Secret, Token URL, Auth URL, Redirect URL, \
                          Scope, PKCE, Device Auth URL, Username, Password, Client Credentials, Custom Request \
                          Parameters, Use ID Token"
                            .to_owned(),
                    ),
                ));
            }
        };
        let Some(value) = text(&value) else {
            return Err(invalid(path, &field, "must be a string", None));
        };
        read.fields.insert(name.to_owned(), value);
    }
    Ok(read)
}
