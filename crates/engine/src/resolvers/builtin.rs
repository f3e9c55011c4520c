//! The built-in resolvers: ours, and those of REST Client and JetBrains under their own
//! names with their own semantics; and the ones of those tools Volley refuses.

use base64::Engine as _;
use time::{OffsetDateTime, UtcOffset};

use super::Environment;
use super::datetime;
use super::random::{self, Alphabet};

/// One built-in resolver.
struct Builtin {
    name: &'static str,
    /// The argument counts it takes, fewest first.
    arities: &'static [usize],
    /// The parameter list, as the `{{$name(…)}}` form writes it.
    parameters: &'static str,
    /// One line of Markdown, ending with the tool the name comes from.
    doc: &'static str,
}

/// Every built-in, in documentation order.
const BUILTINS: &[Builtin] = &[
    Builtin { name: "uuid", arities: &[0], parameters: "()", doc: "A random UUID (version 4). Volley, JetBrains." },
    Builtin { name: "guid", arities: &[0], parameters: "()", doc: "A random UUID (version 4). REST Client." },
    Builtin { name: "random.uuid", arities: &[0], parameters: "()", doc: "A random UUID (version 4). JetBrains." },
    Builtin {
        name: "timestamp",
        arities: &[0, 2],
        parameters: "([offset, unit])",
        doc: "The current Unix time in seconds; `{{$timestamp -1 d}}` shifts it (units `y Q M w d h m s ms`). \
              Volley, JetBrains; offsets: REST Client.",
    },
    Builtin {
        name: "timestampMs",
        arities: &[0],
        parameters: "()",
        doc: "The current Unix time in milliseconds. Volley.",
    },
    Builtin {
        name: "isoTimestamp",
        arities: &[0],
        parameters: "()",
        doc: "The current time in ISO 8601, UTC with milliseconds (`2026-11-22T10:20:30.123Z`). Volley, JetBrains.",
    },
    Builtin {
        name: "datetime",
        arities: &[1, 3],
        parameters: "(format[, offset, unit])",
        doc: "The current UTC time as `iso8601`, `rfc1123` or a quoted Day.js pattern (`\"DD-MM-YYYY\"`), \
              optionally shifted (`-1 d`). REST Client.",
    },
    Builtin {
        name: "date",
        arities: &[0],
        parameters: "()",
        doc: "Today's date in the local time zone, `YYYY-MM-DD` (UTC when the system cannot tell). Kulala.",
    },
    Builtin {
        name: "localDatetime",
        arities: &[1, 3],
        parameters: "(format[, offset, unit])",
        doc: "As `$datetime`, in the local time zone (UTC when the system cannot tell). REST Client.",
    },
    Builtin {
        name: "random",
        arities: &[2],
        parameters: "(min, max)",
        doc: "A random integer between `min` and `max`, both included. Volley.",
    },
    Builtin {
        name: "randomInt",
        arities: &[0, 2],
        parameters: "(min, max)",
        doc: "A random integer from `min` (included) to `max` (excluded), as `{{$randomInt min max}}`; \
              without arguments, from 0 to 999. REST Client, JetBrains.",
    },
    Builtin {
        name: "random.integer",
        arities: &[0, 2],
        parameters: "(from, to)",
        doc: "A random integer from `from` (included) to `to` (excluded); 0 to 999 without arguments. JetBrains.",
    },
    Builtin {
        name: "random.float",
        arities: &[0, 2],
        parameters: "(from, to)",
        doc: "A random number from `from` (included) to `to` (excluded); 0 to 1000 without arguments. JetBrains.",
    },
    Builtin {
        name: "random.alphabetic",
        arities: &[1],
        parameters: "(length)",
        doc: "`length` random letters (`A-Z a-z`). JetBrains.",
    },
    Builtin {
        name: "random.alphanumeric",
        arities: &[1],
        parameters: "(length)",
        doc: "`length` random letters, digits and underscores. JetBrains.",
    },
    Builtin {
        name: "random.hexadecimal",
        arities: &[1],
        parameters: "(length)",
        doc: "`length` random hexadecimal digits (`0-9 a-f`). JetBrains.",
    },
    Builtin {
        name: "random.email",
        arities: &[0],
        parameters: "()",
        doc: "A random email address at `example.com`. JetBrains.",
    },
    Builtin {
        name: "env",
        arities: &[1],
        parameters: "(NAME)",
        doc: "The environment variable `NAME` (empty when unset); also JetBrains' `{{$env.NAME}}`. Volley.",
    },
    Builtin {
        name: "processEnv",
        arities: &[1],
        parameters: "(NAME)",
        doc: "The environment variable `NAME` (empty when unset); `%NAME` reads the one whose name is the \
              value of the variable `NAME`. REST Client.",
    },
    Builtin {
        name: "dotenv",
        arities: &[1],
        parameters: "(NAME)",
        doc: "`NAME` from the `.env` files of the `.http` file's directory and above (an error when none has \
              it); `%NAME` reads the key named by the variable `NAME`. REST Client.",
    },
    Builtin {
        name: "secret",
        arities: &[1],
        parameters: "(NAME)",
        doc: "The secret `NAME`, from the environment or the `.env` files; redacted in reports. Volley.",
    },
    Builtin {
        name: "basicAuth",
        arities: &[2],
        parameters: "(user, password)",
        doc: "A `Basic` authorization value for `user` and `password`. Volley.",
    },
    Builtin { name: "base64", arities: &[1], parameters: "(text)", doc: "`text` encoded in base64. Volley." },
];

