//! The WebSocket part of protocol 1.1: `POST /execute/ws` opens a server-owned session
//! on an upstream WebSocket, `GET /ws/session/{id}` is its control socket, and
//! `GET /event/ws` streams observer events over a WebSocket.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Extension, Path, Query, State};
use axum::response::Response;
use futures_util::{SinkExt as _, StreamExt as _};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use volley_protocol::{
    ErrorCode, ExecuteWsResponse, ObserverEvent, SessionEnvelopeKind, SessionOpened, WsSessionInfo, WsSessionOpened,
};

use super::events::{Filters, query_error};
use crate::auth::{ANSWER_SUBPROTOCOL, Access};
use crate::error::ApiError;
use crate::execute::{self, Route, Run};
use crate::state::AppState;
use crate::wire::{ApiJson, ErrorBody, ExecuteRequest};
use crate::ws::{self, NewSession};

// The document names its body `ExecuteWsRequest`: the fields of /execute and its own (openapi.rs).
#[utoipa::path(post, path = "/execute/ws", tag = "websocket", request_body = ExecuteRequest,
    responses(
        (status = 200, description = "The upstream WebSocket is open; connect to `ws.downstreamPath`", body = ExecuteWsResponse),
        (status = 400, description = "EXECUTE_ERROR (not a WebSocket request, or the upstream refused), VALIDATION_ERROR (a body, a method other than GET, bad limits), and the errors of /execute", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE, PARSE_BUDGET_EXCEEDED", body = ErrorBody),
        (status = 422, description = "PARSE_BUDGET_EXCEEDED", body = ErrorBody),
        (status = 429, description = "WS_SESSION_LIMIT_REACHED (checked before dialing)", body = ErrorBody)))]
pub(crate) async fn execute_ws(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    ApiJson(body): ApiJson<ExecuteRequest>,
) -> Result<Json<ExecuteWsResponse>, ApiError> {
    execute::validate(&body, state.config.max_body_size, Route::WebSocket)?;
    let replay = body.replay_buffer_size.unwrap_or(ws::DEFAULT_REPLAY as u64);
    let idle = body.idle_timeout_ms.unwrap_or(state.config.ws_idle_timeout.as_millis() as u64);
    let (session, flow) = execute::scope(&state, &access, &body).await?;
    let slot = state.ws_sessions.reserve()?;
    let run = Run::begin(&state, &access, session, flow, body.req_label.as_deref());
    let fetched = run.fetch_in_turn(&body, Route::WebSocket, None).await;
    let fetched = fetched.map_err(|failure| run.fail(failure))?;
    let Some(socket) = fetched.response.websocket() else {
        return Err(ApiError::internal(&"a WebSocket exchange without a connection"));
    };
    let finished = run.finish(&fetched, None);
    let subprotocol = socket.protocol().map(str::to_owned);
    let upstream_url = fetched.request.url_resolved.clone();
    let (commands, orders) = tokio::sync::mpsc::channel(64);
    let session = state.ws_sessions.add(
        slot,
        NewSession {
            flow_id: run.flow.as_ref().map(|flow| flow.id.clone()),
            session_id: run.session.as_ref().map(|session| session.id.clone()),
            req_exec_id: Some(run.req_exec_id.clone()),
            replay_capacity: usize::try_from(replay).unwrap_or(ws::DEFAULT_REPLAY),
            idle_timeout: Duration::from_millis(idle),
            max_frame: state.config.ws_max_frame,
            emitter: run.emitter.clone(),
            redactor: fetched.redactor().clone(),
            mirror: ws::Mirror {
                store: Arc::clone(&state.ws_store),
                writes: Arc::clone(&state.writes),
                lifetime: Duration::from_millis(idle) + state.config.ws_closed_grace,
            },
        },
        commands,
    );
    let opened = SessionOpened { upstream_url: upstream_url.clone(), subprotocol: subprotocol.clone() };
    session.publish(SessionEnvelopeKind::Opened, json!({ "payload": opened })).await;
    // The URL as the engine's policy lets it be shown, to observers as to the control
    // socket (which a token scoped to the flow may read).
    run.emitter.emit(ObserverEvent::WsSessionOpened(WsSessionOpened {
        upstream_url: upstream_url.clone(),
        subprotocol: subprotocol.clone(),
        ws_session_id: session.id.clone(),
    }));
    let ending = (state.config.ws_closed_grace, state.shutdown.clone());
    ws::spawn_upstream(Arc::clone(&state.ws_sessions), Arc::clone(&session), socket, orders, ending);
    // Every instance can find the session (and the execution) before the client
    // hears of it.
    state.writes.flush().await;
    // The session is open already: a stored execution the store did not take is logged
    // and counted, and the flow misses it.
    if let Err(error) = run.written().await {
        tracing::warn!(req_exec_id = %run.req_exec_id, "{}", error.message);
    }
    Ok(Json(ExecuteWsResponse {
        run_id: run.run_id.clone(),
        flow_id: session.flow_id.clone(),
        req_exec_id: run.req_exec_id.clone(),
        request: fetched.request.clone(),
        resolved: fetched.resolved.clone(),
        assertions: finished.assertions,
        logs: finished.logs,
        ws: WsSessionInfo {
            downstream_path: format!("/ws/session/{}", session.id),
            ws_session_id: session.id.clone(),
            upstream_url,
            subprotocol,
            replay_buffer_size: session.replay_capacity,
            last_seq: session.last_seq(),
        },
    }))
}

