//! What came of each request of a run, and what it means for the exit code.

use volley_engine::report::PlacedError;
use volley_engine::{BuildError, Error, Response};
use volley_syntax::{Request, Span};

use super::refusal::{self, Refusal};
use super::select::File;
use super::stream::StreamSummary;
use crate::exit::Exit;

/// One request of the run and what came of it.
#[derive(Debug)]
pub(crate) struct RequestResult {
    /// The file, as shown.
    pub(crate) file: String,
    /// 0-based position in the file.
    pub(crate) index: usize,
    pub(crate) name: Option<String>,
    /// The text of its `# @description`.
    pub(crate) description: Option<String>,
    /// The name, else `METHOD url` as written.
    pub(crate) title: String,
    /// The request line.
    pub(crate) line_span: Span,
    pub(crate) outcome: Outcome,
    /// For an event stream or a WebSocket: what came through it.
    pub(crate) stream: Option<StreamSummary>,
    /// The request whose response this one needed got none in this run: its name and
    /// why (`it was refused: it has errors`), said instead of "has not run yet".
    pub(crate) missing: Option<(String, Missing)>,
    /// How many times it was sent (`--retry`); 1 without retries.
    pub(crate) attempts: u32,
    /// Which run of the selection it belongs to (`--repeat`, from 1); `None` without.
    pub(crate) repetition: Option<u32>,
    /// A gRPC stream's messages (and the title) were printed as they came.
    pub(crate) live: bool,
}

/// Why a named request's response is not there for a later request of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Missing {
    /// It ran, or was reached, and gave none (`it was refused: it has errors`).
    NoResponse(&'static str),
    /// It is a request of another file, which runs with a client of its own (`--jobs`).
    Apart { file: String, jobs: usize },
}

/// What came of a request.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A response (of any status), with its body decoded for display.
    Response { response: Box<Response>, text: String },
    /// No response: the request could not be built or the exchange failed.
    Error(Error),
    /// Not sent: it has errors, or a `# @note` nobody confirmed.
    Refused(Refusal),
    /// Not sent, on purpose.
    Skipped(Skip),
}

/// Why a request was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skip {
    /// `--fail-fast` or Ctrl-C stopped the run before it.
    Stopped,
    /// `# @disabled`.
    Disabled,
    /// Its `# @note` was answered no.
    Declined,
    /// `--strict`: a request of the run has errors, so nothing was sent.
    NotSent,
}

impl Skip {
    /// The `reason` of the JSON record.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Skip::Stopped => "stopped",
            Skip::Disabled => "disabled",
            Skip::Declined => "declined",
            Skip::NotSent => "not-sent",
        }
    }
}

/// `login`, or `GET {{host}}/users` for a request without a name (a password written
/// in the URL shows as `[REDACTED]`: titles go to reports).
pub(crate) fn title(file: &File, request: &Request) -> String {
    if let Some(name) = &request.name {
        return name.value.clone();
    }
    let title = match first_two_words(request.line_span.text(&file.text)) {
        (Some(method), Some(url)) => [method, url].join(" "),
        (first, _) => first.unwrap_or_default().to_owned(),
    };
    match volley_engine::redact::redact_url_password(&title) {
        std::borrow::Cow::Borrowed(_) => title,
        std::borrow::Cow::Owned(redacted) => redacted,
    }
}

/// The first two words of `line`, as `split_whitespace` gives them; an ASCII line (the
/// usual request line) is cut by its bytes, a title for every request of a run.
fn first_two_words(line: &str) -> (Option<&str>, Option<&str>) {
    if !line.is_ascii() {
        let mut words = line.split_whitespace();
        return (words.next(), words.next());
    }
    // The ASCII characters `char::is_whitespace` takes: tab to carriage return, space.
    let space = |byte: &u8| matches!(byte, b'\t'..=b'\r' | b' ');
    let word_from = |from: usize| {
        let start = from + line.as_bytes()[from..].iter().position(|byte| !space(byte))?;
        let end = line.as_bytes()[start..].iter().position(space).map_or(line.len(), |length| start + length);
        Some((start, end))
    };
    let Some((start, end)) = word_from(0) else { return (None, None) };
    (Some(&line[start..end]), word_from(end).map(|(start, end)| &line[start..end]))
}

