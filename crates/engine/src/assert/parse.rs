//! The `@assert` expression language:
//!
//! ```text
//! status (== | != | > | >= | < | <=) <integer>
//! header <Name> exists
//! header <Name> (== | != | contains) <value>
//! body (contains | not-contains) <value>
//! jsonpath <$expr> exists
//! jsonpath <$expr> (== | !=) <value>
//! ```
//!
//! A value is the rest of the line, optionally quoted (`"a b"`, `'a b'`, `\"` escapes).

use std::fmt;

/// A parsed assertion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assertion {
    /// `status <op> <integer>`.
    Status {
        /// The comparison.
        op: Comparison,
        /// The status to compare with.
        expected: i64,
    },
    /// `header <Name> exists`.
    HeaderExists {
        /// The header name.
        name: String,
    },
    /// `header <Name> (==|!=|contains) <value>`.
    Header {
        /// The header name.
        name: String,
        /// The check.
        op: TextCheck,
        /// The value.
        expected: String,
    },
    /// `body (contains|not-contains) <value>`.
    Body {
        /// `true` for `contains`, `false` for `not-contains`.
        contains: bool,
        /// The text.
        expected: String,
    },
    /// `jsonpath <$expr> exists`.
    JsonPathExists {
        /// The JSONPath.
        path: String,
    },
    /// `jsonpath <$expr> (==|!=) <value>`.
    JsonPath {
        /// The JSONPath.
        path: String,
        /// `true` for `==`, `false` for `!=`.
        equal: bool,
        /// The value as written, quotes included: compared as JSON when it parses as JSON,
        /// else as a string (unquoted).
        expected: String,
    },
}

/// `== != > >= < <=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `==`.
    Equal,
    /// `!=`.
    NotEqual,
    /// `>`.
    Greater,
    /// `>=`.
    GreaterOrEqual,
    /// `<`.
    Less,
    /// `<=`.
    LessOrEqual,
}

impl Comparison {
    fn from_word(word: &str) -> Option<Self> {
        Some(match word {
            "==" => Comparison::Equal,
            "!=" => Comparison::NotEqual,
            ">" => Comparison::Greater,
            ">=" => Comparison::GreaterOrEqual,
            "<" => Comparison::Less,
            "<=" => Comparison::LessOrEqual,
            _ => return None,
        })
    }

    /// The operator as written.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Comparison::Equal => "==",
            Comparison::NotEqual => "!=",
            Comparison::Greater => ">",
            Comparison::GreaterOrEqual => ">=",
            Comparison::Less => "<",
            Comparison::LessOrEqual => "<=",
        }
    }

    /// Whether `actual <op> expected` holds.
    #[must_use]
    pub fn holds(self, actual: i64, expected: i64) -> bool {
        match self {
            Comparison::Equal => actual == expected,
            Comparison::NotEqual => actual != expected,
            Comparison::Greater => actual > expected,
            Comparison::GreaterOrEqual => actual >= expected,
            Comparison::Less => actual < expected,
            Comparison::LessOrEqual => actual <= expected,
        }
    }
}

/// `== != contains` on a header value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextCheck {
    /// `==`.
    Equal,
    /// `!=`.
    NotEqual,
    /// `contains`.
    Contains,
}

impl TextCheck {
    /// The operator as written.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TextCheck::Equal => "==",
            TextCheck::NotEqual => "!=",
            TextCheck::Contains => "contains",
        }
    }
}

/// What is wrong with an expression, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertionSyntaxError {
    /// What is wrong.
    pub message: String,
    /// Byte range of the part at fault, in the expression.
    pub range: std::ops::Range<usize>,
    /// How it is written correctly.
    pub hint: &'static str,
}

impl fmt::Display for AssertionSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AssertionSyntaxError {}

const STATUS_HINT: &str = "write `status == 200` (operators: == != > >= < <=)";
const HEADER_HINT: &str = "write `header Content-Type exists` or `header Content-Type contains json` (== != contains)";
const BODY_HINT: &str = "write `body contains \"text\"` or `body not-contains \"text\"`";
const JSONPATH_HINT: &str = "write `jsonpath $.id exists` or `jsonpath $.name == \"Ada\"` (== !=)";
const TARGET_HINT: &str = "an assertion starts with `status`, `header`, `body` or `jsonpath`";

