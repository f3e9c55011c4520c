//! The parse of an execution's text: within the server's budget of time and syntax-tree
//! memory, small texts in place (and their documents kept, `documents.rs`), larger ones
//! on the blocking pool.

use std::sync::Arc;
use std::time::Instant;

use http::StatusCode;
use serde_json::json;
use volley_protocol::ErrorCode;

use crate::error::ApiError;
use crate::state::AppState;

/// Texts up to this size are parsed where the execution runs: a few milliseconds at
/// most whatever they hold (about 0.1 ms for a real request), less than the hand-off to
/// the blocking pool costs a small execution under load.
pub(crate) const PARSED_IN_PLACE_BYTES: usize = 4 * 1024;

/// Parses within the server's budget of time and tree memory; larger texts on the
/// blocking pool, so that they never hold up the runtime's workers. A small text run
/// recently is not parsed again (`documents.rs`). The text comes back with the document.
pub(super) async fn parse(text: String, state: &AppState) -> (String, Result<Arc<volley_syntax::Document>, ApiError>) {
    let config = &state.config;
    let in_place = text.len() <= PARSED_IN_PLACE_BYTES;
    if in_place && let Some(document) = state.documents.get(&text) {
        return (text, Ok(document));
    }
    let budget = volley_syntax::Budget {
        deadline: Some(Instant::now() + config.parse_budget),
        tree_bytes: Some(config.parse_memory),
    };
    let parsed = if in_place {
        let document = volley_syntax::parse_within(&text, budget);
        Ok((text, document))
    } else {
        tokio::task::spawn_blocking(move || {
            let document = volley_syntax::parse_within(&text, budget);
            (text, document)
        })
        .await
    };
    match parsed {
        Ok((text, Ok(document))) => {
            let document = Arc::new(document);
            if in_place {
                state.documents.keep(&text, Arc::clone(&document));
            }
            (text, Ok(document))
        }
        Ok((text, Err(exceeded))) => (text, Err(over_budget(exceeded, config))),
        Err(error) => (String::new(), Err(ApiError::internal(&error))),
    }
}

/// `PARSE_BUDGET_EXCEEDED`: `422` for time, `413` for memory.
fn over_budget(exceeded: volley_syntax::Exceeded, config: &crate::config::ServerConfig) -> ApiError {
    let millis = u64::try_from(config.parse_budget.as_millis()).unwrap_or(u64::MAX);
    match exceeded {
        volley_syntax::Exceeded::Time => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::ParseBudgetExceeded,
            format!("parsing the text took longer than the {millis} ms this server allows"),
        )
        .with_details(json!({ "limit": "time", "budgetMs": millis })),
        volley_syntax::Exceeded::Memory => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::ParseBudgetExceeded,
            format!(
                "parsing the text needed more than the {} MiB of syntax trees this server allows",
                config.parse_memory / (1024 * 1024)
            ),
        )
        .with_details(json!({ "limit": "memory", "budgetBytes": config.parse_memory })),
    }
}
