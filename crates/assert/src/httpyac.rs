//! httpyac's `??` assertions, `?? <field> [<key>] <operator> [<expected>]`, parsed into
//! the same [`Check`](super::Check)s as `# @assert`:
//!
//! ```text
//! ?? status == 200
//! ?? header content-type includes json
//! ?? body includes slide
//! ?? body items[0].id == 7
//! ?? duration < 300
//! ```
//!
//! The expected value is the rest of the line as written (no quotes are removed),
//! `exists` means truthy as in httpyac, `js <expression>` is evaluated on the response in
//! the scripts' sandbox (httpyac's `response`), and the `xpath` field is refused: Volley
//! reads no XML.

use super::check::{Field, Predicate};
use super::lex::{leading, syntax_error, token_end, word};
use super::parse::{Assertion, AssertionSyntaxError, Flavour, Operand, duration, is_httpyac_operator};

const FIELD_HINT: &str = "a `??` assertion starts with `status`, `header <name>`, `body [<property>]` or `duration`";
const STATUS_HINT: &str = "write `?? status == 200`";
const HEADER_HINT: &str = "write `?? header content-type includes json`";
const BODY_HINT: &str = "write `?? body includes text` or `?? body items[0].id == 7`";

/// Parses the text after `??`.
pub(super) fn parse(expression: &str) -> Result<Assertion, AssertionSyntaxError> {
    let text = expression.trim_end();
    let start = leading(text, 0);
    let (field, rest_at) = word(text, start);
    let field_range = start..rest_at;
    let operand = match field {
        "" => return Err(syntax_error("empty assertion".to_owned(), 0..text.len(), FIELD_HINT)),
        "js" => {
            // `?? js response.parsedBody.items.length > 0`: the expression is one word.
            let at = rest_at + leading(text, rest_at);
            let end = token_end(text, at);
            if at == end {
                return Err(syntax_error(
                    "a `js` assertion needs a JavaScript expression".to_owned(),
                    field_range,
                    "write `?? js response.parsedBody.items.length > 0`",
                ));
            }
            let field = Field::JavaScript(text[at..end].to_owned());
            Operand { field, op_at: end, noun: "known operator", hint: "write `?? js response.parsedBody.id == 7`" }
        }
        "xpath" => {
            return Err(syntax_error(
                "httpyac `xpath` assertions are not supported".to_owned(),
                field_range,
                "Volley reads no XML: check the body as text with `?? body includes …` or `?? body matches …`",
            ));
        }
        "status" => Operand { field: Field::Status, op_at: rest_at, noun: "known operator", hint: STATUS_HINT },
        "header" => {
            let (name, op_at) = word(text, rest_at);
            if name.is_empty() {
                let message = "a header assertion needs a header name".to_owned();
                return Err(syntax_error(message, rest_at..text.len(), HEADER_HINT));
            }
            Operand { field: Field::Header(name.to_owned()), op_at, noun: "known operator", hint: HEADER_HINT }
        }
        "body" => body(text, rest_at)?,
        "duration" => {
            let mut operand = duration(text, rest_at, Flavour::Httpyac)?;
            operand.noun = "known operator";
            operand
        }
        other => {
            let hint = ["status", "header", "body", "duration"]
                .into_iter()
                .find(|known| known.eq_ignore_ascii_case(other))
                .map_or_else(|| FIELD_HINT.to_owned(), |known| format!("did you mean `{known}`?"));
            return Err(AssertionSyntaxError {
                message: format!("unknown assertion field `{other}`"),
                range: field_range,
                hint,
            });
        }
    };
    operand.finish(text, Flavour::Httpyac).map(Assertion::Check)
}

