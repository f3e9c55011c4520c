//! The one redaction policy of every front end: which values are secret (those of
//! `$secret`, of variables, `.env` keys and environment variables whose names say they
//! are secret, of credential headers) and how text that is shown, stored or logged is
//! cleaned of them.
//!
//! The engine gathers the [`Secrets`] of a request while it builds it and hands a
//! [`Redactor`] out with the result (`PreparedRequest::redactor` of `stages`,
//! [`Response::redactor`](crate::Response::redactor)); errors and assertion results
//! leave the engine already redacted. Front ends map what they show of the exchange
//! itself (URLs, headers, bodies, stream items) through that redactor.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::{Map, Value};

pub use written::{mask_written_secrets, redact_url_password};

use crate::assert::{AssertionResult, Outcome};

mod names;
mod secrets;
mod written;
#[doc(hidden)]
pub use names::is_client_certificate_header;
pub use names::{is_sensitive_field, is_sensitive_header, is_sensitive_variable};
pub use secrets::Secrets;

/// What stands in for a secret.
pub const REDACTED: &str = "[REDACTED]";

/// Cleans text of the secrets it was built with, in one pass over the text whatever
/// their number (Aho-Corasick, the longest secret winning where several overlap), and
/// hides the values of sensitive headers and variables by their names. Cheap to clone.
///
/// A secret is also found as it appears in a URL's path or query (percent-encoded), in
/// a form body (`+` for spaces), in a JSON string and in a quoted Rust string.
#[derive(Clone, Default)]
pub struct Redactor {
    mode: Mode,
}

#[derive(Clone, Default)]
enum Mode {
    /// Sensitive names only: no secret values.
    #[default]
    Names,
    /// Sensitive names and these values.
    Values(Arc<AhoCorasick>),
    /// Nothing is hidden (`volley run --show-secrets`).
    Nothing,
    /// Every text is hidden whole: the secrets were too many to search for.
    Everything,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match &self.mode {
            Mode::Names => "names".to_owned(),
            Mode::Values(matcher) => format!("names and {} values", matcher.patterns_len()),
            Mode::Nothing => "nothing".to_owned(),
            Mode::Everything => "everything".to_owned(),
        };
        f.debug_tuple("Redactor").field(&mode).finish()
    }
}

/// How many secret sets each thread keeps the redactor of.
const KEPT_REDACTORS: usize = 4;

