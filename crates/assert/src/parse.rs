//! The assertion language of `# @assert`:
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
//! and, in general, `<field> <operator> [<value>]` with the fields `status`, `header
//! <Name>`, `body`, `jsonpath <$expr>` and `duration [<timing>]` and every operator of
//! [`Predicate`] (a [`Check`]). A value is the rest of the line, optionally quoted (`"a
//! b"`, `'a b'`, `\"` escapes). httpyac's `??` lines are the other [`Flavour`]
//! (`httpyac.rs`).

use std::fmt;
use std::ops::Range;

use super::check::{Check, Field, OPERATORS, Predicate, TimingPart};
use super::lex::{leading, syntax_error, token_end, unquote, word};

/// A parsed assertion. The first forms are those `# @assert` always had; every other
/// check, and every `??` line, is a [`Check`].
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
    /// Any other `<field> <operator> [<value>]`, and every httpyac `??` line.
    Check(Check),
}

impl Assertion {
    /// `true` when the assertion reads the body (so it does not apply to a body that
    /// streams).
    #[must_use]
    pub fn reads_body(&self) -> bool {
        match self {
            Assertion::Body { .. } | Assertion::JsonPath { .. } | Assertion::JsonPathExists { .. } => true,
            Assertion::Check(check) => check.field.reads_body(),
            Assertion::Status { .. } | Assertion::HeaderExists { .. } | Assertion::Header { .. } => false,
        }
    }
}

/// Which assertion syntax an expression is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavour {
    /// `# @assert <expression>`: Volley's language.
    #[default]
    Volley,
    /// httpyac's `?? <field> <operator> [<expected>]`: the expected value is the rest of
    /// the line as written, `body <property>` reads a JSON property, `exists` means
    /// truthy, and `js` and `xpath` are refused.
    Httpyac,
}

