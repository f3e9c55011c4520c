//! Credentials written in clear, turned into what goes on the wire: `Basic user:pass`
//! and `Basic user pass` encoded (as REST Client and httpyac do), a URL's
//! `user:password@` sent as a `Basic` header (as curl does), and `Digest user pass`
//! kept aside to answer the server's challenge (`digest.rs`), `AWS key secret …` kept
//! aside to sign the final request (`sigv4.rs`); other tools' schemes that Volley does
//! not run are refused. Nothing written in clear is ever sent literally.

use volley_auth::digest::DigestCredentials;
use volley_auth::sigv4::AwsCredentials;
use volley_model::redact::is_client_certificate_header;
/// Moved to `volley_model::redact` with the rest of what is shown.
pub(crate) use volley_model::redact::redact_url_password;

/// What an `Authorization` value (after `{{ }}` substitution) means.
#[derive(Debug)]
pub(crate) enum Authorization {
    /// Sent as written: another scheme, a `Basic` token, a complete `Digest` answer.
    AsWritten,
    /// `Basic` with the user and password written in clear, encoded.
    Basic(BasicCredentials),
    /// `Digest user password`: nothing is sent until the server challenges.
    Digest(DigestCredentials),
    /// `AWS <key> <secret> …`: the request is signed with AWS Signature V4 (`sigv4.rs`)
    /// once it is final.
    Aws(AwsCredentials),
}

/// A `Basic` header made from a user and password.
#[derive(Debug)]
pub(crate) struct BasicCredentials {
    /// `Basic <token>`.
    pub(crate) value: String,
    /// The base64 of `user:password`, to hide from what is shown.
    pub(crate) token: String,
    /// Whether the user or password contains one of the secrets the value was made with.
    pub(crate) secret: bool,
}

/// Why an `Authorization` value (or a client certificate header) cannot be sent.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// What is wrong.
    pub(crate) reason: String,
    /// How to write it.
    pub(crate) hint: String,
    /// `true` for another tool's syntax that Volley does not run (`unsupported-auth`);
    /// `false` for credentials written wrong (`invalid-credentials`).
    pub(crate) unsupported: bool,
}

impl Refusal {
    fn unsupported(reason: impl Into<String>, hint: impl Into<String>) -> Self {
        Self { reason: reason.into(), hint: hint.into(), unsupported: true }
    }

    /// The stable name of the refusal's code.
    pub(crate) fn code(&self) -> volley_syntax::Code {
        if self.unsupported { volley_syntax::Code::UnsupportedAuth } else { volley_syntax::Code::InvalidCredentials }
    }
}

/// Reads an `Authorization` value: `Basic` and `Digest` with a user and password in
/// clear are recognised (scheme in any case); `secrets` are the `$secret` values used.
pub(crate) fn interpret(value: &str, secrets: &[String]) -> Result<Authorization, Refusal> {
    let value = value.trim();
    let (scheme, rest) = value.split_once(char::is_whitespace).unwrap_or((value, ""));
    let rest = rest.trim();
    if scheme.eq_ignore_ascii_case("basic") {
        let Some((user, password)) = user_and_password(rest) else {
            return Ok(Authorization::AsWritten);
        };
        let secret = secrets
            .iter()
            .any(|secret| !secret.is_empty() && (user.contains(secret.as_str()) || password.contains(secret.as_str())));
        return Ok(Authorization::Basic(basic(user.as_bytes(), password.as_bytes(), secret)));
    }
    if scheme.eq_ignore_ascii_case("digest") {
        // `Digest username="…", response="…"` is an answer computed elsewhere: the
        // author's, sent as written.
        let first = rest.split(char::is_whitespace).next().unwrap_or_default();
        if first.contains('=') {
            return Ok(Authorization::AsWritten);
        }
        return match user_and_password(rest) {
            Some((user, password)) => Ok(Authorization::Digest(DigestCredentials::new(user, password))),
            None => Err(Refusal {
                reason: "`Digest` needs a user and a password".to_owned(),
                hint: "write `Authorization: Digest user password` (Volley answers the server's challenge), \
                       or a complete `Digest username=\"…\", …` value"
                    .to_owned(),
                unsupported: false,
            }),
        };
    }
    // `AWS <key> <secret> [token:…] [region:…] [service:…]` (httpyac, REST Client); one
    // word after `AWS` is a signature computed elsewhere (`AWS key:signature`).
    if scheme.eq_ignore_ascii_case("aws") {
        return match AwsCredentials::parse(rest) {
            Ok(Some(credentials)) => Ok(Authorization::Aws(credentials)),
            Ok(None) => Ok(Authorization::AsWritten),
            Err(reason) => Err(Refusal {
                reason,
                hint: "write `Authorization: AWS <accessKey> <secretKey> [token:…] [region:…] [service:…]`".to_owned(),
                unsupported: false,
            }),
        };
    }
    if let Some(refusal) = other_tool(scheme, rest) {
        return Err(refusal);
    }
    Ok(Authorization::AsWritten)
}

