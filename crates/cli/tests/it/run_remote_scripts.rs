//! `volley run --server` against a real `volley serve` process, with scripts: the server
//! runs them in the run's session, and the CLI prints their `log` lines and test results
//! as a local run does (`--json` too). A second run is a second session: the globals of
//! the first are not there.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::serve::Serve;

/// Logs in (the handler keeps the token as a global), then calls `/bearer` with it.
const CASE: &str = r#"### Log in
POST {{base}}/login
Content-Type: application/json

{"user": "ada", "password": "lovelace"}

> {%
  client.global.set("token", response.body.token);
  client.log("logged in as", response.body.user);
  client.log("token:", client.global.get("token"));
  client.test("the user is bob", () => client.assert(response.body.user === "bob", "the user is " + response.body.user));
%}

### Who am I
GET {{base}}/bearer
Authorization: Bearer {{token}}

> {%
  client.test("authorised", () => client.assert(response.status === 200, "status " + response.status));
%}
"#;

/// A workspace of its own, removed on drop.
struct Workspace(PathBuf);

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `volley run <arguments> --server <serve>` in `workspace`, the token from the environment.
fn run(workspace: &Workspace, serve: &Serve, base: &str, arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_volley"))
        .arg("run")
        .args(arguments)
        .args(["--server", &serve.url, "--var", &format!("base={base}")])
        .current_dir(&workspace.0)
        .env("NO_COLOR", "1")
        .env("VOLLEY_TOKEN", "t0ken")
        .env_remove("VOLLEY_SESSION_ID")
        .env_remove("VOLLEY_FLOW_ID")
        .output()
        .unwrap()
}

#[test]
fn run_through_volley_serve_prints_the_scripts_logs_and_tests() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let upstream = runtime.block_on(volley_echo_server::TestServer::start());
    let path = std::env::temp_dir().join(format!("volley-run-remote-scripts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).unwrap();
    let workspace = Workspace(path.canonicalize().unwrap());
    std::fs::write(workspace.0.join("case.http"), CASE).unwrap();
    std::fs::write(workspace.0.join("me.http"), CASE.split("### Who am I").nth(1).unwrap()).unwrap();
    let serve = Serve::start(&workspace.0, "t0ken");
    let base = upstream.base_url();

    let human = run(&workspace, &serve, &base, &["case.http"]);
    let stdout = String::from_utf8_lossy(&human.stdout);
    let stderr = String::from_utf8_lossy(&human.stderr);
    // A failed test fails the run.
    assert_eq!(human.status.code(), Some(1), "{stdout}\n{stderr}");
    for expected in [
        "log logged in as ada\n",
        // A sensitive-named global, redacted by the server's engine.
        "log token: [REDACTED]\n",
        "✗ the user is bob\n",
        "error[test-failed]: test failed: the user is bob\n",
        "= note: AssertionError: the user is ada\n",
        // The global set by the first request's handler authorises the second.
        "✓ authorised\n",
    ] {
        assert!(stdout.contains(expected), "missing {expected:?} in:\n{stdout}");
    }
    assert!(stderr.contains("2 requests: 1 passed, 1 failed"), "{stderr}");

    let json = run(&workspace, &serve, &base, &["case.http", "--json"]);
    let records: Vec<Value> =
        String::from_utf8_lossy(&json.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let login = &records[0];
    assert_eq!(login["logs"], serde_json::json!(["logged in as ada", "token: [REDACTED]"]), "{login}");
    let failed = &login["assertions"][0];
    assert_eq!((&failed["outcome"], &failed["message"]), (&"failed".into(), &"AssertionError: the user is ada".into()));
    assert_eq!((&failed["line"], &failed["column"]), (&11.into(), &3.into()), "{failed}");
    assert_eq!(records[1]["assertions"][0]["outcome"], "passed", "{}", records[1]);

    // Another run is another session on the server: no token there.
    let alone = run(&workspace, &serve, &base, &["me.http"]);
    let printed = format!("{}{}", String::from_utf8_lossy(&alone.stdout), String::from_utf8_lossy(&alone.stderr));
    assert_eq!(alone.status.code(), Some(3), "{printed}");
    assert!(printed.contains("undefined variable `token`"), "{printed}");
}
