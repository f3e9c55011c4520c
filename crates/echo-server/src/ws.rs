//! WebSocket routes: an echo with subprotocols, server-initiated closes, binary frames, a
//! handshake that never completes, a refused handshake, the handshake's headers and a count.
//!
//! Each connection runs in the task axum spawns on upgrade, and ends when the client goes
//! away or the closing handshake is done. A request that is not a WebSocket handshake gets
//! axum's rejection status (400, 405 or 426) with `{"error": …}`.

use std::collections::HashMap;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::Query;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use serde_json::json;

use crate::query;
use crate::response;
use crate::state::AppState;

/// The subprotocols `/ws/echo` and `/ws/headers` accept, in the server's order of preference.
const PROTOCOLS: [&str; 2] = ["chat.v1", "json"];
/// The text that makes `/ws/echo` close the connection with [`CLOSE_ME_CODE`].
const CLOSE_ME: &str = "close-me";
const CLOSE_ME_CODE: u16 = 4000;
/// The normal closure code, also the default of `/ws/close`.
const NORMAL_CLOSE: u16 = 1000;
/// A close frame is a control frame (at most 125 bytes): 2 for the code, the rest for the reason.
const MAX_CLOSE_REASON_BYTES: usize = 123;
const DEFAULT_COUNT: u64 = 3;
const MAX_COUNT: u64 = 1000;
/// How long the server waits for the client's close frame after sending its own.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The `WebSocketUpgrade` extractor, its rejection kept to answer it as JSON.
type Upgrade = Result<WebSocketUpgrade, WebSocketUpgradeRejection>;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/ws/echo", get(echo))
        .route("/ws/close", get(close))
        .route("/ws/binary", get(binary))
        .route("/ws/hang", get(hang))
        .route("/ws/reject", get(reject))
        .route("/ws/headers", get(headers))
        .route("/ws/count", get(count))
}

/// Echoes each text message as text and each binary message as binary; pings are answered.
/// The text `close-me` makes the server close with code 4000, reason `asked to`.
///
/// Subprotocols: `chat.v1` and `json`. When the client offers several, the server's order
/// decides (axum's `protocols`): offering `json, chat.v1` selects `chat.v1`. When it offers
/// none of them, the answer has no `Sec-WebSocket-Protocol`.
async fn echo(upgrade: Upgrade) -> Result<Response, Response> {
    Ok(upgrade.map_err(|rejection| rejected(&rejection))?.protocols(PROTOCOLS).on_upgrade(echo_messages))
}

/// `?code=C&reason=R` (defaults 1000 and `bye`): after the upgrade, sends the text `closing`,
/// then a close frame with C and R. C must be a code an endpoint may send (1000–1003,
/// 1007–1013, 3000–4999) and R at most 123 bytes, else 400 without upgrading.
async fn close(upgrade: Upgrade, Query(query): Query<HashMap<String, String>>) -> Result<Response, Response> {
    let upgrade = upgrade.map_err(|rejection| rejected(&rejection))?;
    let code = close_code(&query).map_err(response::bad_request)?;
    let reason = query.get("reason").map_or("bye", String::as_str).to_owned();
    if reason.len() > MAX_CLOSE_REASON_BYTES {
        let message = format!("reason must be at most {MAX_CLOSE_REASON_BYTES} bytes, got {}", reason.len());
        return Err(response::bad_request(message));
    }
    Ok(upgrade.on_upgrade(move |mut socket| async move {
        if socket.send(Message::text("closing")).await.is_ok() {
            close_with(socket, code, reason).await;
        }
    }))
}

/// After the upgrade, sends one binary frame (bytes 0x00 0x01 0x02) and the text
/// `after binary`, then echoes like `/ws/echo` (without subprotocols).
async fn binary(upgrade: Upgrade) -> Result<Response, Response> {
    Ok(upgrade.map_err(|rejection| rejected(&rejection))?.on_upgrade(|mut socket| async move {
        if socket.send(Message::binary(Bytes::from_static(&[0, 1, 2]))).await.is_ok()
            && socket.send(Message::text("after binary")).await.is_ok()
        {
            echo_messages(socket).await;
        }
    }))
}

