//! `volley serve` as a process: it prints the address it picked, answers on it, applies
//! its connection flags, and stops cleanly on SIGTERM.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn serve_prints_its_address_answers_and_stops_on_sigterm() {
    let workspace = std::env::temp_dir().join(format!("volley-serve-{}", std::process::id()));
    std::fs::create_dir_all(&workspace).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["serve", "--port", "0", "--token", "t0ken", "--max-connections", "64", "--header-timeout", "300"])
        .arg("--workspace")
        .arg(&workspace)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let address = first.trim().strip_prefix("volley serve: listening on http://").expect(&first).to_owned();
    let mut rest = String::new();
    for _ in 0..5 {
        stdout.read_line(&mut rest).unwrap();
    }
    assert!(rest.contains("auth       bearer token required"), "{rest}");
    assert!(rest.contains(", 64 connections"), "{rest}");
    assert!(rest.contains(&workspace.canonicalize().unwrap().display().to_string()), "{rest}");

    let get = |token: Option<&str>| {
        let mut stream = TcpStream::connect(&address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let auth = token.map(|token| format!("Authorization: Bearer {token}\r\n")).unwrap_or_default();
        write!(stream, "GET /health HTTP/1.1\r\nHost: {address}\r\n{auth}Connection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    assert!(get(None).starts_with("HTTP/1.1 401"));
    let healthy = get(Some("t0ken"));
    assert!(healthy.starts_with("HTTP/1.1 200"), "{healthy}");
    assert!(healthy.contains(r#""healthy":true"#), "{healthy}");
    // A connection that sends nothing is closed after --header-timeout.
    let mut silent = TcpStream::connect(&address).unwrap();
    silent.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert!(matches!(silent.read(&mut [0u8; 16]), Ok(0)), "the silent connection is closed");

    // `volley run --server`: a refused token, and a profile the server does not have, are
    // one error each before anything is sent, with the exit codes of a local run (2).
    std::fs::write(workspace.join("two.http"), "GET http://127.0.0.1:1/a\n\n###\nGET http://127.0.0.1:1/b\n").unwrap();
    let run = |arguments: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_volley"))
            .args(["run", "two.http", "--server", &format!("http://{address}")])
            .args(arguments)
            .current_dir(&workspace)
            .env("NO_COLOR", "1")
            .env_remove("VOLLEY_TOKEN")
            .env_remove("VOLLEY_PROFILE")
            .output()
            .unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (code, stderr) = run(&["--token", "wrong"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    assert!(stderr.contains("--token"), "{stderr}");
    let (code, stderr) = run(&["--token", "t0ken", "-p", "staging"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("unknown profile `staging`"), "{stderr}");

    let terminated = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(terminated.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "a graceful stop exits 0");
    let mut log = String::new();
    child.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(log.contains("shutting down"), "{log}");
    std::fs::remove_dir_all(&workspace).ok();
}
