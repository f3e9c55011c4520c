//! Which names mark a value as secret: credential headers, the JSON fields of a
//! response that hold credentials, and the names of variables (and `.env` keys,
//! environment variables) people give their secrets.

/// Headers whose values are credentials (compared without regard to case).
const SENSITIVE_HEADERS: [&str; 7] =
    ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token"];

/// How the names of a response body's JSON fields that hold credentials end, once
/// lowercased without `_` and `-` (`access_token`, `refreshToken`, `client_secret`,
/// `password`, `apiKey`): narrower than the names of variables, which people choose,
/// so that an API's `author` or `keyboard` stays readable.
const SENSITIVE_FIELD_ENDINGS: [&str; 9] =
    ["token", "secret", "password", "passwd", "apikey", "accesskey", "secretkey", "privatekey", "credentials"];

/// Tokens that are places in a listing, not credentials (`nextPageToken`, AWS's
/// `NextToken`, `continuationToken`, `syncToken`): what comes before `token` once folded.
const PLACE_TOKEN_PREFIXES: [&str; 11] = [
    "page",
    "nextpage",
    "prevpage",
    "previouspage",
    "next",
    "continuation",
    "pagination",
    "cursor",
    "sync",
    "resume",
    "marker",
];

/// Whether a response body's JSON field called `name` holds a credential.
#[must_use]
pub fn is_sensitive_field(name: &str) -> bool {
    if name.len() > 64 {
        return false;
    }
    let folded: String =
        name.chars().filter(|character| !matches!(character, '_' | '-')).map(|c| c.to_ascii_lowercase()).collect();
    if folded.strip_suffix("token").is_some_and(|before| PLACE_TOKEN_PREFIXES.contains(&before)) {
        return false;
    }
    SENSITIVE_FIELD_ENDINGS.iter().any(|ending| folded.ends_with(ending))
}

/// Parts of a variable name that mark its value as secret (compared without regard to
/// case): `apiToken`, `DB_PASSWORD`, `clientSecret`, `x-api-key`, `authCode`.
const SENSITIVE_NAME_PARTS: [&str; 6] = ["token", "secret", "password", "key", "auth", "credential"];

/// Whether the value of a header called `name` is a credential, hidden whole.
#[must_use]
pub fn is_sensitive_header(name: &str) -> bool {
    SENSITIVE_HEADERS.iter().any(|sensitive| name.trim().eq_ignore_ascii_case(sensitive))
}

/// Whether the value of a variable (or `.env` key, or environment variable) called
/// `name` is secret: its name contains token, secret, password, key, auth or credential,
/// and does not end in `Endpoint`, `Url`, `Uri` or `Issuer` (an address: OAuth's
/// `oauth2_tokenEndpoint`, `oauth2_issuer`, `authUrl`, `redirectUri` are shown, so that
/// errors can name the server that answered).
#[must_use]
pub fn is_sensitive_variable(name: &str) -> bool {
    let ends_with = |suffix: &str| {
        name.len() >= suffix.len()
            && name.as_bytes()[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    if ["endpoint", "url", "uri", "issuer"].iter().any(|suffix| ends_with(suffix)) {
        return false;
    }
    // Without allocating: every variable of every layer is asked on every send.
    SENSITIVE_NAME_PARTS
        .iter()
        .any(|part| name.as_bytes().windows(part.len()).any(|window| window.eq_ignore_ascii_case(part.as_bytes())))
}

/// Whether a header called `name` is httpyac's client certificate header (a name that
/// ends in `clientcert`, in any case: `X-ClientCert`, `clientcert`).
///
/// For the engine, which reads that header (not part of the API).
#[doc(hidden)]
#[must_use]
pub fn is_client_certificate_header(name: &str) -> bool {
    // Asked of every header of every request: no allocation.
    let name = name.trim().as_bytes();
    name.len() >= 10 && name[name.len() - 10..].eq_ignore_ascii_case(b"clientcert")
}
