//! `POST /execute` (an HTTP request, answered whole) and `POST /execute/sse` (a
//! Server-Sent Events request, re-streamed event by event; a gRPC call, its response
//! messages relayed as events).

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Extension, State};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt as _, stream};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, StatusCode};
use serde_json::{Value, json};
use volley_engine::CancellationToken;
use volley_protocol::ErrorCode;

use crate::auth::Access;
use crate::error::ApiError;
use crate::execute::{self, Failure, Fetched, Relay, Route, Run};
use crate::state::AppState;
use crate::wire::{ApiJson, ErrorBody, ExecuteRequest, ExecuteResponse};

#[utoipa::path(post, path = "/execute", tag = "execute", request_body = ExecuteRequest,
    responses(
        (status = 200, description = "The request ran (any upstream status)", body = ExecuteResponse),
        (status = 400, description = "VALIDATION_ERROR, CONTENT_OR_PATH_REQUIRED, REQUEST_INDEX_OUT_OF_RANGE, NO_REQUESTS_FOUND, PARSE_ERROR, EXECUTE_ERROR", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, description = "FORBIDDEN, PATH_OUTSIDE_WORKSPACE", body = ErrorBody),
        (status = 404, description = "SESSION_NOT_FOUND, FLOW_NOT_FOUND, REQUEST_NOT_FOUND, FILE_NOT_FOUND", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE, PARSE_BUDGET_EXCEEDED (the parse needed more tree memory than the server allows)", body = ErrorBody),
        (status = 422, description = "PARSE_BUDGET_EXCEEDED (the parse took longer than the server allows)", body = ErrorBody)))]
pub(crate) async fn execute(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    ApiJson(body): ApiJson<ExecuteRequest>,
) -> Result<Response, ApiError> {
    let answer = execute::execute(&state, &access, body).await?;
    json_answer(&answer)
}

/// The answer as JSON, written into one buffer sized for it: axum's `Json` writes
/// through a `BytesMut` grown from 128 bytes, a piece at a time, and that writing was a
/// third of the serialisation's cost.
fn json_answer(answer: &ExecuteResponse) -> Result<Response, ApiError> {
    let response = &answer.response;
    let body = response.body.as_ref().map_or(0, String::len);
    let headers: usize = response.headers.iter().map(|header| header.name.len() + header.value.len() + 24).sum();
    let mut json = Vec::with_capacity(body + body / 8 + headers + 1024);
    serde_json::to_writer(&mut json, answer).map_err(|error| ApiError::internal(&error))?;
    Ok(([(CONTENT_TYPE, HeaderValue::from_static("application/json"))], json).into_response())
}

// The document names its body `ExecuteSseRequest`: the fields of /execute and its own (openapi.rs).
#[utoipa::path(post, path = "/execute/sse", tag = "execute", request_body = ExecuteRequest,
    responses(
        (status = 200, description = "`text/event-stream`: the upstream events (`event`, `id`, `retry`, `data`); an `error` event if the upstream fails after opening. Headers `x-volley-upstream-status`, `x-volley-upstream-url`, `x-volley-run-id`, `x-volley-req-exec-id`, and each upstream header as `x-volley-upstream-header-<name>`. A gRPC call: each response message as it arrives (`message`, `id` its number from 1, `data` its proto3 JSON), then a `result` event (the /execute answer, `response.bodyMode` `none`) or an `error` event; headers `x-volley-run-id` and `x-volley-req-exec-id`.", content_type = "text/event-stream"),
        (status = 400, description = "as /execute; EXECUTE_ERROR when the request is neither SSE nor gRPC or the upstream did not open a stream", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE, PARSE_BUDGET_EXCEEDED", body = ErrorBody),
        (status = 422, description = "PARSE_BUDGET_EXCEEDED", body = ErrorBody)))]
