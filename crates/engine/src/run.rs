//! Running a request: the orchestration above the parts. A request's references and
//! `run` lines run first; it is prepared (`prepare`), given its tokens (`oauth`), sent
//! by its exchange (HTTP and Server-Sent Events in `client`, WebSocket, gRPC in `grpc`),
//! checked (assertions, `?? js` checks, response handlers), kept for chaining, and its
//! cookie jar and `>>` saves written.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use volley_syntax::{Document, Request};

use crate::assert::{AssertionResult, Outcome, ResponseParts};
use crate::chaining::StoredResponse;
use crate::client::{Client, RunOptions, select};
use crate::error::Error;
use crate::prepared::{Exchange, Exchanged, PendingScripts, PreparedRequest};
use crate::redact::{Redactor, Secrets};
use crate::response::Response;
use crate::script::{Handled, ResponseView};

impl Client {
    /// Reads the `.http` file at `path` and runs the selected request.
    pub async fn run(&self, path: impl AsRef<Path>, options: RunOptions) -> Result<Response, Error> {
        let path = path.as_ref();
        let bytes =
            self.inner.config.io.read(path).map_err(|source| Error::ReadFile { path: path.to_path_buf(), source })?;
        let text = String::from_utf8(bytes).map_err(|error| Error::ReadFile {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text: {error}")),
        })?;
        let document = volley_syntax::parse(&text);
        let request = select(&document, &options.request)?;
        self.run_request(&document, request, Some(path), options).await
    }

    /// Runs the selected request of `content` (`.http` text); relative paths and the
    /// configuration are found from [`RunOptions::source_path`](RunOptions::source_path).
    pub async fn run_string(&self, content: &str, options: RunOptions) -> Result<Response, Error> {
        let document = volley_syntax::parse(content);
        let request = select(&document, &options.request)?;
        let source = options.source_path.clone();
        self.run_request(&document, request, source.as_deref(), options).await
    }

    /// Runs `request` of an already parsed `document` (the CLI runs every request of a
    /// file this way). The options' selection is ignored.
    pub(crate) async fn run_request(
        &self,
        document: &Document,
        request: &Request,
        source_path: Option<&Path>,
        options: RunOptions,
    ) -> Result<Response, Error> {
        self.run_references(document, request, source_path, &options).await?;
        let prepared = self.prepare_request(document, request, source_path, &options).await?;
        self.send(prepared, options.cancel.as_ref()).await
    }

