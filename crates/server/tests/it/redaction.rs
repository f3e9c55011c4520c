//! The redaction policy end to end, on real sockets: a distinct marker is planted in each
//! source of secrets (a `$secret`, a sensitive variable of `volley.jsonc`, of a profile,
//! of a JetBrains private env file, of a `.env` file, of the session and of the
//! execution, an environment variable with a sensitive name, a literal `Authorization`
//! header), made to flow into every output of the
//! server (the URL that fails to parse, assertion expressions with their expected and
//! actual values, headers, bodies, the upstream WebSocket URL), and every channel is
//! searched for it: observer events, stored executions, the answers (but the upstream's
//! own response), the control socket, the session view and the log lines.
//!
//! This binary installs a global tracing subscriber (every level, every crate), so it
//! holds this test only.

use std::io::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::StreamExt as _;
use parking_lot::Mutex;
use serde_json::{Value, json};
use support::{Running, client, send, start};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use volley_echo_server::TestServer;
use volley_server::ServerConfig;

use crate::support;

const MAIN: &str = "main-token-of-the-server";

/// One marker per source of secrets.
const SECRET: &str = "m4rk-secret-resolver";
const CONFIG: &str = "m4rk-config-apikey";
const PROFILE: &str = "m4rk-profile-dbpass";
const DOTENV: &str = "m4rk-dotenv-token";
const SESSION: &str = "m4rk-session-token";
const EXECUTION: &str = "m4rk-exec-authcode";
const HEADER: &str = "m4rk-literal-bearer";
const JETBRAINS: &str = "m4rk-jetbrains-private";
const ENVIRONMENT: &str = "m4rk-env-token";
const MARKERS: [&str; 9] = [SECRET, CONFIG, PROFILE, DOTENV, SESSION, EXECUTION, HEADER, JETBRAINS, ENVIRONMENT];

/// Every `{{ }}` of the `app/` requests that gives a secret.
const ALL: &str = "{{$secret(VAULT_SECRET)}}.{{$env(SERVICE_TOKEN)}}.{{apiKey}}.{{dbPassword}}.{{API_TOKEN}}.\
                   {{sessionToken}}.{{authCode}}";

/// What the server logged, at every level.
fn logs() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&buffer);
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Capture(Arc::clone(&writer)))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber of this binary");
        buffer
    })
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The markers `text` shows.
fn leaked(text: &str) -> Vec<&'static str> {
    MARKERS.into_iter().filter(|marker| text.contains(marker)).collect()
}

