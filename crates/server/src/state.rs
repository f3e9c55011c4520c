//! The state every handler shares: configuration, workspace, the base engine client
//! (one HTTP transport and one configuration cache for all executions), sessions,
//! flows, tokens, the observer hub, the recently parsed documents and the shutdown
//! signal; with `--redis`, the link to the cluster they are kept in.

use std::ops::Deref;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use volley_engine::{Client, ClientConfig, CookieJar, Transport};

use crate::cluster::Cluster;
use crate::config::ServerConfig;
use crate::documents::Documents;
use crate::flows::Flows;
use crate::hub::Hub;
use crate::sessions::Sessions;
use crate::store::{Stores, Writes, WsStore};
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
    /// The WebSocket sessions this instance owns.
    pub(crate) ws_sessions: Arc<WsSessions>,
    /// Where they are mirrored for other instances, and those of others found.
    pub(crate) ws_store: Arc<dyn WsStore>,
    /// What an execution waits for before it answers (with `--redis`, its queued writes).
    pub(crate) writes: Arc<dyn Writes>,
    pub(crate) tokens: Tokens,
    pub(crate) hub: Arc<Hub>,
    /// Cancelled when the server shuts down: observer streams end.
    pub(crate) shutdown: CancellationToken,
    /// What every execution's client is forked from: the workspace files, the shared
    /// transport, the environment, and the configurations found so far.
    pub(crate) base_client: Client,
    /// The documents of the small texts executed last, so that they are not parsed again.
    pub(crate) documents: Documents,
    /// With `--redis`: the cluster sessions, flows, events and tokens are shared in.
    pub(crate) cluster: Option<Arc<Cluster>>,
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    pub(crate) fn new(config: ServerConfig, workspace: Workspace, cluster: Option<Arc<Cluster>>) -> Self {
        // The program's transport (the binary installs Volley's HTTP client).
        let transport: Arc<dyn Transport> = volley_engine::transport::default_transport();
        let base_client = Client::new(ClientConfig {
            io: Arc::new(WorkspaceFs { workspace: workspace.clone() }),
            transport: Some(Arc::clone(&transport)),
            environment: config.environment.clone().hiding(["VOLLEY_TOKEN".to_owned()], config.token.clone()),
            // No person at a browser here: the authorization-code grant says so at once.
            auth_prompt: Some(Arc::new(volley_engine::auth::NoBrowserPrompt)),
            // The workspace is the boundary here (`PATH_OUTSIDE_WORKSPACE`), not each
            // file's project.
            allow_external_files: true,
            ..ClientConfig::default()
        });
        // The one place the stores are chosen.
        let stores = cluster.as_ref().map_or_else(Stores::memory, Cluster::stores);
        let sessions = Sessions::new(config.max_sessions, stores.sessions, base_client.clone());
        let flows = Flows::new(config.max_flows, stores.flows);
        let hub = Arc::new(Hub::new(stores.events));
        if let Some(cluster) = &cluster {
            cluster.start(&hub);
        }
        let shared = Shared {
            sessions,
            flows,
            ws_sessions: Arc::new(WsSessions::new(config.max_ws_sessions)),
            ws_store: stores.ws,
            writes: stores.writes,
            tokens: Tokens::new(config.token.as_deref(), stores.tokens),
            hub,
            shutdown: CancellationToken::new(),
            workspace,
            config,
            base_client,
            documents: Documents::default(),
            cluster,
        };
        let state = Self(Arc::new(shared));
        if let Some(cluster) = &state.cluster {
            tokio::spawn(crate::cluster::ws::receive_commands(Arc::clone(cluster), Arc::clone(&state.ws_sessions)));
        }
        state
    }

    /// An engine client reading the workspace through the shared transport, with its
    /// own variables, cookie jar and request history.
    pub(crate) fn new_client(&self, variables: Map<String, Value>) -> Client {
        volley_engine::stages::fork(&self.base_client, variables, Some(CookieJar::new()))
    }

    /// Removes idle sessions and flows and expired tokens, and forgets the cached
    /// configurations so that a `volley.jsonc` created since is found (edits to a
    /// known one are seen at once).
    pub(crate) fn sweep(&self, now: u64) {
        volley_engine::stages::reload_config(&self.base_client);
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

#[cfg(test)]
mod tests {
    use std::sync::Weak;

    use axum::body::Body;
    use http::{Method, Request};
    use serde_json::json;
    use tower::ServiceExt as _;
    use volley_echo_server::TestServer;

    use super::*;
    use crate::clock::now_ms;

    /// Sends `body` to `path` through the router; the JSON answer.
    async fn call(router: &axum::Router, method: Method, path: &str, body: Option<Value>) -> Value {
        let request = Request::builder().method(method).uri(path).header("content-type", "application/json");
        let body = body.map_or_else(Body::empty, |body| Body::from(body.to_string()));
        let response = router.clone().oneshot(request.body(body).expect("request")).await.expect("answer");
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("body");
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    }

    #[tokio::test]
    async fn the_sweep_drops_every_reference_to_expired_flows_and_sessions() {
        let upstream = TestServer::start().await;
        let directory = std::env::temp_dir().join(format!("volley-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("workspace");
        let config = ServerConfig { workspace: directory.clone(), ..ServerConfig::default() };
        let (flow_ttl, session_ttl) = (config.flow_ttl.as_millis() as u64, config.session_ttl.as_millis() as u64);
        // The server's clients send with Volley's HTTP client, as the binary installs it.
        volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
        let state = AppState::new(config, Workspace::new(&directory).expect("workspace"), None);
        let router = crate::routes::router(state.clone());

        let session = call(&router, Method::POST, "/session", Some(json!({ "variables": { "a": "b" } }))).await;
        let session = session["sessionId"].as_str().expect("sessionId").to_owned();
        let flow = call(&router, Method::POST, "/flows", Some(json!({ "sessionId": session }))).await;
        let flow = flow["flowId"].as_str().expect("flowId").to_owned();
        let content = format!("# @name echo\nGET {}/echo\n", upstream.base_url());
        for _ in 0..3 {
            let answer =
                call(&router, Method::POST, "/execute", Some(json!({ "content": content, "flowId": flow }))).await;
            assert_eq!(answer["response"]["status"], 200, "{answer}");
        }

        // Everything the server keeps of them, held weakly.
        let stored = state.flows.peek(&flow).await.expect("read").expect("the flow");
        assert_eq!(stored.executions().await.expect("read").len(), 3);
        let flow_held = Arc::downgrade(&stored);
        drop(stored);
        let (events, _) = state.hub.retained_after(&flow, 0).await;
        assert!(events.len() > 3, "the flow's events are retained");
        let events_held: Vec<Weak<_>> = events.iter().map(Arc::downgrade).collect();
        drop(events);
        let session_held = Arc::downgrade(&state.sessions.get(&session).await.expect("the session"));

        let now = now_ms();
        state.sweep(now + flow_ttl);
        assert_eq!((state.flows.list(None).await.expect("listed").len(), state.hub.retained_flows()), (0, 0));
        assert!(flow_held.upgrade().is_none(), "the flow and its stored executions are freed");
        assert!(events_held.iter().all(|event| event.upgrade().is_none()), "its events are freed");
        assert!(session_held.upgrade().is_some(), "sessions live longer than flows");

        state.sweep(now + session_ttl);
        assert_eq!(state.sessions.len(), 0);
        assert!(session_held.upgrade().is_none(), "the session, its client and its chained responses are freed");
        let _ = std::fs::remove_dir_all(&directory);
    }
}
