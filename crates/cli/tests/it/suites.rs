//! `volley run` over suites: `--jobs` runs files at the same time, `--delay` spaces a
//! file's requests. Checked on the echo server's side, by what it had received when.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use volley_echo_server::TestServer;

fn volley(directory: &Path, args: &[&str], base: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(args)
        .current_dir(directory)
        .env("BASE", base)
        .env("NO_COLOR", "1")
        .output()
        .expect("volley runs")
}

/// A scratch folder of its own for `test`.
fn scratch(test: &str) -> std::path::PathBuf {
    let directory = std::env::temp_dir().join(format!("volley-suites-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).expect("the scratch folder can be made");
    directory
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// `x.http` asks the server, 300 ms in, whether `y.http`'s slow request has arrived: only
/// when the two files run at the same time has it.
#[test]
fn jobs_run_files_at_the_same_time() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let scratch = scratch("jobs");
    std::fs::write(
        scratch.join("x.http"),
        "@base = {{$env(BASE)}}\n\nGET {{base}}/echo/x\n\n###\n# @assert jsonpath $.requests['/slow'] == 1\nGET {{base}}/stats\n",
    )
    .unwrap();
    std::fs::write(scratch.join("y.http"), "@base = {{$env(BASE)}}\n\nGET {{base}}/slow?ms=1500\n").unwrap();
    for (jobs, parallel) in [("2", true), ("1", false)] {
        let server = runtime.block_on(TestServer::start());
        let args = ["run", "--jobs", jobs, "--delay", "300", "x.http", "y.http"];
        let output = volley(&scratch, &args, &server.base_url());
        assert_eq!(output.status.success(), parallel, "--jobs {jobs}: {}", text(&output));
    }
}

#[test]
fn delay_spaces_the_requests_of_a_file() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let scratch = scratch("delay");
    let requests =
        "@base = {{$env(BASE)}}\n\nGET {{base}}/echo/1\n\n###\nGET {{base}}/echo/2\n\n###\nGET {{base}}/echo/3\n";
    std::fs::write(scratch.join("three.http"), requests).unwrap();
    let started = Instant::now();
    let output = volley(&scratch, &["run", "-q", "--delay", "250", "three.http"], &server.base_url());
    assert!(output.status.success(), "{}", text(&output));
    // Two pauses between three requests; never the upper bound, which a busy machine
    // can stretch.
    assert!(started.elapsed() >= Duration::from_millis(500), "{:?}", started.elapsed());
}