/// httpyac's `oauth2 …` / `openid …` value: its scheme and the words after it (read by
/// `oauth::read_config` with the request's variables).
pub(crate) fn oauth_scheme(value: &str) -> Option<(&str, &str)> {
    let value = value.trim();
    let (scheme, rest) = value.split_once(char::is_whitespace).unwrap_or((value, ""));
    (scheme.eq_ignore_ascii_case("oauth2") || scheme.eq_ignore_ascii_case("openid")).then_some((scheme, rest.trim()))
}

/// Another tool's `Authorization` syntax that Volley does not run: refused, so that what
/// it holds (a client secret, an AWS secret key, a password) never goes out as written.
fn other_tool(scheme: &str, rest: &str) -> Option<Refusal> {
    let words = rest.split_whitespace().count();
    if scheme.eq_ignore_ascii_case("cognito") && words >= 2 {
        return Some(Refusal::unsupported(
            "REST Client's `COGNITO` authorization (an Amazon Cognito sign-in) is not run by Volley",
            "get the token with a request of its own and send `Authorization: Bearer …`",
        ));
    }
    None
}

/// httpyac's client certificate written as a header (`X-ClientCert: pfx: ./client.p12
/// passphrase: …` or `cert: ./client.pem key: ./client.key`): the files, relative to the
/// `.http` file, and the passphrase.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ClientCertificate {
    pub(crate) cert: Option<String>,
    pub(crate) key: Option<String>,
    pub(crate) pfx: Option<String>,
    pub(crate) passphrase: Option<String>,
}

impl std::fmt::Debug for ClientCertificate {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ClientCertificate")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .field("pfx", &self.pfx)
            .finish_non_exhaustive()
    }
}

/// Reads the value of httpyac's client certificate header: `None` when it is not in
/// that form (no `cert:`, `key:`, `pfx:` or `passphrase:`; sent as written), else the
/// certificate, or why it cannot be one (never sent either way).
pub(crate) fn client_certificate_header(name: &str, value: &str) -> Option<Result<ClientCertificate, Refusal>> {
    const KEYS: [&str; 4] = ["cert", "key", "pfx", "passphrase"];
    if !is_client_certificate_header(name) {
        return None;
    }
    let keyed = |word: &str| {
        let lower = word.to_ascii_lowercase();
        KEYS.iter().any(|key| lower.strip_prefix(key).is_some_and(|rest| rest.starts_with(':')))
    };
    if !value.split_whitespace().any(keyed) {
        return None;
    }
    let invalid = |reason: String| Refusal {
        reason,
        hint: "write `X-ClientCert: cert: ./client.pem key: ./client.key [passphrase: …]` or `X-ClientCert: pfx: \
               ./client.p12 [passphrase: …]`"
            .to_owned(),
        unsupported: false,
    };
    // Each key's value runs to the next key: a passphrase (from a secret) or a path may
    // hold spaces.
    let mut certificate = ClientCertificate { cert: None, key: None, pfx: None, passphrase: None };
    let mut current: Option<(String, Vec<&str>)> = None;
    let mut entries = Vec::new();
    for word in value.split_whitespace() {
        if keyed(word) {
            let (key, inline) = word.split_once(':').unwrap_or((word, ""));
            entries.extend(current.take());
            current = Some((key.to_ascii_lowercase(), if inline.is_empty() { Vec::new() } else { vec![inline] }));
        } else if let Some((_, words)) = &mut current {
            words.push(word);
        } else {
            return Some(Err(invalid(format!(
                "`{word}` in `{}` is not `cert:`, `key:`, `pfx:` or `passphrase:`",
                name.trim()
            ))));
        }
    }
    entries.extend(current);
    for (key, words) in entries {
        if words.is_empty() {
            return Some(Err(invalid(format!("`{key}:` in `{}` has no value", name.trim()))));
        }
        let slot = match key.as_str() {
            "cert" => &mut certificate.cert,
            "key" => &mut certificate.key,
            "pfx" => &mut certificate.pfx,
            _ => &mut certificate.passphrase,
        };
        *slot = Some(words.join(" "));
    }
    if certificate.cert.is_none() && certificate.pfx.is_none() {
        return Some(Err(invalid(format!("`{}` names no certificate: it needs `cert:` or `pfx:`", name.trim()))));
    }
    Some(Ok(certificate))
}