impl RequestResult {
    pub(crate) async fn new(file: &File, request: &Request, result: Result<Response, Error>) -> Self {
        let outcome = match result {
            Ok(response) => {
                // A streamed body is read by the stream printer, not here.
                let streams = response.is_streaming() || response.is_websocket();
                let text = if streams { String::new() } else { response.text().await.unwrap_or_default() };
                Outcome::Response { response: Box::new(response), text }
            }
            Err(error) => Outcome::Error(error),
        };
        Self::with(file, request, outcome)
    }

    pub(crate) fn skipped(file: &File, request: &Request, why: Skip) -> Self {
        Self::with(file, request, Outcome::Skipped(why))
    }

    pub(crate) fn refused(file: &File, request: &Request, refusal: Refusal) -> Self {
        Self::with(file, request, Outcome::Refused(refusal))
    }

    /// `request` of `file` in a run that sends nothing (`--strict`): refused when it has
    /// errors, else [`Skip::NotSent`].
    pub(crate) fn not_sent(file: &File, request: &Request) -> Self {
        let outcome = match refusal::of(&file.document, request) {
            _ if request.disabled => Outcome::Skipped(Skip::Disabled),
            Some(refusal) => Outcome::Refused(refusal),
            None => Outcome::Skipped(Skip::NotSent),
        };
        Self::with(file, request, outcome)
    }

    fn with(file: &File, request: &Request, outcome: Outcome) -> Self {
        Self {
            file: file.shown.clone(),
            index: request.index,
            name: request.name.as_ref().map(|name| name.value.clone()),
            description: request.description.as_ref().map(|description| description.value.clone()),
            title: title(file, request),
            line_span: request.line_span,
            outcome,
            stream: None,
            missing: None,
            attempts: 1,
            repetition: None,
            live: false,
        }
    }

    /// Worth sending again (`--retry`): an assertion failed, or the exchange failed on
    /// the network. A request that could not be built would fail the same way again; a
    /// stream has been shown as it came.
    pub(crate) fn retryable(&self) -> bool {
        match &self.outcome {
            Outcome::Response { response, .. } => {
                !response.is_streaming() && !response.is_websocket() && !response.assertions_passed()
            }
            Outcome::Error(error) => matches!(error, Error::Transport(_)),
            Outcome::Refused(_) | Outcome::Skipped(_) => false,
        }
    }

    /// The message, place and hint of an [`Outcome::Error`]: the engine's
    /// [`PlacedError`], except for a response of a request this run did not send, whose
    /// message and hint say so.
    pub(crate) fn error_parts(&self, error: &Error, text: &str) -> PlacedError {
        let mut placed = PlacedError::new(error, self.line_span, text);
        match (error, &self.missing) {
            (Error::Build(BuildError::RequestVariable { name, .. }), Some((request, Missing::NoResponse(why)))) => {
                placed.message = format!("`{name}`: request `{request}` has no response in this run ({why})");
                placed.hint = Some(format!("see what happened to `{request}` above; this request needs its response"));
            }
            (
                Error::Build(BuildError::RequestVariable { name, .. }),
                Some((request, Missing::Apart { file, jobs })),
            ) => {
                placed.message = format!(
                    "`{name}`: request `{request}` is in {file}, which runs apart from this file \
                     (--jobs {jobs} gives each file a client of its own)"
                );
                placed.hint = Some(format!(
                    "run with --jobs 1 (the default): the files then run in order with one client, so `{request}` \
                     runs before this request"
                ));
            }
            _ => {}
        }
        placed
    }

