//! [`SigV4Verifier`]: an independent AWS Signature V4 check for the tests. A Node.js
//! server (`tests/sigv4/verifier.mjs`, on aws4 from npm) on 127.0.0.1 computes the
//! signature of each request again, as an AWS service would, and answers 200 when it
//! matches, 403 with the expected signature and canonical request when it does not.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;

/// The verifier's folder: `tests/sigv4` of the repository.
fn directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sigv4")
}

/// A running verifier, stopped when dropped.
#[derive(Debug)]
pub struct SigV4Verifier {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    child: Child,
    _stdin: ChildStdin,
}

impl SigV4Verifier {
    /// Starts a verifier that knows the secret key of each `(access key id, secret)`;
    /// runs `npm ci` in `tests/sigv4` first when its packages are missing.
    ///
    /// # Panics
    /// When Node.js or npm is missing, or the verifier does not start.
    #[must_use]
    pub fn start(keys: &[(&str, &str)]) -> SigV4Verifier {
        install();
        let keys: Vec<String> = keys.iter().map(|(id, secret)| format!("{id}:{secret}")).collect();
        let mut child = Command::new("node")
            .arg("verifier.mjs")
            .current_dir(directory())
            .env("SIGV4_KEYS", keys.join(","))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node (20+) starts tests/sigv4/verifier.mjs");
        let stdin = child.stdin.take().expect("the verifier's stdin");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("the verifier's stdout");
        BufReader::new(stdout).read_line(&mut line).expect("the verifier's first line");
        let base = line.trim().strip_prefix("listening on ").expect("`listening on URL` from the verifier").to_owned();
        SigV4Verifier { base, child, _stdin: stdin }
    }
}

impl Drop for SigV4Verifier {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `npm ci` in tests/sigv4, once per process, when its packages are missing.
fn install() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    crate::oidc::npm_ci(&INSTALLED, &directory(), "aws4");
}
