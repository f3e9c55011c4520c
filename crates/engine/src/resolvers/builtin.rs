//! The built-in resolvers and the aliases other `.http` tools use for them.

use std::collections::HashMap;

use base64::Engine as _;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::Environment;

/// Every built-in name, aliases included (for "did you mean" and completion).
pub(crate) const BUILTIN_NAMES: &[&str] = &[
    "uuid",
    "guid",
    "random.uuid",
    "timestamp",
    "timestampMs",
    "isoTimestamp",
    "random",
    "randomInt",
    "env",
    "processEnv",
    "secret",
    "basicAuth",
    "base64",
    "datetime",
];

/// What the built-ins may read.
pub(crate) struct BuiltinContext<'a> {
    pub(crate) environment: &'a Environment,
    /// `KEY=value` pairs of the project's private env file (`.env`), for `$secret`.
    pub(crate) private_env: &'a HashMap<String, String>,
}

/// The value of a built-in, and whether it is a secret to redact.
#[derive(Debug)]
pub(crate) struct BuiltinValue {
    pub(crate) value: String,
    pub(crate) secret: bool,
}

/// Calls the built-in `name`; `None` when there is no built-in of that name.
pub(crate) fn call_builtin(
    name: &str,
    arguments: &[String],
    context: &BuiltinContext<'_>,
) -> Option<Result<BuiltinValue, String>> {
    let plain = |value: String| Ok(BuiltinValue { value, secret: false });
    let result = match name {
        "uuid" | "guid" | "random.uuid" => {
            arity(name, arguments, 0).and_then(|()| plain(uuid::Uuid::new_v4().to_string()))
        }
        "timestamp" => {
            arity(name, arguments, 0).and_then(|()| plain(OffsetDateTime::now_utc().unix_timestamp().to_string()))
        }
        "timestampMs" => arity(name, arguments, 0).and_then(|()| {
            let millis = OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
            plain(millis.to_string())
        }),
        "isoTimestamp" => arity(name, arguments, 0).and_then(|()| plain(iso_timestamp(OffsetDateTime::now_utc()))),
        "random" | "randomInt" => {
            arity(name, arguments, 2).and_then(|()| random(&arguments[0], &arguments[1]).and_then(plain))
        }
        "env" | "processEnv" => {
            arity(name, arguments, 1).and_then(|()| plain(context.environment.get(&arguments[0]).unwrap_or_default()))
        }
        "secret" => arity(name, arguments, 1).and_then(|()| {
            let key = &arguments[0];
            context
                .environment
                .get(key)
                .or_else(|| context.private_env.get(key).cloned())
                .map(|value| BuiltinValue { value, secret: true })
                .ok_or_else(|| format!("`{key}` is set neither in the environment nor in the project's .env file"))
        }),
        "basicAuth" => arity(name, arguments, 2).and_then(|()| {
            let pair = format!("{}:{}", arguments[0], arguments[1]);
            plain(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
        }),
        "base64" => arity(name, arguments, 1)
            .and_then(|()| plain(base64::engine::general_purpose::STANDARD.encode(arguments[0].as_bytes()))),
        "datetime" => datetime(arguments, OffsetDateTime::now_utc()).and_then(plain),
        _ => return None,
    };
    Some(result)
}

fn arity(name: &str, arguments: &[String], expected: usize) -> Result<(), String> {
    if arguments.len() == expected {
        return Ok(());
    }
    let plural = if expected == 1 { "" } else { "s" };
    Err(format!("takes {expected} argument{plural} `${name}{}`, got {}", signature(name), arguments.len()))
}

/// How many arguments a built-in takes (several counts when it has optional ones);
/// `None` for a name that is not a built-in.
pub(crate) fn expected_arguments(name: &str) -> Option<&'static [usize]> {
    Some(match name {
        "uuid" | "guid" | "random.uuid" | "timestamp" | "timestampMs" | "isoTimestamp" => &[0],
        "random" | "randomInt" | "basicAuth" => &[2],
        "env" | "processEnv" | "secret" | "base64" => &[1],
        "datetime" => &[1, 3],
        _ => return None,
    })
}

