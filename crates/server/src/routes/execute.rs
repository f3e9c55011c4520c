//! `POST /execute` (an HTTP request, answered whole) and `POST /execute/sse` (a
//! Server-Sent Events request, re-streamed event by event).

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::{Extension, State};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt as _, stream};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, StatusCode};
use serde_json::json;
use volley_protocol::ErrorCode;

use crate::auth::Access;
use crate::error::ApiError;
use crate::execute::{self, Fetched, Route, Run};
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
        (status = 200, description = "`text/event-stream`: the upstream events (`event`, `id`, `retry`, `data`); an `error` event if the upstream fails after opening. Headers `x-volley-upstream-status`, `x-volley-upstream-url`, `x-volley-run-id`, `x-volley-req-exec-id`, and each upstream header as `x-volley-upstream-header-<name>`.", content_type = "text/event-stream"),
        (status = 400, description = "as /execute; EXECUTE_ERROR when the request is not SSE or the upstream did not open a stream", body = ErrorBody),
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
    let run = Run::begin(&state, &access, session, flow, body.req_label.as_deref());
    let fetched = run.fetch_in_turn(&body, Route::EventStream).await;
    let fetched = match fetched {
        Ok(fetched) => fetched,
        Err(failure) => return Err(run.fail(failure)),
    };
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
    let stream = relay(events, finish).take_until(shutdown);
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

/// Reports the end of a relayed stream, however it ends (upstream done, failed,
/// client gone, shutdown).
struct Finish {
    run: Option<Run>,
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
fn relay(
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
