//! Evaluation of a parsed assertion against a response.

use std::borrow::Cow;
use std::time::Duration;

use serde_json::Value;

use super::check::{Check, Field, Predicate, TimingPart};
use super::lex::unquote;
use super::parse::{Assertion, TextCheck};
use super::predicate::{Found, holds};
use super::{Outcome, Redact, Timing};

/// How much of a body a failure message shows.
const EXCERPT: usize = 200;

/// The parts of a response an assertion looks at.
#[derive(Debug, Clone, Copy)]
pub struct ResponseParts<'a> {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: &'a http::HeaderMap,
    /// The body; `None` for a body that streams (events, WebSocket messages): checks
    /// of the body are then invalid.
    pub body: Option<&'a [u8]>,
    /// How long the exchange took; `None` when unknown (`duration` checks are then
    /// invalid).
    pub timing: Option<Timing>,
    /// The status of a gRPC call, its number and name; `None` for other responses
    /// (`grpc-status` checks are then invalid).
    pub grpc_status: Option<(u32, &'a str)>,
    /// Hides secrets from a value before a failure message cuts it to an excerpt (a
    /// cut would leave part of a secret that the redaction of the whole message no
    /// longer recognises); `None` to show values as they are.
    pub redactor: Option<&'a dyn Redact>,
    /// Evaluates httpyac's `?? js <expression>` on the response (the scripts' sandbox);
    /// `None`: such checks are invalid.
    pub javascript: Option<JavaScript<'a>>,
}

/// What evaluates httpyac's `?? js <expression>` on the response: the expression's value,
/// or why it failed.
#[derive(Clone, Copy)]
pub struct JavaScript<'a>(pub &'a dyn Fn(&str) -> Result<Value, String>);

impl std::fmt::Debug for JavaScript<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JavaScript")
    }
}

impl ResponseParts<'_> {
    /// `text` as a failure message may show it, before it is cut.
    pub(crate) fn shown<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.redactor.map_or(Cow::Borrowed(text), |redactor| redactor.redact(text))
    }
}

/// Evaluates `assertion` against a response's status, headers and body (its duration
/// unknown).
#[must_use]
pub fn evaluate(assertion: &Assertion, status: u16, headers: &http::HeaderMap, body: &[u8]) -> Outcome {
    evaluate_parts(
        assertion,
        &ResponseParts {
            status,
            headers,
            body: Some(body),
            timing: None,
            redactor: None,
            grpc_status: None,
            javascript: None,
        },
    )
}

/// Evaluates `assertion` against the parts of a response.
#[must_use]
pub fn evaluate_parts(assertion: &Assertion, parts: &ResponseParts<'_>) -> Outcome {
    let Some(body) = parts.body else {
        if assertion.reads_body() {
            let target = match assertion {
                Assertion::Body { .. }
                | Assertion::Check(Check { field: Field::Body | Field::BodyProperty { .. }, .. }) => "body",
                _ => "jsonpath",
            };
            return Outcome::Invalid {
                message: format!("`{target}` checks do not apply to a streamed response"),
                hint: Some("check `status` and `header` on event streams and WebSocket handshakes".to_owned()),
            };
        }
        return evaluate_parts(assertion, &ResponseParts { body: Some(&[]), ..*parts });
    };
    let (status, headers) = (parts.status, parts.headers);
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
                failed(format!("body {check} {}", quote(expected)), excerpt(&parts.shown(&text)))
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
        Assertion::Check(check) => evaluate_check(check, parts, body),
    }
}

/// Evaluates a general check: what its field holds, then whether the predicate holds.
fn evaluate_check(check: &Check, parts: &ResponseParts<'_>, body: &[u8]) -> Outcome {
    let found = match &check.field {
        Field::Status => Found::one(Value::from(parts.status)),
        Field::GrpcStatus => {
            let Some((number, name)) = parts.grpc_status else {
                return invalid("`grpc-status` checks apply to gRPC calls only".to_owned());
            };
            // Compared by number with a number (`grpc-status == 5`), else by name.
            let numeric = check.expected.as_deref().is_none_or(|expected| expected.trim().parse::<u32>().is_ok());
            Found::one(if numeric { Value::from(number) } else { Value::String(name.to_owned()) })
        }
        Field::Header(name) => {
            let values: Vec<Value> = parts
                .headers
                .get_all(name.as_str())
                .iter()
                .map(|value| Value::String(String::from_utf8_lossy(value.as_bytes()).into_owned()))
                .collect();
            Found { values, ..Found::missing("no such header") }
        }
        Field::Body => {
            if check.predicate == Predicate::Exists && body.is_empty() {
                return failed("body to exist".to_owned(), "an empty body".to_owned());
            }
            let text = String::from_utf8_lossy(body).into_owned();
            Found { bytes: Some(body), json_text: true, ..Found::one(Value::String(text)) }
        }
        Field::BodyProperty { accessor, path } => match property(accessor, path, body) {
            Ok(found) => found,
            Err(message) => return invalid(message),
        },
        Field::JsonPath(path) => match query(path, body) {
            Ok(matches) => selected(matches),
            Err(message) => return invalid(message),
        },
        Field::JavaScript(code) => {
            let Some(JavaScript(evaluate)) = parts.javascript else {
                return invalid("httpyac `js` checks are evaluated by a client's run only".to_owned());
            };
            match evaluate(code) {
                Ok(value) => Found::one(value),
                Err(message) => return invalid(format!("`{code}` failed: {message}")),
            }
        }
        Field::Duration(part) => {
            let Some(timing) = parts.timing else {
                return invalid("the duration of this response is not known".to_owned());
            };
            let duration = match part {
                TimingPart::Total => timing.total,
                TimingPart::FirstByte => timing.ttfb,
                TimingPart::Download => timing.total.saturating_sub(timing.ttfb),
            };
            Found { unit: " ms", ..Found::one(Value::from(milliseconds(duration))) }
        }
    };
    holds(check, &found, parts)
}

