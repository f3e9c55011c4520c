//! `volley load` against the echo server: exact counts, the open model's rate and its
//! accounting of coordinated omission, latencies of a route with a fixed delay,
//! thresholds, shards merged, a scenario whose requests chain, and the refusals.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
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

fn scratch(test: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("volley-load-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).expect("the scratch folder can be made");
    directory
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// Runs `volley load ARGS --json` and reads its report.
fn report(directory: &Path, args: &[&str], base: &str) -> Value {
    let mut all = vec!["load"];
    all.extend_from_slice(args);
    all.extend(["--json", "-q"]);
    let output = volley(directory, &all, base);
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{error}: {}", text(&output)))
}

fn stats(runtime: &tokio::runtime::Runtime, base: &str) -> BTreeMap<String, u64> {
    runtime.block_on(async {
        let response = crate::support::cluster::client().get(format!("{base}/stats")).send().await.unwrap();
        let body = response.bytes().await.unwrap();
        let stats: Value = serde_json::from_slice(&body).unwrap();
        serde_json::from_value(stats["requests"].clone()).unwrap()
    })
}

/// The buckets of a report's histogram: latency (µs) → count.
fn buckets(histogram: &Value) -> BTreeMap<u64, u64> {
    let mut buckets = BTreeMap::new();
    for pair in histogram.as_array().expect("a list of buckets") {
        *buckets.entry(pair[0].as_u64().unwrap()).or_default() += pair[1].as_u64().unwrap();
    }
    buckets
}

const FILE: &str = "@base = {{$env(BASE)}}

# @name each
GET {{base}}/echo/{{$uuid}}

###
# @name fixed
GET {{base}}/echo/fixed

###
# @name slow
GET {{base}}/slow?ms={{ms}}

###
# @name missing
GET {{base}}/status/404

###
# @name checked
# @assert status == 404
GET {{base}}/status/404
";

#[test]
fn the_closed_model_sends_exactly_the_requests_asked_each_built_anew() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let scratch = scratch("closed");
    std::fs::write(scratch.join("load.http"), FILE).unwrap();
    let report = report(&scratch, &["load.http", "--name", "each", "-c", "8", "-n", "300"], &server.base_url());
    assert_eq!(report["kind"], "load");
    assert_eq!(report["requests"], 300);
    assert_eq!(report["statuses"]["200"], 300);
    assert_eq!(report["model"], serde_json::json!({"kind": "closed", "connections": 8}));
    assert_eq!(buckets(&report["latency"]).values().sum::<u64>(), 300);
    // Every request had a `$uuid` of its own: 300 paths, each asked once.
    let paths: Vec<(String, u64)> =
        stats(&runtime, &server.base_url()).into_iter().filter(|(path, _)| path.starts_with("/echo/")).collect();
    assert_eq!(paths.len(), 300, "{paths:?}");
    assert!(paths.iter().all(|(_, count)| *count == 1));
    // The per-request cost of building them is measured.
    assert_eq!(buckets(&report["build"]).values().sum::<u64>(), 300);
}

#[test]
fn a_warmup_is_sent_but_not_counted() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let scratch = scratch("warmup");
    std::fs::write(scratch.join("load.http"), FILE).unwrap();
    let report = report(
        &scratch,
        &["load.http", "--name", "fixed", "-c", "2", "-n", "50", "--warmup", "300ms"],
        &server.base_url(),
    );
    assert_eq!(report["requests"], 50);
    let sent = stats(&runtime, &server.base_url())["/echo/fixed"];
    assert!(sent > 50, "the warm-up's requests reached the server too: {sent}");
}

#[test]
fn latencies_of_a_fixed_delay_land_at_the_delay() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let scratch = scratch("delay");
    std::fs::write(scratch.join("load.http"), FILE).unwrap();
    let args = ["load.http", "--name", "slow", "--var", "ms=100", "-c", "4", "-n", "24"];
    let report = report(&scratch, &args, &server.base_url());
    let buckets = buckets(&report["latency"]);
    assert_eq!(buckets.values().sum::<u64>(), 24);
    // No answer comes before the server's delay; a histogram bucket holds values
    // within a thousandth of its own.
    let lowest = *buckets.keys().next().unwrap();
    assert!(lowest >= 99_900, "a latency below the 100 ms delay: {buckets:?}");
    let mut sorted: Vec<u64> =
        buckets.iter().flat_map(|(value, count)| std::iter::repeat_n(*value, *count as usize)).collect();
    sorted.sort_unstable();
    assert!(sorted[12] < 600_000, "the median is far above the delay: {sorted:?}");
}

