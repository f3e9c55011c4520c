//! `volley run --history`: each response (and each failed exchange) recorded, redacted
//! as `--json` shows it, in the response history of the file's project (the
//! `volley-history` crate, which the editors write too; `volley history` reads it).

use volley_history::{Failure, Record, RequestRef, Source, Store};

use super::outcome::{Outcome, RequestResult};
use super::select::File;

/// Records a result of `volley run --history`: a response, or an exchange that failed
/// after the request went out. Requests never sent are not recorded. A store that
/// cannot be written is said once per run on stderr, and the run goes on.
pub(super) fn record(result: &RequestResult, file: &File) {
    let Some(request) = file.document.request(result.index) else { return };
    let absolute = std::path::absolute(&file.path).unwrap_or_else(|_| file.path.clone());
    let Some(store) = Store::for_file(&absolute) else { return };
    let reference = RequestRef {
        index: result.index,
        name: result.name.clone(),
        method: request.method.value.to_string(),
        url: request.url.to_source(),
        line: result.line_span.start_position.line,
    };
    let recorded = match &result.outcome {
        Outcome::Response { response, .. } => {
            let exchange = volley_engine::report::Exchange::new(response, &file.text);
            let received = exchange.response;
            let body = match &received.body {
                volley_engine::report::BodySummary::Text(text) => text.as_bytes(),
                volley_engine::report::BodySummary::Binary(bytes) => &bytes[..],
            };
            store.record(&Record {
                source: Source::Cli,
                file: &absolute,
                request: reference,
                outcome: Ok(volley_history::Response {
                    status: received.status,
                    status_text: received.status_text,
                    http_version: &received.http_version,
                    headers: &received.headers,
                    body,
                    truncated: response.truncated(),
                }),
                duration_ms: Some(exchange.timing.total.as_secs_f64() * 1000.0),
            })
        }
        Outcome::Error(error @ volley_engine::Error::Transport(_)) => {
            let placed = result.error_parts(error, &file.text);
            store.record(&Record {
                source: Source::Cli,
                file: &absolute,
                request: reference,
                outcome: Err(Failure { kind: placed.kind.name(), message: placed.message }),
                duration_ms: None,
            })
        }
        Outcome::Error(_) | Outcome::Refused(_) | Outcome::Skipped(_) => return,
    };
    if let Err(error) = recorded {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            crate::output::error_line(&format!(
                "warning: the response history in {} cannot be written: {error}",
                store.dir().display()
            ));
        });
    }
}
