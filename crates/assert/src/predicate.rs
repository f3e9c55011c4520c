//! How a [`Check`]'s predicate holds on the values of its field: numbers compared as
//! numbers, truthiness as JavaScript has it, patterns and digests.

use serde_json::Value;

use super::Outcome;
use super::check::{Check, Field, Predicate, number, regex};
use super::evaluate::ResponseParts;

/// How much of a value a failure message shows.
const EXCERPT: usize = 200;

/// What a field of the response holds.
#[derive(Debug)]
pub(crate) struct Found<'a> {
    /// The values: one, several for a repeated header, none when the field is missing.
    pub(crate) values: Vec<Value>,
    /// What the response has instead, when there are no values ("no such header").
    pub(crate) missing: &'static str,
    /// The bytes digests are computed over (the body's); else the text of the value.
    pub(crate) bytes: Option<&'a [u8]>,
    /// Shown after numbers (" ms" for durations).
    pub(crate) unit: &'static str,
    /// `==` also holds when both sides parse as the same JSON (the whole body).
    pub(crate) json_text: bool,
}

impl Found<'_> {
    /// One value.
    pub(crate) fn one(value: Value) -> Self {
        Found { values: vec![value], missing: "nothing", bytes: None, unit: "", json_text: false }
    }

    /// Nothing, and what the response has instead.
    pub(crate) fn missing(missing: &'static str) -> Self {
        Found { values: Vec::new(), missing, bytes: None, unit: "", json_text: false }
    }
}

/// Whether `check` holds on what its field `found`: a repeated header passes when one
/// of its values does (`!=`, `not-contains` and `isFalse`: when every value does); a
/// missing field fails every check but `isFalse`.
/// Values are shown as `parts` allows.
pub(crate) fn holds(check: &Check, found: &Found<'_>, parts: &ResponseParts<'_>) -> Outcome {
    let expected = check.expected.as_deref().unwrap_or_default();
    let wanted = wanted(check, found.unit);
    if found.values.is_empty() {
        return if check.predicate == Predicate::IsFalse {
            Outcome::Passed
        } else {
            Outcome::Failed { expected: wanted, actual: found.missing.to_owned() }
        };
    }
    let pattern = match check.predicate {
        Predicate::Matches => match regex(expected) {
            Ok(pattern) => Some(pattern),
            Err(message) => return Outcome::Invalid { message, hint: None },
        },
        _ => None,
    };
    if let Some(digest) = check.predicate.digest() {
        let Some(wanted_digest) = digest.decode(expected) else {
            let message = format!("`{expected}` is not a {} digest", check.predicate);
            return Outcome::Invalid { message, hint: Some("write the digest in base64 or in hex".to_owned()) };
        };
        let digests: Vec<Vec<u8>> = match found.bytes {
            Some(bytes) => vec![digest.of(bytes)],
            None => found.values.iter().map(|value| digest.of(text_of(value).as_bytes())).collect(),
        };
        if digests.contains(&wanted_digest) {
            return Outcome::Passed;
        }
        let actual = digests.iter().map(|actual| digest.encode_like(actual, expected)).collect::<Vec<_>>();
        return Outcome::Failed { expected: wanted, actual: actual.join(", ") };
    }
    let test = |value: &Value| one(check.predicate, value, expected, pattern.as_ref(), found.json_text);
    let passed =
        if check.predicate.is_negative() { found.values.iter().all(test) } else { found.values.iter().any(test) };
    if passed {
        return Outcome::Passed;
    }
    let actual = found.values.iter().map(|value| show(value, found.unit, parts)).collect::<Vec<_>>().join(", ");
    let actual = match check.predicate {
        predicate if predicate.is_ordering() && found.values.iter().all(|value| number_of(value).is_none()) => {
            format!("{actual} (not a number)")
        }
        _ => actual,
    };
    Outcome::Failed { expected: wanted, actual }
}

/// Whether the predicate holds on one value.
fn one(predicate: Predicate, value: &Value, expected: &str, pattern: Option<&regex::Regex>, json_text: bool) -> bool {
    let compare = |holds: fn(f64, f64) -> bool| match (number_of(value), number(expected)) {
        (Some(actual), Some(expected)) => holds(actual, expected),
        _ => false,
    };
    match predicate {
        Predicate::Equal => equal(value, expected, json_text),
        Predicate::NotEqual => !equal(value, expected, json_text),
        Predicate::Greater => compare(|actual, expected| actual > expected),
        Predicate::GreaterOrEqual => compare(|actual, expected| actual >= expected),
        Predicate::Less => compare(|actual, expected| actual < expected),
        Predicate::LessOrEqual => compare(|actual, expected| actual <= expected),
        Predicate::StartsWith => text_of(value).starts_with(expected),
        Predicate::EndsWith => text_of(value).ends_with(expected),
        Predicate::Contains => contains(value, expected),
        Predicate::NotContains => !contains(value, expected),
        Predicate::Matches => pattern.is_some_and(|pattern| pattern.is_match(&text_of(value))),
        Predicate::Exists => true,
        Predicate::IsTrue => truthy(value),
        Predicate::IsFalse => !truthy(value),
        Predicate::IsNumber => value.is_number(),
        Predicate::IsBoolean => value.is_boolean(),
        Predicate::IsString => value.is_string(),
        Predicate::IsArray => value.is_array(),
        // Compared on bytes in `holds`.
        Predicate::Sha256 | Predicate::Sha512 | Predicate::Md5 => false,
    }
}