/// JetBrains' `{{$env.NAME}}`: the environment variable `NAME`.
const ENV_PREFIX: &str = "env.";

/// Resolvers of other tools that Volley knows and refuses: (name, tool, what it gives).
const REFUSED: &[(&str, &str, &str)] = &[
    ("aadToken", "REST Client", "an Azure Active Directory token, signed in from the editor"),
    ("aadV2Token", "REST Client", "an Azure Active Directory v2 token, signed in from the editor"),
    ("oidcAccessToken", "REST Client", "an OpenID Connect access token, signed in from the browser"),
    ("exampleServer", "JetBrains", "the address of the IDE's built-in example server"),
];

/// Why Volley refuses a resolver of another tool, and what to do instead; `None` for a
/// name it does not refuse.
pub(crate) fn refusal(name: &str) -> Option<(String, String)> {
    let &(_, tool, what) = REFUSED.iter().find(|(refused, ..)| *refused == name)?;
    let message = format!("`${name}` ({tool}: {what}) is not supported by Volley");
    let instead = if name == "exampleServer" {
        "write the URL of a server you run instead (`volley echo-server` starts a local one)".to_owned()
    } else {
        format!(
            "declare a command resolver `{name}` in volley.jsonc `resolvers` that prints the token (for example \
             `az account get-access-token --query accessToken -o tsv`): it is used instead"
        )
    };
    Some((message, instead))
}

/// Every built-in name, aliases included, in documentation order (for "did you mean"
/// and completion).
pub(crate) fn names<'a>() -> impl Iterator<Item = &'a str> {
    BUILTINS.iter().map(|builtin| -> &'a str { builtin.name })
}

/// Whether the built-in `name` gives a value of the current time.
pub(crate) fn reads_the_clock(name: &str) -> bool {
    matches!(name, "timestamp" | "timestampMs" | "isoTimestamp" | "datetime" | "date" | "localDatetime")
}

/// Whether `name` is a built-in (JetBrains' `env.NAME` included).
pub(crate) fn is_builtin(name: &str) -> bool {
    find(name).is_some() || env_prefix_name(name).is_some()
}

fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|builtin| builtin.name == name)
}

/// `NAME` of JetBrains' `env.NAME`.
fn env_prefix_name(name: &str) -> Option<&str> {
    name.strip_prefix(ENV_PREFIX).filter(|rest| !rest.is_empty())
}

/// What the built-ins may read.
pub(crate) struct BuiltinContext<'a> {
    /// What `$env`, `$processEnv` and `$secret` read.
    pub(crate) environment: &'a Environment,
    /// The current time; the clock when `None`.
    pub(crate) now: Option<OffsetDateTime>,
    /// The local offset of `$localDatetime`; the system's when `None`.
    pub(crate) local_offset: Option<UtcOffset>,
}

