//! The independent gRPC test server: grpc-js (`tests/grpc`, npm, installed by
//! `scripts/test`) in a Node process on 127.0.0.1, serving `tests/grpc/protos/shop.proto`
//! with every kind of call, errors, metadata and a slow answer; `--no-reflection`,
//! `--tls DIR` (`DIR/ca.pem`, `server.pem`, `server-key.pem`) and `--port N` as its
//! arguments. Stopped on drop.

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A running grpc-js test server.
#[derive(Debug)]
pub struct GrpcJsServer {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub authority: String,
}

impl GrpcJsServer {
    /// The directory of the server and its protos: `tests/grpc`.
    #[must_use]
    pub fn directory() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/grpc")
    }

    /// Starts the server with `arguments` and waits until it listens.
    ///
    /// # Panics
    ///
    /// When `tests/grpc` has no `node_modules`, Node cannot be started or the server
    /// does not say it listens: a test cannot go on without it.
    #[must_use]
    pub fn start(arguments: &[&str]) -> Self {
        let directory = Self::directory();
        assert!(
            directory.join("node_modules/@grpc/grpc-js").is_dir(),
            "tests/grpc has no node_modules: run `npm ci` there (scripts/test does)"
        );
        let mut child = Command::new("node")
            .arg("server.mjs")
            .args(arguments)
            .current_dir(&directory)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs the gRPC test server");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("the server's stdout is piped");
        BufReader::new(stdout).read_line(&mut line).expect("the server says where it listens");
        let port = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("not ready: {line:?}"));
        Self { authority: format!("127.0.0.1:{port}"), child }
    }
}

impl Drop for GrpcJsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
