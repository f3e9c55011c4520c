//! HTTP Digest authentication (RFC 7616), the client side: the server's
//! `WWW-Authenticate: Digest …` challenges read, the strongest one chosen, and the
//! `Authorization: Digest …` answer computed (MD5, SHA-256 and SHA-512-256, their
//! `-sess` variants, `qop=auth` and `auth-int`, RFC 2069 servers without `qop`,
//! `userhash`). The engine's exchange sends the request without credentials and resends
//! it once with the answer.

use std::fmt;

use http::HeaderMap;
use http::header::WWW_AUTHENTICATE;
use md5::Digest as _;

/// A user and password for Digest authentication, from `Authorization: Digest user
/// password`. `Debug` hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct DigestCredentials {
    user: String,
    password: String,
}

impl fmt::Debug for DigestCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DigestCredentials").field("user", &self.user).field("password", &"[REDACTED]").finish()
    }
}

impl DigestCredentials {
    #[must_use]
    pub fn new(user: &str, password: &str) -> Self {
        Self { user: user.to_owned(), password: password.to_owned() }
    }

    /// The user name.
    #[must_use]
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The password, to keep out of what is shown.
    #[must_use]
    pub fn password(&self) -> &str {
        &self.password
    }
}

/// The hash functions of RFC 7616 §3.2, best last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Algorithm {
    Md5,
    Sha256,
    Sha512_256,
}

impl Algorithm {
    fn hash(self, data: &[u8]) -> String {
        match self {
            Algorithm::Md5 => hex(&md5::Md5::digest(data)),
            Algorithm::Sha256 => hex(ring::digest::digest(&ring::digest::SHA256, data).as_ref()),
            Algorithm::Sha512_256 => hex(ring::digest::digest(&ring::digest::SHA512_256, data).as_ref()),
        }
    }
}

/// The protection the answer asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Qop {
    /// RFC 2069: the challenge offers no `qop`.
    None,
    Auth,
    AuthInt,
}

/// One `Digest` challenge the client can answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    realm: String,
    nonce: String,
    opaque: Option<String>,
    algorithm: Algorithm,
    sess: bool,
    /// How the challenge spelled `algorithm`, when it did: the answer repeats it.
    algorithm_written: Option<String>,
    qop: Qop,
    userhash: bool,
}