    /// Runs the requests `request`'s `@ref` and `@forceRef` name, in order, before it
    /// (httpyac): `@ref` one that has not run in this client, `@forceRef` every time;
    /// theirs first. A name no request has, and a cycle, are errors at the directive.
    pub(crate) async fn run_references(
        &self,
        document: &Document,
        request: &Request,
        source_path: Option<&Path>,
        options: &RunOptions,
    ) -> Result<(), Error> {
        use volley_syntax::DirectiveKind;
        let references = request.directives.iter().filter(|directive| {
            matches!(directive.kind, DirectiveKind::Ref | DirectiveKind::ForceRef) && directive.value.is_some()
        });
        for directive in references {
            let Some(value) = &directive.value else { continue };
            let refused =
                |message: String| Error::Build(crate::error::BuildError::Interpolation { message, span: value.span });
            let Some(name) = value.as_literal().map(|name| name.trim().to_owned()) else {
                return Err(refused(format!(
                    "write the name of `@{}` as it is, without `{{{{ }}}}`",
                    directive.name.value
                )));
            };
            let own = request.name.as_ref().map(|own| own.value.clone());
            if options.references.contains(&name) || own.as_deref() == Some(name.as_str()) {
                let mut chain = options.references.clone();
                if chain.last() != own.as_ref() {
                    chain.extend(own);
                }
                chain.push(name.clone());
                return Err(refused(format!(
                    "`@{} {name}` refers back to itself ({})",
                    directive.name.value,
                    chain.join(" → ")
                )));
            }
            if directive.kind == DirectiveKind::Ref && self.inner.chain.lock().contains(&name) {
                continue;
            }
            let mut inner = options.clone();
            if inner.references.last() != own.as_ref() {
                inner.references.extend(own);
            }
            inner.references.push(name.clone());
            // httpyac: a named part of the file without a request line (its variables) runs
            // nothing; its variables are the file's anyway.
            let named_part = document.blocks.iter().filter(|block| block.request.is_none()).any(|block| {
                block.orphan_directives.iter().any(|directive| {
                    directive.kind == DirectiveKind::Name
                        && directive.value.as_ref().and_then(volley_syntax::Template::as_literal).as_deref()
                            == Some(name.as_str())
                })
            });
            if named_part {
                continue;
            }
            if let Some(target) = document.request_named(&name) {
                tracing::debug!(reference = %name, "running a referenced request first");
                Box::pin(self.run_request(document, target, source_path, inner)).await?;
                continue;
            }
            // A request of a file this one imports (httpyac's `# @import`).
            let imports = self.imports_of(document, source_path)?;
            let found = imports.iter().find_map(|linked| Some((linked, linked.document.request_named(&name)?)));
            let Some((linked, target)) = found else {
                let own_names = document.requests().filter_map(|request| request.name.as_ref());
                let imported_names =
                    imports.iter().flat_map(|linked| linked.document.requests().filter_map(|r| r.name.as_ref()));
                let names = own_names.chain(imported_names).map(|name| name.value.as_str());
                let hint = volley_syntax::closest(&name, names)
                    .map(|best| format!(": did you mean `{best}`?"))
                    .unwrap_or_default();
                let files = if imports.is_empty() { "this file" } else { "this file or the files it imports" };
                return Err(refused(format!("no request of {files} is named `{name}`{hint}")));
            };
            tracing::debug!(reference = %name, file = %linked.path.display(), "running an imported request first");
            let ran = Box::pin(self.run_request(&linked.document, target, Some(&linked.path), inner)).await;
            ran.map_err(|error| match error {
                Error::Build(error) => Error::Build(crate::error::BuildError::Included {
                    path: linked.path.clone(),
                    span: value.span,
                    source: Box::new(error),
                }),
                error => error,
            })?;
        }
        // `run` lines above the request line of its own block run first, every time.
        let has_runs = document.blocks.get(request.block).is_some_and(|block| block.runs().next().is_some());
        if has_runs {
            let marker = format!(
                "run:{}#{}",
                source_path.map(Path::display).map(|path| path.to_string()).unwrap_or_default(),
                request.block
            );
            if options.references.contains(&marker) {
                return Err(Error::Build(crate::error::BuildError::Command {
                    message: "the `run` lines of this block lead back to its request".to_owned(),
                    hint: Some("a request cannot run itself through `run` lines".to_owned()),
                    span: request.line_span,
                }));
            }
            for step in self.run_steps(document, source_path, request.block)? {
                let mut inner = options.clone().command_variables(step.variables);
                inner.references.push(marker.clone());
                let ran = match &step.file {
                    Some(linked) => match linked.document.request(step.request) {
                        Some(target) => {
                            Box::pin(self.run_request(&linked.document, target, Some(&linked.path), inner)).await
                        }
                        None => continue,
                    },
                    None => match document.request(step.request) {
                        Some(target) => Box::pin(self.run_request(document, target, source_path, inner)).await,
                        None => continue,
                    },
                };
                ran?;
            }
        }
        Ok(())
    }

    /// Sends a prepared request (what [`stages::prepare_request`](crate::stages::prepare_request) built, perhaps
    /// changed since): the exchange, its assertions, the response kept for chaining
    /// under the request's name, the cookie jar saved. Front ends that report each
    /// stage (the execution server) run the two steps themselves.
    pub(crate) async fn send(
        &self,
        prepared: PreparedRequest,
        cancel: Option<&CancellationToken>,
    ) -> Result<Response, Error> {
        let exchanged = self.transmit(prepared, cancel).await?;
        Ok(self.finish(exchanged))
    }