/// Calls the built-in `name`; `None` when there is no built-in of that name.
/// `$dotenv`, `$secret` and the `%` form of `$processEnv` need variables and `.env`
/// files: the renderer calls them, not this.
pub(crate) fn call_builtin(
    name: &str,
    arguments: &[String],
    context: &BuiltinContext<'_>,
) -> Option<Result<String, String>> {
    if let Some(variable) = env_prefix_name(name) {
        return Some(arity(name, arguments).map(|()| context.environment.get(variable).unwrap_or_default()));
    }
    find(name)?;
    let now = || context.now.unwrap_or_else(OffsetDateTime::now_utc);
    let result = arity(name, arguments).and_then(|()| match name {
        "uuid" | "guid" | "random.uuid" => Ok(uuid::Uuid::new_v4().to_string()),
        "timestamp" => datetime::timestamp(arguments, now()),
        "timestampMs" => Ok((now().unix_timestamp_nanos() / 1_000_000).to_string()),
        "isoTimestamp" => Ok(datetime::iso_timestamp(now())),
        "datetime" => datetime::datetime(arguments, now(), false),
        "date" => {
            let now = now();
            let offset = context.local_offset.unwrap_or_else(|| datetime::local_offset(now));
            datetime::datetime(&["'YYYY-MM-DD'".to_owned()], now.to_offset(offset), true)
        }
        "localDatetime" => {
            let now = now();
            let offset = context.local_offset.unwrap_or_else(|| datetime::local_offset(now));
            datetime::datetime(arguments, now.to_offset(offset), true)
        }
        "random" => random::inclusive(&arguments[0], &arguments[1]),
        "randomInt" | "random.integer" => random::half_open(arguments),
        "random.float" => random::float(arguments),
        "random.alphabetic" => random::string(Alphabet::Letters, &arguments[0]),
        "random.alphanumeric" => random::string(Alphabet::LettersDigitsUnderscore, &arguments[0]),
        "random.hexadecimal" => random::string(Alphabet::Hexadecimal, &arguments[0]),
        "random.email" => Ok(random::email()),
        "env" | "processEnv" => Ok(context.environment.get(&arguments[0]).unwrap_or_default()),
        "basicAuth" => {
            let pair = format!("{}:{}", arguments[0], arguments[1]);
            Ok(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
        }
        "base64" => Ok(base64::engine::general_purpose::STANDARD.encode(arguments[0].as_bytes())),
        other => Err(format!("`${other}` needs the variables of a request")),
    });
    Some(result)
}

/// `Ok` when `arguments` is a count the built-in `name` takes.
pub(crate) fn arity(name: &str, arguments: &[String]) -> Result<(), String> {
    let expected = expected_arguments(name).unwrap_or(&[0]);
    if expected.contains(&arguments.len()) {
        return Ok(());
    }
    Err(format!("takes {} `${name}{}`, got {}", describe_counts(expected), signature(name), arguments.len()))
}

/// `no arguments`, `1 argument`, `1 or 3 arguments`.
pub(crate) fn describe_counts(counts: &[usize]) -> String {
    match counts {
        [0] => "no arguments".to_owned(),
        [1] => "1 argument".to_owned(),
        [0, rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(ToString::to_string).collect();
            format!("no arguments or {} arguments", rest.join(" or "))
        }
        counts => {
            let counts: Vec<String> = counts.iter().map(ToString::to_string).collect();
            format!("{} arguments", counts.join(" or "))
        }
    }
}

/// How many arguments a built-in takes (several counts when it has optional ones);
/// `None` for a name that is not a built-in.
pub(crate) fn expected_arguments(name: &str) -> Option<&'static [usize]> {
    if env_prefix_name(name).is_some() {
        return Some(&[0]);
    }
    find(name).map(|builtin| builtin.arities)
}

/// The parameter list of a built-in, as documentation writes it.
pub(crate) fn signature(name: &str) -> &'static str {
    find(name).map_or("()", |builtin| builtin.parameters)
}

