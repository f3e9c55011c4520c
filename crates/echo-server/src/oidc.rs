//! [`OidcProvider`]: the tests' real `OpenID` provider (oidc-provider, certified, from
//! npm), started from `tests/oidc/provider.mjs` on 127.0.0.1 with a client per OAuth 2.0
//! grant (see `tests/oidc/README.md`), and the few calls the tests make to it: its
//! counters, token introspection, a device code approved as a user would.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::Value;

/// The provider's folder: `tests/oidc` of the repository.
#[must_use]
pub fn oidc_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/oidc")
}

/// The stand-in browser of the authorization-code tests: `tests/oidc/browser.sh`, which
/// signs in as `ada` and follows the redirects (what `VOLLEY_BROWSER` names in them).
#[must_use]
pub fn stand_in_browser() -> PathBuf {
    oidc_directory().join("browser.sh")
}

/// How long the provider may take to start (its first line).
const START_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// How long one of the tests' calls to the provider may take.
const CALL_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// A running provider, stopped when dropped (its stdin closes and it is killed).
#[derive(Debug)]
pub struct OidcProvider {
    /// `http://127.0.0.1:PORT`, the issuer.
    pub issuer: String,
    child: Child,
    _stdin: ChildStdin,
}

impl OidcProvider {
    /// Starts a provider whose access tokens live `access_ttl` seconds (3600 when
    /// `None`); runs `npm ci` in `tests/oidc` first when its packages are missing.
    ///
    /// # Panics
    /// When Node.js or npm is missing, or the provider does not start.
    #[must_use]
    pub fn start(access_ttl: Option<u64>) -> OidcProvider {
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        install();
        // A diagnostic report on SIGUSR2 (its JavaScript stack, its handles), asked for when
        // the provider says nothing in time.
        let nth = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let reports = std::env::temp_dir().join(format!("volley-oidc-reports-{}-{nth}", std::process::id()));
        let _ = std::fs::create_dir_all(&reports);
        let mut command = Command::new("node");
        command
            .arg("--report-on-signal")
            .arg("--report-signal=SIGUSR2")
            .arg(format!("--report-directory={}", reports.display()))
            .arg("provider.mjs")
            .current_dir(oidc_directory())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if let Some(ttl) = access_ttl {
            command.env("OIDC_ACCESS_TTL", ttl.to_string());
        }
        let mut child = command.spawn().expect("node (20+) starts tests/oidc/provider.mjs");
        let stdin = child.stdin.take().expect("the provider's stdin");
        let stdout = child.stdout.take().expect("the provider's stdout");
        // The first line, within a deadline: a provider that never says where it listens
        // fails the test that needs it, by name, instead of holding the whole run.
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let read = BufReader::new(stdout).read_line(&mut line).map(|_| line);
            let _ = sender.send(read);
        });
        let line = match receiver.recv_timeout(START_DEADLINE) {
            Ok(Ok(line)) => line,
            Ok(Err(error)) => panic!("reading the OpenID provider's first line: {error}"),
            Err(_) => {
                // Where it is stuck: each thread's state and system call, then Node's own
                // report when its event loop still answers a signal.
                let threads = diagnose(child.id());
                let report = node_report(child.id(), &reports);
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the OpenID provider (tests/oidc/provider.mjs, pid {}) said nothing within {} s; its errors are \
                     above.\nIts threads:\n{threads}\nIts diagnostic report: {report}",
                    child.id(),
                    START_DEADLINE.as_secs()
                )
            }
        };
        let _ = std::fs::remove_dir_all(&reports);
        let issuer = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("`listening on URL` from the provider, not {line:?}"))
            .to_owned();
        OidcProvider { issuer, child, _stdin: stdin }
    }

    /// `GET /test/stats`: the token requests by grant, device authorizations, ….
    #[must_use]
    pub fn stats(&self) -> Value {
        self.call("GET", "/test/stats", "", None)
    }

    /// What the provider's introspection endpoint says of `token` (`active`, `sub`,
    /// `client_id`, `scope`).
    #[must_use]
    pub fn introspect(&self, token: &str) -> Value {
        let body = format!("token={}", encode(token));
        self.call("POST", "/token/introspection", &body, Some(("rs", "rs-secret")))
    }

    /// Approves the device flow's `user_code` as `user`, through the provider's own
    /// device pages.
    #[must_use]
    pub fn approve_device(&self, user_code: &str, user: &str) -> Value {
        let body = format!("user_code={}&user={}", encode(user_code), encode(user));
        self.call("POST", "/test/device/approve", &body, None)
    }

    /// One HTTP/1.1 exchange with the provider (a form body), its JSON answer.
    fn call(&self, method: &str, path: &str, body: &str, basic: Option<(&str, &str)>) -> Value {
        let address = self.issuer.trim_start_matches("http://");
        let mut stream = TcpStream::connect(address).expect("the provider's port");
        // An answer that never ends fails the call instead of holding the test.
        stream.set_read_timeout(Some(CALL_DEADLINE)).expect("a read timeout");
        let authorization = basic
            .map(|(user, password)| {
                let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                format!("authorization: Basic {token}\r\n")
            })
            .unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n{authorization}content-type: \
             application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).expect("a request to the provider");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("the provider's answer");
        let (head, content) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let content = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            dechunk(content)
        } else {
            content.to_owned()
        };
        serde_json::from_str(&content).unwrap_or_else(|_| panic!("JSON from {path}: {answer}"))
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Each thread of process `pid`, a line each: its name, state, kernel wait channel and
/// system call (`/proc`, Linux), for a process that does not answer.
fn diagnose(pid: u32) -> String {
    let read = |path: std::path::PathBuf| std::fs::read_to_string(path).unwrap_or_default().trim().to_owned();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return format!("  (no /proc/{pid}/task)");
    };
    let mut lines: Vec<String> = tasks
        .flatten()
        .map(|task| {
            let path = task.path();
            let status = read(path.join("status"));
            let state = status.lines().find_map(|line| line.strip_prefix("State:")).unwrap_or_default().trim();
            format!(
                "  {} {:<16} state {state}, waiting in {:?}, system call {:?}",
                task.file_name().to_string_lossy(),
                read(path.join("comm")),
                read(path.join("wchan")),
                read(path.join("syscall")),
            )
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

/// Node's diagnostic report of process `pid` (started with `--report-on-signal
/// --report-signal=SIGUSR2 --report-directory=<reports>`): its JavaScript stack and
/// what its event loop waits on, or why there is none.
fn node_report(pid: u32, reports: &Path) -> String {
    let signalled = Command::new("kill").args(["-USR2", &pid.to_string()]).status();
    if !signalled.is_ok_and(|status| status.success()) {
        return "none (the signal could not be sent)".to_owned();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        let written =
            std::fs::read_dir(reports).into_iter().flatten().flatten().map(|entry| entry.path()).find(|path| {
                path.extension().is_some_and(|extension| extension == "json")
                    && path.to_string_lossy().contains(&pid.to_string())
            });
        if let Some(path) = written {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let _ = std::fs::remove_file(&path);
            let Ok(report) = serde_json::from_str::<Value>(&text) else {
                return format!("unreadable, {}", path.display());
            };
            let handles: Vec<String> = report["libuv"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|handle| handle["is_active"] == true)
                .map(|handle| {
                    let kind = handle["type"].as_str().unwrap_or("?");
                    match (&handle["localEndpoint"], &handle["remoteEndpoint"]) {
                        (Value::Null, _) => kind.to_owned(),
                        (local, Value::Null) => format!("{kind} {local}"),
                        (local, remote) => format!("{kind} {local} to {remote}"),
                    }
                })
                .collect();
            return format!(
                "\n  JavaScript stack: {}\n  {}\n  active handles: {}",
                report["javascriptStack"]["message"],
                report["javascriptStack"]["stack"],
                handles.join(", ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    "none within 5 s (its event loop did not run: stuck in a synchronous call)".to_owned()
}

/// `npm ci` in tests/oidc, once per process, when its packages are missing.
fn install() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    npm_ci(&INSTALLED, &oidc_directory(), "oidc-provider");
}

/// `npm ci` in `directory`, once per process (`once`), unless `node_modules/<marker>`
/// is there.
///
/// # Panics
/// When npm is missing or fails.
pub(crate) fn npm_ci(once: &OnceLock<()>, directory: &Path, marker: &str) {
    once.get_or_init(|| {
        if directory.join("node_modules").join(marker).is_dir() {
            return;
        }
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(directory)
            .stdout(Stdio::null())
            .status()
            .unwrap_or_else(|error| panic!("npm (Node 20+) runs in {}: {error}", directory.display()));
        assert!(status.success(), "npm ci in {} failed", directory.display());
    });
}

/// `text` percent-encoded for a form.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
                char::from(byte).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

/// A chunked body joined.
fn dechunk(mut body: &str) -> String {
    let mut joined = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        joined.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A provider that hangs is described by where it waits: a sleeping process's
    /// thread, and the report of a Node process whose event loop is idle.
    #[test]
    fn a_silent_process_is_described() {
        let mut sleeping = Command::new("sleep").arg("30").spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let threads = diagnose(sleeping.id());
        let _ = sleeping.kill();
        let _ = sleeping.wait();
        assert!(threads.contains("sleep") && threads.contains("state S"), "{threads}");

        let reports = std::env::temp_dir().join(format!("volley-oidc-report-test-{}", std::process::id()));
        std::fs::create_dir_all(&reports).unwrap();
        let mut idle = Command::new("node")
            .arg("--report-on-signal")
            .arg("--report-signal=SIGUSR2")
            .arg(format!("--report-directory={}", reports.display()))
            .args(["-e", "setInterval(() => {}, 1000)"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        let report = node_report(idle.id(), &reports);
        let _ = idle.kill();
        let _ = idle.wait();
        let _ = std::fs::remove_dir_all(&reports);
        assert!(report.contains("JavaScript stack") && report.contains("timer"), "{report}");
    }
}