/// `body` alone (the text), or `body <property>`: a property of the JSON body written as
/// JavaScript (`items[0].id`, `['a b']`), read as the JSONPath `$.items[0].id`.
fn body(text: &str, rest_at: usize) -> Result<Operand, AssertionSyntaxError> {
    let at = rest_at + leading(text, rest_at);
    let end = token_end(text, at);
    let first = &text[at..end];
    let whole = |op_at| Operand { field: Field::Body, op_at, noun: "known operator", hint: BODY_HINT };
    if first.is_empty() || Predicate::from_word(first).is_some() || is_httpyac_operator(Flavour::Httpyac, text, at) {
        return Ok(whole(rest_at));
    }
    let path = if first.starts_with('[') { format!("${first}") } else { format!("$.{first}") };
    if !first.contains("{{") && crate::jsonpath::parse_json_path(&path).is_err() {
        return Err(syntax_error(
            format!("`{first}` is not a property Volley can read"),
            at..end,
            "write a property path such as `items[0].id` or `['content-type']` (no method calls)",
        ));
    }
    let field = Field::BodyProperty { accessor: first.to_owned(), path };
    Ok(Operand { field, op_at: end, noun: "known operator", hint: BODY_HINT })
}

#[cfg(test)]
mod tests {
    use super::super::check::{Check, TimingPart};
    use super::*;

    fn check(expression: &str) -> Check {
        match parse(expression) {
            Ok(Assertion::Check(check)) => check,
            other => panic!("{expression:?}: {other:?}"),
        }
    }

    fn is(field: Field, predicate: Predicate, expected: Option<&str>) -> Check {
        Check { field, predicate, expected: expected.map(str::to_owned) }
    }

    #[test]
    fn every_field() {
        assert_eq!(check("status == 200"), is(Field::Status, Predicate::Equal, Some("200")));
        assert_eq!(
            check("header content-type == application/json"),
            is(Field::Header("content-type".to_owned()), Predicate::Equal, Some("application/json"))
        );
        assert_eq!(check("body includes slide"), is(Field::Body, Predicate::Contains, Some("slide")));
        assert_eq!(
            check("body form exists"),
            is(Field::BodyProperty { accessor: "form".to_owned(), path: "$.form".to_owned() }, Predicate::IsTrue, None),
            "httpyac's `exists` is `isTrue`"
        );
        assert_eq!(
            check("body items[0].id == 7"),
            is(
                Field::BodyProperty { accessor: "items[0].id".to_owned(), path: "$.items[0].id".to_owned() },
                Predicate::Equal,
                Some("7")
            )
        );
        assert_eq!(
            check("body ['a b'] == x"),
            is(
                Field::BodyProperty { accessor: "['a b']".to_owned(), path: "$['a b']".to_owned() },
                Predicate::Equal,
                Some("x")
            ),
            "a bracket keeps its spaces"
        );
        assert_eq!(check("duration < 300"), is(Field::Duration(TimingPart::Total), Predicate::Less, Some("300")));
        assert_eq!(
            check("duration firstByte <= 100"),
            is(Field::Duration(TimingPart::FirstByte), Predicate::LessOrEqual, Some("100"))
        );
        assert_eq!(
            check("duration download > 0"),
            is(Field::Duration(TimingPart::Download), Predicate::Greater, Some("0"))
        );
        assert_eq!(check("  status   ==   200  "), is(Field::Status, Predicate::Equal, Some("200")));
    }

