//! Sending requests from the editor: the `volley.send` and `volley.sendAll` commands of
//! `workspace/executeCommand` (what the "Send Request" and "Send All" code lenses run).
//! Requests go through the engine in this process, with the unsaved text of the
//! document, the active profile and one client per language server (so chaining and
//! cookies carry over from one send to the next), or, with the `server` setting,
//! through an execution server (`remote.rs`). The result is JSON for editors to
//! display (`outcome.rs`, documented in docs/lsp.md); streaming responses are listened
//! to by `listen.rs`.

pub(crate) mod remote;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use volley_engine::assert::Outcome as Check;
use volley_engine::report::{ErrorKind, Exchange, PlacedError, SentSummary};
use volley_engine::stages::PreparedRequest;
use volley_engine::{CancellationToken, Error, Response, RunOptions};
use volley_syntax::{Document, Request};

use crate::listen::{Listen, Live, STREAM_ITEMS, STREAM_WINDOW, listen_events, listen_websocket};
use crate::outcome::{
    AssertionInfo, DiagnosticInfo, ErrorInfo, MAX_BODY_BYTES, Outcome, RequestInfo, ResponseInfo, SentInfo, TimingInfo,
    milliseconds,
};

/// The command of the "Send Request" lens.
pub(crate) const SEND: &str = "volley.send";
/// The command of the "Send All" lens.
pub(crate) const SEND_ALL: &str = "volley.sendAll";
/// Selects the active profile (argument: its name, or `null` for none).
pub(crate) const SELECT_PROFILE: &str = "volley.selectProfile";
/// Lists the profiles of the configuration of a document and the active one.
pub(crate) const PROFILES: &str = "volley.profiles";
/// Empties the cookie jar of a document's workspace folder (every jar without a `uri`).
pub(crate) const CLEAR_COOKIES: &str = "volley.clearCookies";
/// Writes a request, built as `volley.send` would send it, as a curl command line.
pub(crate) const COPY_AS_CURL: &str = "volley.copyAsCurl";

/// Converts a cURL command, HAR, Postman, Insomnia or OpenAPI file to `.http` files.
pub(crate) const IMPORT: &str = "volley.import";

/// Runs a jq filter on a response body (the editors' interactive filter).
pub(crate) const FILTER: &str = "volley.filter";

/// Lists a file's requests and the checks written in them, for an editor's test view.
pub(crate) const TESTS: &str = "volley.tests";
/// Lists the stored responses (the response history).
pub(crate) const HISTORY: &str = "volley.history";
/// One stored response, written out for reading and diffing.
pub(crate) const HISTORY_ENTRY: &str = "volley.historyEntry";
/// Removes stored responses.
pub(crate) const HISTORY_CLEAR: &str = "volley.historyClear";
/// Writes a request as code of another language (curl, fetch, Python, Go).
pub(crate) const SNIPPET: &str = "volley.snippet";

/// Every command the server executes.
pub(crate) const COMMANDS: [&str; 13] = [
    SEND,
    SEND_ALL,
    SELECT_PROFILE,
    PROFILES,
    CLEAR_COOKIES,
    COPY_AS_CURL,
    IMPORT,
    FILTER,
    TESTS,
    HISTORY,
    HISTORY_ENTRY,
    HISTORY_CLEAR,
    SNIPPET,
];