impl Challenge {
    /// The strongest `Digest` challenge of a response's `WWW-Authenticate` headers that
    /// this client can answer (a known algorithm, `qop` absent or offering `auth` or
    /// `auth-int`, a nonce).
    pub fn best(headers: &HeaderMap) -> Option<Challenge> {
        headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(parse_challenges)
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("digest"))
            .filter_map(|(_, parameters)| Challenge::from_parameters(&parameters))
            // `max_by_key` keeps the last of equals: reversed, the first one written wins.
            .rev()
            .max_by_key(|challenge| (challenge.algorithm, challenge.qop != Qop::None))
    }

    fn from_parameters(parameters: &[(String, String)]) -> Option<Challenge> {
        let get = |name: &str| {
            parameters.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
        };
        let nonce = get("nonce")?.to_owned();
        let written = get("algorithm");
        let (algorithm, sess) = match written.map(str::to_ascii_uppercase).as_deref() {
            None | Some("MD5") => (Algorithm::Md5, false),
            Some("MD5-SESS") => (Algorithm::Md5, true),
            Some("SHA-256") => (Algorithm::Sha256, false),
            Some("SHA-256-SESS") => (Algorithm::Sha256, true),
            Some("SHA-512-256") => (Algorithm::Sha512_256, false),
            Some("SHA-512-256-SESS") => (Algorithm::Sha512_256, true),
            Some(_) => return None,
        };
        let qop = match get("qop") {
            None => Qop::None,
            Some(offered) => {
                let offered: Vec<String> = offered.split(',').map(|item| item.trim().to_ascii_lowercase()).collect();
                if offered.iter().any(|item| item == "auth") {
                    Qop::Auth
                } else if offered.iter().any(|item| item == "auth-int") {
                    Qop::AuthInt
                } else {
                    return None;
                }
            }
        };
        Some(Challenge {
            realm: get("realm").unwrap_or_default().to_owned(),
            nonce,
            opaque: get("opaque").map(str::to_owned),
            algorithm,
            sess,
            algorithm_written: written.map(str::to_owned),
            qop,
            userhash: get("userhash").is_some_and(|value| value.eq_ignore_ascii_case("true")),
        })
    }

    /// The `Authorization` value answering this challenge for `method` on `uri` (the
    /// request target: path and query) with `body`, with a fresh client nonce.
    #[must_use]
    pub fn answer(&self, credentials: &DigestCredentials, method: &str, uri: &str, body: &[u8]) -> String {
        let cnonce = format!("{:016x}{:016x}", rand::random::<u64>(), rand::random::<u64>());
        self.answer_with(credentials, method, uri, body, &cnonce)
    }

    fn answer_with(
        &self,
        credentials: &DigestCredentials,
        method: &str,
        uri: &str,
        body: &[u8],
        cnonce: &str,
    ) -> String {
        const NC: &str = "00000001";
        let hash = |text: &str| self.algorithm.hash(text.as_bytes());
        let mut ha1 = hash(&format!("{}:{}:{}", credentials.user, self.realm, credentials.password));
        if self.sess {
            ha1 = hash(&format!("{ha1}:{}:{cnonce}", self.nonce));
        }
        let ha2 = match self.qop {
            Qop::AuthInt => hash(&format!("{method}:{uri}:{}", self.algorithm.hash(body))),
            Qop::None | Qop::Auth => hash(&format!("{method}:{uri}")),
        };
        let (response, qop) = match self.qop {
            Qop::None => (hash(&format!("{ha1}:{}:{ha2}", self.nonce)), None),
            Qop::Auth | Qop::AuthInt => {
                let qop = if self.qop == Qop::Auth { "auth" } else { "auth-int" };
                (hash(&format!("{ha1}:{}:{NC}:{cnonce}:{qop}:{ha2}", self.nonce)), Some(qop))
            }
        };
        let mut fields = Vec::with_capacity(10);
        if self.userhash {
            fields.push(format!("username=\"{}\"", hash(&format!("{}:{}", credentials.user, self.realm))));
        } else if credentials.user.is_ascii() {
            fields.push(format!("username={}", quoted(&credentials.user)));
        } else {
            // RFC 7616 §3.4.4: a user name outside ASCII goes in `username*` (RFC 5987).
            let encoded = percent_encoding::utf8_percent_encode(&credentials.user, percent_encoding::NON_ALPHANUMERIC);
            fields.push(format!("username*=UTF-8''{encoded}"));
        }
        fields.push(format!("realm={}", quoted(&self.realm)));
        fields.push(format!("uri={}", quoted(uri)));
        if let Some(algorithm) = &self.algorithm_written {
            fields.push(format!("algorithm={algorithm}"));
        }
        fields.push(format!("nonce={}", quoted(&self.nonce)));
        if let Some(qop) = qop {
            fields.push(format!("nc={NC}"));
            fields.push(format!("cnonce=\"{cnonce}\""));
            fields.push(format!("qop={qop}"));
        }
        fields.push(format!("response=\"{response}\""));
        if let Some(opaque) = &self.opaque {
            fields.push(format!("opaque={}", quoted(opaque)));
        }
        if self.userhash {
            fields.push("userhash=true".to_owned());
        }
        format!("Digest {}", fields.join(", "))
    }
}

/// A quoted-string (RFC 9110 §5.6.4).
fn quoted(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for character in text.chars() {
        if matches!(character, '"' | '\\') {
            quoted.push('\\');
        }
        quoted.push(character);
    }
    quoted.push('"');
    quoted
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}