/// Parses an assertion expression.
pub fn parse(expression: &str) -> Result<Assertion, AssertionSyntaxError> {
    let text = expression.trim_end();
    let start = text.len() - text.trim_start().len();
    let (target, rest_at) = word(text, start);
    let error =
        |message: String, range: std::ops::Range<usize>, hint| Err(AssertionSyntaxError { message, range, hint });
    match target {
        "" => error("empty assertion".to_owned(), 0..text.len(), TARGET_HINT),
        "status" => {
            let (op, value_at) = word(text, rest_at);
            let op_range = rest_at + leading(text, rest_at)..value_at;
            let Some(op) = Comparison::from_word(op) else {
                return error(format!("`{}` is not a comparison", show(op)), op_range, STATUS_HINT);
            };
            let value = text[value_at..].trim();
            let value_range = value_at + leading(text, value_at)..text.len();
            match value.parse::<i64>() {
                Ok(expected) => Ok(Assertion::Status { op, expected }),
                Err(_) => error(format!("`{}` is not a status code", show(value)), value_range, STATUS_HINT),
            }
        }
        "header" => {
            let (name, op_at) = word(text, rest_at);
            if name.is_empty() {
                return error("a header assertion needs a header name".to_owned(), rest_at..text.len(), HEADER_HINT);
            }
            let (op, value_at) = word(text, op_at);
            let op_range = op_at + leading(text, op_at)..value_at;
            let op = match op {
                "exists" => {
                    if !text[value_at..].trim().is_empty() {
                        let range = value_at + leading(text, value_at)..text.len();
                        return error("nothing may follow `exists`".to_owned(), range, HEADER_HINT);
                    }
                    return Ok(Assertion::HeaderExists { name: name.to_owned() });
                }
                "==" => TextCheck::Equal,
                "!=" => TextCheck::NotEqual,
                "contains" => TextCheck::Contains,
                other => return error(format!("`{}` is not a header check", show(other)), op_range, HEADER_HINT),
            };
            let expected = value(text, value_at).map_err(|message| AssertionSyntaxError {
                message,
                range: value_at..text.len(),
                hint: HEADER_HINT,
            })?;
            Ok(Assertion::Header { name: name.to_owned(), op, expected })
        }
        "body" => {
            let (op, value_at) = word(text, rest_at);
            let op_range = rest_at + leading(text, rest_at)..value_at;
            let contains = match op {
                "contains" => true,
                "not-contains" => false,
                other => return error(format!("`{}` is not a body check", show(other)), op_range, BODY_HINT),
            };
            let expected = value(text, value_at).map_err(|message| AssertionSyntaxError {
                message,
                range: value_at..text.len(),
                hint: BODY_HINT,
            })?;
            Ok(Assertion::Body { contains, expected })
        }
        "jsonpath" => jsonpath(text, rest_at),
        other => error(format!("unknown assertion target `{other}`"), start..rest_at, TARGET_HINT),
    }
}

fn jsonpath(text: &str, rest_at: usize) -> Result<Assertion, AssertionSyntaxError> {
    let rest = &text[rest_at..];
    let trimmed = rest.trim_end();
    if let Some(path) = trimmed.strip_suffix("exists").filter(|path| path.ends_with([' ', '\t'])) {
        let path = path.trim();
        check_path(path, rest_at + leading(text, rest_at))?;
        return Ok(Assertion::JsonPathExists { path: path.to_owned() });
    }
    // The operator is the last ` == ` or ` != ` outside brackets, parentheses and quotes
    // (a filter inside the path may contain one).
    let Some((at, equal)) = operator_outside_brackets(rest) else {
        let range = rest_at..text.len();
        return Err(AssertionSyntaxError {
            message: "a jsonpath assertion needs `exists`, `==` or `!=`".to_owned(),
            range,
            hint: JSONPATH_HINT,
        });
    };
    let path = rest[..at].trim();
    check_path(path, rest_at + leading(text, rest_at))?;
    let value_at = rest_at + at + 2;
    // Checked like any value, but kept as written: `"7"` is the string, `7` the number.
    value(text, value_at).map_err(|message| AssertionSyntaxError {
        message,
        range: value_at..text.len(),
        hint: JSONPATH_HINT,
    })?;
    let expected = text[value_at..].trim().to_owned();
    Ok(Assertion::JsonPath { path: path.to_owned(), equal, expected })
}

fn check_path(path: &str, at: usize) -> Result<(), AssertionSyntaxError> {
    if path.is_empty() {
        return Err(AssertionSyntaxError {
            message: "a jsonpath assertion needs a path".to_owned(),
            range: at..at,
            hint: JSONPATH_HINT,
        });
    }
    if path.contains("{{") {
        // Substituted at run time; checked then.
        return Ok(());
    }
    serde_json_path::JsonPath::parse(path).map(|_| ()).map_err(|error| AssertionSyntaxError {
        message: format!("invalid JSONPath `{path}`: {error}"),
        range: at..at + path.len(),
        hint: JSONPATH_HINT,
    })
}

fn operator_outside_brackets(text: &str) -> Option<(usize, bool)> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    let mut found = None;
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        match (quote, byte) {
            (Some(q), b'\\') if q != 0 => index += 1,
            (Some(q), _) if byte == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(byte),
            (None, b'[' | b'(') => depth += 1,
            (None, b']' | b')') => depth -= 1,
            (None, b'=' | b'!') if depth == 0 && bytes.get(index + 1) == Some(&b'=') => {
                let spaced_before = index > 0 && matches!(bytes[index - 1], b' ' | b'\t');
                let spaced_after = matches!(bytes.get(index + 2), Some(b' ' | b'\t') | None);
                if spaced_before && spaced_after {
                    found = Some((index, byte == b'='));
                }
                index += 1;
            }
            _ => {}
        }
        index += 1;
    }
    found
}

