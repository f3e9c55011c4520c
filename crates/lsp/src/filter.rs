//! jq filters on a response body (`# @jq`, the editors' interactive filter), evaluated
//! by jaq, a pure-Rust jq. A filter can loop or recurse without end (`def f: f; f`
//! overflows the stack and aborts its process), so the language server never evaluates
//! one itself: `volley jq` (a hidden subcommand of the one binary, [`evaluate_stdio`])
//! does, in a child process that limits its own memory, killed past [`TIME_LIMIT`],
//! its output capped at [`MOST_OUTPUT`].

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data, unwrap_valr};
use jaq_json::{Val, read, write};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// How long a filter may run.
pub const TIME_LIMIT: Duration = Duration::from_secs(5);
/// Most bytes of a filter's output.
pub const MOST_OUTPUT: usize = 16 * 1024 * 1024;
/// Most bytes of memory the filter's process may map writable (`RLIMIT_DATA`). The
/// allocator reserves 1 GiB arenas up front, which count whole: under 2 GiB a first
/// arena could be refused while little memory is in use.
const MOST_MEMORY: u64 = 2 << 30;

/// The output of `expression` on the JSON `body`: each value it yields pretty-printed,
/// one per line group; or a message saying what is wrong (the body is not JSON, the
/// expression does not compile, it failed while running).
pub fn evaluate(body: &[u8], expression: &str) -> Result<String, String> {
    let input = read::parse_single(body).map_err(|error| format!("the body is not JSON: {error}"))?;
    let definitions = jaq_core::defs().chain(jaq_std::defs()).chain(jaq_json::defs());
    let functions = jaq_core::funs().chain(jaq_std::funs()).chain(jaq_json::funs());
    let arena = Arena::default();
    let modules = Loader::new(definitions)
        .load(&arena, File { code: expression, path: () })
        .map_err(|errors| load_message(expression, errors))?;
    let filter = Compiler::default().with_funs(functions).compile(modules).map_err(|errors| {
        let found: Vec<String> = errors
            .into_iter()
            .flat_map(|(_, errors)| errors)
            .map(|(name, undefined)| {
                format!("undefined {} `{name}` at column {}", undefined.as_str(), column(expression, name))
            })
            .collect();
        found.join("; ")
    })?;
    let context = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
    let style = write::Pp { indent: Some("  ".to_owned()), sep_space: true, ..write::Pp::default() };
    let mut output = Vec::new();
    for value in filter.id.run((context, input)).map(unwrap_valr) {
        let value = value.map_err(|error| format!("the filter failed: {error}"))?;
        write::write(&mut output, &style, 0, &value).map_err(|error| error.to_string())?;
        output.push(b'\n');
        if output.len() > MOST_OUTPUT {
            return Err(format!("the filter's output passed {} MiB", MOST_OUTPUT >> 20));
        }
    }
    Ok(String::from_utf8_lossy(&output).into_owned())
}

