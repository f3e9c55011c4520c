//! The general form of an assertion, `<field> <predicate> [<expected>]`, shared by
//! `# @assert` and httpyac's `??` lines: the fields, the predicates and how an expected
//! value is checked before anything is sent.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

/// The largest compiled size of a `matches` pattern, in bytes.
pub(crate) const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// `<field> <predicate> [<expected>]`: a check of one part of the response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What part of the response is checked.
    pub field: Field,
    /// The check.
    pub predicate: Predicate,
    /// The value to check against (unquoted in `# @assert`, as written in `??` lines);
    /// `None` for predicates that take none (`exists`, `isNumber`, …).
    pub expected: Option<String>,
}

/// The part of a response a [`Check`] looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// The status code, a number.
    Status,
    /// The status of a gRPC call: its number, or its name (`OK`, `NOT_FOUND`).
    GrpcStatus,
    /// The values of a header (names are case-insensitive), strings.
    Header(String),
    /// The body as text (hashes are of its bytes).
    Body,
    /// httpyac's `body <property>`: a property of the JSON body, written as JavaScript
    /// (`items[0].id`).
    BodyProperty {
        /// The property as written.
        accessor: String,
        /// The same property as a JSONPath (`$.items[0].id`).
        path: String,
    },
    /// `jsonpath <$path>`: what a JSONPath selects in the JSON body.
    JsonPath(String),
    /// How long the exchange took, in milliseconds.
    Duration(TimingPart),
    /// httpyac's `js <expression>`: what a JavaScript expression makes of the response
    /// (`response.parsedBody.items.length`), evaluated in the scripts' sandbox.
    JavaScript(String),
}

impl Field {
    /// `true` when the field is read from the body (so it does not apply to a body
    /// that streams).
    #[must_use]
    pub fn reads_body(&self) -> bool {
        matches!(self, Field::Body | Field::BodyProperty { .. } | Field::JsonPath(_) | Field::JavaScript(_))
    }

    /// How a message names the field: `status`, `` `Content-Type` ``, `` `$.id` ``.
    pub(crate) fn label(&self) -> String {
        match self {
            Field::Status => "status".to_owned(),
            Field::GrpcStatus => "grpc-status".to_owned(),
            Field::Header(name) => format!("`{name}`"),
            Field::Body => "body".to_owned(),
            Field::BodyProperty { accessor, .. } => format!("body `{accessor}`"),
            Field::JsonPath(path) => format!("`{path}`"),
            Field::JavaScript(code) => format!("`{code}`"),
            Field::Duration(TimingPart::Total) => "duration".to_owned(),
            Field::Duration(part) => format!("duration {}", part.as_str()),
        }
    }
}

/// Which duration a `duration` check reads (httpyac's timing names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingPart {
    /// `total` (the default): from sending to the end of the body.
    Total,
    /// `firstByte`: from sending to the head of the response.
    FirstByte,
    /// `download`: from the head to the end of the body.
    Download,
}

impl TimingPart {
    /// The part a word names; `Err` with the word for httpyac's timings Volley does not
    /// measure (`wait`, `request`, `tcp`, `tls`), `None` for anything else.
    pub(crate) fn from_word(word: &str) -> Option<Result<Self, ()>> {
        Some(match word {
            "total" => Ok(TimingPart::Total),
            "firstByte" => Ok(TimingPart::FirstByte),
            "download" => Ok(TimingPart::Download),
            "wait" | "request" | "tcp" | "tls" => Err(()),
            _ => return None,
        })
    }

    /// The name as written.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TimingPart::Total => "total",
            TimingPart::FirstByte => "firstByte",
            TimingPart::Download => "download",
        }
    }
}

/// What a [`Check`] tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predicate {
    /// `==`, `equals` (`===` in `??` lines).
    Equal,
    /// `!=` (`!==`, `not equals` in `??` lines).
    NotEqual,
    /// `>`.
    Greater,
    /// `>=`.
    GreaterOrEqual,
    /// `<`.
    Less,
    /// `<=`.
    LessOrEqual,
    /// `startsWith`.
    StartsWith,
    /// `endsWith`.
    EndsWith,
    /// `contains`, `includes`.
    Contains,
    /// `not-contains`.
    NotContains,
    /// `matches`: a regular expression finds a match.
    Matches,
    /// `exists` in `# @assert`: the field is there.
    Exists,
    /// `isTrue`, and `exists` in `??` lines (httpyac's meaning): the value is truthy.
    IsTrue,
    /// `isFalse`: the value is falsy or missing.
    IsFalse,
    /// `isNumber`.
    IsNumber,
    /// `isBoolean`.
    IsBoolean,
    /// `isString`.
    IsString,
    /// `isArray`.
    IsArray,
    /// `sha256`: the SHA-256 digest of the field, base64 or hex.
    Sha256,
    /// `sha512`.
    Sha512,
    /// `md5`.
    Md5,
}

