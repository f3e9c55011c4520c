//! When diagnostics are computed and published: one computation at a time per document,
//! the changes that arrive meanwhile coalesced into one more of the latest version;
//! results of an outdated version dropped.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{Diagnostic, Uri};

use super::{Environment, compute};
use crate::documents::{Documents, is_config};

/// Publishes documents' diagnostics: one computation at a time per document, the
/// changes made meanwhile coalesced into one more.
#[derive(Debug, Clone, Default)]
pub(crate) struct Publisher {
    /// The documents being computed, each with "changed since it started".
    running: Arc<Mutex<HashMap<String, bool>>>,
}

/// What a computation needs, cloned into its task.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub(crate) client: Client,
    pub(crate) documents: Documents,
    pub(crate) engine: volley_engine::Client,
    pub(crate) environment: Arc<Mutex<Environment>>,
}

impl Publisher {
    /// Computes and publishes the diagnostics of `uri`'s latest version, now or, when a
    /// computation of it is running, right after it.
    pub(crate) fn request(&self, context: &Context, uri: Uri) {
        {
            let mut running = self.running.lock();
            if let Some(changed) = running.get_mut(uri.as_str()) {
                *changed = true;
                return;
            }
            running.insert(uri.as_str().to_owned(), false);
        }
        let publisher = self.clone();
        let context = context.clone();
        tokio::spawn(async move { publisher.run(context, uri).await });
    }

    /// Publishes the first diagnostics of a large document just opened (see [`first`])
    /// while the whole is parsed; then, like [`Publisher::request`], those of its latest
    /// version, which `didOpen` requests next. Nothing first when a computation of the
    /// document is running (it was open already).
    pub(crate) fn request_first(&self, context: &Context, uri: Uri, version: i32, first: Vec<Diagnostic>) {
        {
            let mut running = self.running.lock();
            if running.contains_key(uri.as_str()) {
                return;
            }
            running.insert(uri.as_str().to_owned(), false);
        }
        let publisher = self.clone();
        let context = context.clone();
        tokio::spawn(async move {
            if context.documents.version(&uri) == Some(version) {
                context.client.publish_diagnostics(uri.clone(), first, Some(version)).await;
            }
            if !publisher.done(&uri) {
                publisher.run(context, uri).await;
            }
        });
    }

    /// Requests the diagnostics of every open document (the configuration, the files or
    /// the profile changed): a new generation, so every part is analysed again.
    pub(crate) fn request_all(&self, context: &Context) {
        context.environment.lock().generation += 1;
        let uris: HashSet<Uri> =
            context.documents.all().into_iter().map(|(uri, _)| uri).filter(|uri| !is_config(uri)).collect();
        for uri in uris {
            self.request(context, uri);
        }
    }

    async fn run(&self, context: Context, uri: Uri) {
        let mut published = None;
        loop {
            // A large document just opened may still be parsing: awaited here.
            let Some(snapshot) = context.documents.snapshot(&uri).await else {
                self.finish(&uri);
                return;
            };
            let version = snapshot.version;
            let environment = context.environment.lock().clone();
            if published == Some((version, environment.generation, environment.profile.clone())) {
                // Asked again for what was just published (several changes of one version).
                if self.done(&uri) {
                    return;
                }
                continue;
            }
            let key = (version, environment.generation, environment.profile.clone());
            let engine = context.engine.clone();
            // Parsing and reading files: off the async workers.
            let computed = tokio::task::spawn_blocking(move || compute(&snapshot, &engine, &environment)).await;
            if let Ok(diagnostics) = computed
                && context.documents.version(&uri) == Some(version)
            {
                context.client.publish_diagnostics(uri.clone(), diagnostics, Some(version)).await;
                published = Some(key);
            }
            if self.done(&uri) {
                return;
            }
        }
    }

    /// Ends a computation of `uri`: `true` when nothing changed since it started, else
    /// the caller computes again.
    fn done(&self, uri: &Uri) -> bool {
        let mut running = self.running.lock();
        match running.get_mut(uri.as_str()) {
            Some(changed) if *changed => {
                *changed = false;
                false
            }
            _ => {
                running.remove(uri.as_str());
                true
            }
        }
    }

    fn finish(&self, uri: &Uri) {
        self.running.lock().remove(uri.as_str());
    }
}
