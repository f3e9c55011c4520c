//! One execution, stage by stage (parse, interpolate, compile, fetch), each reported to
//! observers, kept in the flow's store, and answered in the wire's shapes.

mod compile;
mod grpc;
mod parse;
mod report;
mod source;

use std::sync::Arc;
use std::time::Instant;

use volley_engine::redact::Redactor;
use volley_engine::{Response, RunOptions, Selection};
use volley_protocol::{
    AssertionSummary, AuthDeviceCode, Empty, ExecutionFailed, ExecutionFinished, ExecutionStatus, FetchFinished,
    ObserverEvent, ParseFinished, ParseSource, ParseStarted, RequestLine, RequestQueued, SessionUpdated, Stage,
};

use crate::auth::Access;
use crate::clock::{new_id, now_ms};
use crate::error::ApiError;
use crate::flows::{BODY_PREVIEW_BYTES, Flow, STORED_BODY_BYTES, STORED_LOG_BYTES, StageError, StoredExecution};
use crate::hub::{Emitter, Sequence};
use crate::sessions::Session;
use crate::state::AppState;
use crate::store::Ledger;
use crate::wire::{ExecuteRequest, ExecuteResponse, Limits, RequestInfo, Resolved, SessionRef, TimingInfo};

use compile::compile;
use grpc::GrpcMessages;
pub(crate) use grpc::Relay;
use parse::parse;
pub(crate) use report::assertions;
pub(crate) use source::{scope, validate};

/// What the route expects of the selected request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// `POST /execute`: an HTTP request, answered whole.
    Execute,
    /// `POST /execute/sse`: a Server-Sent Events request, streamed.
    EventStream,
    /// `POST /execute/ws`: a WebSocket request, kept open by the server.
    WebSocket,
}

/// The prompt of one execution: no browser (the authorization-code grant fails at once,
/// saying so); a device code is published as `authDeviceCode` to the execution's
/// observers, the only people who can see it, and written to the server's log.
struct ObservedPrompt {
    emitter: Emitter,
}

impl volley_engine::auth::AuthPrompt for ObservedPrompt {
    fn has_browser(&self) -> bool {
        false
    }

    fn open_browser(&self, _: &str) -> bool {
        false
    }

    fn show_device_code(&self, code: &volley_engine::auth::DeviceCode) {
        volley_engine::auth::NoBrowserPrompt.show_device_code(code);
        self.emitter.emit(ObserverEvent::AuthDeviceCode(AuthDeviceCode {
            user_code: code.user_code.clone(),
            verification_uri: code.verification_uri.clone(),
            verification_uri_complete: code.verification_uri_complete.clone(),
            expires_in: code.expires_in.as_secs(),
        }));
    }
}

/// An execution under way: its ids, where its events go, where it is kept.
#[derive(Debug)]
#[allow(clippy::struct_field_names)] // `run_id` is the wire's name.
pub(crate) struct Run {
    state: AppState,
    pub(crate) run_id: String,
    pub(crate) req_exec_id: String,
    pub(crate) session: Option<Arc<Session>>,
    pub(crate) flow: Option<Arc<Flow>>,
    pub(crate) emitter: Emitter,
    start_ms: u64,
    started: Instant,
    /// With `--redis`: whether Redis took what the execution stored.
    ledger: Arc<Ledger>,
    /// What the run's resolvers read of the server's environment: nothing but
    /// `--allow-env` for a scoped token, the client's otherwise.
    environment: Option<volley_engine::resolvers::Environment>,
}

/// A request sent and answered.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub(crate) response: Response,
    pub(crate) request: RequestInfo,
    pub(crate) resolved: Resolved,
    pub(crate) text: String,
    cookies_before: Vec<(String, String, String, String)>,
    /// The execution's scripts changed the session's variables (`client.global.set`),
    /// told in its turn (a stream finishes after it, when others may have run).
    variables_changed: bool,
    /// The exchange changed the session's cookies, told in its turn.
    cookies_changed: bool,
}