    /// The first half of [`send`](Self::send): the request's tokens, its turn
    /// (`@ratelimit`, `@sleep`) and its exchange, up to the response read and its
    /// cookies kept. What the response is checked with and where it is kept wait in the
    /// [`Exchanged`] for [`finish`](Self::finish).
    pub(crate) async fn transmit(
        &self,
        mut prepared: PreparedRequest,
        cancel: Option<&CancellationToken>,
    ) -> Result<Exchanged, Error> {
        // A token the request needs (OAuth 2.0) is got first, through this client.
        let auth_redactor = prepared.redactor.clone();
        // Boxed: the grant flows' state is large, and inline every request would carry it.
        if prepared.auth.is_some() {
            Box::pin(self.authorize(&mut prepared, cancel)).await.map_err(|error| error.redacted(&auth_redactor))?;
        }
        let pending = std::mem::take(&mut prepared.assertions);
        let name = prepared.name.take();
        let also_named = std::mem::take(&mut prepared.also_named);
        let scripts = prepared.scripts.take();
        let save_to = std::mem::take(&mut prepared.save_to);
        let logs = std::mem::take(&mut prepared.logs);
        // Transport messages may quote the URL (reqwest's do): what is secret in it is
        // kept out of them.
        let redactor = prepared.redactor.clone();
        let jar = prepared.cookie_jar.clone().filter(|_| prepared.use_cookies);
        // httpyac's `@ratelimit`: the send waits for its turn in its slot.
        if let Some(limit) = prepared.rate_limit.take() {
            let at = self.inner.rate_slots.reserve(&limit);
            match cancel {
                Some(token) => tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = token.cancelled() => return Err(Error::Cancelled),
                },
                None => tokio::time::sleep_until(at).await,
            }
        }
        // `@sleep`: the wait before sending, ended by cancellation.
        if let Some(pause) = prepared.sleep.take() {
            match cancel {
                Some(token) => tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = token.cancelled() => return Err(Error::Cancelled),
                },
                None => tokio::time::sleep(pause).await,
            }
        }
        let exchanged = match prepared.exchange {
            // Boxed: the handshake's state is large, and inline it would be carried by
            // the future of every HTTP request too (copied whole when that is boxed).
            Exchange::WebSocket { .. } => Box::pin(self.connect_websocket(prepared, cancel)).await,
            Exchange::Grpc(_) => Box::pin(self.call_grpc(prepared, cancel)).await,
            Exchange::Http | Exchange::EventStream => self.exchange(prepared, cancel).await,
        };
        let response = exchanged.map_err(|error| error.redacted(&redactor))?;
        Ok(Exchanged { response, pending, name, also_named, scripts, save_to, logs, redactor, jar })
    }

    /// The second half of [`send`](Self::send): the response checked (assertions,
    /// `?? js` checks, response handlers), kept for chaining under the request's names,
    /// the cookie jar saved and the `>>` files written.
    pub(crate) fn finish(&self, exchanged: Exchanged) -> Response {
        let Exchanged { mut response, pending, name, also_named, scripts, save_to, logs, redactor, jar } = exchanged;
        // A body that streams (events, WebSocket messages) is not there to check; a gRPC
        // call's is its message, or the array of its messages when the server streams.
        let checked = response.grpc.as_ref().map(|grpc| grpc.checked_body());
        let body = checked.as_deref().or_else(|| response.body.read().map(|bytes| &bytes[..]));
        // httpyac's `?? js …` checks: evaluated on the response in the scripts' sandbox.
        let script_settings =
            scripts.as_ref().map_or_else(crate::script::ScriptSettings::default, |pending| pending.scripts.limits);
        // Made on the first `?? js` check only: most responses have none, and a load
        // sends thousands a second.
        let text = std::cell::OnceCell::new();
        let view = std::cell::OnceCell::new();
        let javascript = |code: &str| {
            let text = text.get_or_init(|| {
                body.map(|body| crate::response::decode_text(body, response.headers.get(http::header::CONTENT_TYPE)))
            });
            let view = view.get_or_init(|| crate::script::ResponseView::new(response.status(), &response.headers));
            self.inner.realms.evaluate_on_response(code, view, text.as_deref().unwrap_or_default(), script_settings)
        };
        let parts = ResponseParts {
            status: response.status(),
            headers: &response.headers,
            body,
            timing: Some(response.timing),
            redactor: Some(&redactor),
            grpc_status: response.grpc.as_ref().map(|grpc| (grpc.number, grpc.code.as_str())),
            javascript: Some(crate::assert::JavaScript(&javascript)),
        };
        response.assertions = pending.iter().map(|check| redactor.assertion(&check.evaluate(&parts))).collect();
        response.logs = logs.into_iter().map(|line| redactor.redact_owned(line)).collect();
        if let Some(pending) = scripts {
            self.handle(&mut response, *pending, &redactor);
        }
        if name.is_some() || !also_named.is_empty() {
            let stored = StoredResponse {
                status: response.status(),
                headers: response.headers().clone(),
                body: response.body.read_or_empty(),
            };
            let mut chain = self.inner.chain.lock();
            let chain = Arc::make_mut(&mut chain);
            for alias in also_named {
                chain.insert(alias, stored.clone());
            }
            if let Some(name) = name {
                chain.insert(name, stored);
            }
        }
        if let Some(jar) = &jar
            && let Err(error) = jar.save()
        {
            tracing::warn!("{error}");
        }
        for target in &save_to {
            let line = crate::save::save(&*self.inner.config.io, target, &response);
            response.logs.push(redactor.redact_owned(line));
        }
        response
    }

    /// Runs the response handlers of a request on its response: their tests join its
    /// assertions, their logs its logs, both with secrets hidden (the request's, and
    /// the sensitive-named globals the handlers set).
    fn handle(&self, response: &mut Response, pending: PendingScripts, redactor: &Redactor) {
        let PendingScripts { scripts, mut input } = pending;
        let Some(body) = response.body.read() else {
            let span = scripts.handlers_span();
            response.assertions.push(AssertionResult {
                expression: "response handler".to_owned(),
                span,
                outcome: Outcome::HandlerFailed {
                    message: "response handlers do not run on a streamed response (Server-Sent Events, WebSocket)"
                        .to_owned(),
                    stack: String::new(),
                },
            });
            return;
        };
        // A gRPC call's handlers see its message (or the array of its messages) as JSON.
        let (text, view_headers) = match &response.grpc {
            Some(grpc) => {
                let mut headers = response.headers.clone();
                headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
                (String::from_utf8_lossy(&grpc.checked_body()).into_owned(), std::borrow::Cow::Owned(headers))
            }
            None => (
                crate::response::decode_text(body, response.headers.get(http::header::CONTENT_TYPE)),
                std::borrow::Cow::Borrowed(&response.headers),
            ),
        };
        let sent = &response.request;
        input.request = std::mem::take(&mut input.request).sent(&sent.url, &sent.headers, &sent.body);
        input.response = Some(ResponseView::new(response.status(), &view_headers));
        let Handled { results, logs, globals } = self.inner.realms.run_handlers(self, &scripts, &mut input, &text);
        if results.is_empty() && logs.is_empty() {
            return;
        }
        let mut secrets = Secrets::new();
        secrets.add_variables(&globals);
        let globals = secrets.redactor();
        let hide = |text: String| globals.redact_owned(redactor.redact_owned(text));
        for result in results {
            let result = redactor.assertion(&globals.assertion(&result));
            response.assertions.push(result);
        }
        response.logs.extend(logs.into_iter().map(hide));
    }
}
