//! The secret values of a request: given as secret, found by the names of variables and
//! headers, or given by a response (its cookies, its JSON credential fields).

use std::fmt;

use aho_corasick::AhoCorasick;
use serde_json::{Map, Value};

use super::{Redactor, is_sensitive_field, is_sensitive_header, is_sensitive_variable};

/// The secret values of a request, gathered before a [`Redactor`] is built.
///
/// A value given as secret ([`add_value`](Secrets::add_value): `$secret`, the encoded
/// credentials made from it) is hidden whatever its length. A value found by its name
/// (variables, headers) is hidden when it has at least [`Secrets::SHORTEST_GUESSED`]
/// bytes: replacing `1` or `on` everywhere would mangle the text and protect nothing.
#[derive(Clone, Default)]
pub struct Secrets {
    pub(super) values: Vec<String>,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secrets").field("values", &self.values.len()).finish()
    }
}

impl Secrets {
    /// The fewest bytes a value found by its name must have to be hidden.
    pub const SHORTEST_GUESSED: usize = 4;

    /// No secrets yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A value known to be secret (an empty one is ignored).
    pub fn add_value(&mut self, value: impl Into<String>) -> &mut Self {
        let value = value.into();
        if !value.is_empty() {
            self.values.push(value);
        }
        self
    }

    /// A value found to be secret by a name: kept when it is long enough.
    fn add_guessed(&mut self, value: &str) {
        if value.trim().len() >= Self::SHORTEST_GUESSED {
            self.values.push(value.trim().to_owned());
        }
    }

    /// The value of the variable `name` when the name is sensitive: a string or a
    /// number, or every string and number inside an object or array.
    pub fn add_variable(&mut self, name: &str, value: &Value) -> &mut Self {
        self.add_leaves(value, is_sensitive_variable(name), is_sensitive_variable);
        self
    }

    /// The values of the sensitive-named variables of `variables`, at any depth
    /// (`{"api": {"token": "…"}}` hides the token).
    pub fn add_variables(&mut self, variables: &Map<String, Value>) -> &mut Self {
        for (name, value) in variables {
            self.add_variable(name, value);
        }
        self
    }

    /// The strings and numbers of `value` that are `sensitive`, or under a key that
    /// `sensitive_name` says is.
    fn add_leaves(&mut self, value: &Value, sensitive: bool, sensitive_name: fn(&str) -> bool) {
        match value {
            Value::String(text) if sensitive => self.add_guessed(text),
            Value::Number(number) if sensitive => self.add_guessed(&number.to_string()),
            Value::Array(items) => items.iter().for_each(|item| self.add_leaves(item, sensitive, sensitive_name)),
            Value::Object(map) => {
                for (name, item) in map {
                    self.add_leaves(item, sensitive || sensitive_name(name), sensitive_name);
                }
            }
            _ => {}
        }
    }

    /// The values of the credential headers of `headers`: the credential after the
    /// scheme word (`Bearer abc` hides `abc`, so text reads `Bearer [REDACTED]`), a
    /// value without one whole, the value of each pair of a `Cookie`.
    pub fn add_headers(&mut self, headers: &http::HeaderMap) -> &mut Self {
        for (name, value) in headers {
            if !is_sensitive_header(name.as_str()) {
                continue;
            }
            let text = String::from_utf8_lossy(value.as_bytes());
            if name == http::header::COOKIE {
                for pair in text.split(';') {
                    self.add_guessed(pair.split_once('=').map_or(pair, |(_, value)| value));
                }
            } else if name == http::header::SET_COOKIE {
                // `name=value; Path=/; HttpOnly`: the value only.
                let pair = text.split(';').next().unwrap_or_default();
                self.add_guessed(pair.split_once('=').map_or(pair, |(_, value)| value));
            } else if let Some((_, credential)) = text.trim().split_once(char::is_whitespace) {
                self.add_guessed(credential);
            } else {
                self.add_guessed(&text);
            }
        }
        self
    }

    /// The credentials a response gives: its `Set-Cookie` values, and the values of
    /// the JSON fields of its body whose names say they are credentials
    /// ([`is_sensitive_field`]: `access_token`, `password`, …, at any depth). `true`
    /// when it found any. A body is read only when one of those words is in it.
    pub fn add_response(&mut self, headers: &http::HeaderMap, body: &[u8]) -> bool {
        let before = self.values.len();
        for value in headers.get_all(http::header::SET_COOKIE) {
            let text = String::from_utf8_lossy(value.as_bytes());
            let pair = text.split(';').next().unwrap_or_default();
            self.add_guessed(pair.split_once('=').map_or(pair, |(_, value)| value));
        }
        if body.len() <= MAX_SCANNED_BODY
            && mentions_a_credential(body)
            && let Ok(json) = serde_json::from_slice::<Value>(body)
        {
            self.add_leaves(&json, false, is_sensitive_field);
        }
        self.values.len() > before
    }

    /// Every secret of `other` too.
    pub fn extend(&mut self, other: &Secrets) -> &mut Self {
        self.values.extend(other.values.iter().cloned());
        self
    }

    /// `true` when there is nothing to hide.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The redactor of these secrets (and of sensitive header names).
    #[must_use]
    pub fn redactor(&self) -> Redactor {
        Redactor::new(self)
    }
}

/// The largest response body searched for credentials (larger ones are shown as sent).
const MAX_SCANNED_BODY: usize = 4 * 1024 * 1024;

/// The words a credential field's name ends with, as [`mentions_a_credential`] looks for
/// them.
const CREDENTIAL_WORDS: [&str; 5] = ["token", "secret", "passw", "key", "credential"];

/// Whether `body` holds one of [`CREDENTIAL_WORDS`] (any case): most bodies do not, and
/// are not parsed. One pass over the body for the five words: this runs on every response
/// (a load reads thousands a second), and five passes comparing each window cost more
/// than the rest of the response's handling.
fn mentions_a_credential(body: &[u8]) -> bool {
    static WORDS: std::sync::LazyLock<Option<AhoCorasick>> =
        std::sync::LazyLock::new(|| AhoCorasick::builder().ascii_case_insensitive(true).build(CREDENTIAL_WORDS).ok());
    // Without the matcher (it cannot fail to build for five short words) every body is
    // parsed: slower, never a secret missed.
    WORDS.as_ref().is_none_or(|words| words.is_match(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words are found in any case, anywhere, and only they.
    #[test]
    fn a_body_mentions_a_credential_by_its_words_in_any_case() {
        for body in [&b"{\"ApiKEY\": 1}"[..], b"x-TOKEN", b"Passwd", b"client_Secret", b"CREDENTIALS", b"key"] {
            assert!(mentions_a_credential(body), "{}", String::from_utf8_lossy(body));
        }
        for body in [&b"{\"name\": \"ada\", \"id\": 7}"[..], b"", b"ke", b"tokn", b"pass word"] {
            assert!(!mentions_a_credential(body), "{}", String::from_utf8_lossy(body));
        }
    }
}