    #[test]
    fn every_operator() {
        let cases = [
            ("status == 200", Predicate::Equal, Some("200")),
            ("status === 200", Predicate::Equal, Some("200")),
            ("status equals 200", Predicate::Equal, Some("200")),
            ("status != 201", Predicate::NotEqual, Some("201")),
            ("status !== 201", Predicate::NotEqual, Some("201")),
            ("status not equals 201", Predicate::NotEqual, Some("201")),
            ("status > 199", Predicate::Greater, Some("199")),
            ("status >= 200", Predicate::GreaterOrEqual, Some("200")),
            ("status < 300", Predicate::Less, Some("300")),
            ("status <= 200", Predicate::LessOrEqual, Some("200")),
            ("status startsWith 20", Predicate::StartsWith, Some("20")),
            ("status endsWith 00", Predicate::EndsWith, Some("00")),
            ("status includes 0", Predicate::Contains, Some("0")),
            ("status contains 0", Predicate::Contains, Some("0")),
            ("status exists", Predicate::IsTrue, None),
            ("status isTrue", Predicate::IsTrue, None),
            ("status isFalse", Predicate::IsFalse, None),
            ("status isNumber", Predicate::IsNumber, None),
            ("status isBoolean", Predicate::IsBoolean, None),
            ("status isString", Predicate::IsString, None),
            ("status isArray", Predicate::IsArray, None),
            ("status matches ^\\d+", Predicate::Matches, Some("^\\d+")),
            (
                "status sha256 eji/gfOD9pQzrW6QDTWz4jhVk/dqe3q11DVbi6Qe4ks=",
                Predicate::Sha256,
                Some("eji/gfOD9pQzrW6QDTWz4jhVk/dqe3q11DVbi6Qe4ks="),
            ),
            ("status md5 m7WPJhkuS6APAeLnsTa72A==", Predicate::Md5, Some("m7WPJhkuS6APAeLnsTa72A==")),
        ];
        for (expression, predicate, expected) in cases {
            assert_eq!(check(expression), is(Field::Status, predicate, expected), "{expression}");
        }
        let sha512 = "DbaK1OQdOya6P8SKXafJ9ha4E+d8tOlRGH4fKjfCutlAQQififYBLue0TiH4Y8XZVT47Zl7a6GQLsidLVVJm6w==";
        assert_eq!(check(&format!("body sha512 {sha512}")).predicate, Predicate::Sha512);
    }

    #[test]
    fn the_expected_value_is_kept_as_written() {
        assert_eq!(check("body name == \"Ada\"").expected.as_deref(), Some("\"Ada\""), "quotes are part of it");
        assert_eq!(check("header x-a == a  b").expected.as_deref(), Some("a  b"));
        assert_eq!(check("body == {\"foo\": \"bar\"}").expected.as_deref(), Some("{\"foo\": \"bar\"}"));
        assert_eq!(check("body includes a == b").expected.as_deref(), Some("a == b"), "the first operator counts");
    }

    #[test]
    fn refusals_name_the_feature_and_the_part() {
        let cases = [
            ("js", "a `js` assertion needs a JavaScript expression", "js"),
            ("xpath /slideshow/@title == Sample", "httpyac `xpath` assertions are not supported", "xpath"),
            ("", "empty assertion", ""),
            ("Status == 200", "unknown assertion field `Status`", "Status"),
            ("jsonpath $.a exists", "unknown assertion field `jsonpath`", "jsonpath"),
            ("status", "the assertion needs an operator", ""),
            ("status = 200", "`=` is not a known operator", "="),
            ("status Equals 200", "`Equals` is not a known operator", "Equals"),
            ("status == ok", "`ok` is not a status code", "ok"),
            ("status ==", "the assertion needs a value", ""),
            ("status exists 200", "nothing may follow `exists`", "200"),
            ("header", "a header assertion needs a header name", ""),
            ("header x-a", "the assertion needs an operator", ""),
            ("body items.map(x => x.id) isArray", "`items.map(x => x.id)` is not a property", "items.map(x => x.id)"),
            ("body matches (", "invalid regular expression", "("),
            ("body sha256 abc", "`abc` is not a SHA-256 digest", "abc"),
            ("duration < soon", "`soon` is not a number", "soon"),
            ("duration tcp < 10", "the `tcp` timing is not measured", "tcp"),
            ("duration later < 10", "unknown timing `later`", "later"),
        ];
        for (expression, message, part) in cases {
            let error = parse(expression).unwrap_err();
            assert!(error.message.starts_with(message), "{expression:?}: {}", error.message);
            if !part.is_empty() {
                assert_eq!(&expression[error.range.clone()], part, "{expression:?}");
            }
        }
        let hint = parse("status Equals 200").unwrap_err().hint;
        assert!(hint.contains("did you mean `equals`?"), "{hint}");
        let hint = parse("Status == 200").unwrap_err().hint;
        assert_eq!(hint, "did you mean `status`?");
        let Ok(Assertion::Check(check)) = parse("js response.parsedBody.id == 1") else { panic!("a js check") };
        assert_eq!(check.field, Field::JavaScript("response.parsedBody.id".to_owned()));
    }
}
