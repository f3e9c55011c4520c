//! End-to-end cases for the `volley` binary, as data. Every folder under `tests/cli/`
//! is one case:
//!
//! - `args`: the arguments, one per line; `$BASE` is the URL of a fresh local test
//!   server (`http://127.0.0.1:PORT`), `$WS` the same with `ws://`, `$TLS` of its
//!   HTTPS twin, `$HOST` its `127.0.0.1:PORT` (for URLs with `user:password@`),
//!   `$VOLLEY` the binary.
//!   `$PKI` is an HTTPS server whose certificate is signed by a test CA made for the case,
//!   `$MTLS` one that also wants a client certificate signed by it, and `$PROXY` a
//!   recording HTTP proxy; a case that names any of them (in `args`, `env` or a file)
//!   gets in its scratch folder the CA as `ca.pem`, a client certificate as `client.pem`
//!   and `client.key`, that key encrypted as `client.enc.key` and both as `client.p12`
//!   (passphrase `correct-horse-7f3a`), all made at run time (no key is committed), and
//!   after the run the requests the proxy received as `proxy-records` (`METHOD target`,
//!   a line each).
//! - `stdin` (optional): piped to the binary (otherwise stdin is empty).
//! - `env` (optional): `NAME=value` lines set for the run. `BASE` and `TLS` are always
//!   set (and `WS`, the server's `ws://` URL), so `.http` files write
//!   `@base = {{$env(BASE)}}`.
//! - any other files (`case.http`, `volley.jsonc`, bodies): copied to a scratch folder
//!   (with a `.git` marker, so configuration discovery stops there), where the binary
//!   runs.
//! - expected `stdout`, `stderr` and `exit`; and for each `NAME.expected`, the file
//!   `NAME` the run must have written (reports, cookie jars).
//! - `secret-markers` (optional): values planted in the case's secret sources, one per
//!   line; no output of the run (stdout, stderr, the files it wrote) may show any of
//!   them. This is checked before comparing and never blessed away.
//!
//! Volatile parts are normalised before comparing: the servers' addresses (`$BASE`,
//! `$TLS`, `$HOST`), the scratch folder (`$DIR`), durations (`[TIME]`), `Date` headers
//! (`[DATE]`), WebSocket accept keys (`[KEY]`) and the version in the user agent
//! (`[VERSION]`). An expectation may also
//! use `[..]` for any text within a line. Every `.xml` file a case writes is parsed, and
//! its JUnit counts are checked against its test cases.
//!
//! Re-bless after an intended change: `VOLLEY_BLESS=1 cargo test -p volley-cli --test cli_cases`
//! (expectations that still match, `[..]` included, are left as they are). Run one case:
//! `VOLLEY_CASE=run_name cargo test -p volley-cli --test cli_cases`.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;

use regex::Regex;
use volley_echo_server::{TestPki, TestProxy, TestServer};

/// The TLS servers and the proxy of a case that names `$PKI`, `$MTLS` or `$PROXY`.
struct Network {
    pki_server: TestServer,
    mtls: TestServer,
    proxy: TestProxy,
}

impl Network {
    async fn start(scratch: &Path) -> Network {
        let pki = TestPki::generate("Volley CLI Test CA");
        std::fs::write(scratch.join("ca.pem"), pki.ca_pem()).unwrap();
        std::fs::write(scratch.join("client.pem"), pki.client_pem()).unwrap();
        std::fs::write(scratch.join("client.key"), pki.client_key_pem()).unwrap();
        std::fs::write(scratch.join("client.p12"), pki.client_pkcs12("correct-horse-7f3a")).unwrap();
        std::fs::write(scratch.join("client.enc.key"), pki.client_key_encrypted_pem("correct-horse-7f3a")).unwrap();
        Network {
            pki_server: TestServer::start_tls_with(&pki, false).await,
            mtls: TestServer::start_tls_with(&pki, true).await,
            proxy: TestProxy::start(None).await,
        }
    }

    fn substitute(&self, text: &str) -> String {
        text.replace("$PKI", &self.pki_server.base_url())
            .replace("$MTLS", &self.mtls.base_url())
            .replace("$PROXY", &self.proxy.url())
    }

    fn normalize(&self, text: &str) -> String {
        text.replace(&self.pki_server.base_url(), "$PKI")
            .replace(&self.mtls.base_url(), "$MTLS")
            .replace(&self.proxy.url(), "$PROXY")
            .replace(&self.pki_server.addr().to_string(), "$HOST")
            .replace(&self.mtls.addr().to_string(), "$HOST")
    }