thread_local! {
    /// The redactors last made on this thread, by the secrets' values, the newest last:
    /// the requests of a run or a load mostly send the same token, and a redactor's
    /// matcher cost five times the rest of such a request to build. A redactor is a
    /// function of the values alone, so a kept one is the one [`Redactor::new`] makes.
    static KEPT: std::cell::RefCell<Vec<(Vec<String>, Redactor)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Redactor {
    /// The redactor of `secrets`.
    #[must_use]
    pub fn new(secrets: &Secrets) -> Self {
        if secrets.values.is_empty() {
            return Self::default();
        }
        KEPT.with_borrow_mut(|kept| {
            if let Some((_, redactor)) = kept.iter().find(|(values, _)| *values == secrets.values) {
                return redactor.clone();
            }
            let redactor = Self::made(secrets);
            if kept.len() == KEPT_REDACTORS {
                kept.remove(0);
            }
            kept.push((secrets.values.clone(), redactor.clone()));
            redactor
        })
    }

    fn made(secrets: &Secrets) -> Self {
        let mut seen = std::collections::HashSet::new();
        let mut patterns: Vec<String> = Vec::with_capacity(secrets.values.len() * 2);
        for value in &secrets.values {
            for form in forms(value) {
                if seen.insert(form.clone()) {
                    patterns.push(form);
                }
            }
        }
        if patterns.is_empty() {
            return Self::default();
        }
        let matcher = AhoCorasick::builder().match_kind(MatchKind::LeftmostLongest).build(&patterns);
        match matcher {
            Ok(matcher) => Self { mode: Mode::Values(Arc::new(matcher)) },
            Err(_) => Self { mode: Mode::Everything },
        }
    }

    /// A redactor that hides nothing, not even credential headers: for a person who
    /// asked to see the secrets on their own terminal (`volley run --show-secrets`).
    #[must_use]
    pub fn reveal_all() -> Self {
        Self { mode: Mode::Nothing }
    }

    /// `true` when this redactor hides nothing at all ([`reveal_all`](Self::reveal_all)).
    #[must_use]
    pub fn reveals_all(&self) -> bool {
        matches!(self.mode, Mode::Nothing)
    }

    /// `text` with every secret replaced by [`REDACTED`]; borrowed when there is none.
    #[must_use]
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let matcher = match &self.mode {
            Mode::Names | Mode::Nothing => return Cow::Borrowed(text),
            Mode::Everything if text.is_empty() => return Cow::Borrowed(text),
            Mode::Everything => return Cow::Borrowed(REDACTED),
            Mode::Values(matcher) => matcher,
        };
        let mut shown = String::new();
        let mut copied = 0;
        for found in matcher.find_iter(text) {
            shown.push_str(&text[copied..found.start()]);
            shown.push_str(REDACTED);
            copied = found.end();
        }
        if copied == 0 && shown.is_empty() {
            return Cow::Borrowed(text);
        }
        shown.push_str(&text[copied..]);
        Cow::Owned(shown)
    }

    /// [`redact`](Self::redact) on an owned text: the text itself when there is no
    /// secret in it.
    #[must_use]
    pub fn redact_owned(&self, text: String) -> String {
        match self.redact(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(shown) => shown,
        }
    }

    /// A JSON value with the secrets of its text hidden: still the same JSON when none
    /// is in it, else the redacted text read again (a string of it when the redaction
    /// left no JSON).
    #[must_use]
    pub fn redact_json(&self, value: &serde_json::Value) -> serde_json::Value {
        match self.redact(&value.to_string()) {
            Cow::Borrowed(_) => value.clone(),
            Cow::Owned(shown) => serde_json::from_str(&shown).unwrap_or(serde_json::Value::String(shown)),
        }
    }

    /// The value of the header `name` as it may be shown: [`REDACTED`] for a credential
    /// header, else the value with its secrets hidden.
    #[must_use]
    pub fn header<'a>(&self, name: &str, value: &'a str) -> Cow<'a, str> {
        if !self.reveals_all() && name.trim().eq_ignore_ascii_case("set-cookie") {
            // The cookie's value; its name and attributes are worth seeing.
            let (pair, attributes) = value.split_once(';').map_or((value, None), |(pair, rest)| (pair, Some(rest)));
            let name = pair.split_once('=').map_or(pair, |(name, _)| name).trim();
            let attributes = attributes.map(|rest| format!(";{}", self.redact(rest))).unwrap_or_default();
            return Cow::Owned(format!("{name}={REDACTED}{attributes}"));
        }
        if !self.reveals_all() && is_sensitive_header(name) {
            return Cow::Borrowed(REDACTED);
        }
        self.redact(value)
    }

    /// `headers` as they may be shown: lower-case names in order, one entry per value
    /// (text read as UTF-8, invalid bytes replaced), through [`header`](Self::header).
    #[must_use]
    pub fn headers(&self, headers: &http::HeaderMap) -> Vec<(String, String)> {
        headers
            .iter()
            .map(|(name, value)| {
                let text = String::from_utf8_lossy(value.as_bytes());
                (name.as_str().to_owned(), self.header(name.as_str(), &text).into_owned())
            })
            .collect()
    }

    /// `variables` as they may be shown: the value of a sensitive name is [`REDACTED`]
    /// (at any depth), the secrets in other strings are hidden.
    #[must_use]
    pub fn variables(&self, variables: &Map<String, Value>) -> Map<String, Value> {
        variables.iter().map(|(name, value)| (name.clone(), self.variable(name, value))).collect()
    }

    fn variable(&self, name: &str, value: &Value) -> Value {
        if self.reveals_all() {
            return value.clone();
        }
        if is_sensitive_variable(name) && !value.is_null() {
            return Value::String(REDACTED.to_owned());
        }
        match value {
            Value::String(text) => Value::String(self.redact(text).into_owned()),
            Value::Array(items) => Value::Array(items.iter().map(|item| self.variable("", item)).collect()),
            Value::Object(map) => Value::Object(self.variables(map)),
            other => other.clone(),
        }
    }

    /// An assertion's result as it may be shown: expression, expected and actual
    /// values, message and hint with their secrets hidden.
    #[must_use]
    pub fn assertion(&self, result: &AssertionResult) -> AssertionResult {
        let text = |text: &str| self.redact(text).into_owned();
        let outcome = match &result.outcome {
            Outcome::Passed => Outcome::Passed,
            Outcome::Failed { expected, actual } => Outcome::Failed { expected: text(expected), actual: text(actual) },
            Outcome::ScriptFailed { message } => Outcome::ScriptFailed { message: text(message) },
            Outcome::HandlerFailed { message, stack } => {
                Outcome::HandlerFailed { message: text(message), stack: text(stack) }
            }
            Outcome::Invalid { message, hint } => {
                Outcome::Invalid { message: text(message), hint: hint.as_deref().map(text) }
            }
        };
        AssertionResult { expression: text(&result.expression), span: result.span, outcome }
    }
}

