//! Pre-request scripts and response handlers: the JetBrains HTTP Client script API
//! (`client`, `request`, `response`) in an embedded, sandboxed JavaScript engine
//! (QuickJS through rquickjs in `volley-script`, whose `api.js` is the API itself). This
//! module is the engine's side: what a script is handed, and what comes of its output.
//!
//! A request's scripts are loaded when it is prepared ([`Scripts::load`]): `< {% %}`
//! and `< ./script.js` run then, before the request is built, and may set request
//! variables (the highest layer, for this request) and globals (the client's
//! variables); `> {% %}` and `> ./handler.js` run after the response, and their
//! `client.test` results join the request's assertions. What a script logs and its
//! errors pass through the request's redactor like everything else shown.

mod input;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use volley_syntax::{Document, Position, Request, Span, Spanned};

use crate::assert::{AssertionResult, Outcome};
use crate::body::Files;
use crate::error::BuildError;

pub(crate) use input::{Input, RequestView, ResponseView};
use volley_script::{Failure, FailureKind, Limits, Output, Realm, Run, Script};

pub(crate) use crate::config::{ScriptRealm, ScriptSettings};

/// One script, ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    code: Arc<str>,
    origin: Origin,
    /// httpyac's script API (`exports`, `response.parsedBody`, `await`) instead of the
    /// JetBrains one.
    httpyac: bool,
}

/// Where a script's code comes from.
#[derive(Debug, Clone)]
enum Origin {
    /// Between `{%` and `%}`: the code's span in the `.http` text.
    Inline(Span),
    /// A file: the path as written, with its span.
    File { written: Spanned<String> },
}

/// The scripts of a prepared request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scripts {
    pub(crate) pre_request: Vec<Program>,
    pub(crate) handlers: Vec<Program>,
    pub(crate) limits: ScriptSettings,
}

impl Scripts {
    /// The scripts of `request` of `document`: httpyac's global scripts first, then its
    /// own; script files read relative to the `.http` file.
    pub(crate) fn load(
        document: &Document,
        request: &Request,
        files: &Files<'_>,
        limits: ScriptSettings,
    ) -> Result<Self, BuildError> {
        let mut scripts = Self { limits, ..Self::default() };
        let all = document.global_scripts().chain(&request.scripts);
        for script in all.filter(|script| script.runs()) {
            let httpyac = script.is_httpyac();
            let program = if let Some(code) = &script.code {
                Program { code: Arc::from(code.value.as_str()), origin: Origin::Inline(code.span), httpyac }
            } else if let Some(written) = &script.path {
                let (path, bytes) = files.read(&written.value, written.span)?;
                let code = String::from_utf8(bytes).map_err(|_| BuildError::File {
                    path,
                    span: written.span,
                    source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
                })?;
                Program { code: Arc::from(code), origin: Origin::File { written: written.clone() }, httpyac }
            } else {
                continue;
            };
            if script.is_pre_request() {
                scripts.pre_request.push(program);
            } else {
                scripts.handlers.push(program);
            }
        }
        Ok(scripts)
    }

    /// Where the first response handler is written: the place of what is said about
    /// the handlers as a whole.
    pub(crate) fn handlers_span(&self) -> Span {
        self.handlers.first().map_or_else(Span::default, |program| program.place(None))
    }

    /// `true` when the request has no script to run.
    pub(crate) fn is_empty(&self) -> bool {
        self.pre_request.is_empty() && self.handlers.is_empty()
    }
}

/// What the pre-request scripts of a request did.
#[derive(Debug, Default)]
pub(crate) struct PreRequest {
    /// `request.variables.set` values, for this request only.
    pub(crate) variables: Map<String, Value>,
    /// `client.log` lines.
    pub(crate) logs: Vec<String>,
    /// httpyac's `sleep`: how long to wait before sending.
    pub(crate) sleep: Duration,
}

/// What the response handlers of a request did.
#[derive(Debug, Default)]
pub(crate) struct Handled {
    /// Their tests' results, then a failure of each handler that failed.
    pub(crate) results: Vec<AssertionResult>,
    /// `client.log` lines.
    pub(crate) logs: Vec<String>,
    /// The globals they set (and did not clear after).
    pub(crate) globals: Map<String, Value>,
}