/// `==` with the expected value read as the actual value's type: a number as a number
/// (so `7`, `7.0` and `"7"` in a header are equal), `true`/`false`, `null`, an object or
/// an array as JSON, text as text.
fn equal(value: &Value, expected: &str, json_text: bool) -> bool {
    match value {
        Value::String(text) => {
            text == expected
                || matches!((number(text), number(expected)), (Some(a), Some(b)) if same(a, b))
                || (json_text && json(text).is_some_and(|actual| json(expected) == Some(actual)))
        }
        Value::Number(actual) => {
            actual.to_string() == expected.trim()
                || matches!((actual.as_f64(), number(expected)), (Some(a), Some(b)) if same(a, b))
        }
        Value::Bool(actual) => expected.trim() == if *actual { "true" } else { "false" },
        Value::Null => expected.trim() == "null",
        Value::Array(_) | Value::Object(_) => json(expected).as_ref() == Some(value),
    }
}

/// An array contains an element equal to the value; anything else contains it as text.
fn contains(value: &Value, expected: &str) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|item| equal(item, expected, false)),
        other => text_of(other).contains(expected),
    }
}

/// JavaScript's truthiness on JSON: `false`, `0`, `""` and `null` are falsy, everything
/// else (`"false"`, `[]`, `{}` too) truthy.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(value) => *value,
        Value::Number(number) => number.as_f64().is_some_and(|number| number != 0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// Numbers compared exactly, as JavaScript's `===` does (`0.1 + 0.2` is not `0.3`).
fn same(a: f64, b: f64) -> bool {
    a.partial_cmp(&b) == Some(std::cmp::Ordering::Equal)
}

fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => number(text),
        _ => None,
    }
}

fn json(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok()
}

/// The value as text: a string as it is, anything else as compact JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// What a failure message says was expected.
fn wanted(check: &Check, unit: &str) -> String {
    let label = check.field.label();
    let to_be = |what: &str| format!("{label} to be {what}");
    match (check.predicate, &check.expected) {
        (Predicate::Exists, _) => format!("{label} to exist"),
        (Predicate::IsTrue, _) => to_be("truthy"),
        (Predicate::IsFalse, _) => to_be("falsy or missing"),
        (Predicate::IsNumber, _) => to_be("a number"),
        (Predicate::IsBoolean, _) => to_be("a boolean"),
        (Predicate::IsString, _) => to_be("a string"),
        (Predicate::IsArray, _) => to_be("an array"),
        (predicate, expected) => {
            let expected = expected.as_deref().unwrap_or_default();
            let unit = if predicate.is_ordering() || matches!(check.field, Field::Duration(_)) { unit } else { "" };
            format!("{label} {predicate} {expected}{unit}")
        }
    }
}

/// A value in a failure message: text quoted and cut, numbers with their unit.
fn show(value: &Value, unit: &str, parts: &ResponseParts<'_>) -> String {
    let text = match value {
        Value::String(text) if text.is_empty() => return "an empty string".to_owned(),
        Value::String(text) => text.clone(),
        Value::Number(number) => return format!("{number}{unit}"),
        other => return excerpt(&parts.shown(&other.to_string())),
    };
    let excerpt = excerpt(&parts.shown(&text));
    format!("{excerpt:?}")
}

fn excerpt(text: &str) -> String {
    let mut shown: String = text.chars().take(EXCERPT).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthiness_is_javascripts() {
        for falsy in [Value::Null, Value::Bool(false), Value::from(0), Value::from(0.0), Value::from("")] {
            assert!(!truthy(&falsy), "{falsy}");
        }
        for truthy_value in [Value::Bool(true), Value::from(-1), Value::from("false"), Value::from("0")] {
            assert!(truthy(&truthy_value), "{truthy_value}");
        }
        assert!(truthy(&serde_json::json!([])) && truthy(&serde_json::json!({})));
    }

    #[test]
    fn equality_reads_the_expected_value_as_the_actual_type() {
        assert!(equal(&Value::from(7), "7", false));
        assert!(equal(&Value::from(7), "7.0", false));
        assert!(!equal(&Value::from(7), "\"7\"", false));
        assert!(equal(&Value::from(12_345_678_901_234_567_u64), "12345678901234567", false), "exact for big ids");
        assert!(equal(&Value::from("012"), "12", false), "numeric text compares as numbers");
        assert!(equal(&Value::from("Ada"), "Ada", false));
        assert!(!equal(&Value::from("Ada"), "\"Ada\"", false), "no quotes are removed");
        assert!(equal(&Value::Bool(true), "true", false));
        assert!(equal(&Value::Null, "null", false));
        assert!(equal(&serde_json::json!({"a": [1]}), "{ \"a\": [1] }", false));
        assert!(!equal(&Value::from("{\"a\":1}"), "{ \"a\": 1 }", false));
        assert!(equal(&Value::from("{\"a\":1}"), "{ \"a\": 1 }", true), "a whole body compares as JSON too");
    }

    #[test]
    fn contains_looks_into_arrays_and_text() {
        assert!(contains(&serde_json::json!(["a", 2]), "2"));
        assert!(!contains(&serde_json::json!(["abc"]), "b"), "an element is equal, not containing");
        assert!(contains(&Value::from("application/json"), "json"));
        assert!(contains(&Value::from(200), "0"));
    }
}
