//! The `workspace/executeCommand` commands of `execute.rs` as the `Backend` runs them:
//! sending one request or all of a document's (with progress and cancellation), copying a
//! request as curl, importing other tools' files (`import.rs`), clearing cookie jars, listing profiles, and what a command's sends
//! share (`SendContext`). They are registered in `server.rs` (`execute_command`).

use std::sync::Arc;

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::{Error as RpcError, Result};
use tower_lsp_server::ls_types::{MessageType, ProgressToken, Uri};

use crate::model::Snapshot;

/// The argument of `volley.filter`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct FilterArguments {
    /// The response body (JSON).
    body: String,
    /// The jq filter.
    expression: String,
}
use crate::backend::{Backend, document_of, invalid_params};
use crate::execute::{self, SendArguments};
use crate::{convert, cookies, copy, history};

impl Backend {
    async fn snapshot(&self, uri: &Uri) -> Result<Snapshot> {
        self.documents.snapshot(uri).await.ok_or_else(|| invalid_params(format!("`{}` is not open", uri.as_str())))
    }

    /// The open document `uri` of a command's arguments, and its whole typed document.
    async fn document_for(&self, uri: &str) -> Result<(Snapshot, Arc<volley_syntax::Document>)> {
        let uri: Uri = uri.parse().map_err(|_| invalid_params(format!("`{uri}` is not a URI")))?;
        let snapshot = self.snapshot(&uri).await?;
        let document = document_of(&snapshot).await?;
        Ok((snapshot, document))
    }

    /// What the sends of a command need of the document `uri` and of the session.
    async fn send_context(&self, uri: &str) -> Result<SendContext> {
        let (snapshot, document) = self.document_for(uri).await?;
        let cookie_jar = self.jar_for(snapshot.path.as_deref());
        let text = snapshot.rope.to_string();
        let (remote, folders) = (self.remote.connection(), self.jars.folders());
        let history = self.history.setting();
        Ok(SendContext { snapshot, document, profile: self.profile(), text, cookie_jar, remote, folders, history })
    }