/// The variables scripts share through `client.global`: the client's own. A trait so
/// that the scripts, below the client, do not name it.
pub(crate) trait Globals {
    /// The variables as they are now.
    fn globals(&self) -> Map<String, Value>;
    /// Puts `variables` in place of them all.
    fn replace_globals(&self, variables: Map<String, Value>);
}

impl Realms {
    /// Runs the pre-request scripts in order: each sees the request variables and
    /// globals the ones before it set. Globals are set in `globals` as they go.
    pub(crate) fn run_pre_request(
        &self,
        globals: &dyn Globals,
        scripts: &Scripts,
        input: &mut Input,
    ) -> Result<PreRequest, BuildError> {
        let mut outcome = PreRequest::default();
        for program in &scripts.pre_request {
            input.globals = globals.globals();
            let run = program.run(self, input, "", scripts.limits);
            apply_globals(globals, &run);
            outcome.logs.extend(run.output.logs);
            if run.output.slept > 0.0 {
                outcome.sleep += Duration::from_secs_f64((run.output.slept / 1000.0).min(3600.0));
            }
            for (name, value) in run.output.variables {
                input.variables.insert(name.clone(), value.clone());
                outcome.variables.insert(name, value);
            }
            if let Some(failure) = run.failure {
                return Err(program.error("pre-request script", &failure));
            }
        }
        Ok(outcome)
    }

    /// Runs the response handlers in order: their tests as assertion results (a
    /// handler that fails is one more failed result), their logs, their globals set.
    pub(crate) fn run_handlers(
        &self,
        globals: &dyn Globals,
        scripts: &Scripts,
        input: &mut Input,
        body: &str,
    ) -> Handled {
        let mut handled = Handled::default();
        for program in &scripts.handlers {
            input.globals = globals.globals();
            let run = program.run(self, input, body, scripts.limits);
            apply_globals(globals, &run);
            for (name, value, cleared) in &run.output.globals {
                if *cleared {
                    handled.globals.remove(name);
                } else {
                    handled.globals.insert(name.clone(), value.clone());
                }
            }
            handled.logs.extend(run.output.logs.iter().cloned());
            for test in &run.output.tests {
                let outcome = if test.passed {
                    Outcome::Passed
                } else {
                    Outcome::ScriptFailed { message: test.message.clone().unwrap_or_default() }
                };
                let span = program.place(test.place);
                handled.results.push(AssertionResult { expression: test.name.clone(), span, outcome });
            }
            if let Some(failure) = run.failure {
                let message = program.located(&failure);
                handled.results.push(AssertionResult {
                    expression: "response handler".to_owned(),
                    span: program.place(failure.place),
                    outcome: Outcome::HandlerFailed { message, stack: failure.stack },
                });
            }
        }
        handled
    }
}

/// `client.global` changes of a script, applied to the client's variables.
fn apply_globals(globals: &dyn Globals, run: &Run) {
    let output = &run.output;
    if !output.clear_all && output.globals.is_empty() {
        return;
    }
    let mut variables = if output.clear_all { Map::new() } else { globals.globals() };
    for (name, value, cleared) in &output.globals {
        if *cleared {
            variables.remove(name);
        } else {
            variables.insert(name.clone(), value.clone());
        }
    }
    globals.replace_globals(variables);
}

/// The realms one client's scripts run in. A script takes an idle realm (or makes
/// one) and gives it back when it may be used again; at most [`IDLE_REALMS`] wait.
/// Realms are never shared between clients: a server session's scripts never meet
/// another session's.
#[derive(Debug, Default)]
pub(crate) struct Realms {
    idle: parking_lot::Mutex<Vec<Realm>>,
}

/// How many realms a client keeps for its next scripts (one per script running at
/// the same time, as in the server's concurrent runs of one session).
const IDLE_REALMS: usize = 2;

