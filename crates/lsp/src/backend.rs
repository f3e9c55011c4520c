//! The state of the language server ([`Backend`]) and what every handler uses of it:
//! publishing diagnostics, the profile, reading a snapshot's document. The handlers are
//! written as `impl Backend` blocks in their modules (`commands.rs`, `lookup.rs`,
//! `settings.rs`, …) and registered in `server.rs`, which stands above them all.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error as RpcError, Result};
use tower_lsp_server::ls_types::{Uri, WorkDoneProgressCancelParams};

use crate::cookies::Jars;
use crate::diagnostics::{Context, Environment, Publisher};
use crate::documents::Documents;
use crate::execute::remote::Remote;
use crate::model::Snapshot;
use crate::progress::Progresses;

/// The state of the language server. Cheap to clone: handlers and background tasks
/// share the same documents and engine.
#[derive(Debug, Clone)]
pub struct Backend {
    pub(crate) client: Client,
    pub(crate) documents: Documents,
    pub(crate) engine: volley_engine::Client,
    /// Set by `shutdown`: the process exits with 0 only after it (LSP's `exit` rule).
    pub(crate) shut_down: Arc<AtomicBool>,
    pub(crate) publisher: Publisher,
    pub(crate) environment: Arc<Mutex<Environment>>,
    pub(crate) progresses: Progresses,
    /// The client registers file watchers on request
    /// (`workspace.didChangeWatchedFiles.dynamicRegistration`).
    pub(crate) can_watch: Arc<AtomicBool>,
    /// The client accepts snippets in completion items
    /// (`textDocument.completion.completionItem.snippetSupport`).
    pub(crate) snippets: Arc<AtomicBool>,
    /// The cookie jars, one per workspace folder.
    pub(crate) jars: Jars,
    /// The execution server sends go through, when the `server` setting names one.
    pub(crate) remote: Remote,
    /// The client can open a URL in the user's browser (`window/showDocument`).
    pub(crate) can_show_document: Arc<AtomicBool>,
    /// The client answers `volley/prompt` (`prompts: true` in its initialization options).
    pub(crate) can_prompt: Arc<AtomicBool>,
    /// The `history` setting: whether and how much of the sends' responses is kept.
    pub(crate) history: crate::history::History,
    /// The files of bodies longer than an outcome keeps.
    pub(crate) bodies: crate::bodies::Bodies,
}

impl Backend {
    pub(crate) fn new(client: Client) -> Self {
        let files = volley_engine::io::MemoryFs::over(volley_engine::io::RealFs);
        let can_show_document = Arc::new(AtomicBool::new(false));
        let can_prompt = Arc::new(AtomicBool::new(false));
        let prompt = Arc::new(crate::prompt::EditorPrompt {
            client: client.clone(),
            can_show_document: Arc::clone(&can_show_document),
            can_prompt: Arc::clone(&can_prompt),
        });
        let config = volley_engine::ClientConfig {
            io: Arc::new(files.clone()),
            auth_prompt: Some(prompt.clone()),
            value_prompt: Some(prompt),
            ..volley_engine::ClientConfig::default()
        };
        Self {
            client,
            documents: Documents::new(files),
            engine: volley_engine::Client::new(config),
            shut_down: Arc::default(),
            publisher: Publisher::default(),
            environment: Arc::default(),
            progresses: Progresses::default(),
            can_watch: Arc::default(),
            snippets: Arc::default(),
            jars: Jars::default(),
            remote: Remote::default(),
            can_show_document,
            can_prompt,
            history: crate::history::History::default(),
            bodies: crate::bodies::Bodies::default(),
        }
    }

    /// `true` once the client asked the server to shut down.
    #[must_use]
    pub fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::SeqCst)
    }

    pub(crate) fn context(&self) -> Context {
        Context {
            client: self.client.clone(),
            documents: self.documents.clone(),
            engine: self.engine.clone(),
            environment: Arc::clone(&self.environment),
        }
    }

    pub(crate) fn publish(&self, uri: Uri) {
        self.publisher.request(&self.context(), uri);
    }

    pub(crate) fn publish_all(&self) {
        self.publisher.request_all(&self.context());
    }

    pub(crate) fn profile(&self) -> Option<String> {
        self.environment.lock().profile.clone()
    }

    /// Files may have appeared or vanished, configurations changed: check again.
    pub(crate) fn files_changed(&self) {
        volley_engine::stages::reload_config(&self.engine);
        self.publish_all();
    }

    /// `window/workDoneProgress/cancel`: the cancel button of a progress (async: the
    /// service's custom methods are).
    #[allow(clippy::unused_async)]
    pub(crate) async fn cancel_progress(&self, params: WorkDoneProgressCancelParams) {
        self.progresses.cancel(&params.token);
    }
}

/// The whole typed document of a snapshot, built off the async workers.
pub(crate) async fn document_of(snapshot: &Snapshot) -> Result<Arc<volley_syntax::Document>> {
    let snapshot = snapshot.clone();
    tokio::task::spawn_blocking(move || snapshot.document()).await.map_err(|_| RpcError::internal_error())
}

pub(crate) fn invalid_params(message: impl Into<String>) -> RpcError {
    RpcError::invalid_params(message.into())
}