impl Fetched {
    /// What hides the secrets of this execution from observers, the store, the log
    /// and the answer's echo of the request (the engine's policy).
    pub(crate) fn redactor(&self) -> &Redactor {
        self.response.redactor()
    }
}

/// What a finished exchange reported: its timing, the session's state after it, its
/// assertion checks and its scripts' log lines (redacted by the engine).
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) timing: TimingInfo,
    pub(crate) session: Option<SessionRef>,
    pub(crate) assertions: Option<crate::wire::AssertionReport>,
    pub(crate) logs: Vec<String>,
}

/// A stage that failed, and how the API answers it.
#[derive(Debug)]
pub(crate) struct Failure {
    stage: Stage,
    error: ApiError,
}

impl Failure {
    fn at(stage: Stage) -> impl FnOnce(ApiError) -> Self {
        move |error| Self { stage, error }
    }
}

/// A run that ends without settling its stored state (a stream's execution, an error
/// on the way) settles it then: what waits for room is sent, a loss is logged and
/// counted.
impl Drop for Run {
    fn drop(&mut self) {
        if self.ledger.is_unsettled() {
            let (writes, ledger, id) =
                (Arc::clone(&self.state.writes), Arc::clone(&self.ledger), self.req_exec_id.clone());
            tokio::spawn(async move {
                if let Err(lost) = writes.settle(&ledger).await {
                    tracing::warn!(req_exec_id = %id, writes = lost.writes, "a stored execution did not reach Redis");
                }
            });
        }
    }
}

impl Run {
    /// Starts an execution: ids, `requestQueued`, a `pending` entry in the flow's store.
    pub(crate) fn begin(
        state: &AppState,
        access: &Access,
        session: Option<Arc<Session>>,
        flow: Option<Arc<Flow>>,
        label: Option<&str>,
    ) -> Self {
        let environment = access
            .claims()
            .map(|_| volley_engine::stages::environment(&state.base_client).allowing(state.config.allow_env.clone()));
        let run_id = new_id("run");
        let req_exec_id = new_id("exec");
        let sequence = flow.as_ref().map_or_else(Sequence::run, |flow| flow.sequence());
        let emitter = Emitter {
            hub: Arc::clone(&state.hub),
            run_id: Some(run_id.clone()),
            session_id: session.as_ref().map(|session| session.id.clone()),
            flow_id: flow.as_ref().map(|flow| flow.id.clone()),
            req_exec_id: Some(req_exec_id.clone()),
            sequence,
        };
        let start_ms = now_ms();
        let ledger = Arc::default();
        if let Some(flow) = &flow {
            flow.record(
                StoredExecution {
                    req_exec_id: req_exec_id.clone(),
                    flow_id: flow.id.clone(),
                    session_id: emitter.session_id.clone(),
                    req_label: label.map(str::to_owned),
                    method: String::new(),
                    url_template: String::new(),
                    url_resolved: String::new(),
                    headers: Vec::new(),
                    body_preview: None,
                    timing: TimingInfo { start_time: start_ms, end_time: None, duration_ms: None, ttfb: None },
                    response: None,
                    assertions: None,
                    logs: Vec::new(),
                    logs_truncated: false,
                    status: ExecutionStatus::Pending,
                    error: None,
                },
                state.config.max_executions_per_flow,
                &ledger,
            );
        }
        emitter.emit(ObserverEvent::RequestQueued(RequestQueued { req_label: label.map(str::to_owned) }));
        Self {
            state: state.clone(),
            run_id,
            req_exec_id,
            session,
            flow,
            emitter,
            start_ms,
            started: Instant::now(),
            ledger,
            environment,
        }
    }