/// `volley jq EXPRESSION`: the body on stdin, the output on stdout, a message on stderr
/// (exit 1). Limits its own memory first.
#[must_use]
pub fn evaluate_stdio(expression: &str) -> bool {
    limit_memory();
    let mut body = Vec::new();
    if let Err(error) = std::io::Read::read_to_end(&mut std::io::stdin(), &mut body) {
        eprintln!("cannot read the body: {error}");
        return false;
    }
    match evaluate(&body, expression) {
        Ok(output) => std::io::Write::write_all(&mut std::io::stdout(), output.as_bytes()).is_ok(),
        Err(message) => {
            eprintln!("{message}");
            false
        }
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // One system call: see its safety note.
fn limit_memory() {
    let limit = libc::rlimit { rlim_cur: MOST_MEMORY, rlim_max: MOST_MEMORY };
    // SAFETY: `setrlimit` reads the struct it is given and changes only this process's limit.
    unsafe {
        libc::setrlimit(libc::RLIMIT_DATA, &raw const limit);
    }
}

#[cfg(not(target_os = "linux"))]
fn limit_memory() {}

/// Runs `expression` on `body` through `program jq` (the `volley` binary), with the
/// limits of this module.
pub(crate) async fn filter(program: &Path, body: &str, expression: &str) -> Result<String, String> {
    let mut child = tokio::process::Command::new(program)
        .arg("jq")
        .arg(expression)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| format!("cannot start `{} jq`: {error}", program.display()))?;
    let (Some(mut stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("the filter's process has no pipes".to_owned());
    };
    let body = body.as_bytes().to_vec();
    let write = async move {
        // A filter that stops reading early closes the pipe: not an error of the filter.
        let _ = stdin.write_all(&body).await;
    };
    let read = async {
        let mut output = Vec::new();
        let cap = u64::try_from(MOST_OUTPUT).unwrap_or(u64::MAX) + 1;
        stdout.take(cap).read_to_end(&mut output).await.map(|_| output)
    };
    let mut message = String::new();
    let run = async {
        let ((), output, _) = tokio::join!(write, read, stderr.read_to_string(&mut message));
        (output, child.wait().await)
    };
    let (output, status) = tokio::time::timeout(TIME_LIMIT, run)
        .await
        .map_err(|_| format!("the filter did not finish in {} s", TIME_LIMIT.as_secs()))?;
    let output = output.map_err(|error| format!("cannot read the filter's output: {error}"))?;
    if output.len() > MOST_OUTPUT {
        return Err(format!("the filter's output passed {} MiB", MOST_OUTPUT >> 20));
    }
    match status {
        Ok(status) if status.success() => Ok(String::from_utf8_lossy(&output).into_owned()),
        // `evaluate_stdio` fails with 1 and a message; anything else is a crash.
        Ok(status) if status.code() == Some(1) && !message.trim().is_empty() => Err(message.trim().to_owned()),
        Ok(_) => Err(format!(
            "the filter stopped: it needed more than {} GiB of memory, or recursed without end",
            MOST_MEMORY >> 30
        )),
        Err(error) => Err(format!("the filter's process failed: {error}")),
    }
}

/// The `volley` binary that runs filters: this process's, when it is one.
pub(crate) fn program() -> Option<PathBuf> {
    std::env::current_exe().ok().filter(|path| path.file_stem().is_some_and(|stem| stem == "volley"))
}

fn load_message(expression: &str, errors: jaq_core::load::Errors<&str, ()>) -> String {
    use jaq_core::load::Error;
    let expected = |(expected, at): (&str, &str)| format!("expected {expected} at column {}", column(expression, at));
    let mut found = Vec::new();
    for (_, error) in errors {
        match error {
            Error::Io(errors) => found.extend(errors.into_iter().map(|(name, message)| format!("`{name}`: {message}"))),
            Error::Lex(errors) => found.extend(errors.iter().map(|(what, at)| expected((what.as_str(), at)))),
            Error::Parse(errors) => found.extend(errors.iter().map(|(what, at)| expected((what.as_str(), at)))),
        }
    }
    format!("the filter does not parse: {}", found.join("; "))
}

/// The 1-based column of `part`, a slice of `expression`.
fn column(expression: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(expression.as_ptr() as usize).min(expression.len());
    expression[..offset].chars().count() + 1
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn a_filter_yields_each_value_pretty_printed() {
        let body = br#"{"items": [{"id": 1, "tags": ["a"]}, {"id": 2, "tags": []}]}"#;
        assert_eq!(evaluate(body, ".items[].id").as_deref(), Ok("1\n2\n"));
        assert_eq!(evaluate(body, "[.items[] | select(.tags | length > 0)] | map(.id)").as_deref(), Ok("[\n  1\n]\n"));
        assert_eq!(evaluate(body, ".items[0]").as_deref(), Ok("{\n  \"id\": 1,\n  \"tags\": [\n    \"a\"\n  ]\n}\n"));
    }

    #[test]
    fn what_is_wrong_is_said() {
        assert_eq!(evaluate(b"<html>", ".").unwrap_err().split(':').next(), Some("the body is not JSON"));
        let parse = evaluate(b"{}", ".items[").unwrap_err();
        assert!(parse.starts_with("the filter does not parse: expected"), "{parse}");
        let undefined = evaluate(b"{}", ".a | nosuch").unwrap_err();
        assert_eq!(undefined, "undefined filter `nosuch` at column 6");
        let failed = evaluate(b"{\"a\": 1}", ".a[0]").unwrap_err();
        assert!(failed.starts_with("the filter failed: cannot index"), "{failed}");
    }
}