impl Realms {
    fn run(&self, script: Script<'_>, input: &str, body: &str, limits: Limits, shared: bool) -> Run {
        let idle = if shared { self.idle.lock().pop() } else { None };
        let made = || if shared { Realm::shared() } else { Realm::single() };
        let mut realm = match idle.map_or_else(made, Ok) {
            Ok(realm) => realm,
            Err(failure) => return Run { output: Output::default(), failure: Some(failure) },
        };
        let (run, reusable) = realm.run(script, input, body, limits);
        if reusable {
            let mut idle = self.idle.lock();
            if idle.len() < IDLE_REALMS {
                idle.push(realm);
                return run;
            }
        }
        drop(realm);
        run
    }
}

impl Program {
    /// Runs the script on this thread. On a multi-threaded runtime (the execution
    /// server's) the worker is handed over first, so that a script running to its
    /// time limit never holds up the other connections of its worker.
    fn run(&self, realms: &Realms, input: &Input, body: &str, settings: ScriptSettings) -> Run {
        let json = if self.httpyac {
            let mut value = serde_json::to_value(input).unwrap_or_default();
            if let Some(fields) = value.as_object_mut() {
                fields.insert("httpyac".to_owned(), Value::Bool(true));
                let entropy = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
                fields.insert("entropy".to_owned(), Value::String(entropy));
            }
            value.to_string()
        } else {
            serde_json::to_string(input).unwrap_or_else(|_| "{}".to_owned())
        };
        let limits = Limits { timeout: settings.timeout, memory: settings.memory };
        let shared = settings.realm == ScriptRealm::Client;
        let script = Script { code: &self.code, asynchronous: self.httpyac };
        let run = || realms.run(script, &json, body, limits, shared);
        let multi_threaded = tokio::runtime::Handle::try_current()
            .is_ok_and(|handle| handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_threaded { tokio::task::block_in_place(run) } else { run() }
    }

    /// The failure as a build error placed in the `.http` text.
    fn error(&self, what: &str, failure: &Failure) -> BuildError {
        BuildError::Script {
            message: format!("{what} failed: {}", self.located(failure)),
            stack: failure.stack.clone(),
            span: self.place(failure.place),
        }
    }

    /// `TypeError: … (handler.js:3:5)`; for a script in place, the place is the error's.
    fn located(&self, failure: &Failure) -> String {
        let limit = matches!(failure.kind, FailureKind::Timeout | FailureKind::Memory);
        match (&self.origin, failure.place) {
            (Origin::File { written, .. }, Some((line, column))) if !limit => {
                format!("{} ({}:{line}:{column})", failure.message, written.value)
            }
            _ => failure.message.clone(),
        }
    }

    /// Where a place of the script (1-based line and column) is in the `.http` text:
    /// the line of code for a script in place, the `> ./file.js` line for a file.
    fn place(&self, place: Option<(u32, u32)>) -> Span {
        match &self.origin {
            Origin::File { written, .. } => written.span,
            Origin::Inline(span) => {
                let Some((line, _)) = place else { return *span };
                line_span(&self.code, *span, line)
            }
        }
    }
}

/// The script that evaluates httpyac's `{{ expression }}`: its value, as the request
/// variable `value`. The expression keeps its own line: errors are placed on it.
pub(crate) fn expression_body(code: &str) -> String {
    format!("__volleyValue((\n{code}\n));")
}

/// httpyac's JavaScript expressions in `{{ }}` are evaluated in the client's realms.
impl crate::interpolate::Expressions for Realms {
    fn evaluate_expression(
        &self,
        code: &str,
        variables: Map<String, Value>,
        settings: ScriptSettings,
    ) -> Result<Value, String> {
        let program =
            Program { code: Arc::from(expression_body(code)), origin: Origin::Inline(Span::default()), httpyac: true };
        let input = Input { variables, ..Input::default() };
        let run = program.run(self, &input, "", settings);
        if let Some(failure) = run.failure {
            return Err(failure.message);
        }
        Ok(run.output.variables.get("value").cloned().unwrap_or(Value::Null))
    }
}

impl Realms {
    /// Evaluates httpyac's `?? js <expression>` on a response (`response.parsedBody`,
    /// `response.statusCode`, its headers): its value, or the error.
    pub(crate) fn evaluate_on_response(
        &self,
        code: &str,
        response: &ResponseView,
        body: &str,
        settings: ScriptSettings,
    ) -> Result<Value, String> {
        let program =
            Program { code: Arc::from(expression_body(code)), origin: Origin::Inline(Span::default()), httpyac: true };
        let input = Input { response: Some(response.clone()), ..Input::default() };
        let run = program.run(self, &input, body, settings);
        if let Some(failure) = run.failure {
            return Err(failure.message);
        }
        Ok(run.output.variables.get("value").cloned().unwrap_or(Value::Null))
    }
}

/// A syntax error of a script in place written at `span`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) message: String,
    /// The line at fault, or the whole code when the line is not known.
    pub(crate) span: Span,
}

