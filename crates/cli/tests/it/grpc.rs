//! `volley run` of gRPC requests against the echo server's tonic server: a stream's
//! messages printed as they come, then the status; a failed call's details; `--json`
//! records and `-o status`.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::process::{Command, Output};

use volley_echo_server::{GrpcOptions, GrpcServer};

fn run(name: &str, text: &str, arguments: &[&str]) -> Output {
    let dir = std::env::temp_dir().join(format!("volley-grpc-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join("case.http"), text).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["run", "case.http"])
        .args(arguments)
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    output
}

#[test]
fn a_stream_prints_as_it_comes_and_a_failure_with_its_details() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(GrpcServer::start(GrpcOptions::default()));
    let text = format!(
        "### list\n# @assert grpc-status == OK\nGRPC {0}/shop.v1.Orders/List\n\n{{\"count\": 2}}\n\n\
         ### fails\n# @assert grpc-status == INVALID_ARGUMENT\nGRPC {0}/shop.v1.Orders/Place\n\n{{\"item\": \"fail\"}}\n",
        server.authority()
    );
    let output = run("human", &text, &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    // The title, each message as it came, then the status after them.
    let at = |needle: &str| stdout.find(needle).unwrap_or_else(|| panic!("no `{needle}` in:\n{stdout}"));
    assert!(at("### list · case.http:3") < at("] message 1\n{"));
    assert!(at("] message 1\n{") < at("] message 2\n{"));
    assert!(at("] message 2\n{") < at("gRPC OK (0) · "));
    assert_eq!(stdout.matches("\"id\": \"order-2\"").count(), 1, "a message printed live is not printed again");
    assert!(stdout.contains("gRPC INVALID_ARGUMENT (3) no such item: \"fail\" (try another) · "), "{stdout}");
    assert!(
        stdout.contains(
            r#"detail: {"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"description":"no such item","field":"item"}]}"#
        ),
        "{stdout}"
    );

    let json = run("json", &text, &["--json", "--name", "list"]);
    let record: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let grpc = &record["response"]["grpc"];
    assert_eq!(
        (grpc["code"].as_str(), grpc["kind"].as_str(), grpc["messages"].as_u64()),
        (Some("OK"), Some("server-streaming"), Some(2))
    );
    assert_eq!(record["response"]["body"].as_str().unwrap().lines().count(), 2);

    let status = run("status", &text, &["--name", "fails", "-o", "status"]);
    assert_eq!(String::from_utf8(status.stdout).unwrap(), "INVALID_ARGUMENT\n");
}