/// The parameter list of a built-in, as documentation writes it.
pub(crate) fn signature(name: &str) -> &'static str {
    match name {
        "random" | "randomInt" => "(min, max)",
        "env" | "processEnv" | "secret" => "(NAME)",
        "basicAuth" => "(user, password)",
        "base64" => "(text)",
        "datetime" => "(format[, amount, unit])",
        _ => "()",
    }
}

/// One-line documentation of a built-in (Markdown), for editors.
pub(crate) fn doc(name: &str) -> &'static str {
    match name {
        "uuid" | "guid" | "random.uuid" => "A random UUID (version 4).",
        "timestamp" => "The current Unix time in seconds.",
        "timestampMs" => "The current Unix time in milliseconds.",
        "isoTimestamp" => "The current time in RFC 3339 (UTC, milliseconds).",
        "random" | "randomInt" => "A random integer between `min` and `max`, both included.",
        "env" | "processEnv" => "The environment variable `NAME` (empty when unset).",
        "secret" => "The secret `NAME`, from the environment or the project's `.env` file; redacted in reports.",
        "basicAuth" => "A `Basic` authorization value for `user` and `password`.",
        "base64" => "`text` encoded in base64.",
        "datetime" => {
            "The current time in `format` (`iso8601`, `rfc1123` or a pattern), optionally shifted by `amount` `unit`."
        }
        _ => "",
    }
}

/// An integer between `min` and `max`, both included.
fn random(min: &str, max: &str) -> Result<String, String> {
    let parse = |text: &str| text.trim().parse::<i64>().map_err(|_| format!("`{text}` is not an integer"));
    let (min, max) = (parse(min)?, parse(max)?);
    if min > max {
        return Err(format!("the minimum {min} is greater than the maximum {max}"));
    }
    Ok(rand::random_range(min..=max).to_string())
}

/// RFC 3339 in UTC with milliseconds: `2026-11-22T10:20:30.123Z`.
pub(crate) fn iso_timestamp(now: OffsetDateTime) -> String {
    let truncated = now.replace_nanosecond(now.nanosecond() / 1_000_000 * 1_000_000).unwrap_or(now);
    truncated.format(&Rfc3339).unwrap_or_else(|_| now.unix_timestamp().to_string())
}

/// REST Client's `{{$datetime format [offset unit]}}`: `iso8601`, `rfc1123`, or a
/// pattern of `YYYY MM DD HH mm ss SSS`, shifted by `offset` units (`y M w d h m s ms`).
fn datetime(arguments: &[String], now: OffsetDateTime) -> Result<String, String> {
    let (format, offset) = match arguments {
        [format] => (format, None),
        [format, amount, unit] => (format, Some((amount, unit))),
        _ => {
            return Err(
                "takes a format and an optional offset: `$datetime iso8601`, `$datetime rfc1123 1 d`".to_owned()
            );
        }
    };
    let mut moment = now;
    if let Some((amount, unit)) = offset {
        let amount: i64 = amount.trim().parse().map_err(|_| format!("offset `{amount}` is not an integer"))?;
        let duration = match unit.as_str() {
            "ms" => time::Duration::milliseconds(amount),
            "s" => time::Duration::seconds(amount),
            "m" => time::Duration::minutes(amount),
            "h" => time::Duration::hours(amount),
            "d" => time::Duration::days(amount),
            "w" => time::Duration::weeks(amount),
            "M" => time::Duration::days(amount.saturating_mul(30)),
            "y" => time::Duration::days(amount.saturating_mul(365)),
            other => return Err(format!("unknown offset unit `{other}` (use y, M, w, d, h, m, s or ms)")),
        };
        moment = moment.checked_add(duration).ok_or("the offset is out of range")?;
    }
    Ok(match format.as_str() {
        "iso8601" => iso_timestamp(moment),
        "rfc1123" => rfc1123(moment),
        pattern => format_pattern(pattern, moment),
    })
}

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// `Sun, 22 Nov 2026 10:20:30 GMT`.
fn rfc1123(moment: OffsetDateTime) -> String {
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[moment.weekday().number_days_from_monday() as usize],
        moment.day(),
        MONTHS[moment.month() as usize - 1],
        moment.year(),
        moment.hour(),
        moment.minute(),
        moment.second()
    )
}