    fn write_records(&self, scratch: &Path) {
        let mut lines = String::new();
        for record in self.proxy.records() {
            for part in [record.method.as_str(), " ", record.target.as_str(), "\n"] {
                lines.push_str(part);
            }
        }
        std::fs::write(scratch.join("proxy-records"), lines).unwrap();
    }
}

/// Whether any file of the case names one of `names`.
fn names_any(case: &Path, names: &[&str]) -> bool {
    std::fs::read_dir(case).unwrap().any(|entry| {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        names.iter().any(|name| text.contains(name))
    })
}

/// An execution server on 127.0.0.1 port 0 over `workspace`, running until the sender drops.
async fn serve(workspace: &Path, token: Option<String>) -> (String, tokio::sync::oneshot::Sender<()>) {
    let config =
        volley_server::ServerConfig { port: 0, workspace: workspace.to_path_buf(), token, ..Default::default() };
    // In process: its clients send with Volley's HTTP client, as the binary installs it.
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
    let server = volley_server::Server::bind(config).await.expect("the execution server binds");
    let url = format!("http://{}", server.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    (url, stop)
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cli")
}

#[test]
fn cli_cases() {
    let bless = std::env::var_os("VOLLEY_BLESS").is_some();
    let only = std::env::var("VOLLEY_CASE").ok();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("tests/cli exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.join("args").is_file())
        .filter(|path| only.as_deref().is_none_or(|only| path.ends_with(only)))
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases found in tests/cli");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let scratch_root = std::env::temp_dir().join(format!("volley-cli-cases-{}", std::process::id()));
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        // A fresh server per case: its counters (tokens, sessions) start over.
        let (server, tls) = runtime.block_on(async { (TestServer::start().await, TestServer::start_tls().await) });
        let scratch = scratch_root.join(&name);
        std::fs::create_dir_all(scratch_root.join(".git")).unwrap();
        copy_case(case, &scratch);
        let args_text = std::fs::read_to_string(case.join("args")).unwrap();
        let execution_server = args_text.contains("$SERVE").then(|| {
            let token = std::fs::read_to_string(case.join("serve-token")).ok().map(|token| token.trim().to_owned());
            runtime.block_on(serve(&scratch, token))
        });
        let serve_url = execution_server.as_ref().map(|(url, _)| url.clone()).unwrap_or_default();
        let network = names_any(case, &["$PKI", "$MTLS", "$PROXY", "env(PKI)", "env(MTLS)"])
            .then(|| runtime.block_on(Network::start(&scratch)));
        let substitute = |text: &str| {
            let text = network.as_ref().map_or_else(|| text.to_owned(), |network| network.substitute(text));
            text.replace("$SERVE", &serve_url)
                .replace("$BASE", &server.base_url())
                .replace("$WS", &server.base_url().replacen("http", "ws", 1))
                .replace("$TLS", &tls.base_url())
                .replace("$HOST", &server.addr().to_string())
                .replace("$VOLLEY", env!("CARGO_BIN_EXE_volley"))
        };
        let args: Vec<String> = args_text.lines().filter(|line| !line.is_empty()).map(substitute).collect();
        let mut command = Command::new(env!("CARGO_BIN_EXE_volley"));
        command
            .args(&args)
            .current_dir(&scratch)
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("VOLLEY_PROFILE")
            .env_remove("VOLLEY_SERVER")
            .env_remove("VOLLEY_TOKEN")
            .env_remove("VOLLEY_FLOW_ID")
            .env_remove("VOLLEY_SESSION_ID")
            .env("BASE", server.base_url())
            .env("WS", server.base_url().replacen("http", "ws", 1))
            .env("TLS", tls.base_url());
        if let Some(network) = &network {
            command.env("PKI", network.pki_server.base_url()).env("MTLS", network.mtls.base_url());
        }
        if let Ok(env) = std::fs::read_to_string(case.join("env")) {
            for line in env.lines().filter(|line| !line.is_empty()) {
                let (key, value) = line.split_once('=').expect("env lines are NAME=value");
                command.env(key, substitute(value));
            }
        }
        // `stdin` (optional): piped to the binary; without it stdin is empty.
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().expect("the volley binary runs");
        let input = std::fs::read(case.join("stdin")).unwrap_or_default();
        let mut stdin = child.stdin.take().expect("piped stdin");
        let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &input));
        let output = child.wait_with_output().expect("the volley binary runs");
        writer.join().expect("the stdin writer ends").ok();
        drop(execution_server);
        if let Some(network) = &network {
            network.write_records(&scratch);
        }
        let normalize = |text: &str| {
            let text = if serve_url.is_empty() { text.to_owned() } else { text.replace(&serve_url, "$SERVE") };
            let text = network.as_ref().map_or(text.clone(), |network| network.normalize(&text));
            normalize(&text, &server, &tls, &scratch)
        };
        let mut actual = vec![
            ("stdout".to_owned(), normalize(&String::from_utf8_lossy(&output.stdout))),
            ("stderr".to_owned(), normalize(&String::from_utf8_lossy(&output.stderr))),
            (
                "exit".to_owned(),
                format!("{}\n", output.status.code().map_or("signal".to_owned(), |code| code.to_string())),
            ),
        ];
        for expected in std::fs::read_dir(case).unwrap().map(|entry| entry.unwrap().path()) {
            let Some(produced) =
                expected.file_name().unwrap().to_string_lossy().strip_suffix(".expected").map(str::to_owned)
            else {
                continue;
            };
            let text =
                std::fs::read_to_string(scratch.join(&produced)).unwrap_or_else(|_| "(not written)\n".to_owned());
            actual.push((format!("{produced}.expected"), normalize(&text)));
        }
        for xml in std::fs::read_dir(&scratch).unwrap().map(|entry| entry.unwrap().path()) {
            if xml.extension().is_some_and(|ext| ext == "xml")
                && let Err(problem) = check_junit(&std::fs::read_to_string(&xml).unwrap())
            {
                failures.push(format!("{name}/{}: {problem}", xml.display()));
            }
        }
        if let Ok(markers) = std::fs::read_to_string(case.join("secret-markers")) {
            let mut outputs: Vec<(String, String)> = actual.clone();
            for written in std::fs::read_dir(&scratch).unwrap().map(|entry| entry.unwrap().path()) {
                // Written by the run: neither copied from the case nor compared already.
                let file_name = written.file_name().unwrap().to_string_lossy().into_owned();
                if written.is_file()
                    && !case.join(&file_name).exists()
                    && !case.join(format!("{file_name}.expected")).exists()
                {
                    outputs.push((file_name, String::from_utf8_lossy(&std::fs::read(&written).unwrap()).into_owned()));
                }
            }
            for marker in markers.lines().map(str::trim).filter(|marker| !marker.is_empty()) {
                for (output, text) in &outputs {
                    if text.contains(marker) {
                        failures.push(format!("{name}/{output} shows the secret `{marker}`:\n{text}"));
                    }
                }
            }
        }
        for (file, actual) in actual {
            let path = case.join(&file);
            let expected = std::fs::read_to_string(&path).unwrap_or_default();
            if matches(&expected, &actual) && (path.exists() || !bless) {
                continue;
            }
            if bless {
                std::fs::write(&path, &actual).unwrap();
            } else {
                failures.push(format!("{name}/{file}:\n--- expected\n{expected}\n--- actual\n{actual}"));
            }
        }
    }
    std::fs::remove_dir_all(&scratch_root).ok();
    assert!(
        failures.is_empty(),
        "{} mismatches in {} cases (re-bless with VOLLEY_BLESS=1):\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

fn copy_case(case: &Path, scratch: &Path) {
    std::fs::remove_dir_all(scratch).ok();
    std::fs::create_dir_all(scratch).unwrap();
    for entry in std::fs::read_dir(case).unwrap() {
        let path = entry.unwrap().path();
        let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
        // An `env` folder (httpyac's `.env` files) is the case's own, not its `env` file.
        let expectation = (["args", "env", "stdin", "stdout", "stderr", "exit", "secret-markers"]
            .contains(&file_name.as_str())
            && !path.is_dir())
            || file_name.ends_with(".expected");
        if expectation {
            continue;
        }
        if path.is_dir() {
            copy_case(&path, &scratch.join(&file_name));
        } else {
            std::fs::copy(&path, scratch.join(&file_name)).unwrap();
        }
    }
}

static PATTERNS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        // Status line `… 12 ms · 32 B` and summary `… in 34 ms`.
        (r"(^|[^\d.])\d+(\.\d+)? (ms|s) ·", "${1}[TIME] ·"),
        (r"in \d+(\.\d+)? (ms|s)\b", "in [TIME]"),
        // JSON timings, JUnit times.
        (r#""(ttfb_ms|total_ms|duration_ms|elapsed_ms)": ?[0-9.]+"#, r#""$1": [TIME]"#),
        // When a report's run started.
        (r#""started_at": ?"[0-9T:.Z-]+""#, r#""started_at": "[DATE]""#),
        (r"run on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "run on [DATE] UTC"),
        // Stream items: `[+12 ms]`.
        (r"\[\+\d+(\.\d+)? (ms|s)\]", "[+TIME]"),
        (r#" time="[0-9.]+""#, r#" time="[TIME]""#),
        // Date headers, in text and JSON.
        // (Styles may wrap the name: `--color always` cases keep their escape codes.)
        (r"(?mi)^((?:\x1b\[[0-9;]*m)*(?:> )?date:(?:\x1b\[[0-9;]*m)*) .*$", "$1 [DATE]"),
        (r#"(\[\s*"date",\s*)"[^"]*""#, r#"$1"[DATE]""#),
        // The WebSocket handshake's answer to a random key.
        (r"(?mi)^((?:\x1b\[[0-9;]*m)*sec-websocket-accept:(?:\x1b\[[0-9;]*m)*) .*$", "$1 [KEY]"),
        (r#"(\[\s*"sec-websocket-accept",\s*)"[^"]*""#, r#"$1"[KEY]""#),
        (r"volley/\d+\.\d+\.\d+", "volley/[VERSION]"),
    ]
    .into_iter()
    .map(|(pattern, replacement)| (Regex::new(pattern).unwrap(), replacement))
    .collect()
});

fn normalize(text: &str, server: &TestServer, tls: &TestServer, scratch: &Path) -> String {
    let mut text = text
        .replace(&tls.base_url(), "$TLS")
        .replace(&server.base_url(), "$BASE")
        .replace(&server.base_url().replacen("http", "ws", 1), "$WS")
        .replace(&server.addr().to_string(), "$HOST")
        .replace(&tls.addr().to_string(), "$HOST")
        .replace(&scratch.display().to_string(), "$DIR");
    for (pattern, replacement) in PATTERNS.iter() {
        text = pattern.replace_all(&text, *replacement).into_owned();
    }
    text
}

/// `expected` equals `actual`, where `[..]` in `expected` stands for any text within a line.
fn matches(expected: &str, actual: &str) -> bool {
    if !expected.contains("[..]") {
        return expected == actual;
    }
    let pattern = expected.split("[..]").map(regex::escape).collect::<Vec<_>>().join("[^\n]*");
    Regex::new(&format!("^{pattern}$")).is_ok_and(|regex| regex.is_match(actual))
}

/// The JUnit report parses, and its counts agree with its test cases.
fn check_junit(xml: &str) -> Result<(), String> {
    let document = roxmltree::Document::parse(xml).map_err(|error| format!("not well-formed XML: {error}"))?;
    let root = document.root_element();
    if root.tag_name().name() != "testsuites" {
        return Err(format!("the root is <{}>, not <testsuites>", root.tag_name().name()));
    }
    let count = |node: roxmltree::Node<'_, '_>, attribute: &str| -> usize {
        node.attribute(attribute).and_then(|value| value.parse().ok()).unwrap_or(usize::MAX)
    };
    let mut totals = [0usize; 4];
    for suite in root.children().filter(|node| node.has_tag_name("testsuite")) {
        let cases: Vec<_> = suite.children().filter(|node| node.has_tag_name("testcase")).collect();
        let with = |tag: &str| cases.iter().filter(|case| case.children().any(|child| child.has_tag_name(tag))).count();
        let found = [cases.len(), with("failure"), with("error"), with("skipped")];
        let declared =
            [count(suite, "tests"), count(suite, "failures"), count(suite, "errors"), count(suite, "skipped")];
        if found != declared {
            return Err(format!("suite {:?} declares {declared:?} but has {found:?}", suite.attribute("name")));
        }
        for (total, value) in totals.iter_mut().zip(found) {
            *total += value;
        }
    }
    let declared = [count(root, "tests"), count(root, "failures"), count(root, "errors"), count(root, "skipped")];
    if totals != declared {
        return Err(format!("<testsuites> declares {declared:?} but its suites have {totals:?}"));
    }
    Ok(())
}