/// The syntax error of `code`, written at `span`, if it does not parse.
pub(crate) fn syntax_error(code: &str, span: Span, asynchronous: bool) -> Option<SyntaxError> {
    let (message, place) = volley_script::syntax_error(code, asynchronous)?;
    let span = place.map_or(span, |(line, _)| line_span(code, span, line));
    Some(SyntaxError { message, span })
}

/// The span in the `.http` text of line `line` (1-based) of `code`, written at
/// `span`, from its first character that is not blank to its end.
fn line_span(code: &str, span: Span, line: u32) -> Span {
    let mut offset = 0;
    for (index, text) in code.split_inclusive('\n').enumerate() {
        if index + 1 == line as usize {
            let content = text.trim_end_matches(['\n', '\r']);
            let indent = content.len() - content.trim_start().len();
            let (start, end) = (offset + indent, offset + content.len());
            let column = |at: usize| {
                if index == 0 {
                    span.start_position.column + u32::try_from(at).unwrap_or(0)
                } else {
                    u32::try_from(at - offset).unwrap_or(0)
                }
            };
            let row = span.start_position.line + u32::try_from(index).unwrap_or(0);
            return Span {
                start: span.start + start,
                end: span.start + end,
                start_position: Position::new(row, column(start)),
                end_position: Position::new(row, column(end)),
            };
        }
        offset += text.len();
    }
    span
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use volley_syntax::LineIndex;

    use super::{Input, Origin, Program, ScriptSettings, line_span};

    /// A script running to its time limit on the only worker of a multi-threaded
    /// runtime (the server's) leaves the runtime free for other tasks.
    #[test]
    fn a_long_script_does_not_hold_up_other_tasks() {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let ticks = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&ticks);
        runtime.block_on(async move {
            let ticker = tokio::spawn(async move {
                loop {
                    counted.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            });
            let program = Program {
                code: Arc::from("while (true) {}"),
                origin: Origin::Inline(volley_syntax::Span::default()),
                httpyac: false,
            };
            let limits = ScriptSettings { timeout: Duration::from_millis(400), ..ScriptSettings::default() };
            let script = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                program.run(&super::Realms::default(), &Input::default(), "", limits)
            });
            let run = script.await.unwrap();
            assert!(run.failure.is_some(), "the loop stops at the limit");
            ticker.abort();
        });
        // 400 ms of script: a blocked worker would have ticked about twice.
        assert!(ticks.load(Ordering::Relaxed) >= 15, "ticks: {}", ticks.load(Ordering::Relaxed));
    }

    #[test]
    fn a_line_of_code_is_placed_in_the_http_text() {
        let text = "GET /\n\n> {%\n  client.test('a', () => {});\n  oops();\n%}\n";
        let script = volley_syntax::parse(text);
        let code = script.requests().next().and_then(|request| request.scripts[0].code.clone()).expect("code");
        let span = line_span(&code.value, code.span, 3);
        assert_eq!(&text[span.start..span.end], "oops();");
        assert_eq!(span, LineIndex::new(text).span(span.start..span.end));
        let first = line_span("a();\nb();", code.span, 1);
        assert_eq!(first.start_position, code.span.start_position);
    }
}