    /// The request whose response this one could not read (`login` for a failed
    /// `{{login.response.body.$.token}}`).
    pub(crate) fn needed_response(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Error(Error::Build(BuildError::RequestVariable { name, .. })) => {
                volley_syntax::variable_path_segments(name).first().copied()
            }
            _ => None,
        }
    }

    /// Why a later request cannot read this one's response, when it cannot.
    pub(crate) fn missing_reason(&self) -> Option<&'static str> {
        match &self.outcome {
            Outcome::Response { .. } | Outcome::Skipped(Skip::Stopped | Skip::NotSent) => None,
            Outcome::Refused(Refusal::Errors(_)) => Some("it was refused: it has errors"),
            Outcome::Refused(Refusal::Unconfirmed { .. }) | Outcome::Skipped(Skip::Declined) => {
                Some("its `# @note` was not confirmed")
            }
            Outcome::Skipped(Skip::Disabled) => Some("it is disabled"),
            Outcome::Error(_) => Some("it failed"),
        }
    }

    /// The stream broke (not: ended by either side, or a binary frame).
    pub(crate) fn stream_failed(&self) -> bool {
        self.stream.as_ref().is_some_and(|stream| stream.ended == "error")
    }

    /// A response came and every assertion passed.
    pub(crate) fn passed(&self) -> bool {
        match &self.outcome {
            Outcome::Response { response, .. } => response.assertions_passed() && !self.stream_failed(),
            Outcome::Error(_) | Outcome::Refused(_) => false,
            Outcome::Skipped(_) => true,
        }
    }

    /// Lets go of the response's body, headers and request as sent once the result is
    /// printed ([`Response::release_payload`](volley_engine::Response::release_payload)).
    pub(crate) fn release_payload(&mut self) {
        if let Outcome::Response { response, text } = &mut self.outcome {
            response.release_payload();
            *text = String::new();
        }
    }

    /// What this request means for the exit code.
    pub(crate) fn exit(&self) -> Exit {
        match &self.outcome {
            Outcome::Response { .. } if self.stream_failed() => Exit::Transport,
            Outcome::Response { response, .. } if !response.assertions_passed() => Exit::Failed,
            Outcome::Response { .. } => Exit::Success,
            Outcome::Skipped(Skip::NotSent) | Outcome::Refused(_) => Exit::Invalid,
            Outcome::Skipped(_) => Exit::Success,
            Outcome::Error(error) => error_exit(error),
        }
    }
}

/// 4 for what happened on the network, 3 for a request that could not be made.
pub(crate) fn error_exit(error: &Error) -> Exit {
    match error {
        Error::Transport(_) | Error::Cancelled | Error::TokenRefresh { .. } => Exit::Transport,
        Error::Server { code, .. } => match code.as_str() {
            "EXECUTE_ERROR" => Exit::Transport,
            "PARSE_ERROR" | "VALIDATION_ERROR" | "FILE_NOT_FOUND" | "PATH_OUTSIDE_WORKSPACE" => Exit::Invalid,
            // The server refused the run itself: its URL, token or limits.
            _ => Exit::Usage,
        },
        _ => Exit::Invalid,
    }
}

/// What a run's summary and exit code read of its results, counted as they come: a run
/// that keeps no result whole (no report, no `-o`) keeps this alone.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tally {
    pub(crate) requests: usize,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) errors: usize,
    pub(crate) skipped: usize,
    /// The sends beyond the first of each request (`--retry`).
    pub(crate) retries: u32,
    /// The worst of the results' exit codes.
    pub(crate) exit: Exit,
}

impl Tally {
    /// The tally of `results`.
    pub(crate) fn of<'a>(results: impl IntoIterator<Item = &'a RequestResult>) -> Tally {
        let mut tally = Tally::default();
        for result in results {
            tally.count(result);
        }
        tally
    }

    pub(crate) fn count(&mut self, result: &RequestResult) {
        self.requests += 1;
        match super::record::outcome_name(result) {
            "passed" => self.passed += 1,
            "failed" => self.failed += 1,
            "skipped" => self.skipped += 1,
            _ => self.errors += 1,
        }
        self.retries += result.attempts.saturating_sub(1);
        self.exit = self.exit.worst(result.exit());
    }

    /// Both tallies together.
    pub(crate) fn add(self, other: Tally) -> Tally {
        Tally {
            requests: self.requests + other.requests,
            passed: self.passed + other.passed,
            failed: self.failed + other.failed,
            errors: self.errors + other.errors,
            skipped: self.skipped + other.skipped,
            retries: self.retries + other.retries,
            exit: self.exit.worst(other.exit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::first_two_words;

    /// The bytes' cut gives what `split_whitespace` gives, whatever the line.
    #[test]
    fn the_first_two_words_are_split_whitespaces() {
        for line in [
            "",
            "   ",
            "GET",
            "GET http://a/b HTTP/1.1",
            "  GET\t\thttp://a/b  ",
            "GET\x0bhttp://a\x0c",
            "POST\r\nx",
            "GET\u{a0}http://a/é b",
            "GET http://é/ HTTP/2",
            "é",
        ] {
            let mut words = line.split_whitespace();
            assert_eq!(first_two_words(line), (words.next(), words.next()), "{line:?}");
        }
    }
}
