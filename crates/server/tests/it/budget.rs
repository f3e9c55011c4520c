//! What a costly `.http` text may take from the server: parsing runs on the blocking
//! pool within a time budget, and error answers stay small whatever the text.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::json;
use volley_server::ServerConfig;

/// Text that takes long to parse: a request with a million header lines (seconds per
/// megabyte in a debug build, a node or two per byte).
fn slow_text() -> String {
    format!("GET http://127.0.0.1:1/\n{}", "a\n".repeat(1024 * 1024))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_parse_over_the_time_budget_is_answered_422_and_never_holds_up_other_requests() {
    let running =
        support::start(ServerConfig { parse_budget: Duration::from_millis(1500), ..ServerConfig::default() }).await;
    let client = support::client();
    let url = format!("{}/execute", running.base);
    let started = Instant::now();
    let execution = tokio::spawn({
        let client = client.clone();
        async move { support::post(&client, url, json!({ "content": slow_text() })).await }
    });
    // While the parse runs, the one runtime worker still answers.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let health = client.get(format!("{}/health", running.base)).send().await.expect("health");
    assert_eq!(health.status().as_u16(), 200);
    let health_at = started.elapsed();
    let (status, answer) = execution.await.expect("the execution task");
    let answered_at = started.elapsed();
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["error"]["code"], "PARSE_BUDGET_EXCEEDED");
    assert_eq!(answer["error"]["details"]["limit"], "time");
    assert!(health_at < answered_at, "/health waited for the parse ({health_at:?}, {answered_at:?})");
    // Stopped at the budget, not at the end of the parse: a generous margin for a
    // loaded machine, far below the tens of seconds the whole text takes.
    assert!(answered_at < Duration::from_secs(10), "answered after {answered_at:?}");
}

#[tokio::test]
async fn a_parse_error_answer_lists_a_hundred_diagnostics_and_counts_the_rest() {
    let running = support::start(ServerConfig::default()).await;
    let client = support::client();
    // One request with 5,000 unclosed `{{`: 200 are listed by the parser, one more
    // diagnostic counts the rest, another says the request holds errors not listed;
    // the answer lists the first 100 of those 202.
    let content = format!("GET http://127.0.0.1:9/{}\n", "{{".repeat(5_000));
    let (status, answer) =
        support::post(&client, format!("{}/execute", running.base), json!({ "content": content })).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], "PARSE_ERROR");
    let listed = answer["error"]["details"]["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(listed.len(), 100);
    assert_eq!(answer["error"]["details"]["omitted"], 102);
    assert!(answer.to_string().len() < 64 * 1024, "{} bytes", answer.to_string().len());
}