/// `afterSeq` of a reconnecting socket.
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct AfterSeq {
    /// Replay the retained envelopes with a larger `seq` first (default 0: all).
    #[param(schema_with = crate::routes::openapi::seq)]
    after_seq: Option<u64>,
}

#[utoipa::path(get, path = "/ws/session/{wsSessionId}", tag = "websocket",
    params(("wsSessionId" = String, Path), AfterSeq, Handshake),
    responses((status = 101, description = "The control socket: JSON envelopes (replay, `session.replay.end`, then live); send `session.send`, `session.close`, `session.ping`"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "WS_SESSION_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn session_socket(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
    query: Result<Query<AfterSeq>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|rejection| query_error(&rejection))?;
    let session = controllable(&state, &access, &id).await?;
    let upgrade = upgrade.map_err(|rejection| {
        ApiError::validation(format!("expected a WebSocket upgrade: {}", rejection.body_text()))
    })?;
    let after_seq = query.after_seq.unwrap_or(0);
    let upgrade = upgrade
        .protocols([ANSWER_SUBPROTOCOL])
        .read_buffer_size(16 * 1024)
        .max_message_size(state.config.ws_max_frame.saturating_mul(4).saturating_add(64 * 1024));
    Ok(match session {
        Controlled::Here(session) => {
            session.touch();
            upgrade.on_upgrade(move |socket| ws::serve_control(socket, session, after_seq))
        }
        Controlled::Elsewhere(session) => {
            let grace = state.config.ws_closed_grace;
            upgrade.on_upgrade(move |socket| session.control(socket, after_seq, grace))
        }
    })
}

/// A session to control: on this instance, or (with `--redis`) on another.
enum Controlled {
    Here(Arc<ws::WsSession>),
    Elsewhere(Box<dyn crate::store::Elsewhere>),
}

/// The session `id`, if the caller may control it (a scoped token: its flow's or
/// session's).
async fn controllable(state: &AppState, access: &Access, id: &str) -> Result<Controlled, ApiError> {
    let (session, flow_id, session_id) = match state.ws_sessions.get(id) {
        Ok(session) => {
            let (flow, owner) = (session.flow_id.clone(), session.session_id.clone());
            (Controlled::Here(session), flow, owner)
        }
        Err(error) => {
            let remote = state.ws_store.elsewhere(id).await?.ok_or(error)?;
            let (flow, owner) = (remote.flow_id().map(str::to_owned), remote.session_id().map(str::to_owned));
            (Controlled::Elsewhere(remote), flow, owner)
        }
    };
    if let Some(claims) = access.claims() {
        let in_flow = claims.flow_id.is_some() && claims.flow_id == flow_id;
        let in_session = claims.session_id.is_some() && claims.session_id == session_id;
        if !in_flow && !in_session {
            return Err(ApiError::forbidden(
                "the scoped token may only control WebSocket sessions of its flow or session",
            ));
        }
    }
    Ok(session)
}

#[utoipa::path(delete, path = "/ws/session/{wsSessionId}", tag = "websocket",
    params(("wsSessionId" = String, Path)),
    responses((status = 204, description = "The upstream is closed (1000) and the session removed; its control socket gets `session.closed`. A closed session kept for its grace period is removed."),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "WS_SESSION_NOT_FOUND", body = ErrorBody)))]