/// `user:password` or `user password`: the first word (up to a `:` or a space) is the
/// user, everything after that one separator is the password, spaces and `:` included.
/// One word without `:` is not a pair (an encoded token).
fn user_and_password(rest: &str) -> Option<(&str, &str)> {
    let end = rest.find(|character: char| character == ':' || character.is_whitespace())?;
    let (user, after) = rest.split_at(end);
    let password = match after.strip_prefix(':') {
        Some(password) => password,
        None => after.trim_start(),
    };
    Some((user, password))
}

/// `Basic base64(user:password)`, from bytes (a URL's credentials need not be UTF-8).
pub(crate) fn basic(user: &[u8], password: &[u8], secret: bool) -> BasicCredentials {
    let token = volley_auth::basic_token(user, password);
    BasicCredentials { value: format!("Basic {token}"), token, secret }
}

/// Takes the `user:password@` out of `url` and returns them percent-decoded (the URL
/// standard's userinfo encoding); `None` when the URL has none.
pub(crate) fn take_from_url(url: &mut url::Url) -> Option<(Vec<u8>, Vec<u8>)> {
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let decode = |text: &str| percent_encoding::percent_decode_str(text).collect::<Vec<u8>>();
    let user = decode(url.username());
    let password = url.password().map(decode).unwrap_or_default();
    // Only a URL that cannot have credentials (no host) refuses these: not ours.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    Some((user, password))
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;

    use super::*;

    fn basic_of(value: &str) -> Option<String> {
        match interpret(value, &[]) {
            Ok(Authorization::Basic(basic)) => Some(String::from_utf8(BASE64.decode(basic.token).unwrap()).unwrap()),
            Ok(Authorization::AsWritten) => None,
            other => panic!("{value}: {other:?}"),
        }
    }

    #[test]
    fn basic_pairs_are_told_from_tokens() {
        assert_eq!(basic_of("Basic ada:lovelace").as_deref(), Some("ada:lovelace"));
        assert_eq!(basic_of("BASIC ada lovelace").as_deref(), Some("ada:lovelace"));
        assert_eq!(basic_of("Basic ada   two words ").as_deref(), Some("ada:two words"));
        assert_eq!(basic_of("Basic ada pa:ss").as_deref(), Some("ada:pa:ss"));
        assert_eq!(basic_of("Basic ada:pa ss:x").as_deref(), Some("ada:pa ss:x"));
        assert_eq!(basic_of("Basic ada:").as_deref(), Some("ada:"));
        assert_eq!(basic_of("Basic YWRhOmxvdmVsYWNl"), None);
        assert_eq!(basic_of("Basic"), None);
        assert_eq!(basic_of("Bearer a:b"), None);
    }

    #[test]
    fn digest_needs_a_pair_or_a_complete_answer() {
        assert!(matches!(interpret("Digest ada lovelace", &[]), Ok(Authorization::Digest(_))));
        assert!(matches!(interpret("digest ada:lovelace", &[]), Ok(Authorization::Digest(_))));
        assert!(matches!(interpret("Digest username=\"ada\", response=\"x\"", &[]), Ok(Authorization::AsWritten)));
        let refused = interpret("Digest ada", &[]).unwrap_err();
        assert_eq!(refused.reason, "`Digest` needs a user and a password");
        assert!(interpret("Digest", &[]).is_err());
    }

    #[test]
    fn a_secret_in_the_pair_marks_the_token() {
        let secrets = ["lovelace".to_owned()];
        let Ok(Authorization::Basic(basic)) = interpret("Basic ada lovelace", &secrets) else { panic!() };
        assert!(basic.secret);
        let Ok(Authorization::Basic(basic)) = interpret("Basic ada other", &secrets) else { panic!() };
        assert!(!basic.secret);
    }

    #[test]
    fn url_credentials_are_taken_out_and_decoded() {
        let mut url = url::Url::parse("http://a%20b:p%40ss%3A%zz@example.com/x").unwrap();
        let (user, password) = take_from_url(&mut url).unwrap();
        assert_eq!((user.as_slice(), password.as_slice()), (&b"a b"[..], &b"p@ss:%zz"[..]));
        assert_eq!(url.as_str(), "http://example.com/x");
        assert!(take_from_url(&mut url).is_none());
    }
}