impl Flavour {
    /// The flavour of a directive by its name: `??` is httpyac's, anything else Volley's.
    #[must_use]
    pub fn of_directive(name: &str) -> Self {
        if name == "??" { Flavour::Httpyac } else { Flavour::Volley }
    }
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
    fn of(predicate: Predicate) -> Option<Self> {
        Some(match predicate {
            Predicate::Equal => Comparison::Equal,
            Predicate::NotEqual => Comparison::NotEqual,
            Predicate::Greater => Comparison::Greater,
            Predicate::GreaterOrEqual => Comparison::GreaterOrEqual,
            Predicate::Less => Comparison::Less,
            Predicate::LessOrEqual => Comparison::LessOrEqual,
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
    pub range: Range<usize>,
    /// How it is written correctly.
    pub hint: String,
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
const JSONPATH_HINT: &str =
    "write `jsonpath $.id exists` or `jsonpath $.name == \"Ada\"` (== != > >= < <= contains matches …)";
const DURATION_HINT: &str = "write `duration < 500` (milliseconds)";
const TARGET_HINT: &str =
    "an assertion starts with `status`, `header`, `body`, `jsonpath`, `duration` or (for gRPC) `grpc-status`";
const GRPC_STATUS_HINT: &str = "write `grpc-status == OK` or `grpc-status == 0` (== != and, for numbers, > >= < <=)";

/// Parses an assertion expression of `# @assert`.
pub fn parse(expression: &str) -> Result<Assertion, AssertionSyntaxError> {
    parse_as(expression, Flavour::Volley)
}

/// Parses an assertion expression written in `flavour`.
pub fn parse_as(expression: &str, flavour: Flavour) -> Result<Assertion, AssertionSyntaxError> {
    match flavour {
        Flavour::Volley => volley(expression),
        Flavour::Httpyac => super::httpyac::parse(expression),
    }
}

fn volley(expression: &str) -> Result<Assertion, AssertionSyntaxError> {
    let text = expression.trim_end();
    let start = leading(text, 0);
    let (target, rest_at) = word(text, start);
    let field = match target {
        "" => return Err(syntax_error("empty assertion".to_owned(), 0..text.len(), TARGET_HINT)),
        "status" => Operand { field: Field::Status, op_at: rest_at, noun: "comparison", hint: STATUS_HINT },
        "header" => {
            let (name, op_at) = word(text, rest_at);
            if name.is_empty() {
                let message = "a header assertion needs a header name".to_owned();
                return Err(syntax_error(message, rest_at..text.len(), HEADER_HINT));
            }
            Operand { field: Field::Header(name.to_owned()), op_at, noun: "header check", hint: HEADER_HINT }
        }
        "body" => Operand { field: Field::Body, op_at: rest_at, noun: "body check", hint: BODY_HINT },
        "grpc-status" => {
            Operand { field: Field::GrpcStatus, op_at: rest_at, noun: "comparison", hint: GRPC_STATUS_HINT }
        }
        "jsonpath" => return jsonpath(text, rest_at),
        "duration" => duration(text, rest_at, Flavour::Volley)?,
        other => {
            return Err(syntax_error(format!("unknown assertion target `{other}`"), start..rest_at, TARGET_HINT));
        }
    };
    let check = field.finish(text, Flavour::Volley)?;
    Ok(legacy(check))
}

/// The forms `# @assert` always had keep their own variants (and meaning).
fn legacy(check: Check) -> Assertion {
    let Check { field, predicate, expected } = check;
    match (field, predicate, expected) {
        (Field::Status, predicate, Some(expected)) => match (Comparison::of(predicate), expected.parse::<i64>()) {
            (Some(op), Ok(status)) => Assertion::Status { op, expected: status },
            _ => Assertion::Check(Check { field: Field::Status, predicate, expected: Some(expected) }),
        },
        (Field::Header(name), Predicate::Exists, None) => Assertion::HeaderExists { name },
        (Field::Header(name), Predicate::Equal, Some(expected)) => {
            Assertion::Header { name, op: TextCheck::Equal, expected }
        }
        (Field::Header(name), Predicate::NotEqual, Some(expected)) => {
            Assertion::Header { name, op: TextCheck::NotEqual, expected }
        }
        (Field::Header(name), Predicate::Contains, Some(expected)) => {
            Assertion::Header { name, op: TextCheck::Contains, expected }
        }
        (Field::Body, Predicate::Contains, Some(expected)) => Assertion::Body { contains: true, expected },
        (Field::Body, Predicate::NotContains, Some(expected)) => Assertion::Body { contains: false, expected },
        (field, predicate, expected) => Assertion::Check(Check { field, predicate, expected }),
    }
}

/// A field parsed, the operator still to read.
pub(super) struct Operand {
    pub(super) field: Field,
    /// Where the operator starts (spaces before it allowed).
    pub(super) op_at: usize,
    /// What an unknown operator is not: "`=` is not a comparison".
    pub(super) noun: &'static str,
    pub(super) hint: &'static str,
}

impl Operand {
    /// Reads the operator and the expected value after the field.
    pub(super) fn finish(self, text: &str, flavour: Flavour) -> Result<Check, AssertionSyntaxError> {
        let (op, mut value_at) = word(text, self.op_at);
        let op_range = self.op_at + leading(text, self.op_at)..value_at;
        let predicate = match (flavour, op) {
            (Flavour::Volley, "") => {
                return Err(syntax_error(format!("`(nothing)` is not a {}", self.noun), op_range, self.hint));
            }
            (Flavour::Httpyac, "") => {
                let hint = format!("write an operator: {OPERATORS}");
                return Err(AssertionSyntaxError {
                    message: "the assertion needs an operator".to_owned(),
                    range: op_range.start..text.len(),
                    hint,
                });
            }
            // httpyac's `exists` is `isTrue`: the value is there and truthy.
            (Flavour::Httpyac, "exists") => Predicate::IsTrue,
            (Flavour::Httpyac, "not") if word(text, value_at).0 == "equals" => {
                value_at = word(text, value_at).1;
                Predicate::NotEqual
            }
            (_, op) => {
                let Some(predicate) = Predicate::from_word(op) else {
                    let hint = match Predicate::suggestion(op) {
                        Some(known) => format!("did you mean `{known}`? operators are case-sensitive"),
                        None => self.hint.to_owned(),
                    };
                    return Err(AssertionSyntaxError {
                        message: format!("`{op}` is not a {}", self.noun),
                        range: op_range,
                        hint,
                    });
                };
                predicate
            }
        };
        let rest = text[value_at..].trim();
        let value_range = value_at + leading(text, value_at)..text.len();
        if !predicate.takes_value() {
            if !rest.is_empty() {
                let message = format!("nothing may follow `{op}`");
                return Err(syntax_error(message, value_range, self.hint));
            }
            return Ok(Check { field: self.field, predicate, expected: None });
        }
        if flavour == Flavour::Volley && self.field == Field::Status && Comparison::of(predicate).is_some() {
            // As `# @assert` always read it: an integer, unquoted.
            if rest.parse::<i64>().is_err() {
                let shown = if rest.is_empty() { "(nothing)" } else { rest };
                return Err(syntax_error(format!("`{shown}` is not a status code"), value_range, self.hint));
            }
            return Ok(Check { field: self.field, predicate, expected: Some(rest.to_owned()) });
        }
        let expected = match flavour {
            Flavour::Volley => {
                value(text, value_at).map_err(|message| syntax_error(message, value_at..text.len(), self.hint))?
            }
            Flavour::Httpyac if rest.is_empty() => {
                return Err(syntax_error("the assertion needs a value".to_owned(), value_range, self.hint));
            }
            Flavour::Httpyac => rest.to_owned(),
        };
        if let Some((message, hint)) = predicate.refuse(&self.field, &expected) {
            return Err(syntax_error(message, value_range, hint));
        }
        Ok(Check { field: self.field, predicate, expected: Some(expected) })
    }
}

/// `duration [<timing>]`, the operator after it.
pub(super) fn duration(text: &str, rest_at: usize, flavour: Flavour) -> Result<Operand, AssertionSyntaxError> {
    let (part, after) = word(text, rest_at);
    let part_range = rest_at + leading(text, rest_at)..after;
    let operand =
        |part, op_at| Operand { field: Field::Duration(part), op_at, noun: "comparison", hint: DURATION_HINT };
    match TimingPart::from_word(part) {
        Some(Ok(part)) => Ok(operand(part, after)),
        Some(Err(())) => Err(syntax_error(
            format!("the `{part}` timing is not measured"),
            part_range,
            "check `duration`, `duration firstByte` or `duration download`",
        )),
        None if part.is_empty()
            || Predicate::from_word(part).is_some()
            || is_httpyac_operator(flavour, text, rest_at) =>
        {
            Ok(operand(TimingPart::Total, rest_at))
        }
        None => Err(syntax_error(
            format!("unknown timing `{part}`"),
            part_range,
            "write `duration < 500`, or name a timing: `total`, `firstByte` or `download`",
        )),
    }
}

/// `true` when the word at `at` is an operator only `??` lines know (`not equals`).
pub(super) fn is_httpyac_operator(flavour: Flavour, text: &str, at: usize) -> bool {
    let (first, after) = word(text, at);
    flavour == Flavour::Httpyac && first == "not" && word(text, after).0 == "equals"
}

fn jsonpath(text: &str, rest_at: usize) -> Result<Assertion, AssertionSyntaxError> {
    let path_at = rest_at + leading(text, rest_at);
    let path_end = token_end(text, path_at);
    let path = &text[path_at..path_end];
    if word(text, path_end).0.is_empty() {
        return Err(syntax_error(
            "a jsonpath assertion needs `exists`, `==` or `!=`".to_owned(),
            rest_at..text.len(),
            JSONPATH_HINT,
        ));
    }
    check_path(path, path_at)?;
    let operand = Operand {
        field: Field::JsonPath(path.to_owned()),
        op_at: path_end,
        noun: "jsonpath check",
        hint: JSONPATH_HINT,
    };
    let check = operand.finish(text, Flavour::Volley)?;
    Ok(match (check.predicate, check.expected) {
        (Predicate::Exists, None) => Assertion::JsonPathExists { path: path.to_owned() },
        (predicate @ (Predicate::Equal | Predicate::NotEqual), Some(_)) => {
            // Kept as written: `"7"` is the string, `7` the number.
            let value_at = word(text, path_end).1;
            let expected = text[value_at..].trim().to_owned();
            Assertion::JsonPath { path: path.to_owned(), equal: predicate == Predicate::Equal, expected }
        }
        (predicate, expected) => Assertion::Check(Check { field: check.field, predicate, expected }),
    })
}

fn check_path(path: &str, at: usize) -> Result<(), AssertionSyntaxError> {
    if path.is_empty() {
        return Err(syntax_error("a jsonpath assertion needs a path".to_owned(), at..at, JSONPATH_HINT));
    }
    if path.contains("{{") {
        // Substituted at run time; checked then.
        return Ok(());
    }
    crate::jsonpath::parse_json_path(path).map(|_| ()).map_err(|error| {
        syntax_error(format!("invalid JSONPath `{path}`: {error}"), at..at + path.len(), JSONPATH_HINT)
    })
}

/// The value starting at `at`: the rest of the line, unquoted when quoted.
fn value(text: &str, at: usize) -> Result<String, String> {
    unquote(text[at.min(text.len())..].trim())
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
            ("header X-A resembles y", "`resembles` is not a header check", "resembles"),
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

    #[test]
    fn every_other_operator_is_a_check() {
        use crate::check::{Check, Field, Predicate, TimingPart};
        let check = |field, predicate, expected: Option<&str>| {
            Assertion::Check(Check { field, predicate, expected: expected.map(str::to_owned) })
        };
        let header = || Field::Header("X-A".to_owned());
        let cases = [
            ("status startsWith 2", check(Field::Status, Predicate::StartsWith, Some("2"))),
            ("status matches ^2\\d\\d$", check(Field::Status, Predicate::Matches, Some("^2\\d\\d$"))),
            ("header X-A matches \"^a b$\"", check(header(), Predicate::Matches, Some("^a b$"))),
            ("header X-A endsWith 'z '", check(header(), Predicate::EndsWith, Some("z "))),
            ("header X-A isFalse", check(header(), Predicate::IsFalse, None)),
            ("body == \"done\"", check(Field::Body, Predicate::Equal, Some("done"))),
            ("body exists", check(Field::Body, Predicate::Exists, None)),
            ("body md5 XUFAKrxLKna5cZ2REBfFkg==", check(Field::Body, Predicate::Md5, Some("XUFAKrxLKna5cZ2REBfFkg=="))),
            ("jsonpath $.n > 3", check(Field::JsonPath("$.n".to_owned()), Predicate::Greater, Some("3"))),
            ("jsonpath $.tags isArray", check(Field::JsonPath("$.tags".to_owned()), Predicate::IsArray, None)),
            (
                "jsonpath $[?(@.a == 1)].b contains x",
                check(Field::JsonPath("$[?(@.a == 1)].b".to_owned()), Predicate::Contains, Some("x")),
            ),
            ("duration < 500", check(Field::Duration(TimingPart::Total), Predicate::Less, Some("500"))),
            (
                "duration firstByte <= 100",
                check(Field::Duration(TimingPart::FirstByte), Predicate::LessOrEqual, Some("100")),
            ),
        ];
        for (expression, expected) in cases {
            assert_eq!(parse(expression).unwrap(), expected, "{expression}");
        }
        // The aliases of the forms `@assert` always had keep their variants.
        assert_eq!(parse("status equals 200").unwrap(), Assertion::Status { op: Comparison::Equal, expected: 200 });
        assert_eq!(
            parse("header X-A includes b").unwrap(),
            Assertion::Header { name: "X-A".to_owned(), op: TextCheck::Contains, expected: "b".to_owned() }
        );
        // `exists` is presence here, truthiness only in `??` lines.
        assert_eq!(parse("jsonpath $.a exists").unwrap(), Assertion::JsonPathExists { path: "$.a".to_owned() });
        assert!(matches!(
            parse_as("body a exists", Flavour::Httpyac).unwrap(),
            Assertion::Check(Check { predicate: Predicate::IsTrue, .. })
        ));
    }

    #[test]
    fn new_forms_say_which_part_is_wrong() {
        let cases = [
            ("status isNumber 3", "nothing may follow `isNumber`", "3"),
            ("status matches [", "invalid regular expression", "["),
            ("header X-A > many", "`many` is not a number", "many"),
            ("body sha512 abc", "`abc` is not a SHA-512 digest", "abc"),
            ("jsonpath $.a < x", "`x` is not a number", "x"),
            ("jsonpath $.a resembles x", "`resembles` is not a jsonpath check", "resembles"),
            ("duration", "`(nothing)` is not a comparison", ""),
            ("status ==", "`(nothing)` is not a status code", ""),
            ("duration wait < 3", "the `wait` timing is not measured", "wait"),
            ("status StartsWith 2", "`StartsWith` is not a comparison", "StartsWith"),
        ];
        for (expression, message, part) in cases {
            let error = parse(expression).unwrap_err();
            assert!(error.message.starts_with(message), "{expression:?}: {}", error.message);
            if !part.is_empty() {
                assert_eq!(&expression[error.range.clone()], part, "{expression:?}");
            }
        }
        assert!(parse("status StartsWith 2").unwrap_err().hint.starts_with("did you mean `startsWith`?"));
        assert_eq!(Flavour::of_directive("??"), Flavour::Httpyac);
        assert_eq!(Flavour::of_directive("assert"), Flavour::Volley);
    }

    /// Found by the `jsonpath` fuzz target: `serde_json_path`'s reading of a path takes
    /// about twice as long with each nested filter, so a few hundred bytes took seconds.
    /// A path nested deeper than `MAX_JSONPATH_NESTING` is refused before it is read,
    /// when the assertion is parsed and when a `??` line's path is evaluated.
    #[test]
    fn a_jsonpath_nested_too_deeply_is_refused_before_it_is_read() {
        let depth = crate::MAX_JSONPATH_NESTING + 4;
        let path = format!("${}{}", ".a[?@.a".repeat(depth), " == 1]".repeat(depth));
        let error = parse(&format!("jsonpath {path} exists")).unwrap_err();
        assert!(error.message.contains("nest 12 deep"), "{}", error.message);

        let check = Check { field: Field::JsonPath(path), predicate: Predicate::Exists, expected: None };
        let outcome = crate::evaluate(&Assertion::Check(check), 200, &http::HeaderMap::new(), b"{}");
        assert!(
            matches!(&outcome, crate::Outcome::Invalid { message, .. } if message.contains("nest 12 deep")),
            "{outcome:?}"
        );
    }
}
