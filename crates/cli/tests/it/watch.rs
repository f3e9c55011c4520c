//! `volley run --watch`: a run, then another when the file changes, until Ctrl-C (the
//! exit code is the last run's).
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use volley_echo_server::TestServer;

#[tokio::test(flavor = "multi_thread")]
async fn a_change_runs_again_and_ctrl_c_stops_with_the_last_exit_code() {
    let server = TestServer::start().await;
    let dir = std::env::temp_dir().join(format!("volley-watch-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    let file = dir.join("api.http");
    std::fs::write(&file, "# @assert status == 200\nPOST {{$env(BASE)}}/echo/one\n\n< ./body.json\n").unwrap();
    std::fs::write(dir.join("body.json"), "{\"n\": 1}").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["run", "api.http", "--watch", "-q"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("BASE", server.base_url())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (lines, received) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            if lines.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let wait_for = |wanted: &str| loop {
        let line = received.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("no `{wanted}`"));
        if line.contains(wanted) {
            return line;
        }
    };
    assert!(wait_for("watching").contains("the run passed (exit code 0)"));
    // The body file the request names is watched too.
    std::thread::sleep(Duration::from_millis(50));
    std::fs::write(dir.join("body.json"), "{\"n\": 22}").unwrap();
    wait_for("`body.json` changed, running again");
    assert!(wait_for("watching").contains("the run passed (exit code 0)"));
    // The file now fails its check: the run comes again by itself.
    std::thread::sleep(Duration::from_millis(50));
    std::fs::write(&file, "# @assert status == 201\nGET {{$env(BASE)}}/echo/two\n").unwrap();
    wait_for("`api.http` changed, running again");
    assert!(wait_for("watching").contains("the run failed (exit code 1)"));
    let interrupted = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(interrupted.success());
    assert_eq!(child.wait().unwrap().code(), Some(1), "the last run's exit code");
    std::fs::remove_dir_all(&dir).ok();
}
