//! `-o/--output PART`: only one part of the response of the one request run, for
//! scripts: the body as received (`volley run api.http -n me -o body | jq .id`), the
//! headers, the status code, or nothing. Whatever else there is to say (failed
//! assertions, errors) goes to stderr, so stdout holds the part alone; the exit code
//! is the run's.

use super::Mode;
use super::outcome::{Outcome, RequestResult};
use super::select::{File, Problem};

/// A part of the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Part {
    /// The body, byte for byte as received (decompressed), nothing added.
    Body,
    /// The headers, one `name: value` line each.
    Headers,
    /// The status code.
    Status,
    /// Nothing: only the exit code (and stderr) tell how it went.
    None,
}

/// One part is of one response: a run that would send more than one request (`sends`,
/// `--repeat` counted) is a usage error.
pub(crate) fn check(sends: usize) -> Result<(), Problem> {
    if sends == 1 {
        return Ok(());
    }
    Err(Problem::usage(
        format!("--output prints a part of one response, and this run would send {sends} requests"),
        Some("select one request with --name NAME or --index N, in one file and without --repeat"),
    ))
}

/// Prints `part` of the one result, and on stderr what went wrong.
pub(crate) fn print(part: Part, results: &[RequestResult], files: &[File]) {
    let Some(result) = results.first() else { return };
    let Some(file) = files.iter().find(|file| file.shown == result.file) else { return };
    let Outcome::Response { response, .. } = &result.outcome else {
        // No response: the error, the refusal or the skip as the text output says it
        // (all on stderr).
        super::human::print(result, file, Mode::Normal, false);
        return;
    };
    match part {
        // The bytes as they came, never rewritten: what a user takes on purpose (into a
        // file, into `jq`) is the server's answer, as a saved body is.
        Part::Body => crate::output::raw(response.body_bytes()),
        Part::Headers => {
            let lines: Vec<String> = response
                .redactor()
                .headers(response.headers())
                .into_iter()
                .map(|(name, value)| format!("{name}: {value}"))
                .collect();
            if !lines.is_empty() {
                crate::output::line(&lines.join("\n"));
            }
        }
        // A gRPC call's status is its name (`OK`, `NOT_FOUND`), not the HTTP exchange's 200.
        Part::Status => crate::output::line(
            &response.grpc().map_or_else(|| response.status().to_string(), |grpc| grpc.code.clone()),
        ),
        Part::None => {}
    }
    let failures = super::human::failed_checks(response, file);
    if !failures.is_empty() {
        crate::output::error_line(failures.trim_end_matches('\n'));
    }
}
