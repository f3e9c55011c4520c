//! The binary's allocator settings, seen from outside the process.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

/// mimalloc's transparent huge pages are turned off before its first allocation
/// (`huge_pages_off` in main.rs); mimalloc then sets `PR_SET_THP_DISABLE`, which
/// `/proc/PID/status` shows as `THP_enabled: 0`. With them on, one small allocation made
/// 2 MiB resident.
#[cfg(target_os = "linux")]
#[test]
fn transparent_huge_pages_are_off() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let enabled = |status: &str| {
        status.lines().find_map(|line| line.strip_prefix("THP_enabled:")).map(|value| value.trim().to_owned())
    };
    // The flag is inherited: a test process without it is needed to see the binary set it.
    let own = std::fs::read_to_string("/proc/self/status").unwrap();
    if enabled(&own).as_deref() != Some("1") {
        eprintln!("skipped: this process has transparent huge pages off already ({:?})", enabled(&own));
        return;
    }
    // `volley lsp` waits on its standard input, so it can be looked at.
    let mut child = Command::new(env!("CARGO_BIN_EXE_volley"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let path = format!("/proc/{}/status", child.id());
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = None;
    while Instant::now() < deadline {
        last = std::fs::read_to_string(&path).ok().and_then(|status| enabled(&status));
        if last.as_deref() == Some("0") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(last.as_deref(), Some("0"), "THP_enabled of `volley lsp`");
}
