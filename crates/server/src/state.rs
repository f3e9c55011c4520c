//! The state every handler shares: configuration, workspace, the base engine client
//! (one HTTP transport and one configuration cache for all executions), sessions,
//! flows, tokens, the observer hub and the shutdown signal.

use std::ops::Deref;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use volley_engine::{Client, ClientConfig, CookieJar, HttpTransport, Transport};

use crate::config::ServerConfig;
use crate::flows::Flows;
use crate::hub::Hub;
use crate::sessions::Sessions;
use crate::tokens::Tokens;
use crate::workspace::{Workspace, WorkspaceFs};
use crate::ws::WsSessions;

/// Cheap to clone: everything is behind one `Arc`.
#[derive(Debug, Clone)]
pub(crate) struct AppState(Arc<Shared>);

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: ServerConfig,
    pub(crate) workspace: Workspace,
    pub(crate) sessions: Sessions,
    pub(crate) flows: Flows,
    pub(crate) ws_sessions: WsSessions,
    pub(crate) tokens: Tokens,
    pub(crate) hub: Arc<Hub>,
    /// Cancelled when the server shuts down: observer streams end.
    pub(crate) shutdown: CancellationToken,
    /// What every execution's client is forked from: the workspace files, the shared
    /// transport, the environment, and the configurations found so far.
    pub(crate) base_client: Client,
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    pub(crate) fn new(config: ServerConfig, workspace: Workspace) -> Self {
        let transport: Arc<dyn Transport> = Arc::new(HttpTransport::new());
        let base_client = Client::new(ClientConfig {
            io: Arc::new(WorkspaceFs { workspace: workspace.clone() }),
            transport: Some(Arc::clone(&transport)),
            environment: config.environment.clone().hiding(["VOLLEY_TOKEN".to_owned()], config.token.clone()),
            ..ClientConfig::default()
        });
        let shared = Shared {
            sessions: Sessions::new(config.max_sessions),
            flows: Flows::new(config.max_flows),
            ws_sessions: WsSessions::new(config.max_ws_sessions),
            tokens: Tokens::new(config.token.as_deref()),
            hub: Arc::new(Hub::default()),
            shutdown: CancellationToken::new(),
            workspace,
            config,
            base_client,
        };
        Self(Arc::new(shared))
    }

    /// An engine client reading the workspace through the shared transport, with its
    /// own variables, cookie jar and request history.
    pub(crate) fn new_client(&self, variables: Map<String, Value>) -> Client {
        self.base_client.fork(variables, Some(CookieJar::new()))
    }

    /// Removes idle sessions and flows and expired tokens, and forgets the cached
    /// configurations so that a `volley.jsonc` created since is found (edits to a
    /// known one are seen at once).
    pub(crate) fn sweep(&self, now: u64) {
        self.base_client.reload_config();
        let sessions = self.sessions.sweep(now, self.config.session_ttl);
        let flows = self.flows.sweep(now, self.config.flow_ttl);
        for id in &flows {
            self.hub.forget_flow(id);
        }
        self.tokens.sweep(now);
        if !sessions.is_empty() || !flows.is_empty() {
            tracing::info!(sessions = sessions.len(), flows = flows.len(), "removed idle sessions and flows");
        }
    }
}