/// Every operator word, for messages.
pub(crate) const OPERATORS: &str = "== != > >= < <= startsWith endsWith contains includes not-contains matches \
                                    exists isTrue isFalse isNumber isBoolean isString isArray sha256 sha512 md5";

impl Predicate {
    /// The predicate a word names in `# @assert` (httpyac's aliases included, but
    /// `exists` meaning presence).
    pub(crate) fn from_word(word: &str) -> Option<Self> {
        Some(match word {
            "==" | "===" | "equals" => Predicate::Equal,
            "!=" | "!==" => Predicate::NotEqual,
            ">" => Predicate::Greater,
            ">=" => Predicate::GreaterOrEqual,
            "<" => Predicate::Less,
            "<=" => Predicate::LessOrEqual,
            "startsWith" => Predicate::StartsWith,
            "endsWith" => Predicate::EndsWith,
            "contains" | "includes" => Predicate::Contains,
            "not-contains" => Predicate::NotContains,
            "matches" => Predicate::Matches,
            "exists" => Predicate::Exists,
            "isTrue" => Predicate::IsTrue,
            "isFalse" => Predicate::IsFalse,
            "isNumber" => Predicate::IsNumber,
            "isBoolean" => Predicate::IsBoolean,
            "isString" => Predicate::IsString,
            "isArray" => Predicate::IsArray,
            "sha256" => Predicate::Sha256,
            "sha512" => Predicate::Sha512,
            "md5" => Predicate::Md5,
            _ => return None,
        })
    }