/// What a JSONPath selected: nothing, one value, or several as an array.
fn selected(mut matches: Vec<Value>) -> Found<'static> {
    match matches.len() {
        0 => Found::missing("nothing matches"),
        1 => Found::one(matches.remove(0)),
        _ => Found::one(Value::Array(matches)),
    }
}

/// httpyac's `body <property>`, with JavaScript's `.length` of an array or a string.
fn property(accessor: &str, path: &str, body: &[u8]) -> Result<Found<'static>, String> {
    let matches = query(path, body)?;
    if matches.is_empty()
        && let Some(owner) = path.strip_suffix(".length")
        && !accessor.contains("{{")
    {
        let length = match query(owner, body)?.as_slice() {
            [Value::Array(items)] => Some(items.len()),
            [Value::String(text)] => Some(text.encode_utf16().count()),
            _ => None,
        };
        if let Some(length) = length {
            return Ok(Found::one(Value::from(length)));
        }
    }
    Ok(selected(matches))
}

fn milliseconds(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The values a JSONPath selects in a JSON body.
fn query(path: &str, body: &[u8]) -> Result<Vec<Value>, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err("the response body is empty, not JSON".to_owned());
    }
    let document: Value =
        serde_json::from_slice(body).map_err(|error| format!("the response body is not JSON ({error})"))?;
    let path = crate::jsonpath::parse_json_path(path).map_err(|error| format!("invalid JSONPath `{path}`: {error}"))?;
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
    use crate::parse;

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

    fn httpyac(expression: &str, timing: Option<Timing>) -> Outcome {
        let mut headers = http::HeaderMap::new();
        headers.append("content-type", http::HeaderValue::from_static("application/json"));
        headers.append("content-length", http::HeaderValue::from_static("83"));
        headers.append("x-empty", http::HeaderValue::from_static(""));
        headers.append("set-cookie", http::HeaderValue::from_static("a=1"));
        headers.append("set-cookie", http::HeaderValue::from_static("b=2"));
        let body = br#"{"id": 7, "name": "Ada", "tags": ["x", "y"], "active": false, "none": null, "n": "12"}"#;
        let assertion = crate::parse_as(expression, crate::Flavour::Httpyac).unwrap();
        evaluate_parts(
            &assertion,
            &ResponseParts {
                status: 201,
                headers: &headers,
                body: Some(body),
                timing,
                redactor: None,
                grpc_status: None,
                javascript: None,
            },
        )
    }

    #[test]
    fn httpyac_checks_pass_and_fail() {
        let timing = Some(Timing { ttfb: Duration::from_millis(40), total: Duration::from_millis(250) });
        for passing in [
            "status == 201",
            "status != 200",
            "status >= 201",
            "status startsWith 20",
            "status endsWith 01",
            "status matches ^2\\d\\d$",
            "status isNumber",
            "status exists",
            "header content-type == application/json",
            "header content-type includes json",
            "header content-type isString",
            "header content-length == 83",
            "header content-length > 80",
            "header set-cookie == b=2",
            "header set-cookie != c=3",
            "header x-missing isFalse",
            "header x-empty isFalse",
            "body includes \"Ada\"",
            "body startsWith {",
            "body == {\"id\": 7, \"name\": \"Ada\", \"tags\": [\"x\", \"y\"], \"active\": false, \"none\": null, \"n\": \"12\"}",
            "body id == 7",
            "body id isNumber",
            "body id > 6.5",
            "body name == Ada",
            "body name isString",
            "body tags isArray",
            "body tags includes y",
            "body tags.length == 2",
            "body name.length == 3",
            "body tags[1] == y",
            "body active isBoolean",
            "body active isFalse",
            "body active == false",
            "body none isFalse",
            "body none == null",
            "body missing isFalse",
            "body n == 12.0",
            "body tags == [\"x\",\"y\"]",
            "duration < 300",
            "duration > 100",
            "duration firstByte == 40",
            "duration download == 210",
        ] {
            assert_eq!(httpyac(passing, timing), Outcome::Passed, "{passing}");
        }
        let failed = |expression: &str| match httpyac(expression, timing) {
            Outcome::Failed { expected, actual } => (expected, actual),
            other => panic!("{expression}: {other:?}"),
        };
        assert_eq!(failed("status == 200"), ("status == 200".to_owned(), "201".to_owned()));
        assert_eq!(failed("status startsWith 3"), ("status startsWith 3".to_owned(), "201".to_owned()));
        assert_eq!(failed("duration < 100"), ("duration < 100 ms".to_owned(), "250 ms".to_owned()));
        assert_eq!(failed("body name == \"Ada\""), ("body `name` == \"Ada\"".to_owned(), "\"Ada\"".to_owned()));
        assert_eq!(failed("body active exists"), ("body `active` to be truthy".to_owned(), "false".to_owned()));
        assert_eq!(
            failed("body missing exists"),
            ("body `missing` to be truthy".to_owned(), "nothing matches".to_owned())
        );
        assert_eq!(failed("header x-missing == 1"), ("`x-missing` == 1".to_owned(), "no such header".to_owned()));
        assert_eq!(failed("header x-missing != 1").1, "no such header", "a missing header is not different");
        assert_eq!(failed("header set-cookie != a=1").1, "\"a=1\", \"b=2\"");
        assert_eq!(
            failed("header content-type > 3"),
            ("`content-type` > 3".to_owned(), "\"application/json\" (not a number)".to_owned())
        );
        assert_eq!(failed("body tags isString"), ("body `tags` to be a string".to_owned(), "[\"x\",\"y\"]".to_owned()));
        assert_eq!(
            failed("body md5 XUFAKrxLKna5cZ2REBfFkg=="),
            ("body md5 XUFAKrxLKna5cZ2REBfFkg==".to_owned(), "h+d6Dj3O+V4c95DSY3QPiw==".to_owned())
        );
        assert_eq!(
            failed("body md5 5d41402abc4b2a76b9719d911017c592").1,
            "87e77a0e3dcef95e1cf790d263740f8b",
            "shown in the encoding of the expected digest"
        );
        assert!(
            matches!(httpyac("duration < 300", None), Outcome::Invalid { message, .. } if message.contains("not known"))
        );
    }

    #[test]
    fn httpyac_digests_are_of_the_body_bytes() {
        let body = br#"{"id": 7, "name": "Ada", "tags": ["x", "y"], "active": false, "none": null, "n": "12"}"#;
        let hashes = [
            ("md5", crate::check::Digest::Md5),
            ("sha256", crate::check::Digest::Sha256),
            ("sha512", crate::check::Digest::Sha512),
        ];
        for (name, digest) in hashes {
            let base64 = digest.encode_like(&digest.of(body), "");
            assert_eq!(httpyac(&format!("body {name} {base64}"), None), Outcome::Passed, "{name}");
            let hex = digest.encode_like(&digest.of(body), &"0".repeat(digest.of(b"").len() * 2));
            assert_eq!(httpyac(&format!("body {name} {}", hex.to_uppercase()), None), Outcome::Passed, "{name} in hex");
        }
        // httpyac's documented example: the SHA-256 of `{"foo":"bar"}`.
        let assertion =
            crate::parse_as("body sha256 eji/gfOD9pQzrW6QDTWz4jhVk/dqe3q11DVbi6Qe4ks=", crate::Flavour::Httpyac)
                .unwrap();
        assert_eq!(evaluate(&assertion, 200, &http::HeaderMap::new(), br#"{"foo":"bar"}"#), Outcome::Passed);
    }

    #[test]
    fn streamed_bodies_refuse_body_checks_of_every_kind() {
        let headers = http::HeaderMap::new();
        let parts = ResponseParts {
            status: 200,
            headers: &headers,
            body: None,
            timing: None,
            redactor: None,
            grpc_status: None,
            javascript: None,
        };
        for (expression, flavour, target) in [
            ("body contains x", crate::Flavour::Volley, "body"),
            ("body a == 1", crate::Flavour::Httpyac, "body"),
            ("jsonpath $.a > 1", crate::Flavour::Volley, "jsonpath"),
        ] {
            let outcome = evaluate_parts(&crate::parse_as(expression, flavour).unwrap(), &parts);
            assert!(
                matches!(&outcome, Outcome::Invalid { message, .. } if message == &format!("`{target}` checks do not apply to a streamed response")),
                "{expression}: {outcome:?}"
            );
        }
        let status = crate::parse_as("status == 200", crate::Flavour::Httpyac).unwrap();
        assert_eq!(evaluate_parts(&status, &parts), Outcome::Passed);
    }
}
