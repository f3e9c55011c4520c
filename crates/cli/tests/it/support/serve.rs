//! `volley serve` as a process on 127.0.0.1, on a port it picks, stopped when dropped.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running `volley serve`.
pub(crate) struct Serve {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub(crate) url: String,
}

impl Serve {
    /// Starts `volley serve` on `workspace`, requiring `token`, and waits for the line
    /// that gives its address.
    pub(crate) fn start(workspace: &Path, token: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_volley"))
            .args(["serve", "--port", "0", "--token", token])
            .arg("--workspace")
            .arg(workspace)
            .env("NO_COLOR", "1")
            .env_remove("VOLLEY_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let address = first.trim().strip_prefix("volley serve: listening on ").expect(&first).to_owned();
        // The rest of its output is not read: a thread drains it so the server never blocks.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        Self { child, url: address }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