    /// Waits until the events and stored states of the execution are where every
    /// instance reads them (with `--redis`, in Redis; at most `SETTLE_WAIT`); an error
    /// for the client when what it stored did not get there.
    pub(crate) async fn written(&self) -> Result<(), ApiError> {
        let writes = &self.state.writes;
        if self.flow.is_none() && !writes.listened() {
            return Ok(());
        }
        writes.settle(&self.ledger).await.map_err(|lost| {
            let flow = self.flow.as_ref().map_or("", |flow| flow.id.as_str());
            ApiError::not_stored(&self.req_exec_id, flow, lost.writes)
        })
    }

    fn store(&self, change: impl FnOnce(&mut StoredExecution)) {
        if let Some(flow) = &self.flow {
            flow.update(&self.req_exec_id, &self.ledger, change);
        }
    }

    /// Parses, interpolates, compiles and sends the selected request.
    async fn fetch(&self, body: &ExecuteRequest, route: Route, relay: Option<&Relay>) -> Result<Fetched, Failure> {
        self.store(|stored| stored.status = ExecutionStatus::Running);
        // Parse.
        let source = if body.path.is_some() { ParseSource::Path } else { ParseSource::Content };
        self.emitter.emit(ObserverEvent::ParseStarted(ParseStarted { source }));
        let mut source = source::read(&self.state, body).map_err(Failure::at(Stage::Parse))?;
        let (text, document) = parse(std::mem::take(&mut source.text), &self.state).await;
        source.text = text;
        let document = document.map_err(Failure::at(Stage::Parse))?;
        let selection = match (&body.request_name, body.request_index) {
            (Some(name), _) => Selection::Name(name.clone()),
            (None, Some(index)) => Selection::Index(usize::try_from(index).unwrap_or(usize::MAX)),
            (None, None) => Selection::First,
        };
        let request = selection
            .find(&document)
            .map_err(|error| report::engine_error(&error.into(), &source.text))
            .map_err(Failure::at(Stage::Parse))?;
        let index = request.index;
        // Refused by the rule of every front end: its own errors, or a broken file
        // variable it uses. The rest of the content may have errors of its own.
        if let Some(refusal) = document.refusal_of(request) {
            let error = volley_engine::Error::Invalid { diagnostics: refusal.into_diagnostics() };
            return Err(Failure { stage: Stage::Parse, error: report::engine_error(&error, &source.text) });
        }
        if request.disabled {
            return Err(Failure { stage: Stage::Parse, error: report::disabled(request, &source.text) });
        }
        let name = request.name.as_ref().map(|name| name.value.clone());
        let description = request.description.as_ref().map(|description| description.value.clone());
        // As written, but a password written in the URL never leaves the server.
        let template = volley_engine::redact::redact_url_password(&request.url.to_source()).into_owned();
        self.emitter.emit(ObserverEvent::ParseFinished(ParseFinished {
            request_count: document.requests().count(),
            index,
            name: name.clone(),
            description,
        }));
        // Interpolate.
        self.emitter.emit(ObserverEvent::InterpolateStarted(Empty {}));
        let client = match &self.session {
            Some(session) => session.client.clone(),
            None => self.state.new_client(serde_json::Map::new()),
        };
        let messages = Arc::new(GrpcMessages::new(self.emitter.clone(), relay));
        let heard = Arc::clone(&messages);
        let options = RunOptions::default()
            .on_grpc_message(move |number, message| heard.tell(number, message))
            .variables(body.variables.clone().unwrap_or_default())
            .timeout(body.timeout_ms.map(std::time::Duration::from_millis))
            .profile_or_default(body.profile.clone())
            .follow_redirects(body.follow_redirects)
            .validate_ssl(body.validate_ssl)
            .max_body_bytes(self.state.config.max_body_size)
            .environment(self.environment.clone());
        let engine_path = source.engine_path();
        // httpyac's `@loop` is many sends, an execution one: refused by name, not sent once.
        if request.repeat().is_some() {
            let error = volley_engine::Error::Build(volley_engine::BuildError::Interpolation {
                message: "`@loop` is not run by the execution server (one execution sends one request): run it \
                          with `volley run` or from the editor"
                    .to_owned(),
                span: request.line_span,
            });
            return Err(Failure::at(Stage::Interpolate)(report::engine_error(&error, &source.text)));
        }
        // `@ref` / `@forceRef`: the requests named run first, in the same client.
        volley_engine::stages::run_references(&client, &document, request, Some(&engine_path), &options)
            .await
            .map_err(|error| report::engine_error(&error, &source.text))
            .map_err(Failure::at(Stage::Interpolate))?;
        let mut prepared =
            volley_engine::stages::prepare_request(&client, &document, request, Some(&engine_path), &options)
                .await
                .map_err(|error| report::engine_error(&error, &source.text))
                .map_err(Failure::at(Stage::Interpolate))?;
        // Everything shown of the request goes through the engine's redaction policy:
        // `$secret` values, sensitive-named variables of every layer (session,
        // execution, configuration, profile, env files), credential headers.
        let redactor = prepared.redactor.clone();
        let shown_url = redactor.redact(prepared.url.as_str()).into_owned();
        self.emitter.emit(ObserverEvent::InterpolateFinished(RequestLine {
            method: prepared.method.as_str().to_owned(),
            url: shown_url.clone(),
        }));
        // Compile.
        self.emitter.emit(ObserverEvent::CompileStarted(Empty {}));
        compile(&mut prepared, body, route).map_err(Failure::at(Stage::Compile))?;
        let headers = report::headers(&redactor, &prepared.headers);
        let preview = (!prepared.body.is_empty()).then(|| {
            let kept = &prepared.body[..prepared.body.len().min(BODY_PREVIEW_BYTES)];
            redactor.redact(&String::from_utf8_lossy(kept)).into_owned()
        });
        let method = prepared.method.to_string();
        let config_path = prepared.config_path.as_ref().map(|path| path.display().to_string());
        self.store(|stored| {
            stored.method.clone_from(&method);
            stored.url_template.clone_from(&template);
            stored.url_resolved.clone_from(&shown_url);
            stored.headers = headers;
            stored.body_preview = preview;
        });
        self.emitter
            .emit(ObserverEvent::CompileFinished(RequestLine { method: method.clone(), url: shown_url.clone() }));
        // Fetch.
        self.emitter.emit(ObserverEvent::FetchStarted(RequestLine { method: method.clone(), url: shown_url.clone() }));
        let cookies_before = self.session.as_ref().map(|session| session.cookies()).unwrap_or_default();
        // A device flow's code goes to this execution's observers (and the server's log).
        let prompt = Arc::new(ObservedPrompt { emitter: self.emitter.clone() });
        let cancel = relay.map(|relay| &relay.cancel);
        let response =
            volley_engine::auth::with_prompt(prompt, Box::pin(volley_engine::stages::send(&client, prepared, cancel)))
                .await
                .map_err(|error| report::engine_error(&error, &source.text))
                .map_err(Failure::at(Stage::Fetch))?;
        messages.tell_rest(&response);
        let ttfb = millis(response.timing().ttfb);
        self.emitter.emit(ObserverEvent::FetchFinished(FetchFinished {
            method: method.clone(),
            url: shown_url.clone(),
            status: response.status(),
            ttfb,
        }));
        let resolved = Resolved {
            workspace_root: self.state.workspace.root.display().to_string(),
            base_path: source.base.display().to_string(),
            http_file_path: source.http_file.as_ref().map(|path| path.display().to_string()),
            config_path,
        };
        let request = RequestInfo { index, name, method, url: template, url_resolved: shown_url };
        Ok(Fetched {
            response,
            request,
            resolved,
            text: source.text,
            cookies_before,
            variables_changed: false,
            cookies_changed: false,
        })
    }