/// The arguments of `volley.send` and `volley.sendAll` (the first element of
/// `arguments`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SendArguments {
    /// The document.
    pub(crate) uri: String,
    /// The request by index in the file (0-based), as the lenses pass it.
    #[serde(default)]
    pub(crate) index: Option<usize>,
    /// The request by name.
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// The request whose block holds this line (0-based): the cursor's, from the
    /// command palette.
    #[serde(default)]
    pub(crate) line: Option<u32>,
    /// How long to listen to a streaming response, in milliseconds.
    #[serde(default)]
    pub(crate) stream_window_ms: Option<u64>,
    /// How many events or messages of a streaming response to keep.
    #[serde(default)]
    pub(crate) max_stream_items: Option<usize>,
    /// An id of the client's choosing: while a streaming response is listened to, each
    /// event or message is also sent at once as a `volley/stream` notification carrying
    /// this id, so an editor can show it live.
    #[serde(default)]
    pub(crate) live: Option<String>,
}
/// The requests `arguments` select in `document`: one for `volley.send`, all for
/// `volley.sendAll`. An error message when none matches.
pub(crate) fn select<'a>(
    document: &'a Document,
    arguments: &SendArguments,
    line_of: impl Fn(usize) -> u32,
) -> Result<&'a Request, String> {
    if let Some(index) = arguments.index {
        return document.request(index).ok_or_else(|| format!("the document has no request #{}", index + 1));
    }
    if let Some(name) = &arguments.name {
        return document.request_named(name).ok_or_else(|| format!("the document has no request named `{name}`"));
    }
    if let Some(line) = arguments.line {
        // A request owns its whole block, from its `###` line to the next: a cursor on
        // the separator, a `# @name`, a directive or a comment above the request line
        // selects it, never the request before.
        let block =
            document.block_at_line_by(line, &line_of).ok_or_else(|| "the document has no request".to_owned())?;
        return block.request.as_deref().ok_or_else(|| {
            let first = line_of(block.span.start) + 1;
            let last = line_of(block.span.end.saturating_sub(1).max(block.span.start)) + 1;
            let lines = if first == last { format!("line {first}") } else { format!("lines {first}–{last}") };
            format!(
                "line {} is in a block without a request ({lines}); put the cursor in the request to send, anywhere \
                 from its `###` line to the next",
                line + 1
            )
        });
    }
    Err("say which request to send: `index`, `name` or `line`".to_owned())
}

/// What sending requests of one document needs beside the request.
pub(crate) struct Sender<'a> {
    pub(crate) engine: &'a volley_engine::Client,
    /// The jar of the document's workspace folder, or why it cannot be read.
    pub(crate) cookie_jar: &'a Result<Option<volley_engine::CookieJar>, String>,
    pub(crate) document: &'a Document,
    /// The document's text, which the spans of its requests point into.
    pub(crate) text: &'a str,
    pub(crate) path: Option<&'a Path>,
    pub(crate) profile: Option<&'a str>,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) arguments: &'a SendArguments,
    /// Where streaming items go as they arrive (when the arguments gave a `live` id).
    pub(crate) client: &'a tower_lsp_server::Client,
    /// The execution server sends go through (the `server` setting); `None`: here.
    pub(crate) remote: Option<&'a remote::Connection>,
    /// The workspace folders, innermost first.
    pub(crate) folders: &'a [PathBuf],
    /// What a `run` line sets for its requests (`run #login (@user=ada)`).
    pub(crate) variables: Option<&'a serde_json::Map<String, serde_json::Value>>,
    /// Another name the response is kept under (a `@loop` iteration's `login0`).
    pub(crate) also_named: Option<String>,
    /// The history setting, when sends are recorded.
    pub(crate) history: Option<&'a crate::history::Setting>,
    /// Where bodies longer than an outcome keeps are written.
    pub(crate) bodies: &'a crate::bodies::Bodies,
}

