//! What never leaves the server in clear: sensitive header values, variables whose
//! names say they are secret, and values produced by `$secret(...)`.

use serde_json::{Map, Value};

use crate::wire::Header;

/// Shown instead of a secret.
pub(crate) const REDACTED: &str = "[REDACTED]";

const SENSITIVE_HEADERS: [&str; 5] = ["authorization", "cookie", "proxy-authorization", "x-api-key", "x-auth-token"];
const SENSITIVE_NAME_PARTS: [&str; 6] = ["token", "secret", "password", "key", "auth", "credential"];

/// Whether a header's value is hidden.
pub(crate) fn is_sensitive_header(name: &str) -> bool {
    SENSITIVE_HEADERS.iter().any(|sensitive| name.eq_ignore_ascii_case(sensitive))
}

/// Whether a variable's value is hidden (its name mentions a token, a secret, …).
pub(crate) fn is_sensitive_variable(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SENSITIVE_NAME_PARTS.iter().any(|part| lower.contains(part))
}

/// Variables with sensitive values hidden.
pub(crate) fn variables(variables: &Map<String, Value>) -> Map<String, Value> {
    variables
        .iter()
        .map(|(name, value)| {
            let shown = if is_sensitive_variable(name) { Value::String(REDACTED.to_owned()) } else { value.clone() };
            (name.clone(), shown)
        })
        .collect()
}

/// Hides known secret values in text: `$secret` results and the values of
/// sensitive-named variables (session, execution, configuration and profile variables).
#[derive(Debug, Default)]
pub(crate) struct Scrubber {
    values: Vec<String>,
}

impl Scrubber {
    /// Values shorter than this are not hidden: replacing `1` or `on` everywhere would
    /// mangle the text and protect nothing.
    const SHORTEST: usize = 4;

    pub(crate) fn new(secrets: &[String], variables: &[&Map<String, Value>]) -> Self {
        let mut values: Vec<String> = secrets.to_vec();
        for layer in variables {
            for (_, value) in layer.iter().filter(|(name, _)| is_sensitive_variable(name)) {
                match value {
                    Value::String(text) => values.push(text.clone()),
                    Value::Number(number) => values.push(number.to_string()),
                    _ => {}
                }
            }
        }
        values.retain(|value| value.len() >= Self::SHORTEST);
        // Longest first, so a value containing another is hidden whole.
        values.sort_by_key(|value| std::cmp::Reverse(value.len()));
        values.dedup();
        Self { values }
    }

    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut shown = text.to_owned();
        for value in &self.values {
            if shown.contains(value.as_str()) {
                shown = shown.replace(value.as_str(), REDACTED);
            }
        }
        shown
    }
}

/// Headers as a list (lower-case names, one entry per value), sensitive values hidden
/// and `$secret` values replaced by `scrub`.
pub(crate) fn headers(headers: &http::HeaderMap, scrub: &dyn Fn(&str) -> String) -> Vec<Header> {
    headers
        .iter()
        .map(|(name, value)| {
            let value = if is_sensitive_header(name.as_str()) {
                REDACTED.to_owned()
            } else {
                scrub(&String::from_utf8_lossy(value.as_bytes()))
            };
            Header { name: name.as_str().to_owned(), value }
        })
        .collect()
}

/// Headers as a list, unredacted (the caller's own response).
pub(crate) fn plain_headers(headers: &http::HeaderMap) -> Vec<Header> {
    headers
        .iter()
        .map(|(name, value)| Header {
            name: name.as_str().to_owned(),
            value: String::from_utf8_lossy(value.as_bytes()).into_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_secrets_and_sensitive_variable_values() {
        let mut variables = Map::new();
        variables.insert("apiToken".to_owned(), Value::String("tok-123456".to_owned()));
        variables.insert("host".to_owned(), Value::String("example.com".to_owned()));
        variables.insert("pin_key".to_owned(), Value::String("12".to_owned()));
        let scrubber = Scrubber::new(&["s3cr3t-value".to_owned()], &[&variables]);
        assert_eq!(
            scrubber.scrub("https://example.com/?t=tok-123456&s=s3cr3t-value&n=12"),
            "https://example.com/?t=[REDACTED]&s=[REDACTED]&n=12"
        );
    }

    #[test]
    fn hides_sensitive_headers_and_variables() {
        let mut map = http::HeaderMap::new();
        map.insert("authorization", http::HeaderValue::from_static("Bearer abc"));
        map.insert("x-trace", http::HeaderValue::from_static("id-s3cr3t"));
        let shown = headers(&map, &|text| text.replace("s3cr3t", REDACTED));
        assert_eq!(shown[0].value, REDACTED);
        assert_eq!(shown[1].value, "id-[REDACTED]");
        let mut variables_in = Map::new();
        for name in ["apiKey", "AUTH_header", "userPassword", "host", "sessionToken", "dbCredentials"] {
            variables_in.insert(name.to_owned(), Value::String("v".to_owned()));
        }
        let out = variables(&variables_in);
        assert_eq!(out["host"], "v");
        for name in ["apiKey", "AUTH_header", "userPassword", "sessionToken", "dbCredentials"] {
            assert_eq!(out[name], REDACTED, "{name}");
        }
    }
}