#[test]
fn the_open_model_keeps_its_rate_and_counts_latency_from_when_a_request_was_due() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let scratch = scratch("open");
    std::fs::write(scratch.join("load.http"), FILE).unwrap();
    // 100 requests a second for 2 seconds: about 200, whatever the answers take.
    let report = report(&scratch, &["load.http", "--name", "fixed", "--rate", "100/s", "-d", "2s"], &server.base_url());
    let requests = report["requests"].as_u64().unwrap();
    assert!((196..=201).contains(&requests), "{requests} requests in 2 s at 100/s");
    assert_eq!(report["model"]["kind"], "open");
    // One request under way at a time, each answered after 200 ms, due every 50 ms: the
    // server falls behind, and the latency counted from when each was due shows it
    // (a sender that waited for answers would see 200 ms each).
    let args = ["load.http", "--name", "slow", "--var", "ms=200", "--rate", "20", "-c", "1", "-d", "1s"];
    let report = self::report(&scratch, &args, &server.base_url());
    assert_eq!(report["requests"], 20);
    let buckets = buckets(&report["latency"]);
    let highest = *buckets.keys().last().unwrap();
    assert!(highest >= 2_500_000, "the last request waited about 3 s behind the others: {buckets:?}");
}

#[test]
fn thresholds_pass_and_fail_by_name() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let base = server.base_url();
    let scratch = scratch("thresholds");
    std::fs::write(scratch.join("load.http"), FILE).unwrap();
    let passing = volley(
        &scratch,
        &["load", "load.http", "--name", "fixed", "-n", "50", "--threshold", "p95<10s", "--threshold", "errors<1%"],
        &base,
    );
    assert!(passing.status.success(), "{}", text(&passing));
    assert!(text(&passing).contains("✓ p95<10s"), "{}", text(&passing));
    // A 404 without assertions fails; with `@assert status == 404` it passes.
    let failing = volley(
        &scratch,
        &["load", "load.http", "--name", "missing", "-n", "20", "--threshold", "errors<1%", "--threshold", "rate>0/s"],
        &base,
    );
    assert_eq!(failing.status.code(), Some(1), "{}", text(&failing));
    assert!(text(&failing).contains("✗ FAILED errors<1%  (errors = 100.0 %)"), "{}", text(&failing));
    assert!(text(&failing).contains("✓ rate>0/s"), "{}", text(&failing));
    let checked = report(&scratch, &["load.http", "--name", "checked", "-n", "20", "--threshold", "errors<=0"], &base);
    assert_eq!(checked["errors"], serde_json::json!({}));
    assert_eq!(checked["thresholds"][0]["passed"], true);
    let bad = volley(&scratch, &["load", "load.http", "--threshold", "p95<200"], &base);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad).contains("needs a unit"), "{}", text(&bad));
}

/// `# @load` lines hold the thresholds in the file: those of the requests the run sends
/// are checked with the command line's, the others' are not; one that cannot be read
/// stops the run before anything is sent, at its line, and `volley check` says the same.
#[test]
fn thresholds_written_in_the_file_are_checked() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let base = server.base_url();
    let scratch = scratch("file-thresholds");
    let file = "@base = {{$env(BASE)}}

# @name missing
# @load errors<1%, rate>0/s
GET {{base}}/status/404

###
# @name fixed
# @load p99 < 10s
GET {{base}}/echo/fixed
";
    std::fs::write(scratch.join("load.http"), file).unwrap();
    let failing = volley(&scratch, &["load", "load.http", "--name", "missing", "-n", "20"], &base);
    assert_eq!(failing.status.code(), Some(1), "{}", text(&failing));
    assert!(text(&failing).contains("✗ FAILED errors<1%  (errors = 100.0 %)"), "{}", text(&failing));
    assert!(text(&failing).contains("✓ rate>0/s"), "{}", text(&failing));
    assert!(!text(&failing).contains("p99<10s"), "the other request's threshold is not checked: {}", text(&failing));
    // The same threshold on the command line is checked once.
    let passing = report(&scratch, &["load.http", "--name", "fixed", "-n", "20", "--threshold", "p99<10s"], &base);
    let checked: Vec<&str> = passing["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|checked| checked["threshold"].as_str().unwrap())
        .collect();
    assert_eq!(checked, ["p99<10s"]);
    assert_eq!(passing["thresholds"][0]["passed"], true);

    std::fs::write(scratch.join("bad.http"), "# @load p95<200\nGET {{$env(BASE)}}/echo/bad\n").unwrap();
    let bad = volley(&scratch, &["load", "bad.http", "-n", "5"], &base);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("invalid-threshold"), "{}", text(&bad));
    assert!(text(&bad).contains("bad.http:1:9"), "{}", text(&bad));
    assert!(text(&bad).contains("needs a unit"), "{}", text(&bad));
    assert!(!stats(&runtime, &base).contains_key("/echo/bad"), "nothing was sent");
    let check = volley(&scratch, &["check", "bad.http"], &base);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(text(&check).contains("invalid-threshold") && text(&check).contains("needs a unit"), "{}", text(&check));
}