pub(crate) async fn execute_sse(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    ApiJson(body): ApiJson<ExecuteRequest>,
) -> Result<Response, ApiError> {
    execute::validate(&body, state.config.max_body_size, Route::EventStream)?;
    let (session, flow) = execute::scope(&state, &access, &body).await?;
    let run = Arc::new(Run::begin(&state, &access, session, flow, body.req_label.as_deref()));
    // The execution runs apart from the answer, so that a gRPC call's messages can be
    // relayed while it goes on; dropped, the relay cancels it and reports its end.
    let (messages, heard) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let relay = Relay { messages, cancel: cancel.clone() };
    let fetching = tokio::spawn({
        let run = Arc::clone(&run);
        async move { run.fetch_in_turn(&body, Route::EventStream, Some(&relay)).await }
    });
    let mut relaying = Relaying {
        run_id: run.run_id.clone(),
        req_exec_id: run.req_exec_id.clone(),
        run: Some(run),
        fetching: Some(fetching),
        heard,
        cancel,
        messages: 0,
    };
    let first = tokio::select! {
        biased;
        message = relaying.heard.recv() => message.map(First::Message),
        fetched = relaying.fetching.as_mut().expect("fetching") => Some(First::Fetched(Box::new(fetched))),
    };
    let fetched = match first {
        Some(First::Message(message)) => {
            let first = relaying.message(message);
            return Ok(relayed_grpc(relaying, Some(first), &state));
        }
        Some(First::Fetched(fetched)) => {
            relaying.fetching = None;
            *fetched
        }
        // The sender lives as long as the execution: it ended without a message.
        None => relaying.fetching.take().expect("fetching").await,
    };
    let run = relaying.run.take().expect("run");
    let fetched = match fetched {
        Ok(Ok(fetched)) => fetched,
        Ok(Err(failure)) => return Err(run.fail(failure)),
        Err(error) => return Err(ApiError::internal(&error)),
    };
    if fetched.response.grpc().is_some() {
        // A call that ended before any message: its end is the only event.
        relaying.run = Some(run);
        let last = relaying.end(Ok(Ok(fetched)));
        return Ok(relayed_grpc(relaying, Some(last), &state));
    }
    let events = match fetched.response.events() {
        Ok(events) if fetched.response.is_streaming() => events,
        _ => {
            let status = fetched.response.status();
            let error = ApiError::new(
                StatusCode::BAD_REQUEST,
                ErrorCode::ExecuteError,
                format!("the upstream answered {status} without an event stream"),
            )
            .with_details(json!({ "kind": "not_event_stream", "status": status }));
            run.finish(&fetched, None);
            return Err(error);
        }
    };
    let upstream_status = fetched.response.status();
    let upstream_url = fetched.response.url().to_string();
    let upstream_headers = fetched.response.headers().clone();
    let run_id = run.run_id.clone();
    let req_exec_id = run.req_exec_id.clone();
    let finish = Finish { run: Some(run), fetched: Some(fetched), events: 0 };
    let shutdown = state.shutdown.clone().cancelled_owned();
    let stream = relay_events(events, finish).take_until(shutdown);
    let mut response =
        ([(CONTENT_TYPE, "text/event-stream"), (CACHE_CONTROL, "no-cache")], Body::from_stream(stream)).into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-volley-upstream-status", upstream_status.to_string()),
        ("x-volley-upstream-url", upstream_url),
        ("x-volley-run-id", run_id),
        ("x-volley-req-exec-id", req_exec_id),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
    for (name, value) in &upstream_headers {
        // Hop-by-hop and framing headers describe the upstream connection, not the events.
        if matches!(name.as_str(), "connection" | "keep-alive" | "transfer-encoding" | "content-length") {
            continue;
        }
        if let Ok(relayed) = HeaderName::from_bytes(format!("x-volley-upstream-header-{name}").as_bytes()) {
            headers.append(relayed, value.clone());
        }
    }
    Ok(response)
}

/// What came first of a relayed execution.
enum First {
    Message((usize, Value)),
    Fetched(Box<Result<Result<Fetched, Failure>, tokio::task::JoinError>>),
}

type Fetching = tokio::task::JoinHandle<Result<Fetched, Failure>>;

/// A gRPC call relayed by `/execute/sse`: each response message an event as it comes,
/// then a `result` event (the `/execute` answer without the body: the messages were the
/// events) or an `error` event. However the relay ends (the call's end, its client gone,
/// the server shutting down), the call is stopped and its end reported.
struct Relaying {
    run_id: String,
    req_exec_id: String,
    run: Option<Arc<Run>>,
    fetching: Option<Fetching>,
    heard: tokio::sync::mpsc::UnboundedReceiver<(usize, Value)>,
    cancel: CancellationToken,
    messages: u64,
}

impl Relaying {
    /// The frame of one message: its number as the id, its JSON as the data.
    fn message(&mut self, (number, message): (usize, Value)) -> Bytes {
        self.messages += 1;
        sse_frame("message", Some(&number.to_string()), None, &message.to_string())
    }

    /// The last frame: the answer, or the error the execution ended with.
    fn end(&mut self, fetched: Result<Result<Fetched, Failure>, tokio::task::JoinError>) -> Bytes {
        let Some(run) = self.run.take() else { return Bytes::new() };
        match fetched {
            Ok(Ok(fetched)) => {
                let mut answer = run.answer(&fetched, Some(self.messages));
                answer.response.body = None;
                answer.response.body_mode = "none";
                let data = serde_json::to_string(&answer).unwrap_or_default();
                sse_frame("result", None, None, &data)
            }
            Ok(Err(failure)) => sse_frame("error", None, None, &run.fail(failure).body().to_string()),
            Err(error) => sse_frame("error", None, None, &ApiError::internal(&error).body().to_string()),
        }
    }