    /// The operator word a misspelt one (wrong case) stands for.
    pub(crate) fn suggestion(word: &str) -> Option<&'static str> {
        OPERATORS.split(' ').chain(["equals"]).find(|known| known.eq_ignore_ascii_case(word))
    }

    /// The operator as shown in messages.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Predicate::Equal => "==",
            Predicate::NotEqual => "!=",
            Predicate::Greater => ">",
            Predicate::GreaterOrEqual => ">=",
            Predicate::Less => "<",
            Predicate::LessOrEqual => "<=",
            Predicate::StartsWith => "startsWith",
            Predicate::EndsWith => "endsWith",
            Predicate::Contains => "contains",
            Predicate::NotContains => "not-contains",
            Predicate::Matches => "matches",
            Predicate::Exists => "exists",
            Predicate::IsTrue => "isTrue",
            Predicate::IsFalse => "isFalse",
            Predicate::IsNumber => "isNumber",
            Predicate::IsBoolean => "isBoolean",
            Predicate::IsString => "isString",
            Predicate::IsArray => "isArray",
            Predicate::Sha256 => "sha256",
            Predicate::Sha512 => "sha512",
            Predicate::Md5 => "md5",
        }
    }

    /// `true` when the predicate is written with an expected value.
    #[must_use]
    pub fn takes_value(self) -> bool {
        !matches!(
            self,
            Predicate::Exists
                | Predicate::IsTrue
                | Predicate::IsFalse
                | Predicate::IsNumber
                | Predicate::IsBoolean
                | Predicate::IsString
                | Predicate::IsArray
        )
    }

    /// `true` for `>`, `>=`, `<`, `<=`.
    pub(crate) fn is_ordering(self) -> bool {
        matches!(self, Predicate::Greater | Predicate::GreaterOrEqual | Predicate::Less | Predicate::LessOrEqual)
    }

    /// `true` for the checks that must hold for every value of a repeated header
    /// (the others hold when one value passes).
    pub(crate) fn is_negative(self) -> bool {
        matches!(self, Predicate::NotEqual | Predicate::NotContains | Predicate::IsFalse)
    }

    /// The digest this predicate compares, for the hashes.
    pub(crate) fn digest(self) -> Option<Digest> {
        match self {
            Predicate::Sha256 => Some(Digest::Sha256),
            Predicate::Sha512 => Some(Digest::Sha512),
            Predicate::Md5 => Some(Digest::Md5),
            _ => None,
        }
    }

    /// Why `expected` cannot be what this predicate compares with; `None` when it can.
    pub(crate) fn refuse(self, field: &Field, expected: &str) -> Option<(String, &'static str)> {
        if expected.contains("{{") {
            // Substituted at run time; checked then.
            return None;
        }
        if matches!(field, Field::Status)
            && (self.is_ordering() || matches!(self, Predicate::Equal | Predicate::NotEqual))
        {
            return expected
                .parse::<i64>()
                .is_err()
                .then(|| (format!("`{expected}` is not a status code"), "write `status == 200`"));
        }
        if self.is_ordering() && number(expected).is_none() {
            return Some((format!("`{expected}` is not a number"), "`>`, `>=`, `<` and `<=` compare numbers"));
        }
        if self == Predicate::Matches
            && let Err(error) = regex(expected)
        {
            return Some((error, "write a regular expression (Rust's regex syntax), such as `^2\\d\\d$`"));
        }
        if let Some(digest) = self.digest()
            && digest.decode(expected).is_none()
        {
            let name = digest.name();
            return Some((
                format!("`{expected}` is not a {name} digest"),
                "write the digest in base64 (as httpyac does) or in hex",
            ));
        }
        None
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The hashes of `sha256`, `sha512` and `md5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Digest {
    Sha256,
    Sha512,
    Md5,
}

impl Digest {
    fn name(self) -> &'static str {
        match self {
            Digest::Sha256 => "SHA-256",
            Digest::Sha512 => "SHA-512",
            Digest::Md5 => "MD5",
        }
    }

    fn length(self) -> usize {
        match self {
            Digest::Sha256 => 32,
            Digest::Sha512 => 64,
            Digest::Md5 => 16,
        }
    }

    /// The digest of `bytes`.
    pub(crate) fn of(self, bytes: &[u8]) -> Vec<u8> {
        match self {
            Digest::Sha256 => ring::digest::digest(&ring::digest::SHA256, bytes).as_ref().to_vec(),
            Digest::Sha512 => ring::digest::digest(&ring::digest::SHA512, bytes).as_ref().to_vec(),
            Digest::Md5 => {
                use md5::Digest as _;
                md5::Md5::digest(bytes).to_vec()
            }
        }
    }

    /// The digest written in `text`: hex (either case) or base64 (padding optional).
    pub(crate) fn decode(self, text: &str) -> Option<Vec<u8>> {
        let text = text.trim();
        let decoded = if text.len() == self.length() * 2 && text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            (0..text.len())
                .step_by(2)
                .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
                .collect::<Option<Vec<u8>>>()?
        } else {
            let padded = format!("{text}{}", "=".repeat((4 - text.len() % 4) % 4));
            BASE64.decode(padded).ok()?
        };
        (decoded.len() == self.length()).then_some(decoded)
    }

    /// `digest` written as `like` is (hex when `like` is hex, else base64).
    pub(crate) fn encode_like(self, digest: &[u8], like: &str) -> String {
        let like = like.trim();
        if like.len() == self.length() * 2 && like.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            digest.iter().fold(String::with_capacity(digest.len() * 2), |mut hex, byte| {
                hex.push(char::from(HEX[usize::from(byte >> 4)]));
                hex.push(char::from(HEX[usize::from(byte & 0xf)]));
                hex
            })
        } else {
            BASE64.encode(digest)
        }
    }
}

/// `text` as a number, when it is one (surrounding spaces allowed).
pub(crate) fn number(text: &str) -> Option<f64> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit() || b"+-.eE".contains(&byte)) {
        return None;
    }
    text.parse::<f64>().ok().filter(|number| number.is_finite())
}

/// The compiled `matches` pattern, bounded in size.
pub(crate) fn regex(pattern: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(pattern).size_limit(REGEX_SIZE_LIMIT).dfa_size_limit(REGEX_SIZE_LIMIT).build().map_err(
        |error| match error {
            regex::Error::CompiledTooBig(_) => "the regular expression is too large".to_owned(),
            regex::Error::Syntax(message) => {
                let last = message.lines().rev().find(|line| line.starts_with("error:")).unwrap_or("");
                format!("invalid regular expression: {}", last.trim_start_matches("error:").trim())
            }
            other => format!("invalid regular expression: {other}"),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_read_in_base64_and_hex() {
        let digest = Digest::Md5.of(b"hello");
        assert_eq!(Digest::Md5.encode_like(&digest, "x"), "XUFAKrxLKna5cZ2REBfFkg==");
        assert_eq!(Digest::Md5.decode("XUFAKrxLKna5cZ2REBfFkg=="), Some(digest.clone()));
        assert_eq!(Digest::Md5.decode("XUFAKrxLKna5cZ2REBfFkg"), Some(digest.clone()), "padding is optional");
        assert_eq!(Digest::Md5.decode("5D41402ABC4B2A76B9719D911017C592"), Some(digest));
        assert_eq!(Digest::Md5.decode("5d41402a"), None, "too short");
        assert_eq!(Digest::Sha256.decode("XUFAKrxLKna5cZ2REBfFkg=="), None, "an MD5 is not a SHA-256");
        assert_eq!(
            Digest::Sha256.encode_like(&Digest::Sha256.of(b""), &"0".repeat(64)),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn numbers_and_patterns() {
        assert_eq!(number(" 12.5 "), Some(12.5));
        assert_eq!(number("-3e2"), Some(-300.0));
        assert_eq!(number("inf"), None);
        assert_eq!(number("0x10"), None);
        assert_eq!(number(""), None);
        assert!(regex("^2\\d\\d$").is_ok());
        assert!(regex("(").unwrap_err().starts_with("invalid regular expression: "));
        assert_eq!(regex("\\w{1000}{1000}").unwrap_err(), "the regular expression is too large");
    }
}