/// The ways `value` appears in text: as it is, percent-encoded in a URL's path and
/// query, form-encoded, escaped in a JSON string and in a quoted (`{:?}`) string.
fn forms(value: &str) -> Vec<String> {
    let mut forms = vec![value.to_owned()];
    let mut add = |form: String| {
        if !form.is_empty() && !forms.contains(&form) {
            forms.push(form);
        }
    };
    if let Ok(url) = url::Url::parse(&format!("http://h/{value}")) {
        add(url.path()[1..].to_owned());
    }
    if let Ok(url) = url::Url::parse(&format!("http://h/?{value}"))
        && let Some(query) = url.query()
    {
        add(query.to_owned());
    }
    add(url::form_urlencoded::byte_serialize(value.as_bytes()).collect());
    if let Ok(json) = serde_json::to_string(value) {
        add(json[1..json.len() - 1].to_owned());
    }
    let quoted = format!("{value:?}");
    add(quoted[1..quoted.len() - 1].to_owned());
    forms
}

impl crate::assert::Redact for Redactor {
    fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        Redactor::redact(self, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor(values: &[&str]) -> Redactor {
        let mut secrets = Secrets::new();
        for value in values {
            secrets.add_value(*value);
        }
        secrets.redactor()
    }

    /// The same secrets get the matcher made for them before; others get their own, and
    /// each hides what it was made for, past the number kept.
    #[test]
    fn a_redactor_is_made_once_for_the_same_secrets() {
        let matcher = |redactor: &Redactor| match &redactor.mode {
            Mode::Values(matcher) => Arc::clone(matcher),
            other => panic!("no matcher: {:?}", matches!(other, Mode::Names)),
        };
        let first = redactor(&["s3cr3t-0", "t0k3n"]);
        assert!(Arc::ptr_eq(&matcher(&first), &matcher(&redactor(&["s3cr3t-0", "t0k3n"]))));
        assert!(!Arc::ptr_eq(&matcher(&first), &matcher(&redactor(&["t0k3n", "s3cr3t-0"]))));
        for round in 0..2 {
            for index in 0..KEPT_REDACTORS + 2 {
                let value = format!("s3cr3t-{index}");
                let text = format!("{value} t0k3n s3cr3t-x {round}");
                let shown = redactor(&[value.as_str(), "t0k3n"]).redact(&text).into_owned();
                assert_eq!(shown, format!("[REDACTED] [REDACTED] s3cr3t-x {round}"));
            }
        }
        KEPT.with_borrow(|kept| assert_eq!(kept.len(), KEPT_REDACTORS));
        assert!(matches!(Secrets::new().redactor().mode, Mode::Names));
    }

    /// What a response gives: the cookies it sets and its JSON credential fields, at
    /// any depth; an `author` or a `keyboard` is no credential; a body without any of
    /// the words is not parsed.
    #[test]
    fn a_response_gives_its_cookies_and_credential_fields() {
        let mut headers = http::HeaderMap::new();
        headers.append(http::header::SET_COOKIE, "session=s3ss10n; Path=/; HttpOnly".parse().unwrap());
        let body = br#"{"data": {"access_token": "t0k3n-1", "refreshToken": "r3fr3sh", "author": "Ada L", "keyboard": "qwerty"},
                        "items": [{"client_secret": "cl13nt"}], "token_type": "Bearer"}"#;
        let mut secrets = Secrets::new();
        assert!(secrets.add_response(&headers, body));
        let shown = secrets.redactor().redact("s3ss10n t0k3n-1 r3fr3sh cl13nt Ada L qwerty Bearer");
        assert_eq!(shown, "[REDACTED] [REDACTED] [REDACTED] [REDACTED] Ada L qwerty Bearer");
        assert!(!Secrets::new().add_response(&http::HeaderMap::new(), br#"{"name": "ada", "id": 7}"#));
        let redactor = Redactor::default();
        assert_eq!(redactor.header("Set-Cookie", "id=abc; Path=/; Secure"), "id=[REDACTED]; Path=/; Secure");
        assert!(is_sensitive_field("id_token") && is_sensitive_field("apiKey") && !is_sensitive_field("keys"));
        // A place in a listing is not a credential; a token that merely contains `page` is.
        for place in ["nextPageToken", "page_token", "NextToken", "continuationToken", "sync-token", "cursorToken"] {
            assert!(!is_sensitive_field(place), "{place}");
        }
        assert!(is_sensitive_field("pageAccessToken") && is_sensitive_field("token"));
    }

    #[test]
    fn hides_every_secret_the_longest_first_and_borrows_when_none() {
        let redactor = redactor(&["abc", "abcdef", "xyz"]);
        assert_eq!(redactor.redact("x abcdef y abc xyzxyz"), "x [REDACTED] y [REDACTED] [REDACTED][REDACTED]");
        assert!(matches!(redactor.redact("nothing here"), Cow::Borrowed(_)));
        assert!(matches!(Redactor::default().redact("abc"), Cow::Borrowed("abc")));
        assert_eq!(Redactor::reveal_all().redact("abc"), "abc");
    }

    #[test]
    fn finds_secrets_as_urls_forms_and_json_write_them() {
        let redactor = redactor(&["k3y/with spaces\"&"]);
        for text in [
            "http://h/k3y/with%20spaces%22&",
            "http://h/?q=k3y/with%20spaces%22&",
            "a=k3y%2Fwith+spaces%22%26",
            r#"{"s": "k3y/with spaces\"&"}"#,
        ] {
            assert!(!redactor.redact(text).contains("spaces"), "{text}: {}", redactor.redact(text));
        }
    }

    #[test]
    fn sensitive_names_of_variables_and_headers() {
        for name in ["apiKey", "AUTH_header", "userPassword", "sessionToken", "dbCredentials", "client_secret"] {
            assert!(is_sensitive_variable(name), "{name}");
        }
        assert!(!is_sensitive_variable("host"));
        for name in ["oauth2_tokenEndpoint", "authUrl", "AUTH_REDIRECT_URI", "oauth2_issuer"] {
            assert!(!is_sensitive_variable(name), "an address: {name}");
        }
        for name in ["Authorization", "cookie", "X-Api-Key", "api-key", "proxy-authorization", "x-auth-token"] {
            assert!(is_sensitive_header(name), "{name}");
        }
        assert!(!is_sensitive_header("x-trace"));
    }

    #[test]
    fn variables_give_their_values_by_name_at_any_depth_when_long_enough() {
        let variables: Map<String, Value> = serde_json::from_str(
            r#"{"apiToken": "tok-123456", "host": "example.com", "pin_key": "12", "port": 8080,
                "api": {"token": "nested-secret", "url": "u"}, "auth": {"user": "ada", "pass": ["lovelace"]},
                "secretNumber": 123456}"#,
        )
        .unwrap();
        let redactor = Secrets::new().add_variables(&variables).redactor();
        assert_eq!(
            redactor.redact("tok-123456 example.com 12 8080 nested-secret u ada lovelace 123456"),
            "[REDACTED] example.com 12 8080 [REDACTED] u ada [REDACTED] [REDACTED]"
        );
        let shown = redactor.variables(&variables);
        assert_eq!(shown["apiToken"], REDACTED);
        assert_eq!(shown["host"], "example.com");
        assert_eq!(shown["api"]["token"], REDACTED);
        assert_eq!(shown["api"]["url"], "u");
        assert_eq!(shown["auth"], REDACTED);
    }

    #[test]
    fn credential_headers_give_their_values_and_are_hidden_by_name() {
        let mut headers = http::HeaderMap::new();
        headers.insert("authorization", http::HeaderValue::from_static("Bearer abc-token"));
        headers.insert("cookie", http::HeaderValue::from_static("session=s3ss10n; theme=li"));
        headers.insert("x-trace", http::HeaderValue::from_static("id-abc-token"));
        let redactor = Secrets::new().add_headers(&headers).redactor();
        assert_eq!(
            redactor.headers(&headers),
            [
                ("authorization".to_owned(), REDACTED.to_owned()),
                ("cookie".to_owned(), REDACTED.to_owned()),
                ("x-trace".to_owned(), "id-[REDACTED]".to_owned()),
            ]
        );
        assert_eq!(redactor.redact("s3ss10n li"), "[REDACTED] li");
        assert_eq!(Redactor::reveal_all().header("authorization", "Bearer abc"), "Bearer abc");
    }

    #[test]
    fn assertion_results_are_hidden_in_every_text() {
        let redactor = redactor(&["hunter2"]);
        let span = volley_syntax::Span::default();
        let failed = AssertionResult {
            expression: "body contains hunter2".to_owned(),
            span,
            outcome: Outcome::Failed { expected: "\"hunter2\"".to_owned(), actual: "hunter2!".to_owned() },
        };
        let shown = redactor.assertion(&failed);
        assert_eq!(shown.expression, "body contains [REDACTED]");
        assert_eq!(
            shown.outcome,
            Outcome::Failed { expected: "\"[REDACTED]\"".to_owned(), actual: "[REDACTED]!".to_owned() }
        );
    }

    #[test]
    fn many_secrets_are_found_in_one_pass() {
        let values: Vec<String> = (0..2000).map(|index| format!("secret-value-{index:05}")).collect();
        let mut secrets = Secrets::new();
        for value in &values {
            secrets.add_value(value.as_str());
        }
        let redactor = secrets.redactor();
        let text = format!("{} and secret-value-01999", "plain text ".repeat(10_000));
        let shown = redactor.redact(&text);
        assert!(shown.ends_with("and [REDACTED]"));
    }
}