/// Never answers the handshake: the handler waits until the client goes away (hyper then
/// drops it), so no `101 Switching Protocols` is ever sent.
async fn hang(upgrade: Upgrade) -> Result<Response, Response> {
    let _upgrade = upgrade.map_err(|rejection| rejected(&rejection))?;
    std::future::pending().await
}

/// A refused handshake: 403 `{"error": "forbidden"}`, whatever the request.
async fn reject() -> Response {
    response::json(StatusCode::FORBIDDEN, json!({"error": "forbidden"}))
}

/// After the upgrade, sends one text message `{"headers": [[name, value], …]}`: the headers of
/// the handshake request as `/echo` lists them (names lowercase, order of arrival), then echoes
/// like `/ws/echo`. Subprotocols as `/ws/echo`.
async fn headers(upgrade: Upgrade, headers: HeaderMap) -> Result<Response, Response> {
    let upgrade = upgrade.map_err(|rejection| rejected(&rejection))?.protocols(PROTOCOLS);
    let headers: Vec<(&str, String)> = headers
        .iter()
        .map(|(name, value)| (name.as_str(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    let text = json!({"headers": headers}).to_string();
    Ok(upgrade.on_upgrade(|mut socket| async move {
        if socket.send(Message::text(text)).await.is_ok() {
            echo_messages(socket).await;
        }
    }))
}

/// `?n=N` (default 3, N ≤ 1000): after the upgrade, sends the texts `1`, `2`, …, `N`, then
/// closes with 1000 `done`.
async fn count(upgrade: Upgrade, Query(query): Query<HashMap<String, String>>) -> Result<Response, Response> {
    let upgrade = upgrade.map_err(|rejection| rejected(&rejection))?;
    let n = query::number(&query, "n", DEFAULT_COUNT, MAX_COUNT).map_err(response::bad_request)?;
    Ok(upgrade.on_upgrade(move |mut socket| async move {
        for i in 1..=n {
            if socket.send(Message::text(i.to_string())).await.is_err() {
                return;
            }
        }
        close_with(socket, NORMAL_CLOSE, "done").await;
    }))
}

/// axum's rejection of a request that is not a WebSocket handshake, as `{"error": …}`.
fn rejected(rejection: &WebSocketUpgradeRejection) -> Response {
    response::json(rejection.status(), json!({"error": rejection.body_text()}))
}

/// The query's `code`, or 1000: a close code an endpoint may send (RFC 6455 section 7.4).
fn close_code(query: &HashMap<String, String>) -> Result<u16, String> {
    let code = query::number(query, "code", u64::from(NORMAL_CLOSE), 4999)?;
    u16::try_from(code)
        .ok()
        .filter(|code| matches!(code, 1000..=1003 | 1007..=1013 | 3000..=4999))
        .ok_or_else(|| format!("code {code} cannot be sent (1000-1003, 1007-1013, 3000-4999)"))
}

/// Echoes text and binary messages until the client closes or goes away; `close-me` closes.
async fn echo_messages(mut socket: WebSocket) {
    while let Some(Ok(message)) = socket.recv().await {
        match message {
            Message::Text(text) if text.as_str() == CLOSE_ME => {
                close_with(socket, CLOSE_ME_CODE, "asked to").await;
                return;
            }
            Message::Text(_) | Message::Binary(_) => {
                if socket.send(message).await.is_err() {
                    return;
                }
            }
            // tungstenite answers pings and the client's close frame by itself.
            Message::Ping(_) | Message::Pong(_) | Message::Close(_) => {}
        }
    }
}

/// Sends a close frame, then reads until the client's close frame has come and the connection
/// ended (at most [`CLOSE_TIMEOUT`]), so the closing handshake completes.
async fn close_with(mut socket: WebSocket, code: u16, reason: impl Into<Utf8Bytes>) {
    let frame = CloseFrame { code, reason: reason.into() };
    if socket.send(Message::Close(Some(frame))).await.is_err() {
        return;
    }
    let rest = async { while let Some(Ok(_)) = socket.recv().await {} };
    tokio::time::timeout(CLOSE_TIMEOUT, rest).await.ok();
}