/// The challenges of one `WWW-Authenticate` value (RFC 9110 §11.6.1): a scheme, then
/// `name=value` parameters (tokens or quoted strings) separated by commas; a new
/// scheme starts where a word is not followed by `=`. A `token68` (`Negotiate abc==`)
/// reads as a parameter without a name and is of no use here.
fn parse_challenges(value: &str) -> Vec<(String, Vec<(String, String)>)> {
    let is_token = |character: char| character.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(character);
    let mut challenges: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut rest = value;
    loop {
        rest = rest.trim_start_matches(|character: char| character == ',' || character.is_whitespace());
        if rest.is_empty() {
            return challenges;
        }
        let end = rest.find(|character: char| !is_token(character)).unwrap_or(rest.len());
        if end == 0 {
            // Not a token: skip to the next comma.
            rest = rest.find(',').map_or("", |comma| &rest[comma..]);
            continue;
        }
        let word = &rest[..end];
        rest = rest[end..].trim_start();
        let Some(after_equals) = rest.strip_prefix('=').filter(|_| !challenges.is_empty()) else {
            challenges.push((word.to_owned(), Vec::new()));
            continue;
        };
        rest = after_equals.trim_start();
        let parameter_value = if let Some(quoted) = rest.strip_prefix('"') {
            let mut text = String::new();
            let mut characters = quoted.char_indices();
            let mut closed = quoted.len();
            while let Some((index, character)) = characters.next() {
                match character {
                    '\\' => {
                        if let Some((_, escaped)) = characters.next() {
                            text.push(escaped);
                        }
                    }
                    '"' => {
                        closed = index + 1;
                        break;
                    }
                    other => text.push(other),
                }
            }
            rest = &quoted[closed.min(quoted.len())..];
            text
        } else {
            let end = rest.find(|character: char| character == ',' || character.is_whitespace()).unwrap_or(rest.len());
            let text = rest[..end].to_owned();
            rest = &rest[end..];
            text
        };
        if let Some((_, parameters)) = challenges.last_mut() {
            parameters.push((word.to_owned(), parameter_value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(WWW_AUTHENTICATE, http::HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn reads_several_challenges_and_quoted_strings() {
        let parsed = parse_challenges(
            r#"Basic realm="a, b", Digest realm="x\"y", qop="auth, auth-int", nonce=abc , algorithm=SHA-256, Negotiate t0k=="#,
        );
        let schemes: Vec<&str> = parsed.iter().map(|(scheme, _)| scheme.as_str()).collect();
        assert_eq!(schemes, ["Basic", "Digest", "Negotiate"]);
        assert_eq!(parsed[0].1, [("realm".to_owned(), "a, b".to_owned())]);
        let digest = &parsed[1].1;
        assert_eq!(digest[0], ("realm".to_owned(), "x\"y".to_owned()));
        assert_eq!(digest[1], ("qop".to_owned(), "auth, auth-int".to_owned()));
        assert_eq!(digest[2], ("nonce".to_owned(), "abc".to_owned()));
        assert_eq!(digest[3], ("algorithm".to_owned(), "SHA-256".to_owned()));
    }

    #[test]
    fn the_strongest_answerable_challenge_wins() {
        let map = headers(&[
            r#"Digest realm="r", nonce="1", algorithm=MD5, qop="auth""#,
            r#"Digest realm="r", nonce="2", algorithm=SHA-256, qop="auth""#,
            r#"Digest realm="r", nonce="3", algorithm=UNKNOWN-HASH, qop="auth""#,
            r#"Digest realm="r", nonce="4", algorithm=SHA-256, qop="other""#,
        ]);
        assert_eq!(Challenge::best(&map).unwrap().nonce, "2");
        assert!(Challenge::best(&headers(&["Basic realm=\"r\""])).is_none());
        assert!(Challenge::best(&headers(&["Digest realm=\"r\""])).is_none(), "no nonce");
    }

    /// RFC 7616 §3.9.1: the example with MD5 and SHA-256 (user Mufasa, password
    /// "Circle of Life", cnonce given).
    #[test]
    fn answers_the_examples_of_rfc_7616() {
        let credentials = DigestCredentials::new("Mufasa", "Circle of Life");
        let challenge = |algorithm: &str| {
            let value = format!(
                r#"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm={algorithm}, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
            );
            Challenge::best(&headers(&[&value])).unwrap()
        };
        let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ";
        let md5 = challenge("MD5").answer_with(&credentials, "GET", "/dir/index.html", b"", cnonce);
        assert!(md5.contains(r#"response="8ca523f5e9506fed4657c9700eebdbec""#), "{md5}");
        let sha = challenge("SHA-256").answer_with(&credentials, "GET", "/dir/index.html", b"", cnonce);
        assert!(
            sha.contains(r#"response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1""#),
            "{sha}"
        );
        assert!(sha.starts_with(r#"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=SHA-256, nonce="#), "{sha}");
        assert!(sha.contains("nc=00000001") && sha.contains("qop=auth,") && sha.contains("opaque=\"FQhe"), "{sha}");
    }

    /// RFC 2617 §3.5: a server that predates `qop` (RFC 2069 answer) and one with it.
    #[test]
    fn answers_the_example_of_rfc_2617() {
        let credentials = DigestCredentials::new("Mufasa", "Circle Of Life");
        let value = r#"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#;
        let challenge = Challenge::best(&headers(&[value])).unwrap();
        let answer = challenge.answer_with(&credentials, "GET", "/dir/index.html", b"", "0a4f113b");
        assert!(answer.contains(r#"response="6629fae49393a05397450978507c4ef1""#), "{answer}");
        assert!(!answer.contains("algorithm="), "the challenge named none: {answer}");
    }

    #[test]
    fn user_names_outside_ascii_and_userhash() {
        let credentials = DigestCredentials::new("Jäsøn Doe", "Secret, or not?");
        let value = r#"Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", charset=UTF-8, userhash=true"#;
        let challenge = Challenge::best(&headers(&[value])).unwrap();
        let answer = challenge.answer_with(
            &credentials,
            "GET",
            "/doe.json",
            b"",
            "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v",
        );
        // RFC 7616 §3.9.2 (its `userhash` value).
        assert!(
            answer.contains(r#"username="793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b""#),
            "{answer}"
        );
        assert!(answer.ends_with("userhash=true"), "{answer}");
        let plain = Challenge { userhash: false, ..challenge };
        let answer = plain.answer_with(&credentials, "GET", "/doe.json", b"", "c");
        assert!(answer.starts_with("Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, "), "{answer}");
        assert_eq!(format!("{credentials:?}"), r#"DigestCredentials { user: "Jäsøn Doe", password: "[REDACTED]" }"#);
    }
}
