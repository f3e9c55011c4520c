//! The files of `examples/` run as their comments say, against the echo server, and pass.

use std::path::Path;
use std::process::Command;

use volley_echo_server::TestServer;

#[test]
fn every_example_passes_against_the_echo_server() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    // `streaming.http` waits on its WebSocket for stdin: it is run by the CLI cases.
    for name in ["quickstart.http", "assertions.http", "scripts.http"] {
        let output = Command::new(env!("CARGO_BIN_EXE_volley"))
            .arg("run")
            .arg(examples.join(name))
            .env("VOLLEY_ECHO_URL", server.base_url())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{name}: {text}");
        assert!(text.contains(" passed, 0 failed"), "{name}: {text}");
    }
}
