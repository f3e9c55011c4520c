//! Evaluation of a parsed assertion against a response.

use serde_json::Value;

use super::Outcome;
use super::parse::{Assertion, TextCheck, unquote};

/// How much of a body a failure message shows.
const EXCERPT: usize = 200;

/// Evaluates `assertion` against a response's status, headers and body.
#[must_use]
pub fn evaluate(assertion: &Assertion, status: u16, headers: &http::HeaderMap, body: &[u8]) -> Outcome {
    match assertion {
        Assertion::Status { op, expected } => {
            if op.holds(i64::from(status), *expected) {
                Outcome::Passed
            } else {
                failed(format!("status {} {expected}", op.as_str()), status.to_string())
            }
        }
        Assertion::HeaderExists { name } => {
            if headers.contains_key(name.as_str()) {
                Outcome::Passed
            } else {
                failed(format!("a `{name}` header"), "no such header".to_owned())
            }
        }
        Assertion::Header { name, op, expected } => {
            let values: Vec<String> = headers
                .get_all(name.as_str())
                .iter()
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
                .collect();
            let holds = match op {
                TextCheck::Equal => values.iter().any(|value| value == expected),
                TextCheck::NotEqual => !values.is_empty() && values.iter().all(|value| value != expected),
                TextCheck::Contains => values.iter().any(|value| value.contains(expected.as_str())),
            };
            if holds {
                Outcome::Passed
            } else {
                let actual = if values.is_empty() { "no such header".to_owned() } else { quote_all(&values) };
                failed(format!("`{name}` {} {}", op.as_str(), quote(expected)), actual)
            }
        }
        Assertion::Body { contains, expected } => {
            let text = String::from_utf8_lossy(body);
            if text.contains(expected.as_str()) == *contains {
                Outcome::Passed
            } else {
                let check = if *contains { "contains" } else { "not-contains" };
                failed(format!("body {check} {}", quote(expected)), excerpt(&text))
            }
        }
        Assertion::JsonPathExists { path } => match query(path, body) {
            Ok(matches) if !matches.is_empty() => Outcome::Passed,
            Ok(_) => failed(format!("`{path}` to match"), "nothing matches".to_owned()),
            Err(message) => invalid(message),
        },
        Assertion::JsonPath { path, equal, expected } => {
            let matches = match query(path, body) {
                Ok(matches) => matches,
                Err(message) => return invalid(message),
            };
            let expected_value = serde_json::from_str::<Value>(expected)
                .unwrap_or_else(|_| Value::String(unquote(expected).unwrap_or_else(|_| expected.clone())));
            let Some(actual) = matches.first() else {
                return failed(
                    format!("`{path}` {} {expected}", if *equal { "==" } else { "!=" }),
                    "nothing matches".to_owned(),
                );
            };
            if (*actual == expected_value) == *equal {
                Outcome::Passed
            } else {
                failed(format!("`{path}` {} {expected_value}", if *equal { "==" } else { "!=" }), actual.to_string())
            }
        }
    }
}

/// The values a JSONPath selects in a JSON body.
fn query(path: &str, body: &[u8]) -> Result<Vec<Value>, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err("the response body is empty, not JSON".to_owned());
    }
    let document: Value =
        serde_json::from_slice(body).map_err(|error| format!("the response body is not JSON ({error})"))?;
    let path = serde_json_path::JsonPath::parse(path).map_err(|error| format!("invalid JSONPath `{path}`: {error}"))?;
    Ok(path.query(&document).all().into_iter().cloned().collect())
}

fn failed(expected: String, actual: String) -> Outcome {
    Outcome::Failed { expected, actual }
}

fn invalid(message: String) -> Outcome {
    Outcome::Invalid { message, hint: None }
}

fn quote(text: &str) -> String {
    format!("{text:?}")
}

fn quote_all(values: &[String]) -> String {
    values.iter().map(|value| quote(value)).collect::<Vec<_>>().join(", ")
}

fn excerpt(text: &str) -> String {
    let mut shown: String = text.chars().take(EXCERPT).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    if shown.is_empty() { "an empty body".to_owned() } else { quote(&shown) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assert::parse;

    fn run(expression: &str) -> Outcome {
        let mut headers = http::HeaderMap::new();
        headers.append("content-type", http::HeaderValue::from_static("application/json; charset=utf-8"));
        headers.append("set-cookie", http::HeaderValue::from_static("a=1"));
        headers.append("set-cookie", http::HeaderValue::from_static("b=2"));
        let body = br#"{"id": 7, "name": "Ada", "tags": ["x"], "nested": {"ok": true}, "none": null}"#;
        evaluate(&parse(expression).unwrap(), 201, &headers, body)
    }

    #[test]
    fn passing_and_failing_checks() {
        for passing in [
            "status == 201",
            "status != 200",
            "status > 200",
            "status >= 201",
            "status < 300",
            "status <= 201",
            "header Content-Type exists",
            "header content-type contains json",
            "header Set-Cookie == b=2",
            "header Set-Cookie != c=3",
            "body contains \"Ada\"",
            "body not-contains error",
            "jsonpath $.id exists",
            "jsonpath $.id == 7",
            "jsonpath $.name == Ada",
            "jsonpath $.name == \"Ada\"",
            "jsonpath $.nested == {\"ok\": true}",
            "jsonpath $.none == null",
            "jsonpath $.id != 8",
            "jsonpath $.tags[0] == x",
            "jsonpath $.name == 'Ada'",
            "jsonpath $.id != \"7\"",
        ] {
            assert_eq!(run(passing), Outcome::Passed, "{passing}");
        }
        assert_eq!(
            run("status == 200"),
            Outcome::Failed { expected: "status == 200".to_owned(), actual: "201".to_owned() }
        );
        assert_eq!(
            run("header X-Missing exists"),
            Outcome::Failed { expected: "a `X-Missing` header".to_owned(), actual: "no such header".to_owned() }
        );
        let Outcome::Failed { actual, .. } = run("header Set-Cookie == c=3") else { panic!() };
        assert_eq!(actual, "\"a=1\", \"b=2\"");
        assert!(matches!(run("header X-Missing != y"), Outcome::Failed { .. }), "an absent header is not different");
        assert!(matches!(run("body contains nowhere"), Outcome::Failed { .. }));
        assert_eq!(
            run("jsonpath $.id == 8"),
            Outcome::Failed { expected: "`$.id` == 8".to_owned(), actual: "7".to_owned() }
        );
        assert_eq!(
            run("jsonpath $.missing exists"),
            Outcome::Failed { expected: "`$.missing` to match".to_owned(), actual: "nothing matches".to_owned() }
        );
        assert!(matches!(run("jsonpath $.missing != 1"), Outcome::Failed { .. }));
    }

    #[test]
    fn a_body_that_is_not_json_makes_jsonpath_invalid() {
        let outcome = evaluate(&parse("jsonpath $.a exists").unwrap(), 200, &http::HeaderMap::new(), b"plain");
        assert!(matches!(outcome, Outcome::Invalid { message, .. } if message.contains("not JSON")));
    }
}
