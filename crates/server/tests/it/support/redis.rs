//! A `redis-server` of a test's own on a free loopback port, with its append-only file
//! in a directory of its own (what it held survives a restart), killed on drop and
//! restartable on the same port.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::Workspace;

pub(crate) struct Redis {
    child: Option<Child>,
    port: u16,
    directory: Workspace,
}

impl Redis {
    pub(crate) fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("port").port();
        let directory = std::env::temp_dir().join(format!("volley-redis-{}", super::unique()));
        std::fs::create_dir_all(&directory).expect("redis directory");
        let mut redis = Self { child: None, port, directory: Workspace(directory) };
        redis.restart();
        redis
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills the server (SIGKILL: nothing is saved on the way out) and waits for it.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server (again) on the same port and waits until it answers.
    pub(crate) fn restart(&mut self) {
        self.kill();
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always", "--dir"])
            .arg(&self.directory.0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server runs (scripts/install-packages redis-server=redis-server installs it)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read as _, Write as _};
                let mut answer = [0; 7];
                if stream.write_all(b"PING\r\n").is_ok()
                    && stream.read_exact(&mut answer).is_ok()
                    && &answer == b"+PONG\r\n"
                {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "redis-server did not answer on {}", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}