/// One-line documentation of a built-in (Markdown), for editors.
pub(crate) fn doc(name: &str) -> &'static str {
    if env_prefix_name(name).is_some() {
        return "The environment variable after `env.` (empty when unset). JetBrains.";
    }
    find(name).map_or("", |builtin| builtin.doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: &[&str]) -> Result<String, String> {
        let environment = Environment::fixed([("HOME".to_owned(), "/home/ada".to_owned())]);
        let context = BuiltinContext {
            environment: &environment,
            now: Some(OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap()),
            local_offset: Some(UtcOffset::from_hms(1, 0, 0).unwrap()),
        };
        let arguments: Vec<String> = arguments.iter().map(|&argument| argument.to_owned()).collect();
        call_builtin(name, &arguments, &context).expect("a built-in")
    }

    #[test]
    fn values_at_a_fixed_time() {
        assert_eq!(call("uuid", &[]).unwrap().len(), 36);
        assert_eq!(uuid::Uuid::parse_str(&call("guid", &[]).unwrap()).unwrap().get_version_num(), 4);
        assert_eq!(uuid::Uuid::parse_str(&call("random.uuid", &[]).unwrap()).unwrap().get_version_num(), 4);
        assert_eq!(call("timestamp", &[]).unwrap(), "1700000000");
        assert_eq!(call("timestamp", &["-1", "h"]).unwrap(), "1699996400");
        assert_eq!(call("timestampMs", &[]).unwrap(), "1700000000000");
        assert_eq!(call("isoTimestamp", &[]).unwrap(), "2023-11-14T22:13:20.000Z");
        assert_eq!(call("datetime", &["rfc1123"]).unwrap(), "Tue, 14 Nov 2023 22:13:20 GMT");
        assert_eq!(call("datetime", &["DD-MM-YYYY", "1", "d"]).unwrap(), "15-11-2023");
        assert_eq!(call("localDatetime", &["iso8601"]).unwrap(), "2023-11-14T23:13:20+01:00");
        assert_eq!(call("localDatetime", &["'HH:mm'", "-2", "h"]).unwrap(), "21:13");
        assert_eq!(call("date", &[]).unwrap(), "2023-11-14", "Kulala's, local");
        assert_eq!(call("env", &["HOME"]).unwrap(), "/home/ada");
        assert_eq!(call("env", &["NOPE"]).unwrap(), "");
        assert_eq!(call("processEnv", &["HOME"]).unwrap(), "/home/ada");
        assert_eq!(call("env.HOME", &[]).unwrap(), "/home/ada", "JetBrains' `$env.NAME`");
        assert_eq!(call("basicAuth", &["ada", "lovelace"]).unwrap(), "Basic YWRhOmxvdmVsYWNl");
        assert_eq!(call("base64", &["hi"]).unwrap(), "aGk=");
        assert!(call("random.email", &[]).unwrap().ends_with("@example.com"));
        assert_eq!(call("random.hexadecimal", &["8"]).unwrap().len(), 8);
        assert!(
            call_builtin(
                "nope",
                &[],
                &BuiltinContext { environment: &Environment::fixed([]), now: None, local_offset: None }
            )
            .is_none()
        );
    }

    #[test]
    fn each_spelling_keeps_its_range() {
        assert_eq!(call("random", &["5", "5"]).unwrap(), "5", "ours includes the maximum");
        assert_eq!(call("randomInt", &["5", "6"]).unwrap(), "5", "REST Client excludes it");
        assert!(call("randomInt", &["5", "5"]).unwrap_err().contains("excluded"));
        assert_eq!(call("random.integer", &["-3", "-2"]).unwrap(), "-3", "so does JetBrains");
        let jetbrains: i64 = call("randomInt", &[]).unwrap().parse().unwrap();
        assert!((0..1000).contains(&jetbrains));
    }

    #[test]
    fn wrong_argument_counts_say_what_is_taken() {
        assert_eq!(call("random", &["1"]).unwrap_err(), "takes 2 arguments `$random(min, max)`, got 1");
        assert_eq!(call("uuid", &["x"]).unwrap_err(), "takes no arguments `$uuid()`, got 1");
        assert_eq!(
            call("datetime", &[]).unwrap_err(),
            "takes 1 or 3 arguments `$datetime(format[, offset, unit])`, got 0"
        );
        assert_eq!(
            call("randomInt", &["1"]).unwrap_err(),
            "takes no arguments or 2 arguments `$randomInt(min, max)`, got 1"
        );
        assert_eq!(call("random.alphabetic", &[]).unwrap_err(), "takes 1 argument `$random.alphabetic(length)`, got 0");
    }

    #[test]
    fn every_builtin_has_a_doc_arities_and_a_source_tool() {
        for name in names() {
            let doc = doc(name);
            assert!(
                ["Volley.", "JetBrains.", "REST Client.", "Kulala.", "Volley, JetBrains.", "REST Client, JetBrains."]
                    .iter()
                    .any(|tool| doc.ends_with(tool))
                    || doc.ends_with("offsets: REST Client."),
                "{name}: {doc}"
            );
            let arities = expected_arguments(name).unwrap();
            assert!(!arities.is_empty() && arities.windows(2).all(|pair| pair[0] < pair[1]), "{name}");
            assert!(signature(name).starts_with('('), "{name}");
            assert!(refusal(name).is_none(), "{name} is both built in and refused");
        }
        assert!(is_builtin("env.PATH") && !is_builtin("env.") && !is_builtin("aadToken"));
    }

    #[test]
    fn refused_resolvers_name_their_tool() {
        let (message, instead) = refusal("aadToken").unwrap();
        assert_eq!(
            message,
            "`$aadToken` (REST Client: an Azure Active Directory token, signed in from the editor) is not \
             supported by Volley"
        );
        assert!(instead.contains("command resolver `aadToken`"), "{instead}");
        assert!(refusal("exampleServer").unwrap().0.starts_with("`$exampleServer` (JetBrains: "));
        assert!(refusal("uuid").is_none());
    }
}
