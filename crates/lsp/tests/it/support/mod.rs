//! The in-memory test client shared by the protocol tests: it writes
//! `Content-Length`-framed messages into the server's input and reads its output.
// Each test file uses a part of the helpers.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};

/// Long enough for a slow CI machine; only reached when a test fails.
const TIMEOUT: Duration = Duration::from_secs(20);

pub(crate) struct TestClient {
    input: DuplexStream,
    output: BufReader<DuplexStream>,
    next_id: i64,
    notifications: VecDeque<Value>,
    /// Requests the server sent to this client (each answered with a `null` result,
    /// or the one `answers` holds for its method).
    pub(crate) server_requests: Vec<Value>,
    /// The result to answer the server's requests of a method with.
    pub(crate) answers: std::collections::HashMap<String, Value>,
    /// The browser a `window/showDocument` with `external: true` starts, with the URI
    /// (the OAuth tests' stand-in browser), as an editor opens the user's browser.
    pub(crate) browser: Option<std::path::PathBuf>,
    /// Called with the text of each `window/showMessage` as it arrives (the person who
    /// reads it: the OAuth tests approve a device code shown this way).
    pub(crate) reader: Option<Reader>,
}

/// Who reads the `window/showMessage` notifications of a [`TestClient`].
pub(crate) type Reader = Box<dyn FnMut(&str) + Send>;

impl TestClient {
    pub(crate) fn start() -> Self {
        let (input, server_input) = tokio::io::duplex(1 << 16);
        let (server_output, output) = tokio::io::duplex(1 << 16);
        // The language server's sends go through Volley's HTTP client, as the binary installs it.
        volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
        let (service, socket) = volley_lsp::service();
        tokio::spawn(tower_lsp_server::Server::new(server_input, server_output, socket).serve(service));
        Self {
            input,
            output: BufReader::new(output),
            next_id: 1,
            notifications: VecDeque::new(),
            server_requests: Vec::new(),
            answers: std::collections::HashMap::new(),
            browser: None,
            reader: None,
        }
    }

    pub(crate) async fn send(&mut self, message: &Value) {
        self.send_all(std::slice::from_ref(message)).await;
    }

    /// Writes several messages at once, as an editor does when the user types fast.
    pub(crate) async fn send_all(&mut self, messages: &[Value]) {
        let mut framed = String::new();
        for message in messages {
            let body = message.to_string();
            write!(framed, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("formatting");
        }
        self.input.write_all(framed.as_bytes()).await.expect("server input");
    }

    pub(crate) async fn receive(&mut self) -> Value {
        tokio::time::timeout(TIMEOUT, async {
            let mut length = None;
            loop {
                let mut line = String::new();
                self.output.read_line(&mut line).await.expect("server output");
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length: ") {
                    length = Some(value.parse::<usize>().expect("length"));
                }
            }
            let mut body = vec![0; length.expect("Content-Length header")];
            self.output.read_exact(&mut body).await.expect("message body");
            serde_json::from_slice(&body).expect("JSON message")
        })
        .await
        .expect("a message from the server in time")
    }

    pub(crate) async fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    /// Opens `uri` with `text` (version 1), as an editor does when a file is opened.
    pub(crate) async fn open(&mut self, uri: &str, text: &str) {
        let document = json!({"uri": uri, "languageId": "http", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({ "textDocument": document })).await;
    }

    /// The next message that is not a request of the server's: those are answered
    /// (with a `null` result, which accepts a progress token or a registration, unless
    /// `answers` says otherwise) and kept.
    async fn next_message(&mut self) -> Value {
        loop {
            let message = self.receive().await;
            if message.get("id").is_some() && message.get("method").is_some() {
                if message["method"] == "window/showDocument"
                    && message["params"]["external"] == true
                    && let (Some(browser), Some(uri)) = (&self.browser, message["params"]["uri"].as_str())
                {
                    let mut child = std::process::Command::new(browser).arg(uri).spawn().expect("the stand-in browser");
                    std::thread::spawn(move || child.wait());
                }
                let result = message["method"].as_str().and_then(|method| self.answers.get(method)).cloned();
                self.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": result})).await;
                self.server_requests.push(message);
                continue;
            }
            if message["method"] == "window/showMessage"
                && let (Some(reader), Some(text)) = (&mut self.reader, message["params"]["message"].as_str())
            {
                reader(text);
            }
            return message;
        }
    }

    /// Sends a request without waiting for its response; returns its id.
    pub(crate) async fn start_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message).await;
        id
    }

    /// The whole response to request `id` (result or error), keeping notifications that
    /// arrive first.
    pub(crate) async fn response(&mut self, id: i64) -> Value {
        loop {
            let message = self.next_message().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
            self.notifications.push_back(message);
        }
    }

    /// Sends a request and returns its result, keeping notifications that arrive first.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params).await;
        let message = self.response(id).await;
        assert!(message.get("error").is_none(), "{method} failed: {message}");
        message["result"].clone()
    }

    /// Sends a request that must fail; returns its error.
    pub(crate) async fn request_error(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params).await;
        let message = self.response(id).await;
        assert!(message.get("result").is_none(), "{method} should fail: {message}");
        message["error"].clone()
    }

    /// The next notification of `method`, skipping others.
    pub(crate) async fn notification(&mut self, method: &str) -> Value {
        loop {
            let message = match self.notifications.pop_front() {
                Some(message) => message,
                None => self.next_message().await,
            };
            if message["method"] == method {
                return message["params"].clone();
            }
        }
    }

    /// The notifications received so far and not taken yet.
    pub(crate) fn pending_notifications(&self) -> Vec<Value> {
        self.notifications.iter().cloned().collect()
    }

    /// The diagnostics published for `version` (earlier versions are skipped).
    pub(crate) async fn diagnostics(&mut self, version: i64) -> Vec<Value> {
        loop {
            let params = self.notification("textDocument/publishDiagnostics").await;
            if params["version"] == json!(version) {
                return params["diagnostics"].as_array().expect("diagnostics").clone();
            }
        }
    }

    pub(crate) async fn initialize(&mut self) -> Value {
        self.initialize_with(json!({"capabilities": {}})).await
    }

    /// Initializes with the given `initialize` params (capabilities, options).
    /// The response history is off unless the params set `history` (it would be kept in
    /// the user's cache).
    pub(crate) async fn initialize_with(&mut self, mut params: Value) -> Value {
        if params["initializationOptions"].get("history").is_none() {
            params["initializationOptions"]["history"] = json!(false);
        }
        let result = self.request("initialize", params).await;
        self.notify("initialized", json!({})).await;
        result
    }

    pub(crate) async fn shutdown(mut self) {
        assert_eq!(self.request("shutdown", Value::Null).await, Value::Null);
        self.notify("exit", Value::Null).await;
    }
}

/// A URI in a directory of its own, so no `volley.jsonc` above it applies.
pub(crate) fn uri(name: &str) -> (tempdir::Dir, String) {
    let dir = tempdir::Dir::new();
    let path = dir.path.join(name);
    (dir, format!("file://{}", path.display()))
}

pub(crate) mod tempdir {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub(crate) struct Dir {
        pub(crate) path: PathBuf,
    }

    impl Dir {
        pub(crate) fn new() -> Self {
            static COUNT: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "volley-lsp-{}-{}",
                std::process::id(),
                COUNT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&path).expect("temporary directory");
            Self { path }
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// An LSP range.
pub(crate) fn range(start: (u32, u32), end: (u32, u32)) -> Value {
    json!({"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}})
}
