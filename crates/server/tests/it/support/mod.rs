//! Helpers of the server's socket tests: a server on 127.0.0.1 port 0 in its own
//! temporary workspace, and an HTTP client.
#![allow(dead_code)] // Each test file uses a different part.

mod observer;
mod redis;

pub(crate) use observer::Observer;
pub(crate) use redis::Redis;
use tokio::sync::oneshot;
use volley_server::{Server, ServerConfig};

/// A server running in the background; dropping `stop` shuts it down.
pub(crate) struct Running {
    pub(crate) base: String,
    pub(crate) stop: Option<oneshot::Sender<()>>,
    pub(crate) done: tokio::task::JoinHandle<std::io::Result<()>>,
    pub(crate) workspace: Workspace,
}

/// A temporary directory, removed on drop.
pub(crate) struct Workspace(pub(crate) std::path::PathBuf);

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Volley's HTTP client as the transport of the servers' clients, as the binary installs it.
pub(crate) fn install_http() {
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
}

pub(crate) async fn start(config: ServerConfig) -> Running {
    install_http();
    let directory = std::env::temp_dir().join(format!("volley-server-{}", unique()));
    std::fs::create_dir_all(&directory).expect("workspace");
    let server = Server::bind(ServerConfig { port: 0, workspace: directory.clone(), ..config }).await.expect("bind");
    let base = format!("http://{}", server.local_addr());
    let (stop, stopped) = oneshot::channel::<()>();
    let done = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    Running { base, stop: Some(stop), done, workspace: Workspace(directory) }
}

pub(crate) fn unique() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

pub(crate) fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().expect("client")
}

/// POSTs JSON; the status and the JSON answer (`Null` when not JSON).
pub(crate) async fn post(client: &reqwest::Client, url: String, body: serde_json::Value) -> (u16, serde_json::Value) {
    send(client.post(url), Some(body), None).await
}

/// Sends with an optional JSON body and bearer token.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    body: Option<serde_json::Value>,
    token: Option<&str>,
) -> (u16, serde_json::Value) {
    let mut request = request;
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = request.send().await.expect("send");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("body");
    (status, serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null))
}
