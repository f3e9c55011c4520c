//! Entry points for the fuzz targets of `fuzz/` (the `fuzzing` feature, off by default):
//! what the routes do with a request body, and a control socket with a client's message,
//! before anything runs. No server, workspace, network or Redis is involved, and nothing
//! is executed.

use volley_protocol::ErrorCode;

use crate::config::ServerConfig;
use crate::execute::Route;
use crate::wire::{CreateFlow, CreateSession, CreateToken, ExecuteRequest, UpdateVariables};

/// The routes whose JSON bodies [`request_body`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyRoute {
    /// `POST /execute`.
    Execute,
    /// `POST /execute/sse`.
    ExecuteEventStream,
    /// `POST /execute/ws`.
    ExecuteWebSocket,
    /// `POST /parse`, with `content` (parsed within the server's budget and described).
    Parse,
    /// `POST /session`.
    CreateSession,
    /// `PUT /session/{id}/variables`.
    UpdateVariables,
    /// `POST /flows`.
    CreateFlow,
    /// `POST /tokens`.
    CreateToken,
}

impl BodyRoute {
    /// Every route, for a fuzz target to pick from.
    pub const ALL: [BodyRoute; 8] = [
        BodyRoute::Execute,
        BodyRoute::ExecuteEventStream,
        BodyRoute::ExecuteWebSocket,
        BodyRoute::Parse,
        BodyRoute::CreateSession,
        BodyRoute::UpdateVariables,
        BodyRoute::CreateFlow,
        BodyRoute::CreateToken,
    ];
}

/// Reads `body` as `route`'s JSON extractor does, then applies the checks the route makes
/// before it executes anything (with the default configuration). The error code of a
/// refused body; `None` for one the route would go on with (or that is not JSON of the
/// route's shape, which the extractor refuses as `VALIDATION_ERROR`).
#[must_use]
pub fn request_body(route: BodyRoute, body: &[u8]) -> Option<ErrorCode> {
    let config = ServerConfig::default();
    let execute_route = match route {
        BodyRoute::Execute => Route::Execute,
        BodyRoute::ExecuteEventStream => Route::EventStream,
        BodyRoute::ExecuteWebSocket => Route::WebSocket,
        BodyRoute::Parse => {
            let body: crate::routes::ParseRequest = serde_json::from_slice(body).ok()?;
            if let Some(content) = body.content
                && content.len() <= config.max_body_size
                && let Some(document) = crate::routes::workspace_parse(&content, &config)
            {
                let include_diagnostics = body.include_diagnostics.unwrap_or(true);
                let include_body = body.include_body_content.unwrap_or(false);
                let answer = crate::routes::describe(&document, &content, include_diagnostics, include_body);
                serde_json::to_vec(&answer).expect("a parse answer is JSON");
            }
            return None;
        }
        // Read as their routes read them; no rule beyond the type's.
        BodyRoute::CreateSession => return reads::<CreateSession>(body),
        BodyRoute::UpdateVariables => return reads::<UpdateVariables>(body),
        BodyRoute::CreateFlow => return reads::<CreateFlow>(body),
        BodyRoute::CreateToken => return reads::<CreateToken>(body),
    };
    let body: ExecuteRequest = serde_json::from_slice(body).ok()?;
    crate::execute::validate(&body, config.max_body_size, execute_route).err().map(|error| error.code)
}

/// Reads `body` as a `T`: no error code either way, since these routes check nothing
/// else before they run (a body that is not a `T` is the extractor's 400).
fn reads<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<ErrorCode> {
    let _: T = serde_json::from_slice(body).ok()?;
    None
}

/// Reads a control socket's text message as the server does (with the default frame
/// limit): `Ok` for a command it carries out, else the code of the error it answers with.
pub fn control_message(text: &str) -> Result<(), ErrorCode> {
    let max_frame = ServerConfig::default().ws_max_frame;
    crate::ws::parse_command(text, max_frame).map(|_| ()).map_err(|(code, _)| code)
}
