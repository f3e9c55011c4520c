//! `--redis` through real sockets, against a `redis-server` of each test's own: an
//! observer hears every instance from the moment it is subscribed.

use serde_json::{Value, json};
use volley_echo_server::TestServer;
use volley_server::ServerConfig;

use crate::support::{Observer, Redis, Running, client, post, start};

async fn instance(redis: &Redis) -> Running {
    start(ServerConfig { redis: Some(redis.url()), ..ServerConfig::default() }).await
}

/// The observer's events until `count` executions finished (or failed), heartbeats
/// skipped; panics on an `error` event.
async fn executions_heard(observer: &mut Observer, count: usize) -> Vec<String> {
    let mut runs = Vec::new();
    while runs.len() < count {
        let event = observer.next().await.expect("the stream goes on");
        assert_ne!(event.event, "error", "{}", event.data);
        if event.event == "executionFinished" || event.event == "executionFailed" {
            let envelope: Value =
                serde_json::from_str(&event.data).unwrap_or_else(|error| panic!("{error}: {:?}", event.data));
            runs.push(envelope["runId"].as_str().expect("runId").to_owned());
        }
    }
    runs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_observer_hears_another_instance_from_the_moment_it_is_subscribed() {
    let redis = Redis::start();
    let upstream = TestServer::start().await;
    let http = client();
    let content = format!("GET {}\n", upstream.url("/echo"));
    // Right after the instances start: no heartbeat has told B of A's observer yet.
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let mut observer = Observer::open(&http, format!("{}/event", a.base)).await;
    let (status, answer) = post(&http, format!("{}/execute", b.base), json!({ "content": content })).await;
    assert_eq!(status, 200, "{answer}");
    let heard = executions_heard(&mut observer, 1).await;
    assert_eq!(heard, [answer["runId"].as_str().expect("runId")], "the execution on B reached A's observer");
    // And on its own instance.
    let (status, answer) = post(&http, format!("{}/execute", a.base), json!({ "content": content })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(executions_heard(&mut observer, 1).await, [answer["runId"].as_str().expect("runId")]);
}
