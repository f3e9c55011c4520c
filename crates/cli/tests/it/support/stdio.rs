//! JSON-RPC over a child's stdin and stdout, as an editor speaks to `volley lsp`:
//! `Content-Length`-framed messages written, and read on a thread of their own.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// Only reached when the test fails.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn send(stdin: &mut ChildStdin, message: &Value) {
    let body = message.to_string();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    stdin.flush().unwrap();
}

/// Reads framed messages on a thread, so a silent server fails the test instead of
/// hanging it.
pub(crate) fn messages(stdout: impl std::io::Read + Send + 'static) -> mpsc::Receiver<Value> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut stdout = BufReader::new(stdout);
        loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap() == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length: ") {
                    length = Some(value.parse::<usize>().unwrap());
                }
            }
            let mut body = vec![0; length.unwrap()];
            stdout.read_exact(&mut body).unwrap();
            if sender.send(serde_json::from_slice(&body).unwrap()).is_err() {
                return;
            }
        }
    });
    receiver
}

pub(crate) fn next_where(receiver: &mpsc::Receiver<Value>, matches: impl Fn(&Value) -> bool) -> Value {
    loop {
        let message = receiver.recv_timeout(TIMEOUT).expect("a message from volley lsp in time");
        if matches(&message) {
            return message;
        }
    }
}

/// `volley lsp` as an editor drives it: started, initialized, spoken to, shut down.
pub(crate) struct Editor {
    child: Child,
    stdin: ChildStdin,
    replies: mpsc::Receiver<Value>,
    next_id: u64,
}

impl Editor {
    /// Starts `volley lsp` with `environment` and initializes it with `options` as its
    /// `initializationOptions`, `folder` as its one workspace folder.
    pub(crate) fn start(options: &Value, folder: &Path, environment: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_volley"));
        command.arg("lsp").env_remove("VOLLEY_TOKEN").env_remove("VOLLEY_SERVER");
        // The response history goes to the folder, not the user's cache.
        command.env("XDG_CACHE_HOME", folder.join(".cache"));
        for (name, value) in environment {
            command.env(name, value);
        }
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let replies = messages(child.stdout.take().unwrap());
        let mut editor = Self { child, stdin, replies, next_id: 1 };
        let folder = format!("file://{}", folder.display());
        let initialized = editor.request(
            "initialize",
            &json!({"capabilities": {}, "initializationOptions": options,
                   "workspaceFolders": [{"uri": folder, "name": "workspace"}]}),
        );
        assert_eq!(initialized["result"]["serverInfo"]["name"], "volley", "{initialized}");
        editor.notify("initialized", &json!({}));
        editor
    }

    /// Sends a request and waits for its reply (the whole message: `result` or `error`).
    pub(crate) fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        send(&mut self.stdin, &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        next_where(&self.replies, |message| message["id"] == id && message.get("method").is_none())
    }

    pub(crate) fn notify(&mut self, method: &str, params: &Value) {
        send(&mut self.stdin, &json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next notification `method` from the server.
    pub(crate) fn notification(&self, method: &str) -> Value {
        next_where(&self.replies, |message| message["method"] == method && message.get("id").is_none())
    }

    /// Opens `path` in the editor with `text`; its URI.
    pub(crate) fn open(&mut self, path: &Path, text: &str) -> String {
        let uri = format!("file://{}", path.display());
        self.notify(
            "textDocument/didOpen",
            &json!({"textDocument": {"uri": uri, "languageId": "http", "version": 1, "text": text}}),
        );
        uri
    }

    /// `workspace/executeCommand` with one argument; the reply.
    pub(crate) fn command(&mut self, command: &str, argument: &Value) -> Value {
        self.request("workspace/executeCommand", &json!({"command": command, "arguments": [argument]}))
    }

    /// `shutdown`, `exit`, and the process's end with code 0.
    pub(crate) fn finish(mut self) {
        let shutdown = self.request("shutdown", &Value::Null);
        assert_eq!(shutdown["result"], Value::Null, "{shutdown}");
        self.notify("exit", &Value::Null);
        let (done, waited) = mpsc::channel();
        let mut child = self.child;
        std::thread::spawn(move || done.send(child.wait().unwrap()).unwrap());
        let status = waited.recv_timeout(TIMEOUT).expect("volley lsp exits after `exit`");
        assert!(status.success(), "{status}");
    }
}