impl Sender<'_> {
    /// Sends `request` (of the sender's document) and describes what came of it. A
    /// request refused by [`Document::refusal_of`] (errors of its own, or a broken file
    /// variable it uses) is not sent (`invalid`, with the reasons), a `# @disabled` one is not
    /// sent (`disabled`), and a `# @note` one is sent only once the user confirms it
    /// (`window/showMessageRequest`; else `not-confirmed`).
    pub(crate) async fn send(&self, request: &Request) -> Outcome {
        let mut outcome = Box::pin(self.send_unrecorded(request)).await;
        if outcome.response.as_ref().is_some_and(|response| response.body_file.is_some()) {
            self.bodies.prune();
        }
        if let (Some(setting), Some(path)) = (self.history, self.path) {
            crate::history::record(setting, path, &mut outcome).await;
        }
        outcome
    }

    async fn send_unrecorded(&self, request: &Request) -> Outcome {
        let info = RequestInfo {
            index: request.index,
            name: request.name.as_ref().map(|name| name.value.clone()),
            method: request.method.value.to_string(),
            url: request.url.to_source(),
            line: request.line_span.start_position.line,
            description: request.description.as_ref().map(|description| description.value.clone()),
        };
        let refused = |error: ErrorInfo| Outcome {
            request: info.clone(),
            server: self.remote.map(|connection| connection.url.clone()),
            sent: None,
            response: None,
            error: Some(error),
            logs: Vec::new(),
            history_id: None,
        };
        if request.disabled {
            return refused(ErrorInfo::new(
                "disabled",
                "not sent: the request is disabled (`# @disabled`); remove the directive to send it",
            ));
        }
        // A refused request is not asked about: the engine refuses it by the rule of
        // every front end (`Document::refusal_of`).
        let refused_anyway = self.document.refusal_of(request).is_some();
        if let Some(note) = request.note.as_ref().filter(|_| !refused_anyway)
            && !self.confirm(&info, &note.value).await
        {
            return refused(ErrorInfo::new("not-confirmed", "not sent: its `# @note` was not confirmed"));
        }
        if let Some(connection) = self.remote {
            return remote::send(self, connection, request, info).await;
        }
        // As `stages::run_request` does, in its two steps: the request as built is kept
        // to show when the transport fails.
        let listen = self.listen(request);
        let options = match self.options() {
            Ok(options) => options,
            Err(error) => return refused(error),
        };
        // A gRPC call's response messages are told as they come, when the editor asked.
        let (heard, mut messages) = tokio::sync::mpsc::unbounded_channel();
        let options = if listen.live.is_some() {
            options.on_grpc_message(move |number, message| {
                let _ = heard.send((number, message));
            })
        } else {
            options
        };
        // `@ref` / `@forceRef`: the requests named run first, as `volley run` runs them.
        if let Err(error) =
            volley_engine::stages::run_references(self.engine, self.document, request, self.path, &options).await
        {
            return refused(error_info(&error, request, self.text));
        }
        let (prepared, options) = match self.prepare_with(request, options).await {
            Ok(prepared) => prepared,
            Err(error) => return refused(error),
        };
        let version = prepared.version();
        let built =
            SentSummary::of(&prepared.method, &prepared.url, &prepared.headers, &prepared.body, &prepared.redactor);
        let started = tokio::time::Instant::now();
        let mut sending = Box::pin(volley_engine::stages::send(self.engine, prepared, options.cancel_token()));
        let sent = loop {
            tokio::select! {
                biased;
                Some((number, message)) = messages.recv() => listen.grpc_message(number, &message, started).await,
                sent = &mut sending => break sent,
            }
        };
        while let Ok((number, message)) = messages.try_recv() {
            listen.grpc_message(number, &message, started).await;
        }
        match sent {
            Ok(response) => {
                let exchange = Exchange::new(&response, self.text);
                let sent = SentInfo::new(exchange.request.clone(), version);
                let (response, logs) = describe(&response, exchange, &listen).await;
                Outcome {
                    request: info,
                    server: None,
                    sent: Some(sent),
                    response: Some(response),
                    error: None,
                    logs,
                    history_id: None,
                }
            }
            Err(error) => Outcome {
                request: info,
                server: None,
                sent: Some(SentInfo::new(built, version)),
                response: None,
                error: Some(error_info(&error, request, self.text)),
                logs: Vec::new(),
                history_id: None,
            },
        }
    }

    /// httpyac's `# @loop`: `request` once per iteration (`$index`, the element), each
    /// response kept under the name and the name with the index; the outcomes in order.
    /// Through an execution server it is refused: the list is evaluated here.
    pub(crate) async fn send_loop(&self, request: &Request) -> Vec<Outcome> {
        let refused = |error: ErrorInfo| Outcome {
            request: RequestInfo {
                index: request.index,
                name: request.name.as_ref().map(|name| name.value.clone()),
                method: request.method.value.to_string(),
                url: request.url.to_source(),
                line: request.line_span.start_position.line,
                description: None,
            },
            server: None,
            sent: None,
            response: None,
            error: Some(error),
            logs: Vec::new(),
            history_id: None,
        };
        if self.remote.is_some() {
            return vec![refused(ErrorInfo::new(
                "invalid",
                "`@loop` runs in the editor's own engine, not through an execution server",
            ))];
        }
        let options = match self.options() {
            Ok(options) => options,
            Err(error) => return vec![refused(error)],
        };
        let iterations =
            volley_engine::stages::loop_iterations(self.engine, self.document, request, self.path, &options).await;
        let iterations = match iterations {
            Ok(iterations) => iterations.unwrap_or_default(),
            Err(error) => return vec![refused(error_info(&error, request, self.text))],
        };
        let mut outcomes = Vec::with_capacity(iterations.len());
        for iteration in iterations {
            if self.cancel.is_cancelled() {
                break;
            }
            let index = iteration.get("$index").and_then(serde_json::Value::as_u64).unwrap_or_default();
            let mut variables = self.variables.cloned().unwrap_or_default();
            variables.extend(iteration);
            let sender = Sender {
                variables: Some(&variables),
                also_named: request.name.as_ref().map(|name| format!("{}{index}", name.value)),
                ..*self
            };
            outcomes.push(Box::pin(sender.send(request)).await);
        }
        outcomes
    }

    /// How a streaming response to `request` is listened to: the arguments' window and
    /// limit, live items when they gave an id.
    pub(crate) fn listen(&self, request: &Request) -> Listen<'_> {
        let window = self.arguments.stream_window_ms.map_or(STREAM_WINDOW, Duration::from_millis);
        let limit = self.arguments.max_stream_items.unwrap_or(STREAM_ITEMS);
        let live = self.arguments.live.as_deref().map(|id| Live { client: self.client, id });
        Listen { window, limit, cancel: self.cancel, live, request_index: request.index }
    }

    /// Builds `request` as a send does, without sending it (what `volley.send` sends,
    /// and `volley.copyAsCurl` writes), with the options it runs with.
    pub(crate) async fn prepare(&self, request: &Request) -> Result<(PreparedRequest, RunOptions), ErrorInfo> {
        self.prepare_with(request, self.options()?).await
    }

    /// [`prepare`](Self::prepare) with these options.
    async fn prepare_with(
        &self,
        request: &Request,
        options: RunOptions,
    ) -> Result<(PreparedRequest, RunOptions), ErrorInfo> {
        let prepared = volley_engine::stages::prepare_request(self.engine, self.document, request, self.path, &options)
            .await
            .map_err(|error| error_info(&error, request, self.text))?;
        Ok((prepared, options))
    }

    /// The options a send of this sender runs with: the active profile, the jar of the
    /// document's workspace folder, the cancellation, the most of a body kept.
    fn options(&self) -> Result<RunOptions, ErrorInfo> {
        let cookie_jar = match self.cookie_jar {
            Ok(jar) => jar.clone(),
            Err(message) => return Err(ErrorInfo::new("cookie-jar", message.clone())),
        };
        let options = RunOptions::default()
            .profile_or_default(self.profile)
            .cookie_jar(cookie_jar)
            .cancel(self.cancel.clone())
            .max_body_bytes(MAX_BODY_BYTES)
            .spill_body_to(self.bodies.dir().to_path_buf());
        let options = match self.variables {
            Some(variables) => options.command_variables(variables.clone()),
            None => options,
        };
        Ok(match &self.also_named {
            Some(name) => options.also_named(name.clone()),
            None => options,
        })
    }
}