#[test]
fn the_shards_merged_are_the_whole_load() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let base = server.base_url();
    let scratch = scratch("shards");
    std::fs::write(scratch.join("load.http"), FILE).unwrap();
    let mut shards = Vec::new();
    for shard in ["1/2", "2/2"] {
        let path = format!("shard-{}.json", &shard[..1]);
        let args = ["load", "load.http", "--name", "fixed", "-c", "3", "-n", "41", "--shard", shard, "--report"];
        let output = volley(&scratch, &[&args[..], &[&format!("json={path}"), "-q"]].concat(), &base);
        assert!(output.status.success(), "{}", text(&output));
        shards.push(serde_json::from_str::<Value>(&std::fs::read_to_string(scratch.join(&path)).unwrap()).unwrap());
    }
    // 41 requests and 3 connections shared: 21 and 20, 2 and 1.
    assert_eq!((shards[0]["requests"].as_u64(), shards[1]["requests"].as_u64()), (Some(21), Some(20)));
    assert_eq!(shards[0]["model"]["connections"], 2);
    let merge = volley(
        &scratch,
        &["report", "merge", "shard-1.json", "shard-2.json", "--json", "all.json", "--threshold", "requests>=41"],
        &base,
    );
    assert!(merge.status.success(), "{}", text(&merge));
    assert!(text(&merge).contains("requests   41 in"), "{}", text(&merge));
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(scratch.join("all.json")).unwrap()).unwrap();
    assert_eq!(merged["requests"], 41);
    assert_eq!(merged["statuses"]["200"], 41);
    assert_eq!(merged["runs"], 2);
    assert_eq!(merged["model"]["connections"], 3);
    // The histogram is the two added, bucket by bucket: nothing averaged.
    let mut added = buckets(&shards[0]["latency"]);
    for (value, count) in buckets(&shards[1]["latency"]) {
        *added.entry(value).or_default() += count;
    }
    assert_eq!(buckets(&merged["latency"]), added);
    let timeline: u64 =
        merged["timeline"].as_array().unwrap().iter().map(|second| second["requests"].as_u64().unwrap()).sum();
    assert_eq!(timeline, 41);
    // A run report and a load report do not merge.
    std::fs::write(scratch.join("run.json"), r#"{"durationMs": 1, "files": []}"#).unwrap();
    let mixed = volley(&scratch, &["report", "merge", "shard-1.json", "run.json", "--json", "x.json"], &base);
    assert_eq!(mixed.status.code(), Some(2), "{}", text(&mixed));
}

#[test]
fn a_scenario_runs_the_file_in_order_for_each_user_and_its_requests_chain() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let scratch = scratch("scenario");
    let file = format!(
        "@base = {{{{$env(BASE)}}}}\n\n# @name login\nPOST {{{{base}}}}/login\n\n{{\"user\": \"{}\", \"password\": \"{}\"}}\n\n###\n# @assert status == 200\nGET {{{{base}}}}/bearer\nAuthorization: Bearer {{{{login.response.body.$.token}}}}\n",
        volley_echo_server::USER,
        volley_echo_server::PASSWORD
    );
    std::fs::write(scratch.join("flow.http"), file).unwrap();
    let report = report(&scratch, &["flow.http", "-c", "2", "-n", "20"], &server.base_url());
    assert_eq!(report["requests"], 20);
    assert_eq!(report["statuses"]["200"], 20, "{report}");
    assert_eq!(report["model"], serde_json::json!({"kind": "scenario", "connections": 2}));
    let counts = stats(&runtime, &server.base_url());
    // Each user logs in before it asks: the count may stop between the two.
    let (logins, asked) = (counts["/login"], counts["/bearer"]);
    assert_eq!(logins + asked, 20);
    assert!(logins >= asked && logins <= asked + 2, "{logins} logins, {asked} asked");
}

#[test]
fn what_cannot_go_under_load_is_refused_before_anything_is_sent() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let base = server.base_url();
    let scratch = scratch("refused");
    std::fs::write(scratch.join("load.http"), FILE).unwrap();
    std::fs::write(scratch.join("ws.http"), "GET {{$env(BASE)}}/echo/a\n\n###\nWEBSOCKET ws://127.0.0.1:1/ws/echo\n")
        .unwrap();
    let ws = volley(&scratch, &["load", "ws.http", "-n", "5"], &base);
    assert_eq!(ws.status.code(), Some(3), "{}", text(&ws));
    assert!(text(&ws).contains("a WebSocket request is not sent under load"), "{}", text(&ws));
    assert!(text(&ws).contains("ws.http:4:1"), "{}", text(&ws));
    let unknown = volley(&scratch, &["load", "load.http", "--name", "nope"], &base);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown).contains("the file's names: each, fixed, slow, missing, checked"), "{}", text(&unknown));
    let undefined = volley(&scratch, &["load", "load.http", "--name", "slow", "-n", "5"], &base);
    assert_eq!(undefined.status.code(), Some(3), "{}", text(&undefined));
    assert!(text(&undefined).contains("undefined variable `ms`"), "{}", text(&undefined));
    for args in [&["-n", "0"][..], &["-c", "0"], &["-d", "5"], &["--rate", "fast"], &["--shard", "3/2"]] {
        let output = volley(&scratch, &[&["load", "load.http", "--name", "fixed"][..], args].concat(), &base);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", text(&output));
    }
    let counts = stats(&runtime, &base);
    assert!(!counts.contains_key("/echo/fixed") && !counts.contains_key("/echo/a"), "{counts:?}");
}
