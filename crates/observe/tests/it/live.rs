//! The observer against a real `volley serve` (in this process, on 127.0.0.1 port 0)
//! and a real upstream: executions reach the screen state with their status, details come
//! from the execution store, and after a server restart on the same port the observer
//! says it is disconnected, reconnects, and shows what runs next, with nothing twice.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use url::Url;
use volley_echo_server::TestServer;
use volley_observe::app::{Action, App, Link};
use volley_observe::connection::{self, Refusal, Target, Update};
use volley_server::{Server, ServerConfig};

const WAIT: Duration = Duration::from_secs(15);

struct Running {
    stop: Option<oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        let _ = self.done.await;
    }
}

/// Binds with `bind`, retrying for 5 s: the port of a server that just stopped may take
/// a moment to be free again.
async fn bind_retrying<T, E: std::fmt::Display, F: Future<Output = Result<T, E>>>(bind: impl Fn() -> F) -> T {
    let mut attempts = 0;
    loop {
        match bind().await {
            Ok(bound) => return bound,
            Err(_) if attempts < 50 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("bind: {error}"),
        }
    }
}

async fn serve(port: u16, workspace: &std::path::Path, token: Option<&str>) -> (Running, u16) {
    let config = ServerConfig {
        port,
        workspace: workspace.to_owned(),
        token: token.map(str::to_owned),
        ..ServerConfig::default()
    };
    // The execution server sends with Volley's HTTP client, as the binary installs it.
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
    let server = bind_retrying(|| Server::bind(config.clone())).await;
    let port = server.local_addr().port();
    let (stop, stopped) = oneshot::channel::<()>();
    let done = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    (Running { stop: Some(stop), done }, port)
}

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

async fn post(base: &str, path: &str, body: Value, token: Option<&str>) -> Value {
    let mut request =
        http().post(format!("{base}{path}")).header("content-type", "application/json").body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.unwrap();
    assert!(answer.status().is_success(), "{path}: {}", answer.status());
    serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap()
}