impl Sender<'_> {
    /// Asks the user to confirm a request with a `# @note`: `true` only for "Send".
    async fn confirm(&self, info: &RequestInfo, note: &str) -> bool {
        use tower_lsp_server::ls_types::{MessageActionItem, MessageType};
        let title = info.name.clone().unwrap_or_else(|| format!("{} {}", info.method, info.url));
        let mut question = format!("Send `{title}` ({} {})?", info.method, info.url);
        if !note.is_empty() {
            question.push(' ');
            question.push_str(note);
        }
        let action = |title: &str| MessageActionItem {
            title: title.to_owned(),
            properties: std::collections::HashMap::default(),
        };
        let answer = self.client.show_message_request(
            MessageType::WARNING,
            question,
            Some(vec![action(SEND_ACTION), action("Cancel")]),
        );
        matches!(answer.await, Ok(Some(item)) if item.title == SEND_ACTION)
    }
}

/// The action of the question before a `# @note` request is sent.
const SEND_ACTION: &str = "Send";

/// `error` as the editor shows it: the engine's [`PlacedError`], mapped (lines from 0).
pub(crate) fn error_info(error: &Error, request: &Request, text: &str) -> ErrorInfo {
    let placed = PlacedError::new(error, request.line_span, text);
    let diagnostics = placed
        .diagnostics
        .into_iter()
        .map(|diagnostic| DiagnosticInfo {
            code: diagnostic.code,
            message: diagnostic.message,
            hint: diagnostic.hint,
            line: diagnostic.place.line - 1,
        })
        .collect();
    // The editor's spelling of the engine's kinds: transport kinds keep their
    // underscores, a refused request is `invalid` whatever its first diagnostic.
    let kind = match placed.kind {
        ErrorKind::Cancelled => "cancelled",
        ErrorKind::Invalid { .. } => "invalid",
        ErrorKind::Config => "config",
        ErrorKind::Selection => "selection",
        ErrorKind::Build { code } => code,
        ErrorKind::Transport { kind } => kind,
        _ => "error",
    };
    ErrorInfo { kind: kind.to_owned(), message: placed.full_message, diagnostics }
}
/// The response as the editor shows it, and what the request's scripts logged: the
/// engine's result model (redacted by its policy, assertions placed in the document's
/// text, `client.test` results among them), mapped field by field.
pub(crate) async fn describe(
    response: &Response,
    exchange: Exchange,
    listen: &Listen<'_>,
) -> (ResponseInfo, Vec<String>) {
    let content_type = response.headers().get("content-type").and_then(|value| value.to_str().ok()).map(str::to_owned);
    let stream = if response.is_websocket() {
        Some(listen_websocket(response, listen).await)
    } else if response.is_streaming() {
        Some(listen_events(response, listen).await)
    } else {
        None
    };
    let Exchange { response: received, timing, assertions, logs, .. } = exchange;
    let body_file = response.body_file();
    let body_size = body_file.map_or(response.body_bytes().len() as u64, |file| file.size);
    let body_file = body_file.map(|file| file.path.clone());
    let (body, body_encoding) = match received.body.base64() {
        Some(encoded) => (encoded, "base64"),
        None => (received.body.into_text(), "text"),
    };
    // A gRPC call shows its messages as JSON, as assertions and handlers read them.
    let (body, content_type) = match response.grpc() {
        Some(grpc) => {
            let json = String::from_utf8_lossy(&grpc.checked_body()).into_owned();
            (response.redact(&json), Some("application/json".to_owned()))
        }
        None => (body, content_type),
    };
    let grpc = received.grpc.map(|grpc| crate::outcome::GrpcInfo {
        code: grpc.code,
        number: grpc.number,
        message: grpc.message,
        details: grpc.details,
        kind: grpc.kind,
        messages: grpc.messages,
    });
    let response = ResponseInfo {
        status: received.status,
        status_text: received.status_text.to_owned(),
        http_version: received.http_version,
        url: received.url,
        headers: received.headers,
        content_type,
        body,
        body_encoding,
        truncated: received.truncated,
        body_size,
        body_file,
        timing: TimingInfo { ttfb_ms: milliseconds(timing.ttfb), total_ms: milliseconds(timing.total) },
        // The editor counts lines from 0; the engine's place from 1.
        assertions: assertions
            .into_iter()
            .map(|placed| {
                let (expected, actual) = match &placed.result.outcome {
                    Check::Failed { expected, actual } => (Some(expected.clone()), Some(actual.clone())),
                    _ => (None, None),
                };
                AssertionInfo {
                    passed: placed.passed(),
                    message: failure(&placed.result.outcome),
                    expected,
                    actual,
                    line: placed.place.line - 1,
                    expression: placed.result.expression,
                }
            })
            .collect(),
        stream,
        grpc,
    };
    (response, logs)
}

/// Why a check did not pass, in a line.
fn failure(outcome: &Check) -> Option<String> {
    match outcome {
        Check::Passed => None,
        Check::Failed { expected, actual } => Some(format!("expected {expected}, got {actual}")),
        Check::ScriptFailed { message } | Check::HandlerFailed { message, .. } => Some(message.clone()),
        Check::Invalid { message, hint: Some(hint) } => Some(format!("{message} (hint: {hint})")),
        Check::Invalid { message, hint: None } => Some(message.clone()),
    }
}
