//! Volley's execution server (`volley serve`): runs `.http` definitions through the
//! engine on behalf of remote clients, keeps sessions and flows, and streams every
//! execution's events to observers. The wire contract is protocol 1.1
//! (`docs/protocol.md`).
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use volley_server::{Server, ServerConfig};
//!
//! let server = Server::bind(ServerConfig { port: 0, ..ServerConfig::default() }).await?;
//! println!("listening on http://{}", server.local_addr());
//! server.run(async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(())
//! # }
//! ```

mod auth;
mod clock;
mod cluster;
mod config;
mod connections;
mod documents;
mod error;
mod event;
mod execute;
mod flows;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod hub;
mod routes;
mod sessions;
mod state;
mod store;
mod tokens;
mod wire;
mod workspace;
mod ws;

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;

pub use config::{
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_KEEP_ALIVE_TIMEOUT, DEFAULT_MAX_BODY_SIZE, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_SESSIONS, DEFAULT_MAX_WS_SESSIONS, DEFAULT_PARSE_BUDGET, DEFAULT_PARSE_MEMORY, DEFAULT_PORT,
    DEFAULT_WRITE_TIMEOUT, DEFAULT_WS_CLOSED_GRACE, ServerConfig, StartError, is_loopback,
};

pub use config::RedisError;

/// A Redis URL with its password hidden, for messages.
#[must_use]
pub fn shown_redis_url(url: &str) -> String {
    config::shown_url(url)
}

use crate::state::AppState;
use crate::workspace::Workspace;

/// A bound server, ready to run.
#[derive(Debug)]
pub struct Server {
    listener: tokio::net::TcpListener,
    state: AppState,
    address: SocketAddr,
}

impl Server {
    /// Checks the configuration and binds the address (port 0 picks a free port).
    pub async fn bind(config: ServerConfig) -> Result<Self, StartError> {
        config::check(&config)?;
        let workspace = Workspace::new(&config.workspace)
            .map_err(|source| StartError::Workspace { path: config.workspace.clone(), source })?;
        let address = format!("{}:{}", config.host, config.port);
        let host = config.host.trim_start_matches('[').trim_end_matches(']');
        let listener = tokio::net::TcpListener::bind((host, config.port))
            .await
            .map_err(|source| StartError::Bind { address: address.clone(), source })?;
        let address = listener.local_addr().map_err(|source| StartError::Bind { address, source })?;
        let cluster = match &config.redis {
            Some(url) => {
                let lifetimes = cluster::Lifetimes {
                    session_ms: config.session_ttl.as_millis() as u64,
                    flow_ms: config.flow_ttl.as_millis() as u64,
                };
                Some(cluster::Cluster::connect(url, &config.redis_prefix, lifetimes).await?)
            }
            None => None,
        };
        Ok(Self { listener, state: AppState::new(config, workspace, cluster), address })
    }

    /// The address the server listens on.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// The canonical workspace directory.
    #[must_use]
    pub fn workspace(&self) -> &Path {
        &self.state.workspace.root
    }

    /// Serves until `shutdown` completes; then stops accepting, ends observer streams,
    /// and waits for in-flight executions up to the configured grace period.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        let state = self.state;
        let sweeper = tokio::spawn(sweep(state.clone()));
        let app = routes::router(state.clone());
        let stop = state.shutdown.clone();
        let limits = connections::Limits {
            max_connections: state.config.max_connections,
            max_connections_per_client: state.config.connections_per_client(),
            header_read_timeout: state.config.header_read_timeout,
            keep_alive_timeout: state.config.keep_alive_timeout,
            write_timeout: state.config.write_timeout,
        };
        let server = connections::serve(self.listener, app, limits, stop.clone());
        let grace = state.config.shutdown_grace;
        let mut server = std::pin::pin!(server);
        let result = tokio::select! {
            () = &mut server => Ok(()),
            () = async {
                shutdown.await;
                tracing::info!("shutting down: finishing in-flight executions (at most {} s)", grace.as_secs());
                stop.cancel();
                tokio::time::sleep(grace).await;
            } => {
                tracing::warn!("in-flight executions did not finish within {} s; stopping anyway", grace.as_secs());
                Ok(())
            }
        };
        sweeper.abort();
        if let Some(cluster) = &state.cluster {
            // The closes of its WebSocket sessions and the last events reach Redis.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), cluster.flush()).await;
            cluster.stop.cancel();
        }
        result
    }
}

/// The router of a server over `config` without binding, for tests that drive it
/// with `tower::ServiceExt::oneshot`; state in memory (`redis` is not used).
pub fn router(config: ServerConfig) -> Result<axum::Router, StartError> {
    config::check(&config)?;
    let workspace = Workspace::new(&config.workspace)
        .map_err(|source| StartError::Workspace { path: config.workspace.clone(), source })?;
    Ok(routes::router(AppState::new(config, workspace, None)))
}

/// The `OpenAPI` document of the server, as `GET /doc` serves it: of a server started
/// with a token (`--token`) or without, its state in its memory (`--redis` adds a
/// `503` where the store is asked).
#[must_use]
pub fn openapi_json(with_token: bool) -> String {
    routes::openapi::document(with_token, false).to_pretty_json().unwrap_or_default()
}

async fn sweep(state: AppState) {
    let mut interval = tokio::time::interval(state.config.sweep_interval);
    loop {
        interval.tick().await;
        state.sweep(clock::now_ms());
    }
}
