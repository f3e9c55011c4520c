//! Diagnostics of a document: the parser's and the engine's analysis, as `volley check`
//! computes them, published once the edits pause (debounced) and only for the latest
//! version.

use std::time::Duration;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{Diagnostic, Uri};

use crate::convert;
use crate::documents::{Documents, Snapshot};

/// How long edits must pause before a document's diagnostics are computed.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(100);

/// The diagnostics of one snapshot, sorted like `volley check`'s: a configuration error
/// first, then by span.
pub(crate) fn compute(snapshot: &Snapshot, engine: &volley_engine::Client) -> Vec<Diagnostic> {
    let text = snapshot.rope.to_string();
    let document = snapshot.tree.document();
    let analysis = engine.analyze(&document, &text, snapshot.path.as_deref());
    let mut found: Vec<&volley_syntax::Diagnostic> = document.diagnostics.iter().chain(&analysis.diagnostics).collect();
    found.sort_by_key(|diagnostic| (diagnostic.span.start, diagnostic.span.end));
    let config = analysis.config_error.map(|error| convert::config_error(&error.to_string()));
    config
        .into_iter()
        .chain(found.into_iter().map(|diagnostic| convert::diagnostic(&snapshot.rope, diagnostic)))
        .collect()
}

/// Computes and publishes the diagnostics of `uri` at `version` after `delay`, unless the
/// document changed (or closed) meanwhile: only the latest version is ever published.
pub(crate) fn schedule(
    client: Client,
    documents: Documents,
    engine: volley_engine::Client,
    uri: Uri,
    version: i32,
    delay: Duration,
) {
    tokio::spawn(async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let Some(snapshot) = documents.snapshot(&uri).filter(|snapshot| snapshot.version == version) else {
            return;
        };
        // Parsing large documents and reading files: off the async workers.
        let Ok(diagnostics) = tokio::task::spawn_blocking(move || compute(&snapshot, &engine)).await else {
            return;
        };
        if documents.version(&uri) == Some(version) {
            client.publish_diagnostics(uri, diagnostics, Some(version)).await;
        }
    });
}
