//! Credentials written in clear, turned into what goes on the wire: `Basic user:pass`
//! and `Basic user pass` encoded (as REST Client and httpyac do), a URL's
//! `user:password@` sent as a `Basic` header (as curl does), and `Digest user pass`
//! kept aside to answer the server's challenge (`digest.rs`), `AWS key secret …` kept
//! aside to sign the final request (`sigv4.rs`); other tools' schemes that Volley does
//! not run are refused. Nothing written in clear is ever sent literally.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use volley_auth::digest::DigestCredentials;
use volley_auth::sigv4::AwsCredentials;

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

/// Whether a header called `name` is httpyac's client certificate header (a name that
/// ends in `clientcert`, in any case: `X-ClientCert`, `clientcert`).
pub(crate) fn is_client_certificate_header(name: &str) -> bool {
    // Asked of every header of every request: no allocation.
    let name = name.trim().as_bytes();
    name.len() >= 10 && name[name.len() - 10..].eq_ignore_ascii_case(b"clientcert")
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
    let mut pair = Vec::with_capacity(user.len() + 1 + password.len());
    pair.extend_from_slice(user);
    pair.push(b':');
    pair.extend_from_slice(password);
    let token = BASE64.encode(pair);
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

/// `text` with the password of every `scheme://user:password@` in it replaced by
/// `[REDACTED]`: for URLs shown as written (templates), where the password is not a
/// known secret value.
#[must_use]
pub fn redact_url_password(text: &str) -> Cow<'_, str> {
    if !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let mut shown = String::new();
    let mut rest = text;
    let mut changed = false;
    while let Some(found) = rest.find("://") {
        let authority_start = found + 3;
        let authority_end = rest[authority_start..]
            .find(|character: char| matches!(character, '/' | '?' | '#') || character.is_whitespace())
            .map_or(rest.len(), |end| authority_start + end);
        let authority = &rest[authority_start..authority_end];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
            && colon + 1 < at
        {
            shown.push_str(&rest[..=authority_start + colon]);
            shown.push_str("[REDACTED]");
            shown.push_str(&rest[authority_start + at..authority_end]);
            changed = true;
        } else {
            shown.push_str(&rest[..authority_end]);
        }
        rest = &rest[authority_end..];
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    shown.push_str(rest);
    Cow::Owned(shown)
}

/// `text` (lines of a `.http` file, shown in an error's excerpt) with the secrets
/// written in clear masked by `*`, byte for byte, so that every offset into it still
/// holds: the password of a URL, the secret of `Authorization: Basic|Digest user
/// password`, a literal `Basic`/`Bearer` token, the secret key and session token of
/// `AWS …`, and a client certificate header's `passphrase:`. Templates (`{{…}}`) are
/// names, not values, and stay.
#[must_use]
pub fn mask_written_secrets(text: &str) -> Cow<'_, str> {
    let mut masked: Option<Vec<u8>> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        for range in written_secrets(line) {
            let bytes = masked.get_or_insert_with(|| text.as_bytes().to_vec());
            bytes[offset + range.start..offset + range.end].fill(b'*');
        }
        offset += line.len();
    }
    // Whole words (between ASCII separators) became ASCII: still UTF-8.
    masked.map_or(Cow::Borrowed(text), |bytes| Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The byte ranges of the secrets written in clear in one line.
fn written_secrets(line: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    // A URL's `user:password@`.
    let mut from = 0;
    while let Some(found) = line[from..].find("://") {
        let authority_start = from + found + 3;
        let authority_end = line[authority_start..]
            .find(|character: char| matches!(character, '/' | '?' | '#') || character.is_whitespace())
            .map_or(line.len(), |end| authority_start + end);
        let authority = &line[authority_start..authority_end];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
            && !authority[colon..at].contains("{{")
        {
            ranges.push(authority_start + colon + 1..authority_start + at);
        }
        from = authority_end;
    }
    let Some((name, value)) = line.split_once(':') else { return ranges };
    let name = name.trim();
    // `{{…}}` templates, spaces and all (`{{$secret NAME}}`), are not words.
    let mut templates = Vec::new();
    let mut from = 0;
    while let Some(open) = value[from..].find("{{") {
        let start = from + open;
        let end = value[start..].find("}}").map_or(value.len(), |close| start + close + 2);
        templates.push(start..end);
        from = end;
    }
    let value_start = value.as_ptr() as usize - line.as_ptr() as usize;
    let in_template = |start: usize, end: usize| {
        templates.iter().any(|template| template.start + value_start < end && start < template.end + value_start)
    };
    // Words, a template being part of the word it is in (`{{$secret A}}` is one).
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut word_start = None;
    let mut index = 0;
    while index < value.len() {
        if let Some(template) = templates.iter().find(|template| template.start == index) {
            word_start.get_or_insert(index);
            index = template.end;
            continue;
        }
        let byte = value.as_bytes()[index];
        if byte.is_ascii_whitespace() {
            if let Some(start) = word_start.take() {
                words.push((value_start + start, &value[start..index]));
            }
        } else {
            word_start.get_or_insert(index);
        }
        index += 1;
    }
    if let Some(start) = word_start {
        words.push((value_start + start, &value[start..]));
    }
    let ranges_in = |ranges: &mut Vec<std::ops::Range<usize>>, range: std::ops::Range<usize>| {
        if !in_template(range.start, range.end) {
            ranges.push(range);
        }
    };
    let mask = |ranges: &mut Vec<_>, (start, word): (usize, &str)| ranges_in(ranges, start..start + word.len());
    if name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("proxy-authorization") {
        let Some(scheme) = value.split_ascii_whitespace().next() else { return ranges };
        let literal = words.iter().copied().skip_while(|(_, word)| *word == scheme);
        match scheme.to_ascii_lowercase().as_str() {
            // `Basic user password`, `Basic user:password`, `Basic <token>`; `Bearer <token>`.
            "basic" | "digest" | "bearer" => {
                let rest: Vec<_> = literal.collect();
                match rest.as_slice() {
                    [(start, word)] if scheme.eq_ignore_ascii_case("digest") => {
                        if let Some(colon) = word.find(':') {
                            mask(&mut ranges, (start + colon + 1, &word[colon + 1..]));
                        }
                    }
                    [only] => mask(&mut ranges, *only),
                    [_, password, ..] => mask(&mut ranges, *password),
                    [] => {}
                }
            }
            // REST Client's `COGNITO <user> <password> <region> <pool> <client>`.
            "cognito" => {
                if let Some(password) = literal.clone().nth(1) {
                    mask(&mut ranges, password);
                }
            }
            // `AWS <key> <secret> [token:…] …`.
            "aws" => {
                for (index, (start, word)) in literal.enumerate() {
                    if index == 1 {
                        mask(&mut ranges, (start, word));
                    } else if let Some(token) = word.strip_prefix("token:") {
                        mask(&mut ranges, (start + 6, token));
                    }
                }
            }
            _ => {}
        }
    } else if is_client_certificate_header(name) {
        let mut after_passphrase = false;
        for (start, word) in words {
            if after_passphrase {
                mask(&mut ranges, (start, word));
                after_passphrase = false;
            } else if word.eq_ignore_ascii_case("passphrase:") {
                after_passphrase = true;
            } else if let Some(passphrase) =
                word.strip_prefix("passphrase:").filter(|passphrase| !passphrase.is_empty())
            {
                mask(&mut ranges, (start + 11, passphrase));
            }
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn url_passwords_are_redacted_in_text() {
        assert_eq!(
            redact_url_password("GET http://ada:lovelace@h:1/p?q=a:b@c and ws://u:p@x"),
            "GET http://ada:[REDACTED]@h:1/p?q=a:b@c and ws://u:[REDACTED]@x"
        );
        assert_eq!(redact_url_password("http://ada@h/ http://h/a:b@c"), "http://ada@h/ http://h/a:b@c");
        assert!(matches!(redact_url_password("{{base}}/x"), Cow::Borrowed(_)));
    }

    #[test]
    fn secrets_written_in_clear_are_masked_in_place() {
        let cases = [
            ("Authorization: AWS AKID s3cr3t region:x token:T0K", "Authorization: AWS AKID ****** region:x token:***"),
            ("Authorization: Basic ada lovelace", "Authorization: Basic ada ********"),
            ("Authorization: Basic YWRhOmx2", "Authorization: Basic ********"),
            ("authorization: Digest ada:pw", "authorization: Digest ada:**"),
            ("Authorization: Bearer abc.def", "Authorization: Bearer *******"),
            ("Authorization: Bearer {{token}}", "Authorization: Bearer {{token}}"),
            (
                "Authorization: AWS AKID {{$secret AWS_KEY}} token:T",
                "Authorization: AWS AKID {{$secret AWS_KEY}} token:*",
            ),
            ("Authorization: AWS {{$secret ID}} s3cr3t", "Authorization: AWS {{$secret ID}} ******"),
            ("Authorization: COGNITO ada lovelace eu-west-1 p c", "Authorization: COGNITO ada ******** eu-west-1 p c"),
            ("X-ClientCert: pfx: ./c.p12 passphrase: hunter2", "X-ClientCert: pfx: ./c.p12 passphrase: *******"),
            ("GET https://ada:pw@host/x", "GET https://ada:**@host/x"),
            ("GET https://ada:{{pw}}@host/x", "GET https://ada:{{pw}}@host/x"),
            ("Accept: text/plain", "Accept: text/plain"),
        ];
        for (written, shown) in cases {
            assert_eq!(super::mask_written_secrets(written), shown, "{written}");
        }
        let text = "GET http://h/x\nAuthorization: Basic ada é\n";
        assert_eq!(super::mask_written_secrets(text).len(), text.len());
    }
}