    /// The next frames: a message, or the remaining messages and the end; `None` after it.
    async fn next(&mut self) -> Option<Bytes> {
        let fetching = self.fetching.as_mut()?;
        tokio::select! {
            biased;
            Some(message) = self.heard.recv() => Some(self.message(message)),
            fetched = fetching => {
                self.fetching = None;
                let mut frames = Vec::new();
                while let Ok(message) = self.heard.try_recv() {
                    frames.extend_from_slice(&self.message(message));
                }
                frames.extend_from_slice(&self.end(fetched));
                Some(Bytes::from(frames))
            }
        }
    }
}

impl Drop for Relaying {
    fn drop(&mut self) {
        if let (Some(run), Some(fetching)) = (self.run.take(), self.fetching.take()) {
            self.cancel.cancel();
            let messages = self.messages;
            tokio::spawn(async move {
                match fetching.await {
                    Ok(Ok(fetched)) => {
                        run.finish(&fetched, Some(messages));
                    }
                    Ok(Err(failure)) => {
                        run.fail(failure);
                    }
                    Err(_) => {}
                }
            });
        }
    }
}

/// The answer that relays a gRPC call: its ids as headers, `first` and then the
/// relay's frames as they come, until the server shuts down.
fn relayed_grpc(relaying: Relaying, first: Option<Bytes>, state: &AppState) -> Response {
    let ids = [("x-volley-run-id", relaying.run_id.clone()), ("x-volley-req-exec-id", relaying.req_exec_id.clone())];
    let rest = stream::unfold(relaying, |mut relaying| async move {
        let frame = relaying.next().await?;
        Some((Ok::<_, Infallible>(frame), relaying))
    });
    let shutdown = state.shutdown.clone().cancelled_owned();
    let stream = stream::iter(first.map(Ok)).chain(rest).take_until(shutdown);
    let mut response =
        ([(CONTENT_TYPE, "text/event-stream"), (CACHE_CONTROL, "no-cache")], Body::from_stream(stream)).into_response();
    for (name, value) in ids {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(HeaderName::from_static(name), value);
        }
    }
    response
}

/// Reports the end of a relayed event stream, however it ends (upstream done, failed,
/// client gone, shutdown).
struct Finish {
    run: Option<Arc<Run>>,
    fetched: Option<Fetched>,
    events: u64,
}

impl Drop for Finish {
    fn drop(&mut self) {
        if let (Some(run), Some(fetched)) = (self.run.take(), self.fetched.take()) {
            run.finish(&fetched, Some(self.events));
        }
    }
}

/// The upstream events as SSE events; an upstream failure becomes a last `error` event.
fn relay_events(
    events: volley_engine::sse::EventStream,
    finish: Finish,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    stream::unfold(Some((events, finish)), |state| async move {
        let (mut events, mut finish) = state?;
        match events.next().await {
            Some(Ok(event)) => {
                finish.events += 1;
                let frame = sse_frame(&event.event, event.id.as_deref(), event.retry, &event.data);
                Some((Ok(frame), Some((events, finish))))
            }
            Some(Err(error)) => {
                // Transport messages may quote the URL: shown as the engine's policy lets it.
                let message = error.to_string();
                let message = finish
                    .fetched
                    .as_ref()
                    .map_or(message.clone(), |fetched| fetched.redactor().redact(&message).into_owned());
                tracing::info!("upstream event stream failed: {message}");
                let data =
                    json!({ "error": { "code": ErrorCode::ExecuteError, "message": message, "kind": error.kind() } });
                Some((Ok(sse_frame("error", None, None, &data.to_string())), None))
            }
            None => None,
        }
    })
}

/// One event in the SSE wire format. Written by hand, not with axum's `Event`: its
/// `data("")` writes no `data` field, and a client never dispatches an event without
/// one, so an upstream event with empty data would be lost.
fn sse_frame(event: &str, id: Option<&str>, retry: Option<std::time::Duration>, data: &str) -> Bytes {
    // Parsed upstream fields hold no line breaks; a stray one must not start a field.
    let one_line = |text: &str| text.replace(['\r', '\n'], "");
    let mut fields = Vec::new();
    fields.extend(data.split('\n').map(|line| ("data", one_line(line))));
    if event != "message" {
        fields.push(("event", one_line(event)));
    }
    if let Some(id) = id {
        fields.push(("id", one_line(id)));
    }
    if let Some(retry) = retry {
        fields.push(("retry", retry.as_millis().to_string()));
    }
    let mut frame = String::with_capacity(data.len() + 32);
    for (name, value) in fields {
        frame.push_str(name);
        frame.push_str(": ");
        frame.push_str(&value);
        frame.push('\n');
    }
    frame.push('\n');
    Bytes::from(frame)
}