    /// The sender of a command's requests, on its [`SendContext`].
    fn sender<'a>(
        &'a self,
        context: &'a SendContext,
        cancel: &'a volley_engine::CancellationToken,
        arguments: &'a SendArguments,
    ) -> execute::Sender<'a> {
        execute::Sender {
            engine: &self.engine,
            cookie_jar: &context.cookie_jar,
            document: &context.document,
            text: &context.text,
            path: context.snapshot.path.as_deref(),
            profile: context.profile.as_deref(),
            cancel,
            arguments,
            client: &self.client,
            remote: context.remote.as_ref(),
            folders: &context.folders,
            variables: None,
            also_named: None,
            history: context.history.as_ref(),
            bodies: &self.bodies,
        }
    }

    /// What the `run` lines of the block under the cursor run (JetBrains, Kulala), when
    /// the arguments pick one by `line`.
    fn run_block(
        &self,
        context: &SendContext,
        arguments: &SendArguments,
    ) -> Result<Option<Vec<volley_engine::compose::RunStep>>> {
        let Some(line) = arguments.line else { return Ok(None) };
        let rope = &context.snapshot.rope;
        let block = context.document.block_at_line_by(line, |offset| convert::position(rope, offset).line);
        let Some(block) = block.filter(|block| block.request.is_none() && block.runs().next().is_some()) else {
            return Ok(None);
        };
        let path = context.snapshot.path.as_deref();
        volley_engine::stages::run_steps(&self.engine, &context.document, path, block.index)
            .map(Some)
            .map_err(|error| invalid_params(format!("the `run` line cannot be carried out: {error}")))
    }

    /// `volley.send` on a block of `run` lines: its requests in order, each in its own
    /// file; the answer is the last one's outcome, the others its `ranFirst`.
    async fn send_runs(
        &self,
        context: &SendContext,
        steps: Vec<volley_engine::compose::RunStep>,
        arguments: &SendArguments,
        token: Option<ProgressToken>,
    ) -> Value {
        let progress = self.progresses.begin(&self.client, token, &format!("Running {} requests", steps.len())).await;
        let mut outcomes = self.run_outcomes(context, &steps, &progress.cancel, arguments).await;
        progress.finish();
        let mut answer = outcomes.pop().unwrap_or(Value::Null);
        if !outcomes.is_empty()
            && let Value::Object(fields) = &mut answer
        {
            fields.insert("ranFirst".to_owned(), Value::Array(outcomes));
        }
        answer
    }

    /// The outcomes of `run` lines' requests, each sent in its own file with the
    /// variables the line sets.
    async fn run_outcomes(
        &self,
        context: &SendContext,
        steps: &[volley_engine::compose::RunStep],
        cancel: &volley_engine::CancellationToken,
        arguments: &SendArguments,
    ) -> Vec<Value> {
        let mut outcomes = Vec::with_capacity(steps.len());
        for step in steps {
            if cancel.is_cancelled() {
                break;
            }
            let mut sender = self.sender(context, cancel, arguments);
            sender.variables = (!step.variables.is_empty()).then_some(&step.variables);
            if let Some(linked) = &step.file {
                sender.document = &linked.document;
                sender.text = &linked.text;
                sender.path = Some(&linked.path);
            }
            let Some(request) = sender.document.request(step.request) else { continue };
            outcomes.push(serde_json::to_value(sender.send(request).await).unwrap_or(Value::Null));
        }
        outcomes
    }

    /// The request a command's arguments pick in its document.
    fn selected<'a>(context: &'a SendContext, arguments: &SendArguments) -> Result<&'a volley_syntax::Request> {
        let rope = &context.snapshot.rope;
        execute::select(&context.document, arguments, |offset| convert::position(rope, offset).line)
            .map_err(invalid_params)
    }

    /// `volley.send`: the request the arguments pick, after the requests of the document
    /// whose responses it reads and that have not answered in this session (as `volley
    /// run --name` does; their outcomes are the answer's `ranFirst`).
    pub(crate) async fn send(&self, arguments: SendArguments, token: Option<ProgressToken>) -> Result<Value> {
        let context = self.send_context(&arguments.uri).await?;
        if let Some(steps) = self.run_block(&context, &arguments)? {
            return Ok(self.send_runs(&context, steps, &arguments, token).await);
        }
        let request = Self::selected(&context, &arguments)?;
        let title = format!("Sending {} {}", request.method.value, request.url.to_source());
        let progress = self.progresses.begin(&self.client, token, &title).await;
        let sender = self.sender(&context, &progress.cancel, &arguments);
        let mut first = Vec::new();
        // Through an execution server the session's responses are the server's to know.
        if context.remote.is_none() {
            for dependency in self.unanswered_dependencies(&context.document, request) {
                if progress.cancel.is_cancelled() {
                    break;
                }
                let label =
                    dependency.name.as_ref().map_or_else(|| dependency.url.to_source(), |name| name.value.clone());
                progress.report(format!("first {label}, whose response it reads"), None).await;
                first.push(sender.send(dependency).await);
            }
        }
        let outcome = if request.repeat().is_some() {
            // httpyac's `@loop`: the last iteration's outcome; the others ran first.
            let mut outcomes = sender.send_loop(request).await;
            let last = outcomes.pop();
            first.extend(outcomes);
            let Some(last) = last else {
                progress.finish();
                return Ok(json!({"request": {"index": request.index}, "iterations": 0}));
            };
            last
        } else {
            sender.send(request).await
        };
        progress.finish();
        let mut answer = serde_json::to_value(outcome).unwrap_or(Value::Null);
        Self::apply_jq(request, &mut answer).await;
        if !first.is_empty()
            && let Value::Object(fields) = &mut answer
        {
            fields.insert("ranFirst".to_owned(), serde_json::to_value(first).unwrap_or(Value::Null));
        }
        Ok(answer)
    }

    /// `volley.filter`: `{output}`, what a jq filter makes of a body, or `{error}`
    /// saying why it made nothing.
    pub(crate) async fn filter(arguments: FilterArguments) -> Value {
        match Self::jq(&arguments.body, &arguments.expression).await {
            Ok(output) => json!({ "output": output }),
            Err(error) => json!({ "error": error }),
        }
    }

    async fn jq(body: &str, expression: &str) -> std::result::Result<String, String> {
        let program = crate::filter::program()
            .ok_or_else(|| "filters run in the `volley` binary, and this language server is not one".to_owned())?;
        crate::filter::filter(&program, body, expression).await
    }

    /// A response of a request with `# @jq` gets `filtered`: `{expression, output}` or
    /// `{expression, error}`.
    async fn apply_jq(request: &volley_syntax::Request, answer: &mut Value) {
        let Some(expression) = request
            .directives
            .iter()
            .rev()
            .find(|directive| directive.kind == volley_syntax::DirectiveKind::Jq)
            .and_then(|directive| directive.value.as_ref())
            .map(volley_syntax::Template::to_source)
        else {
            return;
        };
        let Some(response) = answer.get_mut("response").and_then(Value::as_object_mut) else { return };
        let result = match (response.get("body").and_then(Value::as_str), response.get("truncated")) {
            (_, Some(Value::Bool(true))) => Err("the body was cut: a filter needs all of it".to_owned()),
            (Some(body), _) if response.get("bodyEncoding").and_then(Value::as_str) == Some("text") => {
                Self::jq(body, &expression).await
            }
            _ => Err("the body is not text".to_owned()),
        };
        let filtered = match result {
            Ok(output) => json!({ "expression": expression, "output": output }),
            Err(error) => json!({ "expression": expression, "error": error }),
        };
        response.insert("filtered".to_owned(), filtered);
    }

    /// The requests of `document` that `request` reads a response of, directly or
    /// through each other, which have not answered in this session: each before those
    /// that need it. A cycle is left to the send, which then says what is missing.
    fn unanswered_dependencies<'a>(
        &self,
        document: &'a volley_syntax::Document,
        request: &'a volley_syntax::Request,
    ) -> Vec<&'a volley_syntax::Request> {
        fn visit<'a>(
            document: &'a volley_syntax::Document,
            request: &'a volley_syntax::Request,
            engine: &volley_engine::Client,
            visiting: &mut Vec<usize>,
            planned: &mut Vec<&'a volley_syntax::Request>,
        ) {
            visiting.push(request.index);
            for (name, _) in document.responses_read_by(request) {
                let Some(needed) = document.request_named(&name) else { continue };
                let known =
                    visiting.contains(&needed.index) || planned.iter().any(|planned| planned.index == needed.index);
                if known || engine.has_response(&name) {
                    continue;
                }
                visit(document, needed, engine, visiting, planned);
                planned.push(needed);
            }
            visiting.pop();
        }
        let mut planned = Vec::new();
        visit(document, request, &self.engine, &mut Vec::new(), &mut planned);
        planned
    }

    pub(crate) async fn send_all(&self, arguments: SendArguments, token: Option<ProgressToken>) -> Result<Value> {
        let context = self.send_context(&arguments.uri).await?;
        let document = &context.document;
        let count = document.requests().count();
        let name = context
            .snapshot
            .path
            .as_deref()
            .and_then(|path| path.file_name())
            .map_or_else(|| "the document".to_owned(), |name| name.to_string_lossy().into_owned());
        let progress = self.progresses.begin(&self.client, token, &format!("Sending {count} requests of {name}")).await;
        let sender = self.sender(&context, &progress.cancel, &arguments);
        let mut outcomes = Vec::with_capacity(count);
        let mut index = 0;
        for block in &document.blocks {
            if progress.cancel.is_cancelled() {
                break;
            }
            // A block of `run` lines (JetBrains, Kulala) sends what they run, in its place.
            let Some(request) = block.request.as_deref() else {
                if block.runs().next().is_some() {
                    let path = context.snapshot.path.as_deref();
                    match volley_engine::stages::run_steps(&self.engine, document, path, block.index) {
                        Ok(steps) => {
                            outcomes.extend(self.run_outcomes(&context, &steps, &progress.cancel, &arguments).await);
                        }
                        Err(error) => {
                            outcomes.push(json!({"error": {"kind": "invalid-command", "message": error.to_string()}}));
                        }
                    }
                }
                continue;
            };
            index += 1;
            let percentage = u32::try_from((index - 1) * 100 / count.max(1)).unwrap_or(100);
            let label = request.name.as_ref().map_or_else(|| request.url.to_source(), |name| name.value.clone());
            progress.report(format!("{index}/{count} {label}"), Some(percentage)).await;
            let sent = if request.repeat().is_some() {
                sender.send_loop(request).await
            } else {
                vec![sender.send(request).await]
            };
            for outcome in sent {
                let mut outcome = serde_json::to_value(outcome).unwrap_or(Value::Null);
                Self::apply_jq(request, &mut outcome).await;
                outcomes.push(outcome);
            }
        }
        let cancelled = progress.cancel.is_cancelled();
        progress.finish();
        Ok(json!({ "results": outcomes, "cancelled": cancelled }))
    }

    /// The cookie jar of the document at `path` (see `cookies.rs`).
    fn jar_for(&self, path: Option<&std::path::Path>) -> std::result::Result<Option<volley_engine::CookieJar>, String> {
        self.jars.jar_for(path, |directory| volley_engine::stages::config_for(&self.engine, directory).ok().flatten())
    }

    /// `volley.clearCookies`: empties the jar of the document `uri`, or every jar. Not
    /// through an execution server, whose session keeps the cookies: an error says so.
    pub(crate) async fn clear_cookies(&self, arguments: &Value) -> Result<Value> {
        if let Some(connection) = self.remote.connection() {
            return Err(request_failed(format!(
                "the cookies of requests sent through the execution server at {} are kept by its session there, \
                 which volley.clearCookies cannot clear (hint: change or unset the `server` setting to start a new \
                 session)",
                connection.url
            )));
        }
        let path = match arguments.get("uri").and_then(Value::as_str) {
            Some(uri) => {
                let uri: Uri = uri.parse().map_err(|_| invalid_params(format!("`{uri}` is not a URI")))?;
                Some(convert::path(&uri))
            }
            None => None,
        };
        let which = path.as_ref().map_or(cookies::Which::Every, |path| cookies::Which::Document(path.as_deref()));
        let (cleared, errors) = self.jars.clear(which);
        for error in errors {
            self.client.log_message(MessageType::WARNING, error).await;
        }
        Ok(json!({ "cleared": cleared }))
    }

    /// `volley.copyAsCurl`: the request built as `volley.send` would send it, as curl.
    pub(crate) async fn copy_as_curl(&self, arguments: SendArguments) -> Result<Value> {
        let context = self.send_context(&arguments.uri).await?;
        let request = Self::selected(&context, &arguments)?;
        let cancel = volley_engine::CancellationToken::new();
        let copied =
            copy::copy_as_curl(&self.sender(&context, &cancel, &arguments), request).await.map_err(request_failed)?;
        Ok(serde_json::to_value(copied).unwrap_or(Value::Null))
    }

    /// `volley.snippet`: the request as code of another language; without a `language`,
    /// the languages there are.
    pub(crate) async fn snippet(&self, arguments: Value) -> Result<Value> {
        let language = arguments.get("language").and_then(Value::as_str).map(str::to_owned);
        let Some(language) = language else {
            let languages: Vec<Value> =
                volley_engine::curl::LANGUAGES.iter().map(|(id, label)| json!({ "id": id, "label": label })).collect();
            return Ok(json!({ "languages": languages }));
        };
        let arguments: SendArguments =
            serde_json::from_value(arguments).map_err(|error| invalid_params(format!("`volley.snippet`: {error}")))?;
        let context = self.send_context(&arguments.uri).await?;
        let request = Self::selected(&context, &arguments)?;
        let cancel = volley_engine::CancellationToken::new();
        let written = copy::write(&self.sender(&context, &cancel, &arguments), request, &language)
            .await
            .map_err(request_failed)?;
        Ok(serde_json::to_value(written).unwrap_or(Value::Null))
    }

    /// `volley.import`: the conversion (and the files written, when a directory is given).
    pub(crate) fn import(arguments: &crate::import::ImportArguments) -> Result<Value> {
        let imported = crate::import::import(arguments).map_err(request_failed)?;
        Ok(serde_json::to_value(imported).unwrap_or(Value::Null))
    }

    pub(crate) fn profiles(&self, arguments: &Value) -> Result<Value> {
        let uri =
            arguments.get("uri").and_then(Value::as_str).ok_or_else(|| invalid_params("give the document's `uri`"))?;
        let uri: Uri = uri.parse().map_err(|_| invalid_params(format!("`{uri}` is not a URI")))?;
        let directory = convert::path(&uri).and_then(|path| path.parent().map(std::path::Path::to_path_buf));
        let config = directory.as_ref().map(|directory| {
            let config = volley_engine::stages::config_for(&self.engine, directory)?;
            let profiles = volley_engine::stages::profiles_for(&self.engine, directory)?;
            Ok::<_, volley_engine::ConfigError>((config.map(|config| config.path), profiles))
        });
        let (profiles, config_path, error) = match config {
            Some(Ok((path, profiles))) => (profiles, path, None),
            None => (Vec::new(), None, None),
            Some(Err(error)) => (Vec::new(), None, Some(error.to_string())),
        };
        Ok(json!({ "profiles": profiles, "active": self.profile(), "config": config_path, "error": error }))
    }
}

