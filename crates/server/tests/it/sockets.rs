//! The server on a real socket (127.0.0.1, port 0) executing against the local test
//! upstream: the observer stream of a flow, filters, observers that vanish, streamed
//! executions, graceful shutdown.

use std::time::Duration;

use serde_json::{Value, json};
use support::{Observer, client, post, start};
use volley_echo_server::TestServer;
use volley_engine::sse::SseEvent;
use volley_server::ServerConfig;

use crate::support;

fn kinds(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(|event| event.event.as_str()).collect()
}

#[tokio::test]
async fn an_observer_sees_every_stage_of_every_execution_of_its_flow() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (_, session) =
        post(&http, format!("{}/session", server.base), json!({ "variables": { "base": upstream.base_url() } })).await;
    let session = session["sessionId"].as_str().expect("session").to_owned();
    let (status, flow) =
        post(&http, format!("{}/flows", server.base), json!({ "sessionId": session, "label": "checkout" })).await;
    assert_eq!(status, 201);
    let flow = flow["flowId"].as_str().expect("flow").to_owned();
    let mut observer = Observer::open(&http, format!("{}/event?flowId={flow}", server.base)).await;
    // The flow's events from before the subscription come first.
    assert_eq!(kinds(&observer.until("flowStarted").await), ["flowStarted"]);

    let content = "# @name set\n# @description Sets a cookie\n# @assert status == 200\nGET {{base}}/cookies/set?id=7\n\n###\n# @name gone\nGET http://127.0.0.1:9/nothing\n";
    let (status, first) =
        post(&http, format!("{}/execute", server.base), json!({ "content": content, "flowId": flow })).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["session"]["sessionId"], session.as_str(), "the flow's session is used");
    let first_events = observer.until("sessionUpdated").await;
    assert_eq!(
        kinds(&first_events),
        [
            "requestQueued",
            "parseStarted",
            "parseFinished",
            "interpolateStarted",
            "interpolateFinished",
            "compileStarted",
            "compileFinished",
            "fetchStarted",
            "fetchFinished",
            "assertionReport",
            "executionFinished",
            "sessionUpdated",
        ]
    );
    let envelopes: Vec<Value> = first_events.iter().map(|event| event.json().expect("json")).collect();
    for (index, envelope) in envelopes.iter().enumerate() {
        // seq counts per flow: `flowStarted` was 1.
        assert_eq!(envelope["seq"], index as u64 + 2, "{envelope}");
        assert_eq!(envelope["flowId"], flow.as_str());
        assert_eq!(envelope["sessionId"], session.as_str());
        assert_eq!(envelope["runId"], first["runId"]);
        assert_eq!(envelope["reqExecId"], first["reqExecId"]);
        assert_eq!(first_events[index].id.as_deref(), Some(format!("{flow}:{}", index + 2).as_str()));
    }
    assert_eq!(envelopes[2]["payload"]["description"], "Sets a cookie");
    assert_eq!(envelopes[8]["payload"]["status"], 200);
    assert_eq!(envelopes[9]["payload"]["passed"], true);
    assert_eq!(envelopes[10]["payload"]["status"], 200);
    assert_eq!(envelopes[11]["payload"]["cookiesChanged"], true);

    let (status, failed) = post(
        &http,
        format!("{}/execute", server.base),
        json!({ "content": content, "flowId": flow, "requestName": "gone" }),
    )
    .await;
    assert_eq!((status, failed["error"]["code"].as_str()), (400, Some("EXECUTE_ERROR")));
    let second = observer.until("executionFailed").await;
    assert_eq!(kinds(&second).last(), Some(&"executionFailed"));
    assert!(kinds(&second).contains(&"fetchStarted"));
    let failure: Value = second.last().expect("failed").json().expect("json");
    assert_eq!(failure["payload"]["stage"], "fetch");

    let (status, finished) = post(&http, format!("{}/flows/{flow}/finish", server.base), json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(finished["summary"]["total"], 2);
    assert_eq!(finished["summary"]["succeeded"], 1);
    assert_eq!(finished["summary"]["failed"], 1);
    let end = observer.until("flowFinished").await;
    let summary: Value = end.last().expect("finished").json().expect("json");
    assert_eq!(summary["payload"]["total"], 2);
}

#[tokio::test]
async fn filters_keep_other_flows_and_sessions_out() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (_, a) = post(&http, format!("{}/flows", server.base), json!({})).await;
    let (_, b) = post(&http, format!("{}/flows", server.base), json!({})).await;
    let (a, b) = (a["flowId"].as_str().expect("a").to_owned(), b["flowId"].as_str().expect("b").to_owned());
    let mut only_b = Observer::open(&http, format!("{}/event?flowId={b}", server.base)).await;
    assert_eq!(kinds(&only_b.until("flowStarted").await), ["flowStarted"], "b's own, replayed");
    let mut everything = Observer::open(&http, format!("{}/event", server.base)).await;
    let content = format!("GET {}/echo\n", upstream.base_url());
    for flow in [&a, &b] {
        let (status, _) =
            post(&http, format!("{}/execute", server.base), json!({ "content": content, "flowId": flow })).await;
        assert_eq!(status, 200);
    }
    let seen_by_b = only_b.until("executionFinished").await;
    assert!(seen_by_b.iter().all(|event| event.json::<Value>().expect("json")["flowId"] == b.as_str()));
    assert_eq!(seen_by_b.first().map(|event| event.event.as_str()), Some("requestQueued"));
    // The unfiltered observer sees both flows, in order.
    let all = everything.until("executionFinished").await;
    let first_flow = all.iter().find_map(|event| event.json::<Value>().ok()?["flowId"].as_str().map(str::to_owned));
    assert_eq!(first_flow.as_deref(), Some(a.as_str()));
    let rest = everything.until("executionFinished").await;
    assert!(rest.iter().all(|event| event.json::<Value>().expect("json")["flowId"] == b.as_str()));
}