fn write(server: &Running, relative: &str, text: &str) {
    let path = server.workspace.0.join(relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("directories");
    std::fs::write(path, text).expect("a workspace file");
}

/// A socket on the server, `token` as a bearer.
async fn socket(
    server: &Running,
    path: &str,
    token: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let mut request = format!("{}{path}", server.base.replacen("http", "ws", 1)).into_client_request().expect("URL");
    request.headers_mut().insert("authorization", format!("Bearer {token}").parse().expect("header"));
    tokio::time::timeout(Duration::from_secs(10), tokio_tungstenite::connect_async(request))
        .await
        .expect("a handshake in time")
        .expect("a socket")
        .0
}

/// JSON frames of `socket` up to the first of type `last`, that one included.
async fn frames_until(
    socket: &mut tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    last: &str,
) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(10), socket.next()).await.expect("a frame in time");
        match next {
            Some(Ok(Message::Text(text))) => {
                let frame: Value = serde_json::from_str(text.as_str()).expect("JSON");
                let done = frame["type"] == last;
                frames.push(frame);
                if done {
                    return frames;
                }
            }
            Some(Ok(_)) => {}
            other => panic!("the socket ended before `{last}`: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_output_of_the_server_shows_a_secret_from_any_source() {
    let logs = logs();
    let upstream = TestServer::start().await;
    let server = start(ServerConfig {
        token: Some(MAIN.to_owned()),
        environment: volley_engine::resolvers::Environment::fixed([
            ("VAULT_SECRET".to_owned(), SECRET.to_owned()),
            ("SERVICE_TOKEN".to_owned(), ENVIRONMENT.to_owned()),
        ]),
        ..ServerConfig::default()
    })
    .await;
    let ws = upstream.base_url().replacen("http", "ws", 1);
    write(
        &server,
        "app/volley.jsonc",
        &format!(
            r#"{{ "variables": {{ "host": "{}", "ws": "{ws}", "apiKey": "{CONFIG}" }},
                 "profiles": {{ "dev": {{ "variables": {{ "dbPassword": "{PROFILE}" }} }} }} }}"#,
            upstream.base_url()
        ),
    );
    write(&server, "app/.env", &format!("API_TOKEN={DOTENV}\n"));
    write(
        &server,
        "app/all.http",
        &format!(
            "# @assert header x-missing == {ALL}\n# @assert jsonpath $.url == \"nope\"\n# @assert body contains nope\n\
             POST {{{{host}}}}/echo?all={ALL}\nAuthorization: Bearer {HEADER}\nX-All: {ALL}\nContent-Type: text/plain\n\n\
             {ALL} {HEADER}\n"
        ),
    );
    write(&server, "app/bad.http", &format!("GET http://[{ALL}/x\n"));
    write(&server, "app/ws.http", &format!("GET {{{{ws}}}}/ws/echo?all={ALL}\nAuthorization: Bearer {HEADER}\n"));
    write(&server, "jb/http-client.env.json", r#"{ "dev": { "region": "eu" } }"#);
    write(&server, "jb/http-client.private.env.json", &format!(r#"{{ "dev": {{ "clientSecret": "{JETBRAINS}" }} }}"#));
    write(
        &server,
        "jb/jb.http",
        &format!(
            "# @assert jsonpath $.query == {{{{clientSecret}}}}\nGET {}?cs={{{{clientSecret}}}}&r={{{{region}}}}\n",
            upstream.url("/echo")
        ),
    );

    let http = client();
    let main = Some(MAIN);
    let (_, created) = send(
        http.post(format!("{}/session", server.base)),
        Some(json!({ "variables": { "sessionToken": SESSION } })),
        main,
    )
    .await;
    let session = created["sessionId"].as_str().expect("a session").to_owned();
    let (_, created) =
        send(http.post(format!("{}/flows", server.base)), Some(json!({ "sessionId": session })), main).await;
    let flow = created["flowId"].as_str().expect("a flow").to_owned();
    let execute = |route: &'static str, path: &'static str| {
        let body = json!({ "path": path, "flowId": flow, "profile": "dev", "variables": { "authCode": EXECUTION } });
        send(http.post(format!("{}{route}", server.base)), Some(body), main)
    };

    // Every channel's text, by name.
    let mut channels: Vec<(String, String)> = Vec::new();
    let (status, mut answer) = execute("/execute", "app/all.http").await;
    assert_eq!(status, 200, "{answer}");
    // The upstream's own response is the caller's: the markers did reach the upstream.
    let echoed = answer["response"]["body"].as_str().expect("the echo").to_owned();
    assert_eq!(leaked(&echoed), [SECRET, CONFIG, PROFILE, DOTENV, SESSION, EXECUTION, HEADER, ENVIRONMENT], "{echoed}");
    assert_eq!(answer["assertions"]["failed"], 3, "{answer}");
    answer.as_object_mut().expect("an object").remove("response");
    channels.push(("the /execute answer".to_owned(), answer.to_string()));
    let (status, answer) = execute("/execute", "app/bad.http").await;
    assert_eq!((status, answer["error"]["details"]["code"].as_str()), (400, Some("invalid-url")), "{answer}");
    channels.push(("the /execute answer of an invalid URL".to_owned(), answer.to_string()));
    let body = json!({ "path": "jb/jb.http", "flowId": flow, "profile": "dev" });
    let (status, mut answer) = send(http.post(format!("{}/execute", server.base)), Some(body), main).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(leaked(answer["response"]["body"].as_str().expect("the echo")), [JETBRAINS]);
    answer.as_object_mut().expect("an object").remove("response");
    channels.push(("the /execute answer (JetBrains)".to_owned(), answer.to_string()));
    let (status, answer) = execute("/execute/ws", "app/ws.http").await;
    assert_eq!(status, 200, "{answer}");
    channels.push(("the /execute/ws answer".to_owned(), answer.to_string()));
    let ws_session = answer["ws"]["wsSessionId"].as_str().expect("a WebSocket session").to_owned();

    // Observers: the flow's events, replayed.
    let mut observer = socket(&server, &format!("/event/ws?flowId={flow}&afterSeq=0"), MAIN).await;
    let events = frames_until(&mut observer, "wsSessionOpened").await;
    for kind in ["interpolateFinished", "assertionReport", "executionFailed", "wsSessionOpened"] {
        assert!(events.iter().any(|event| event["type"] == kind), "no {kind} in {events:#?}");
    }
    let executions: Vec<String> = events
        .iter()
        .filter(|event| event["type"] == "requestQueued")
        .map(|event| event["reqExecId"].as_str().expect("an execution id").to_owned())
        .collect();
    assert_eq!(executions.len(), 4, "{events:#?}");
    for event in &events {
        channels.push((format!("the observer event {}", event["type"]), event.to_string()));
    }
    // The store.
    for execution in &executions {
        let (status, stored) =
            send(http.get(format!("{}/flows/{flow}/executions/{execution}", server.base)), None, main).await;
        assert_eq!(status, 200, "{stored}");
        channels.push((format!("the stored execution {}", stored["urlTemplate"]), stored.to_string()));
    }
    // The control socket, to a token scoped to the flow.
    let (_, scoped) = send(http.post(format!("{}/tokens", server.base)), Some(json!({ "flowId": flow })), main).await;
    let scoped = scoped["token"].as_str().expect("a scoped token").to_owned();
    let mut control = socket(&server, &format!("/ws/session/{ws_session}?afterSeq=0"), &scoped).await;
    for envelope in frames_until(&mut control, "session.replay.end").await {
        channels.push((format!("the control socket's {}", envelope["type"]), envelope.to_string()));
    }
    // The session's view.
    let (_, view) = send(http.get(format!("{}/session/{session}", server.base)), None, main).await;
    channels.push(("the session view".to_owned(), view.to_string()));
    // The log.
    let _ = std::io::stdout().flush();
    let logged = String::from_utf8_lossy(&logs.lock()).into_owned();
    assert!(logged.contains("invalid URL"), "the log holds the failure:\n{logged}");
    channels.push(("the log".to_owned(), logged));

    let leaks: Vec<String> = channels
        .iter()
        .filter(|(_, text)| !leaked(text).is_empty())
        .map(|(name, text)| format!("{name} shows {:?}:\n{text}", leaked(text)))
        .collect();
    assert!(leaks.is_empty(), "{} channels show secrets:\n\n{}", leaks.len(), leaks.join("\n\n"));
}