/// LSP's `RequestFailed` (-32803): the request was understood but could not be done.
pub(crate) fn request_failed(message: String) -> RpcError {
    RpcError { code: tower_lsp_server::jsonrpc::ErrorCode::ServerError(-32803), message: message.into(), data: None }
}

/// The document of a command that sends, and what its sends share: taken once, so that
/// every request of a Send All sees the same text, profile and cookie jar.
struct SendContext {
    snapshot: Snapshot,
    document: Arc<volley_syntax::Document>,
    profile: Option<String>,
    /// The whole text, where the engine places assertion results.
    text: String,
    /// The jar of the document's workspace folder, or why it cannot be read.
    cookie_jar: std::result::Result<Option<volley_engine::CookieJar>, String>,
    /// The execution server of the `server` setting, when sends go through one.
    remote: Option<crate::execute::remote::Connection>,
    /// The workspace folders, innermost first.
    folders: Vec<std::path::PathBuf>,
    /// The history setting, when sends are recorded.
    history: Option<crate::history::Setting>,
}

/// The argument of `volley.tests`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct TestsArguments {
    uri: String,
}

impl Backend {
    /// `volley.tests`: the requests of a file and their checks. An open document's text
    /// is the editor's; any other file is read from disk.
    pub(crate) async fn tests(&self, arguments: &TestsArguments) -> Result<Value> {
        let uri: Uri =
            arguments.uri.parse().map_err(|_| invalid_params(format!("`{}` is not a URI", arguments.uri)))?;
        let document = if let Some(snapshot) = self.documents.snapshot(&uri).await {
            document_of(&snapshot).await?
        } else {
            let path =
                convert::path(&uri).ok_or_else(|| invalid_params(format!("`{}` is not a file", uri.as_str())))?;
            let read = tokio::task::spawn_blocking(move || read_for_discovery(&path))
                .await
                .map_err(|_| RpcError::internal_error())?;
            Arc::new(read.map_err(request_failed)?)
        };
        Ok(json!({ "requests": crate::discovery::requests(&document) }))
    }
}