    /// [`fetch`](Self::fetch) in the session's turn: executions of one session run one
    /// at a time, and the turn ends once the request is answered (a stream or a
    /// WebSocket lives on without it).
    /// With `--redis` the turn is the cluster's: the session is read from Redis once
    /// the turn is taken, and what the execution changed of it is saved before the
    /// turn ends.
    pub(crate) async fn fetch_in_turn(
        &self,
        body: &ExecuteRequest,
        route: Route,
        relay: Option<&Relay>,
    ) -> Result<Fetched, Failure> {
        let _turn = match &self.session {
            Some(session) => Some(session.run_lock.lock().await),
            None => None,
        };
        let sessions = &self.state.sessions;
        let _shared_turn = match &self.session {
            Some(session) => Some(sessions.turn(session).await.map_err(Failure::at(Stage::Interpolate))?),
            None => None,
        };
        let before = self.session.as_ref().map(|session| session.variables());
        let fetched = self.fetch(body, route, relay).await;
        let changed = match (&self.session, &before) {
            (Some(session), Some(before)) => session.variables_differ(before),
            _ => false,
        };
        match fetched {
            Ok(mut fetched) => {
                fetched.variables_changed = changed;
                if let Some(session) = &self.session {
                    fetched.cookies_changed = session.cookies() != fetched.cookies_before;
                    sessions
                        .save(session, changed, fetched.cookies_changed)
                        .await
                        .map_err(Failure::at(Stage::Fetch))?;
                    if let Some(name) = &fetched.request.name {
                        sessions.save_chained(session, name).await.map_err(Failure::at(Stage::Fetch))?;
                    }
                }
                Ok(fetched)
            }
            Err(failure) => {
                // What a pre-request script set before it failed stays set.
                if let (Some(session), true) = (&self.session, changed) {
                    if let Err(error) = sessions.save(session, true, false).await {
                        tracing::warn!(session = %session.id, "cannot save the session's variables: {}", error.message);
                    }
                    self.session_updated(session, true, false);
                }
                Err(failure)
            }
        }
    }