#[tokio::test]
async fn an_observer_that_vanishes_disturbs_nobody() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (_, flow) = post(&http, format!("{}/flows", server.base), json!({})).await;
    let flow = flow["flowId"].as_str().expect("flow").to_owned();
    let mut staying = Observer::open(&http, format!("{}/event?flowId={flow}", server.base)).await;
    staying.until("flowStarted").await;
    let leaving = Observer::open(&http, format!("{}/event?flowId={flow}", server.base)).await;
    drop(leaving);
    let content = format!("GET {}/echo\n", upstream.base_url());
    for _ in 0..3 {
        let (status, _) =
            post(&http, format!("{}/execute", server.base), json!({ "content": content, "flowId": flow })).await;
        assert_eq!(status, 200);
        let events = staying.until("executionFinished").await;
        assert_eq!(events.len(), 10);
    }
    let health = http.get(format!("{}/health", server.base)).send().await.expect("health");
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn a_streamed_execution_relays_events_and_reports_its_end() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (_, flow) = post(&http, format!("{}/flows", server.base), json!({})).await;
    let flow = flow["flowId"].as_str().expect("flow").to_owned();
    let mut observer = Observer::open(&http, format!("{}/event?flowId={flow}", server.base)).await;
    let content = format!("# @sse\nGET {}/sse/forever\n", upstream.base_url());
    let response = http
        .post(format!("{}/execute/sse", server.base))
        .header("content-type", "application/json")
        .body(json!({ "content": content, "flowId": flow }).to_string())
        .send()
        .await
        .expect("execute/sse");
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-volley-upstream-status"], "200");
    let mut relayed = Observer::reading(response);
    for _ in 0..3 {
        let event = relayed.next().await.expect("an upstream event");
        assert!(!event.data.is_empty());
    }
    // The client leaves mid-stream: the execution ends and observers are told.
    drop(relayed);
    let events = observer.until("executionFinished").await;
    let end: Value = events.last().expect("end").json().expect("json");
    assert_eq!(end["payload"]["status"], 200);
    assert!(end["payload"]["events"].as_u64().is_some_and(|count| count >= 3), "{end}");
}

#[tokio::test]
async fn shutdown_finishes_in_flight_executions_and_ends_observer_streams() {
    let upstream = TestServer::start().await;
    let mut server = start(ServerConfig::default()).await;
    let http = client();
    let mut observer = Observer::open(&http, format!("{}/event", server.base)).await;
    let content = format!("GET {}/slow?ms=400\n", upstream.base_url());
    let request = tokio::spawn({
        let http = http.clone();
        let url = format!("{}/execute", server.base);
        async move { post(&http, url, json!({ "content": content })).await }
    });
    // Shut down once the execution is on its way upstream.
    observer.until("fetchStarted").await;
    drop(server.stop.take());
    let (status, body) = request.await.expect("joined");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["response"]["status"], 200);
    // The observer stream ends instead of hanging.
    while let Some(event) = observer.next().await {
        assert_ne!(event.event, "heartbeat");
    }
    tokio::time::timeout(Duration::from_secs(5), &mut server.done)
        .await
        .expect("stopped in time")
        .expect("joined")
        .expect("ran");
}

#[tokio::test]
async fn observers_get_heartbeats() {
    let server = start(ServerConfig { heartbeat: Duration::from_millis(50), ..ServerConfig::default() }).await;
    let http = client();
    let mut observer = Observer::open(&http, format!("{}/event", server.base)).await;
    let heartbeat = observer.next().await.expect("a heartbeat");
    assert_eq!(heartbeat.event, "heartbeat");
    assert!(heartbeat.json::<Value>().expect("json")["ts"].as_u64().is_some());
}

#[tokio::test]
async fn executions_of_one_session_run_one_at_a_time() {
    let upstream = TestServer::start().await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (_, session) = post(&http, format!("{}/session", server.base), json!({})).await;
    let session = session["sessionId"].as_str().expect("session").to_owned();
    let mut observer = Observer::open(&http, format!("{}/event?sessionId={session}", server.base)).await;
    let content = format!("GET {}/slow?ms=150\n", upstream.base_url());
    let requests: Vec<_> = (0..2)
        .map(|_| {
            let (http, url, body) =
                (http.clone(), format!("{}/execute", server.base), json!({ "content": content, "sessionId": session }));
            tokio::spawn(async move { post(&http, url, body).await })
        })
        .collect();
    for request in requests {
        assert_eq!(request.await.expect("joined").0, 200);
    }
    // Both were queued at once, but the second is parsed only after the first finished.
    let mut order = Vec::new();
    while order.iter().filter(|(kind, _)| kind == "executionFinished").count() < 2 {
        let event = observer.next().await.expect("an event");
        let run = event.json::<Value>().expect("json")["runId"].as_str().unwrap_or_default().to_owned();
        order.push((event.event, run));
    }
    let started: Vec<&(String, String)> = order.iter().filter(|(kind, _)| kind == "parseStarted").collect();
    let finished: Vec<&(String, String)> = order.iter().filter(|(kind, _)| kind == "executionFinished").collect();
    let position = |wanted: &(String, String)| order.iter().position(|event| event == wanted).expect("seen");
    assert_eq!(started[0].1, finished[0].1);
    assert!(position(finished[0]) < position(started[1]), "{order:?}");
}