/// The parsed file at `path`, or why it cannot be read (missing, too large, not text,
/// over the parse budget).
fn read_for_discovery(path: &std::path::Path) -> std::result::Result<volley_syntax::Document, String> {
    let size = std::fs::metadata(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?.len();
    if size > crate::discovery::MOST_BYTES {
        return Err(format!(
            "{} is {} MiB, more than the {} MiB read for a test view",
            path.display(),
            size >> 20,
            crate::discovery::MOST_BYTES >> 20
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    volley_syntax::parse_within(&text, volley_syntax::Budget::standard())
        .map_err(|exceeded| format!("{} was not read: {}", path.display(), exceeded.standard_reason()))
}

/// The history commands (`volley.history`, `volley.historyEntry`, `volley.historyClear`).
impl Backend {
    /// The stores a history command reads: the project of `uri`, else those of the open
    /// documents and of the workspace folders.
    fn history_stores(&self, uri: Option<&str>) -> Result<(Vec<volley_history::Store>, Option<std::path::PathBuf>)> {
        let setting = self.history.setting().unwrap_or_default();
        if let Some(uri) = uri {
            let parsed: tower_lsp_server::ls_types::Uri =
                uri.parse().map_err(|_| invalid_params(format!("`{uri}` is not a URI")))?;
            let path = crate::convert::path(&parsed).ok_or_else(|| invalid_params(format!("`{uri}` is not a file")))?;
            return Ok((history::stores(&setting, std::slice::from_ref(&path)), Some(path)));
        }
        let mut candidates: Vec<std::path::PathBuf> =
            self.documents.all().iter().filter_map(|(uri, _)| crate::convert::path(uri)).collect();
        candidates.extend(self.jars.folders());
        Ok((history::stores(&setting, &candidates), None))
    }

    pub(crate) async fn history_list(&self, arguments: history::ListArguments) -> Result<Value> {
        let (stores, file) = self.history_stores(arguments.uri.as_deref())?;
        tokio::task::spawn_blocking(move || history::list(&stores, file.as_deref(), &arguments))
            .await
            .map_err(|_| tower_lsp_server::jsonrpc::Error::internal_error())?
            .map_err(request_failed)
    }

    pub(crate) async fn history_entry(&self, arguments: history::EntryArguments) -> Result<Value> {
        let (stores, _) = self.history_stores(arguments.uri.as_deref())?;
        tokio::task::spawn_blocking(move || history::entry(&stores, &arguments.id))
            .await
            .map_err(|_| tower_lsp_server::jsonrpc::Error::internal_error())?
            .map_err(request_failed)
    }

    pub(crate) async fn history_clear(&self, arguments: history::ListArguments) -> Result<Value> {
        let (stores, file) = self.history_stores(arguments.uri.as_deref())?;
        tokio::task::spawn_blocking(move || history::clear(&stores, file.as_deref()))
            .await
            .map_err(|_| tower_lsp_server::jsonrpc::Error::internal_error())?
            .map_err(request_failed)
    }
}