    /// A session whose variables (a script's `client.global.set`) or cookies an
    /// execution changed (and saved, which gave it its new snapshot version): `sessionUpdated`.
    fn session_updated(&self, session: &Session, variables_changed: bool, cookies_changed: bool) -> u64 {
        let version = session.snapshot_version();
        self.emitter.emit(ObserverEvent::SessionUpdated(SessionUpdated {
            variables_changed,
            cookies_changed,
            snapshot_version: None,
        }));
        version
    }

    /// Reports a failed stage: `executionFailed`, the store; the error to answer.
    pub(crate) fn fail(&self, failure: Failure) -> ApiError {
        let Failure { stage, error } = failure;
        let detail = |key: &str| error.details.as_ref()?.get(key)?.as_str().map(str::to_owned);
        let kind = detail("kind").or_else(|| detail("code"));
        self.emitter.emit(ObserverEvent::ExecutionFailed(ExecutionFailed {
            stage,
            message: error.message.clone(),
            code: error.code,
            kind: kind.clone(),
        }));
        let end = now_ms();
        let duration = millis(self.started.elapsed());
        self.store(|stored| {
            stored.status = ExecutionStatus::Failed;
            stored.error = Some(StageError { stage, message: error.message.clone(), kind });
            stored.timing.end_time = Some(end);
            stored.timing.duration_ms = Some(duration);
        });
        error
    }