/// The word starting at `at` (after spaces) and the offset after it.
fn word(text: &str, at: usize) -> (&str, usize) {
    let start = at + leading(text, at);
    let end = text[start..].find([' ', '\t']).map_or(text.len(), |offset| start + offset);
    (&text[start..end], end)
}

fn leading(text: &str, at: usize) -> usize {
    let rest = &text[at.min(text.len())..];
    rest.len() - rest.trim_start_matches([' ', '\t']).len()
}

/// The value starting at `at`: the rest of the line, unquoted when quoted.
fn value(text: &str, at: usize) -> Result<String, String> {
    unquote(text[at.min(text.len())..].trim())
}

/// `raw` without its quotes (and escapes) when quoted, else as it is.
pub(super) fn unquote(raw: &str) -> Result<String, String> {
    if raw.is_empty() {
        return Err("the assertion needs a value".to_owned());
    }
    let Some(quote) = raw.chars().next().filter(|first| *first == '"' || *first == '\'') else {
        return Ok(raw.to_owned());
    };
    let inner = &raw[1..];
    let mut out = String::new();
    let mut characters = inner.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => match characters.next() {
                Some(escaped) => out.push(escaped),
                None => return Err("the value ends with a lone `\\`".to_owned()),
            },
            c if c == quote => {
                let after: String = characters.collect();
                if after.trim().is_empty() {
                    return Ok(out);
                }
                return Err(format!("unexpected `{}` after the quoted value", after.trim()));
            }
            c => out.push(c),
        }
    }
    Err(format!("the quoted value is not closed with {quote}"))
}

fn show(word: &str) -> &str {
    if word.is_empty() { "(nothing)" } else { word }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!(parse("status == 200").unwrap(), Assertion::Status { op: Comparison::Equal, expected: 200 });
        for (op, comparison) in [
            ("!=", Comparison::NotEqual),
            (">", Comparison::Greater),
            (">=", Comparison::GreaterOrEqual),
            ("<", Comparison::Less),
            ("<=", Comparison::LessOrEqual),
        ] {
            assert_eq!(
                parse(&format!("status {op} 300")).unwrap(),
                Assertion::Status { op: comparison, expected: 300 }
            );
        }
        assert_eq!(parse("header X-Id exists").unwrap(), Assertion::HeaderExists { name: "X-Id".to_owned() });
        assert_eq!(
            parse("header Content-Type contains application/json").unwrap(),
            Assertion::Header {
                name: "Content-Type".to_owned(),
                op: TextCheck::Contains,
                expected: "application/json".to_owned()
            }
        );
        assert_eq!(
            parse("header X-A != \"a \\\"b\\\"\"").unwrap(),
            Assertion::Header { name: "X-A".to_owned(), op: TextCheck::NotEqual, expected: "a \"b\"".to_owned() }
        );
        assert_eq!(
            parse("body contains 'two words'").unwrap(),
            Assertion::Body { contains: true, expected: "two words".to_owned() }
        );
        assert_eq!(
            parse("body not-contains error").unwrap(),
            Assertion::Body { contains: false, expected: "error".to_owned() }
        );
        assert_eq!(
            parse("jsonpath $.items[0].id exists").unwrap(),
            Assertion::JsonPathExists { path: "$.items[0].id".to_owned() }
        );
        assert_eq!(
            parse("jsonpath $[?(@.a == 1)].b == \"x y\"").unwrap(),
            Assertion::JsonPath { path: "$[?(@.a == 1)].b".to_owned(), equal: true, expected: "\"x y\"".to_owned() }
        );
        assert_eq!(
            parse("jsonpath $.n != 3").unwrap(),
            Assertion::JsonPath { path: "$.n".to_owned(), equal: false, expected: "3".to_owned() }
        );
    }

    #[test]
    fn says_which_part_is_wrong() {
        let cases = [
            ("", "empty assertion", ""),
            ("stats == 200", "unknown assertion target `stats`", "stats"),
            ("status = 200", "`=` is not a comparison", "="),
            ("status == ok", "`ok` is not a status code", "ok"),
            ("header", "a header assertion needs a header name", ""),
            ("header X-A matches y", "`matches` is not a header check", "matches"),
            ("header X-A ==", "the assertion needs a value", ""),
            ("header X-A exists now", "nothing may follow `exists`", "now"),
            ("body has x", "`has` is not a body check", "has"),
            ("body contains \"open", "the quoted value is not closed with \"", ""),
            ("jsonpath $.a", "a jsonpath assertion needs `exists`, `==` or `!=`", ""),
            ("jsonpath a.b exists", "invalid JSONPath `a.b`", "a.b"),
        ];
        for (expression, message, part) in cases {
            let error = parse(expression).unwrap_err();
            assert!(error.message.starts_with(message), "{expression:?}: {}", error.message);
            if !part.is_empty() {
                assert_eq!(&expression[error.range.clone()], part, "{expression:?}");
            }
        }
    }
}