/// A fresh workspace directory for one test's server.
fn workspace(name: &str) -> std::path::PathBuf {
    let workspace = std::env::temp_dir().join(format!("volley-observe-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&workspace).unwrap();
    workspace
}

/// A screen following `target`, as `volley observe` runs one.
fn observe(base: &str, target: &Target) -> (App, mpsc::Receiver<Update>, tokio::task::JoinHandle<()>) {
    let app = App::new(base.to_owned(), target.scope());
    let (sender, updates) = mpsc::channel(1024);
    let follower = tokio::spawn(connection::follow(target.clone(), sender));
    (app, updates, follower)
}

/// Applies updates until `done` holds for the app.
async fn until(app: &mut App, updates: &mut mpsc::Receiver<Update>, what: &str, done: impl Fn(&mut App) -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !done(app) {
        let update = tokio::time::timeout_at(deadline, updates.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}; link {:?}", app.link))
            .expect("the connection ended");
        app.update(update, 0);
        app.refresh();
    }
}

fn statuses(app: &App) -> Vec<(String, Option<u16>)> {
    app.visible
        .iter()
        .map(|key| {
            let execution = app.state.execution_by_key(key).unwrap();
            (execution.url.rsplit('/').next().unwrap_or_default().to_owned(), execution.status)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executions_appear_and_survive_a_server_restart_without_repeats() {
    let upstream = TestServer::start().await;
    let workspace = workspace("restart");
    let (server, port) = serve(0, &workspace, None).await;
    let base = format!("http://127.0.0.1:{port}");
    let target = Target { server: Url::parse(&base).unwrap(), token: None, flow: None, session: None };
    connection::preflight(&target).await.unwrap();

    let (mut app, mut updates, follower) = observe(&base, &target);
    until(&mut app, &mut updates, "the first connection", |app| app.link == Link::Connected).await;

    let flow = post(&base, "/flows", json!({"label": "before"}), None).await["flowId"].as_str().unwrap().to_owned();
    let content = format!(
        "# @name ok\n# @assert status == 200\nGET {}\n\n###\n# @name missing\nGET {}\n",
        upstream.url("/echo/one"),
        upstream.url("/status/404")
    );
    post(&base, "/execute", json!({"content": content, "flowId": flow, "requestName": "ok"}), None).await;
    post(&base, "/execute", json!({"content": content, "flowId": flow, "requestName": "missing"}), None).await;
    post(&base, "/execute", json!({"content": format!("GET {}\n", upstream.url("/echo/outside"))}), None).await;
    until(&mut app, &mut updates, "three executions", |app| {
        app.visible.len() == 3
            && app.visible.iter().all(|key| app.state.execution_by_key(key).unwrap().status.is_some())
    })
    .await;
    assert_eq!(
        statuses(&app),
        [("one".to_owned(), Some(200)), ("404".to_owned(), Some(404)), ("outside".to_owned(), Some(200))]
    );
    let flow_view = &app.state.flows()[0];
    assert_eq!((flow_view.label.as_str(), flow_view.total, flow_view.succeeded, flow_view.failed), ("before", 2, 1, 1));

    // Details come from the execution store.
    app.on_key(ratatui::crossterm::event::KeyEvent::from(ratatui::crossterm::event::KeyCode::Home));
    let Action::Fetch(key, flow_id, exec) =
        app.on_key(ratatui::crossterm::event::KeyEvent::from(ratatui::crossterm::event::KeyCode::Enter))
    else {
        panic!("a flow execution is fetched");
    };
    let stored = connection::fetch_execution(&target, &flow_id, &exec).await.unwrap();
    assert_eq!(stored["response"]["status"], 200);
    assert_eq!(stored["assertions"]["passed"], true);
    app.update(Update::Detail { key, result: Ok(stored) }, 0);
    let missing = connection::fetch_execution(&target, &flow_id, "exec_nope").await.unwrap_err();
    assert!(missing.contains("has no execution"), "{missing}");

    // The server goes away: the observer says so, and keeps trying.
    server.stop().await;
    until(&mut app, &mut updates, "the disconnection", |app| matches!(app.link, Link::Disconnected { .. })).await;
    let Link::Disconnected { reason, .. } = &app.link else { unreachable!() };
    assert!(!reason.is_empty());

    // A new server on the same port: the observer reconnects and shows what runs there.
    let (server, _) = serve(port, &workspace, None).await;
    until(&mut app, &mut updates, "the reconnection", |app| app.link == Link::Connected).await;
    let flow = post(&base, "/flows", json!({"label": "after"}), None).await["flowId"].as_str().unwrap().to_owned();
    post(&base, "/execute", json!({"content": content, "flowId": flow, "requestName": "ok"}), None).await;
    until(&mut app, &mut updates, "the execution after the restart", |app| {
        app.visible.len() == 4 && app.state.execution_by_key(&app.visible[3]).unwrap().status.is_some()
    })
    .await;
    // The old flow went with the old server: the backfill finds it unknown and says so.
    until(&mut app, &mut updates, "the old flow marked gone", |app| app.state.flows()[0].gone).await;
    // Let anything late settle.
    let settle = tokio::time::Instant::now() + Duration::from_millis(800);
    while let Ok(Some(update)) = tokio::time::timeout_at(settle, updates.recv()).await {
        app.update(update, 0);
    }
    app.refresh();
    assert_eq!(app.visible.len(), 4, "nothing shown twice: {:?}", statuses(&app));
    assert_eq!(statuses(&app)[3], ("one".to_owned(), Some(200)));
    assert_eq!(app.state.flows().len(), 2);
    assert!(!app.state.flows()[1].gone, "the new flow is known to the new server");
    assert!(app.notice.as_deref().unwrap_or_default().contains("may be missing"), "{:?}", app.notice);

    follower.abort();
    server.stop().await;
    let _ = std::fs::remove_dir_all(&workspace);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flow_is_resumed_with_after_seq_and_auth_is_checked_first() {
    let upstream = TestServer::start().await;
    let workspace = workspace("auth");
    let token = "observer-test-token";
    let (server, port) = serve(0, &workspace, Some(token)).await;
    let base = format!("http://127.0.0.1:{port}");
    let server_url = Url::parse(&base).unwrap();

    // Refused before any screen: no token, a wrong one, a token without a scope.
    let without = Target { server: server_url.clone(), token: None, flow: None, session: None };
    assert!(matches!(connection::preflight(&without).await, Err(Refusal::TokenMissing)));
    let wrong = Target { token: Some("wrong".into()), flow: Some("flow_x".into()), ..without.clone() };
    assert!(matches!(connection::preflight(&wrong).await, Err(Refusal::TokenRefused)));
    let unscoped = Target { token: Some(token.into()), ..without.clone() };
    let refusal = connection::preflight(&unscoped).await.unwrap_err();
    assert!(refusal.to_string().contains("pass --flow ID or --session ID"), "{refusal}");

    // Executions that ran before the observer started come first (afterSeq=0).
    let flow =
        post(&base, "/flows", json!({"label": "guarded"}), Some(token)).await["flowId"].as_str().unwrap().to_owned();
    let content = format!("GET {}\n", upstream.url("/echo/early"));
    post(&base, "/execute", json!({"content": content, "flowId": flow}), Some(token)).await;
    let target = Target { token: Some(token.into()), flow: Some(flow.clone()), ..without };
    connection::preflight(&target).await.unwrap();
    let (mut app, mut updates, follower) = observe(&base, &target);
    until(&mut app, &mut updates, "the replay of the flow", |app| {
        app.visible.len() == 1 && app.state.execution_by_key(&app.visible[0]).unwrap().status == Some(200)
    })
    .await;
    assert_eq!(app.scope, format!("flow {flow}"));
    follower.abort();
    server.stop().await;
    let _ = std::fs::remove_dir_all(&workspace);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_flow_the_server_does_not_know_is_reported_gone() {
    let upstream = TestServer::start().await;
    let workspace = workspace("gone");
    let (server, port) = serve(0, &workspace, None).await;
    let base = format!("http://127.0.0.1:{port}");
    let server_url = Url::parse(&base).unwrap();

    // A flow id the server never gave out: said at once, instead of a silent screen.
    let typo = Target { server: server_url.clone(), token: None, flow: Some("flow_typo".into()), session: None };
    let (mut app, mut updates, follower) = observe(&base, &typo);
    until(&mut app, &mut updates, "the notice about the unknown flow", |app| {
        app.notice.as_deref().is_some_and(|notice| notice.contains("knows no flow `flow_typo`"))
    })
    .await;
    follower.abort();

    // A watched flow that the restarted server no longer has is marked gone.
    let flow = post(&base, "/flows", json!({"label": "watched"}), None).await["flowId"].as_str().unwrap().to_owned();
    post(&base, "/execute", json!({"content": format!("GET {}\n", upstream.url("/echo/one")), "flowId": flow}), None)
        .await;
    let target = Target { server: server_url, token: None, flow: Some(flow.clone()), session: None };
    let (mut app, mut updates, follower) = observe(&base, &target);
    until(&mut app, &mut updates, "the execution of the flow", |app| {
        app.visible.len() == 1 && app.state.execution_by_key(&app.visible[0]).unwrap().status == Some(200)
    })
    .await;
    assert!(!app.state.flows()[0].gone, "a flow the server knows is not gone");
    server.stop().await;
    until(&mut app, &mut updates, "the disconnection", |app| matches!(app.link, Link::Disconnected { .. })).await;
    let (server, _) = serve(port, &workspace, None).await;
    until(&mut app, &mut updates, "the flow marked gone, and said so", |app| {
        app.link == Link::Connected
            && app.state.flows()[0].gone
            && app.notice.as_deref().is_some_and(|notice| notice.contains("nothing more will arrive"))
    })
    .await;
    assert_eq!(app.visible.len(), 1, "what was shown stays");

    follower.abort();
    server.stop().await;
    let _ = std::fs::remove_dir_all(&workspace);
}

/// A TCP relay between the observer and the server that a test can cut and restore:
/// a network drop with the server still running.
struct Relay {
    port: u16,
    to: u16,
    accepting: Option<tokio::task::JoinHandle<()>>,
}

impl Relay {
    async fn start(to: u16) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        Relay { port, to, accepting: Some(tokio::spawn(Self::accept(listener, to))) }
    }

    async fn accept(listener: tokio::net::TcpListener, to: u16) {
        // Dropped with this task when the relay is cut: every relayed connection ends.
        let mut connections = tokio::task::JoinSet::new();
        while let Ok((mut inbound, _)) = listener.accept().await {
            connections.spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(("127.0.0.1", to)).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    }

    fn cut(&mut self) {
        if let Some(accepting) = self.accepting.take() {
            accepting.abort();
        }
    }

    async fn restore(&mut self) {
        let port = self.port;
        let listener = bind_retrying(|| tokio::net::TcpListener::bind(("127.0.0.1", port))).await;
        self.accepting = Some(tokio::spawn(Self::accept(listener, self.to)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_sessions_closed_while_disconnected_are_shown_gone() {
    let upstream = TestServer::start().await;
    let workspace = workspace("sessions");
    let (server, port) = serve(0, &workspace, None).await;
    let base = format!("http://127.0.0.1:{port}");
    // The observer reaches the server through a relay; the test talks to it directly.
    let mut relay = Relay::start(port).await;
    let relayed = format!("http://127.0.0.1:{}", relay.port);
    let target = Target { server: Url::parse(&relayed).unwrap(), token: None, flow: None, session: None };
    let (mut app, mut updates, follower) = observe(&relayed, &target);
    until(&mut app, &mut updates, "the first connection", |app| app.link == Link::Connected).await;

    // Sessions outside flows: no flow replay can bring back what was missed.
    let ws = upstream.base_url().replacen("http", "ws", 1);
    let content = format!("GET {ws}/ws/echo\n");
    let mut ids = Vec::new();
    for _ in 0..2 {
        let answer = post(&base, "/execute/ws", json!({"content": content}), None).await;
        ids.push(answer["ws"]["wsSessionId"].as_str().unwrap().to_owned());
    }
    until(&mut app, &mut updates, "the two open sessions", |app| app.state.sessions().len() == 2).await;

    // The network drops; meanwhile the first session is closed, and its close is not heard.
    relay.cut();
    until(&mut app, &mut updates, "the disconnection", |app| matches!(app.link, Link::Disconnected { .. })).await;
    let answer = http().delete(format!("{base}/ws/session/{}", ids[0])).send().await.unwrap();
    assert_eq!(answer.status(), 204);
    relay.restore().await;

    until(&mut app, &mut updates, "the closed session marked gone", |app| {
        app.link == Link::Connected && app.state.sessions()[0].gone
    })
    .await;
    // Let the other probe answer too: the live session stays open, and still works.
    let settle = tokio::time::Instant::now() + Duration::from_millis(500);
    while let Ok(Some(update)) = tokio::time::timeout_at(settle, updates.recv()).await {
        app.update(update, 0);
    }
    let sessions = app.state.sessions();
    assert_eq!((sessions[0].closed.clone(), sessions[1].gone, sessions[1].closed.clone()), (None, false, None));
    let answer = http().delete(format!("{base}/ws/session/{}", ids[1])).send().await.unwrap();
    assert_eq!(answer.status(), 204, "the probe left the live session alone");

    follower.abort();
    relay.cut();
    server.stop().await;
    let _ = std::fs::remove_dir_all(&workspace);
}