    /// Reports a finished exchange (assertions, `executionFinished`, a session whose
    /// cookies changed) and keeps it in the store.
    pub(crate) fn finish(&self, fetched: &Fetched, events: Option<u64>) -> Finished {
        let response = &fetched.response;
        let report = assertions(response.assertions(), &fetched.text);
        if let Some(report) = &report {
            self.emitter.emit(ObserverEvent::AssertionReport(report.clone()));
        }
        let duration = millis(self.started.elapsed());
        let end = now_ms();
        let summary = report.as_ref().map(|report| AssertionSummary {
            passed: report.passed,
            total: report.total,
            failed: report.failed,
        });
        // The engine has hidden the secrets of its scripts' lines already.
        let logs = response.logs().to_vec();
        self.emitter.emit(ObserverEvent::ExecutionFinished(ExecutionFinished {
            status: response.status(),
            duration_ms: duration,
            assertions: summary,
            events,
            logs: (!logs.is_empty()).then_some(logs.len()),
        }));
        let passed = report.as_ref().is_none_or(|report| report.passed);
        let timing = TimingInfo {
            start_time: self.start_ms,
            end_time: Some(end),
            duration_ms: Some(duration),
            ttfb: Some(millis(response.timing().ttfb)),
        };
        let stored_timing = timing.clone();
        // The headers as they went out (the jar's cookies, a token got by a grant
        // included), no longer those written.
        let sent = report::headers(response.redactor(), &response.request().headers);
        self.store(|stored| {
            stored.headers = sent;
            stored.status = if passed { ExecutionStatus::Success } else { ExecutionStatus::Failed };
            stored.response = Some(report::stored_response(response, STORED_BODY_BYTES));
            stored.assertions.clone_from(&report);
            (stored.logs, stored.logs_truncated) = report::stored_logs(&logs, STORED_LOG_BYTES);
            stored.timing = stored_timing;
        });
        let session = self.session.as_ref().map(|session| {
            let (variables_changed, cookies_changed) = (fetched.variables_changed, fetched.cookies_changed);
            let version = if variables_changed || cookies_changed {
                self.session_updated(session, variables_changed, cookies_changed)
            } else {
                session.snapshot_version()
            };
            SessionRef { session_id: session.id.clone(), snapshot_version: version }
        });
        Finished { timing, session, assertions: report, logs }
    }

    /// The whole `/execute` answer (`events`: of a relayed stream, how many it had).
    pub(crate) fn answer(&self, fetched: &Fetched, events: Option<u64>) -> ExecuteResponse {
        let Finished { timing, session, assertions, logs } = self.finish(fetched, events);
        ExecuteResponse {
            run_id: self.run_id.clone(),
            req_exec_id: self.req_exec_id.clone(),
            flow_id: self.flow.as_ref().map(|flow| flow.id.clone()),
            session,
            request: fetched.request.clone(),
            resolved: fetched.resolved.clone(),
            response: report::response_info(&fetched.response),
            limits: Limits { max_body_bytes: self.state.config.max_body_size },
            timing,
            assertions,
            logs,
        }
    }
}

/// A duration in milliseconds, to the microsecond.
pub(crate) fn millis(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Runs `/execute`: scope, serialisation per session, the stages, the answer.
pub(crate) async fn execute(
    state: &AppState,
    access: &Access,
    body: ExecuteRequest,
) -> Result<ExecuteResponse, ApiError> {
    validate(&body, state.config.max_body_size, Route::Execute)?;
    let (session, flow) = scope(state, access, &body).await?;
    let run = Run::begin(state, access, session, flow, body.req_label.as_deref());
    let answer = match run.fetch_in_turn(&body, Route::Execute, None).await {
        Ok(fetched) => Ok(run.answer(&fetched, None)),
        Err(failure) => Err(run.fail(failure)),
    };
    // An execution that failed says so already; one that ran but was not stored says that.
    let written = run.written().await;
    match answer {
        Ok(answer) => written.map(|()| answer),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Handlers run on a multi-threaded runtime: the execution must be `Send`.
    #[allow(dead_code, clippy::diverging_sub_expression)] // Only compiled, never run.
    fn execution_is_send(state: &AppState, access: &Access) {
        fn is_send<T: Send>(_: &T) {}
        is_send(&execute(state, access, ExecuteRequest::default()));
    }
}