pub(crate) async fn close_session(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<http::StatusCode, ApiError> {
    let session = match controllable(&state, &access, &id).await? {
        Controlled::Here(session) => session,
        Controlled::Elsewhere(session) => {
            session.close().await?;
            return Ok(http::StatusCode::NO_CONTENT);
        }
    };
    let order = ws::Command::Close { code: 1000, reason: "closed by DELETE /ws/session".to_owned() };
    // A session already closing has nothing left to take the order; either way it goes.
    let _ = session.commands.send(order).await;
    // The upstream task frees the slot before it reports the close.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !session.is_closed() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Not kept for a grace period: the caller asked for it to go.
    state.ws_sessions.forget(&id);
    Ok(http::StatusCode::NO_CONTENT)
}

/// The filters of `/event/ws`, and `afterSeq`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ObserveQuery {
    /// Only events of this session.
    session_id: Option<String>,
    /// Only events of this flow.
    flow_id: Option<String>,
    /// With `flowId`: the retained events of the flow with a larger `seq` first.
    after_seq: Option<u64>,
}

/// The headers of a WebSocket handshake, in the document of the routes that upgrade:
/// without them they answer 400.
struct Handshake;

impl utoipa::IntoParams for Handshake {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        crate::routes::openapi::handshake_headers()
    }
}

/// One query object in the document, with its rules (`openapi.rs`).
impl utoipa::IntoParams for ObserveQuery {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        crate::routes::openapi::observer_filters(true)
    }
}

#[utoipa::path(get, path = "/event/ws", tag = "observers", params(ObserveQuery, Handshake),
    responses((status = 101, description = "One observer envelope per text frame; with `afterSeq`, the retained events of the flow first"),
        (status = 400, description = "VALIDATION_ERROR: no filter under auth, or `afterSeq` without `flowId`", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub(crate) async fn observe(
    State(state): State<AppState>,
    Extension(access): Extension<Access>,
    query: Result<Query<ObserveQuery>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|rejection| query_error(&rejection))?;
    let filters = Filters { session_id: query.session_id, flow_id: query.flow_id };
    filters.check(&access)?;
    if query.after_seq.is_some() && filters.flow_id.is_none() {
        return Err(ApiError::validation("`afterSeq` needs a `flowId`: events are numbered per flow"));
    }
    let upgrade = upgrade.map_err(|rejection| {
        ApiError::validation(format!("expected a WebSocket upgrade: {}", rejection.body_text()))
    })?;
    // Subscribed before the handshake is answered (a client that executes as soon as it
    // is connected misses nothing) and before the replay is read (nothing falls between).
    let receiver = state.hub.listen().await;
    Ok(upgrade
        .protocols([ANSWER_SUBPROTOCOL])
        .read_buffer_size(16 * 1024)
        .on_upgrade(move |socket| observer(socket, state, receiver, filters, query.after_seq)))
}

async fn observer(
    socket: WebSocket,
    state: AppState,
    mut receiver: tokio::sync::broadcast::Receiver<Arc<crate::hub::ObserverEvent>>,
    filters: Filters,
    after_seq: Option<u64>,
) {
    let (mut sink, mut stream) = socket.split();
    let mut replayed_up_to = 0;
    if let (Some(after), Some(flow)) = (after_seq, &filters.flow_id) {
        let (events, _) = state.hub.retained_after(flow, after).await;
        for event in events.iter().filter(|event| filters.admit(event)) {
            if sink.send(Message::Text(event.json.as_str().into())).await.is_err() {
                return;
            }
            replayed_up_to = event.seq;
        }
    }
    let shutdown = state.shutdown.clone();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => {
                let _ = sink.send(Message::Close(Some(CloseFrame { code: 1001, reason: "server shutdown".into() }))).await;
                return;
            }
            next = receiver.recv() => match next {
                Ok(event) if event.missed().is_some() => {
                    let lagged = super::events::lagged(event.missed().unwrap_or(0), "reconnect with afterSeq");
                    let error = json!({ "type": "error", "ts": crate::clock::now_ms(), "payload": lagged["error"] });
                    let _ = sink.send(Message::Text(error.to_string().into())).await;
                    let _ = sink.send(Message::Close(Some(CloseFrame { code: 1013, reason: "events lost".into() }))).await;
                    return;
                }
                Ok(event) if filters.admit(&event) && !(event.flow_id.is_some() && event.seq <= replayed_up_to) => {
                    if sink.send(Message::Text(event.json.as_str().into())).await.is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(RecvError::Lagged(missed)) => {
                    let error = json!({ "type": "error", "ts": crate::clock::now_ms(), "payload": {
                        "code": ErrorCode::ObserverLagged,
                        "message": format!("this observer fell {missed} events behind and was disconnected; reconnect with afterSeq"),
                    }});
                    let _ = sink.send(Message::Text(error.to_string().into())).await;
                    let _ = sink.send(Message::Close(Some(CloseFrame { code: 1013, reason: "too slow".into() }))).await;
                    return;
                }
                Err(RecvError::Closed) => return,
            },
            incoming = stream.next() => match incoming {
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