/// Replaces `YYYY MM DD HH mm ss SSS` in `pattern`; other text stays as written.
fn format_pattern(pattern: &str, moment: OffsetDateTime) -> String {
    let tokens: [(&str, String); 7] = [
        ("YYYY", format!("{:04}", moment.year())),
        ("SSS", format!("{:03}", moment.millisecond())),
        ("MM", format!("{:02}", moment.month() as u8)),
        ("DD", format!("{:02}", moment.day())),
        ("HH", format!("{:02}", moment.hour())),
        ("mm", format!("{:02}", moment.minute())),
        ("ss", format!("{:02}", moment.second())),
    ];
    let mut out = String::new();
    let mut rest = pattern;
    'outer: while !rest.is_empty() {
        for (token, value) in &tokens {
            if let Some(after) = rest.strip_prefix(token) {
                out.push_str(value);
                rest = after;
                continue 'outer;
            }
        }
        let mut characters = rest.chars();
        if let Some(character) = characters.next() {
            out.push(character);
        }
        rest = characters.as_str();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: &[&str]) -> Result<BuiltinValue, String> {
        let environment = Environment::fixed([("HOME".to_owned(), "/home/ada".to_owned())]);
        let private_env = HashMap::from([("API_SECRET".to_owned(), "s3cr3t".to_owned())]);
        let context = BuiltinContext { environment: &environment, private_env: &private_env };
        let arguments: Vec<String> = arguments.iter().map(|&argument| argument.to_owned()).collect();
        call_builtin(name, &arguments, &context).expect("a built-in")
    }

    #[test]
    fn values() {
        assert_eq!(call("uuid", &[]).unwrap().value.len(), 36);
        assert_eq!(uuid::Uuid::parse_str(&call("guid", &[]).unwrap().value).unwrap().get_version_num(), 4);
        let seconds: i64 = call("timestamp", &[]).unwrap().value.parse().unwrap();
        let millis: i64 = call("timestampMs", &[]).unwrap().value.parse().unwrap();
        assert!((millis / 1000 - seconds).abs() <= 1, "seconds, not milliseconds");
        assert!(call("isoTimestamp", &[]).unwrap().value.ends_with('Z'));
        assert_eq!(call("env", &["HOME"]).unwrap().value, "/home/ada");
        assert_eq!(call("env", &["NOPE"]).unwrap().value, "");
        let secret = call("secret", &["API_SECRET"]).unwrap();
        assert!(secret.secret && secret.value == "s3cr3t");
        assert!(call("secret", &["MISSING"]).is_err());
        assert_eq!(call("basicAuth", &["ada", "lovelace"]).unwrap().value, "Basic YWRhOmxvdmVsYWNl");
        assert_eq!(call("base64", &["hi"]).unwrap().value, "aGk=");
    }

    #[test]
    fn random_is_inclusive_and_checked() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            seen.insert(call("random", &["1", "3"]).unwrap().value);
        }
        assert_eq!(seen.len(), 3, "both ends appear: {seen:?}");
        assert_eq!(call("randomInt", &["5", "5"]).unwrap().value, "5");
        assert!(call("random", &["9", "1"]).unwrap_err().contains("greater"));
        assert!(call("random", &["a", "1"]).is_err());
        assert!(call("random", &["1"]).unwrap_err().contains("takes 2 arguments"));
    }

    #[test]
    fn every_builtin_has_a_doc_and_arities() {
        for name in BUILTIN_NAMES {
            assert!(!doc(name).is_empty(), "{name}");
            assert!(expected_arguments(name).is_some(), "{name}");
        }
    }

    #[test]
    fn datetimes() {
        let moment = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
        assert_eq!(datetime(&["iso8601".to_owned()], moment).unwrap(), "2023-11-14T22:13:20Z");
        assert_eq!(datetime(&["rfc1123".to_owned()], moment).unwrap(), "Tue, 14 Nov 2023 22:13:20 GMT");
        let shifted = datetime(&["YYYY-MM-DD".to_owned(), "1".to_owned(), "d".to_owned()], moment).unwrap();
        assert_eq!(shifted, "2023-11-15");
        assert!(datetime(&["iso8601".to_owned(), "1".to_owned(), "q".to_owned()], moment).is_err());
    }
}
