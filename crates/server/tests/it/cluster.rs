//! `--redis` through real sockets, against a `redis-server` of each test's own: an
//! observer hears every instance from the moment it is subscribed, and a Redis that is
//! killed and restarted under executions and observers costs errors that say so,
//! never a hang or a silent loss, and no restart of Volley.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use volley_echo_server::TestServer;
use volley_server::ServerConfig;

use crate::support::{Observer, Redis, Running, client, post, send, start};

async fn instance(redis: &Redis) -> Running {
    start(ServerConfig { redis: Some(redis.url()), ..ServerConfig::default() }).await
}

async fn create_flow(http: &reqwest::Client, server: &Running) -> String {
    let (status, flow) = post(http, format!("{}/flows", server.base), json!({ "label": "restart" })).await;
    assert_eq!(status, 201, "{flow}");
    flow["flowId"].as_str().expect("flowId").to_owned()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_fails_executions_clearly_and_volley_recovers_by_itself() {
    let mut redis = Redis::start();
    let upstream = TestServer::start().await;
    let server = instance(&redis).await;
    let http = client();
    let execute = format!("{}/execute", server.base);
    let content = format!("GET {}\n", upstream.url("/echo"));
    let flow = create_flow(&http, &server).await;
    let mut observer = Observer::open(&http, format!("{}/event", server.base)).await;
    let mut stored = Vec::new();
    for _ in 0..3 {
        let (status, answer) = post(&http, execute.clone(), json!({ "content": content, "flowId": flow })).await;
        assert_eq!(status, 200, "{answer}");
        stored.push(answer["reqExecId"].as_str().expect("reqExecId").to_owned());
    }
    executions_heard(&mut observer, 3).await;

    // An execution under way when Redis dies: it was recorded, it cannot be finished.
    let slow = format!("GET {}\n", upstream.url("/slow?ms=800"));
    let in_flight = tokio::spawn({
        let (http, body) = (http.clone(), json!({ "content": slow, "flowId": flow }));
        let url = execute.clone();
        async move { post(&http, url, body).await }
    });
    loop {
        let event = observer.next().await.expect("the stream goes on");
        if event.event == "fetchStarted" {
            break;
        }
    }
    redis.kill();
    let outage = Instant::now();
    let (status, answer) = in_flight.await.expect("answered");
    assert_eq!(status, 503, "{answer}");
    assert_eq!(answer["error"]["code"], "INTERNAL_ERROR");
    assert_eq!(answer["error"]["details"]["kind"], "not_stored", "{answer}");
    assert_eq!(answer["error"]["details"]["flowId"], flow.as_str());

    // During the outage: an execution in the flow is refused, one outside any flow runs
    // (its events are lost, and its observers will be told); none hangs.
    let (status, answer) = post(&http, execute.clone(), json!({ "content": content, "flowId": flow })).await;
    assert_eq!(status, 503, "{answer}");
    let hint = answer["error"]["details"]["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("redis-server"), "{answer}");
    let (status, answer) = post(&http, execute.clone(), json!({ "content": content })).await;
    assert_eq!(status, 200, "{answer}");
    assert!(outage.elapsed() < Duration::from_secs(12), "bounded by the connection's timeouts: {:?}", outage.elapsed());

    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, answer) = post(&http, execute.clone(), json!({ "content": content, "flowId": flow })).await;
        if status == 200 {
            stored.push(answer["reqExecId"].as_str().expect("reqExecId").to_owned());
            break;
        }
        assert_eq!(status, 503, "{answer}");
        assert!(Instant::now() < deadline, "executions did not work again: {answer}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The observer is told that it missed events, as one that fell behind is.
    let told = observer.until("error").await;
    let error: Value = serde_json::from_str(&told.last().expect("error").data).expect("json");
    assert_eq!(error["error"]["code"], "OBSERVER_LAGGED", "{error}");
    // A new one hears what runs now.
    let mut again = Observer::open(&http, format!("{}/event", server.base)).await;
    let (status, answer) = post(&http, execute.clone(), json!({ "content": content })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(executions_heard(&mut again, 1).await, [answer["runId"].as_str().expect("runId")]);

    // Every execution answered 200 in the flow is kept there.
    let (status, listed) = send(http.get(format!("{}/flows/{flow}/executions", server.base)), None, None).await;
    assert_eq!(status, 200, "{listed}");
    let kept: Vec<(&str, &str)> = listed["executions"]
        .as_array()
        .expect("executions")
        .iter()
        .filter_map(|execution| Some((execution["reqExecId"].as_str()?, execution["status"].as_str()?)))
        .collect();
    for id in &stored {
        assert!(kept.contains(&(id.as_str(), "success")), "{id} is missing from {kept:?}");
    }
}

/// The document a `--redis` server serves states the `503` its store can cause (and
/// one without Redis states none: `tests/it/openapi`).
#[tokio::test]
async fn the_document_of_a_redis_server_states_the_stores_503() {
    let redis = Redis::start();
    let server = instance(&redis).await;
    let answer = client().get(format!("{}/doc", server.base)).send().await.expect("answered");
    let document: Value = serde_json::from_str(&answer.text().await.expect("a body")).expect("JSON");
    let execute = &document["paths"]["/execute"]["post"]["responses"]["503"]["description"];
    assert!(execute.as_str().is_some_and(|text| text.contains("not_stored")), "{execute}");
    assert!(document["paths"]["/flows"]["get"]["responses"]["503"].is_object());
    assert!(document["paths"]["/health"]["get"]["responses"]["503"].is_null(), "no token: /health does not ask Redis");
}
