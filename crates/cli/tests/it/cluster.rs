//! Several `volley serve --redis` processes behind nginx (issue 26), as real processes:
//! flows observed from another instance, sessions, stored executions, WebSocket sessions
//! driven from another instance (and ended when their owner dies), a restart of every
//! instance, limits and scoped tokens, all shared through one `redis-server`.
//!
//! The harness (support/cluster.rs) is checked on its own by
//! `cluster_harness_balances_kills_and_restarts`, which needs no sharing.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{Value, json};
use volley_echo_server::TestServer;

use crate::support::clients::{Answer, Api, EventStream, READ, Socket};
use crate::support::cluster::{Cluster, ClusterOptions};
/// The main token of the clusters started with authentication.
const MAIN: &str = "cluster-main-token";

/// The observer events of one successful execution with an `@assert`, in order.
const EXECUTION_EVENTS: [&str; 11] = [
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
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_harness_balances_kills_and_restarts() {
    // Instances without `--redis`: this checks the processes and nginx only, so it
    // holds before the instances share anything and after.
    let mut cluster = Cluster::start(ClusterOptions::new(3).unshared()).await;
    let api = Api::new(None);
    let health = format!("{}/health", cluster.url);

    // Round robin without stickiness: six requests reach all three instances.
    let mut served = BTreeSet::new();
    for _ in 0..6 {
        let answer = api.get(&health).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(answer.body["healthy"], true, "{answer:?}");
        served.insert(instance(&cluster, &answer));
    }
    assert_eq!(served.len(), 3, "every instance served some: {served:?}");

    // One killed: nginx passes what the others can answer.
    cluster.kill(1);
    assert!(api.try_get(&format!("{}/health", cluster.instance_url(1))).await.is_none(), "instance 1 is gone");
    for _ in 0..6 {
        let answer = api.get(&health).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_ne!(instance(&cluster, &answer), 1, "{answer:?}");
    }
    // Started again on its port.
    cluster.start_instance(1).await;
    assert_eq!(api.get(&format!("{}/health", cluster.instance_url(1))).await.status, 200);

    cluster.restart(0).await;
    cluster.restart_all().await;
    for index in 0..cluster.len() {
        assert_eq!(api.get(&format!("{}/health", cluster.instance_url(index))).await.status, 200);
    }
    // WebSockets pass nginx: an observer stream (no filter: the servers have no token)
    // hears the flow created on the instance that serves it.
    let (mut observer, upstream) = Socket::connect_through(&format!("{}/event/ws", ws(&cluster.url)), None).await;
    let index = cluster.instance_of(&upstream.expect("nginx names the instance")).expect("an instance");
    let created = api.post(&format!("{}/flows", cluster.instance_url(index)), json!({ "label": "through" })).await;
    assert_eq!(created.status, 201, "{created:?}");
    let started = observer.expect("flowStarted").await;
    assert_eq!(started["flowId"], created.body["flowId"], "{started}");
    assert_eq!(started["payload"]["label"], "through", "{started}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_flow_events_reach_observers_on_another_instance_in_order_and_replay() {
    let upstream = TestServer::start().await;
    let cluster = Cluster::start(ClusterOptions::new(3)).await;
    let api = Api::new(None);

    let created = api.post(&format!("{}/flows", cluster.url), json!({ "label": "cluster" })).await;
    assert_eq!(created.status, 201, "{created:?}");
    let flow = text(&created.body["flowId"]);
    // Instances 0 and 1 execute; instance 2 observes over SSE and over a WebSocket.
    let mut sse = EventStream::open(&api, &format!("{}/event?flowId={flow}", cluster.instance_url(2)), None).await;
    let mut socket =
        Socket::connect(&format!("{}/event/ws?flowId={flow}&afterSeq=0", ws(&cluster.instance_url(2))), None).await;

    let mut executions = Vec::new();
    for n in 0..6 {
        let base = cluster.instance_url(n % 2);
        let answer = api.post(&format!("{base}/execute"), execution(&upstream, &flow, n)).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        executions.push(text(&answer.body["reqExecId"]));
    }
    // Through nginx: they land on several instances.
    let mut served = BTreeSet::new();
    for n in 6..12 {
        let answer = api.post(&format!("{}/execute", cluster.url), execution(&upstream, &flow, n)).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        served.insert(instance(&cluster, &answer));
        executions.push(text(&answer.body["reqExecId"]));
    }
    assert!(served.len() >= 2, "the executions through nginx landed on {served:?}");
    let finished = api.post(&format!("{}/flows/{flow}/finish", cluster.url), json!({})).await;
    assert_eq!(finished.status, 200, "{finished:?}");
    assert_eq!(finished.body["summary"]["total"], 12, "{finished:?}");
    assert_eq!(finished.body["summary"]["succeeded"], 12, "{finished:?}");

    // flowStarted, 11 events per execution, flowFinished.
    let total = 2 + executions.len() * EXECUTION_EVENTS.len();
    let observed = sse.envelopes(total).await;
    check_flow_events(&flow, &executions, &observed.iter().map(|(_, envelope)| envelope.clone()).collect::<Vec<_>>());
    for (id, envelope) in &observed {
        assert_eq!(id.as_deref(), Some(format!("{flow}:{}", envelope["seq"]).as_str()), "{envelope}");
    }
    let mut over_socket = Vec::new();
    while over_socket.len() < total {
        let envelope = socket.next().await;
        if envelope["type"] != "heartbeat" {
            over_socket.push(envelope);
        }
    }
    check_flow_events(&flow, &executions, &over_socket);
    let originals: Vec<Value> = observed.into_iter().map(|(_, envelope)| envelope).collect();
    assert_eq!(over_socket, originals, "both streams carry the same envelopes");

    // Replay from instance 0: exactly what came after `Last-Event-ID`, as it was.
    let after = 40;
    let mut resumed = EventStream::open(
        &api,
        &format!("{}/event?flowId={flow}", cluster.instance_url(0)),
        Some(&format!("{flow}:{after}")),
    )
    .await;
    let replayed: Vec<Value> =
        resumed.envelopes(total - after).await.into_iter().map(|(_, envelope)| envelope).collect();
    assert_eq!(replayed, originals[after..], "the events after {after}, as first published");
    // And over a WebSocket with `afterSeq`, from instance 1.
    let mut resumed =
        Socket::connect(&format!("{}/event/ws?flowId={flow}&afterSeq={after}", ws(&cluster.instance_url(1))), None)
            .await;
    let mut replayed = Vec::new();
    while replayed.len() < total - after {
        replayed.push(resumed.next().await);
    }
    assert_eq!(replayed, originals[after..], "the events after {after} over /event/ws");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_sessions_cookies_and_stored_executions_are_shared() {
    let upstream = TestServer::start().await;
    let cluster = Cluster::start(ClusterOptions::new(3)).await;
    let api = Api::new(None);
    let [a, b, c] = [0, 1, 2].map(|index| cluster.instance_url(index));

    let created =
        api.post(&format!("{a}/session"), json!({ "variables": { "base": upstream.base_url(), "who": "ada" } })).await;
    assert_eq!(created.status, 201, "{created:?}");
    let session = text(&created.body["sessionId"]);

    // Variables set on A are seen by an execution on B.
    let answer = api
        .post(&format!("{b}/execute"), json!({ "content": "GET {{base}}/echo?who={{who}}\n", "sessionId": session }))
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["session"]["sessionId"], session.as_str(), "{answer:?}");
    assert_eq!(upstream_body(&answer)["query"], "who=ada", "{answer:?}");

    // A cookie the upstream set in an execution on B is sent by the next one, on C.
    let answer = api
        .post(
            &format!("{b}/execute"),
            json!({ "content": "GET {{base}}/cookies/set?cluster=c1\n", "sessionId": session }),
        )
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let answer =
        api.post(&format!("{c}/execute"), json!({ "content": "GET {{base}}/cookies\n", "sessionId": session })).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(upstream_body(&answer)["cookies"], json!({ "cluster": "c1" }), "{answer:?}");
    let viewed = api.get(&format!("{c}/session/{session}")).await;
    assert_eq!(viewed.status, 200, "{viewed:?}");
    assert_eq!(viewed.body["cookieCount"], 1, "{viewed:?}");
    assert_eq!(viewed.body["variables"]["who"], "ada", "{viewed:?}");

    // Variables changed on C are used on A.
    let updated =
        api.put(&format!("{c}/session/{session}/variables"), json!({ "variables": { "who": "grace" } })).await;
    assert_eq!(updated.status, 200, "{updated:?}");
    let answer = api
        .post(&format!("{a}/execute"), json!({ "content": "GET {{base}}/echo?who={{who}}\n", "sessionId": session }))
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(upstream_body(&answer)["query"], "who=grace", "{answer:?}");

    // A named request's response on A is chained by an execution on B.
    let answer = api
        .post(
            &format!("{a}/execute"),
            json!({ "content": "# @name login\nGET {{base}}/echo?token=t-42\n", "sessionId": session }),
        )
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let answer = api
        .post(
            &format!("{b}/execute"),
            json!({ "content": "GET {{base}}/echo?again={{login.response.body.$.query}}\n", "sessionId": session }),
        )
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(upstream_body(&answer)["query"], "again=token=t-42", "{answer:?}");

    // An execution stored on B is read on C, and on A.
    let created = api.post(&format!("{a}/flows"), json!({ "sessionId": session })).await;
    assert_eq!(created.status, 201, "{created:?}");
    let flow = text(&created.body["flowId"]);
    let answer = api
        .post(
            &format!("{b}/execute"),
            json!({ "content": "# @name stored\nGET {{base}}/echo?stored=1\n", "flowId": flow }),
        )
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["session"]["sessionId"], session.as_str(), "the flow's session: {answer:?}");
    let exec = text(&answer.body["reqExecId"]);
    for base in [&c, &a] {
        let stored = api.get(&format!("{base}/flows/{flow}/executions/{exec}")).await;
        assert_eq!(stored.status, 200, "{stored:?}");
        let stored = &stored.body;
        assert_eq!(stored["reqExecId"], exec.as_str(), "{stored}");
        assert_eq!(stored["flowId"], flow.as_str(), "{stored}");
        assert_eq!(stored["sessionId"], session.as_str(), "{stored}");
        assert_eq!(stored["method"], "GET", "{stored}");
        assert_eq!(stored["urlResolved"], upstream.url("/echo?stored=1"), "{stored}");
        assert_eq!(stored["status"], "success", "{stored}");
        assert_eq!(stored["response"]["status"], 200, "{stored}");
    }
    let missing = api.get(&format!("{c}/flows/{flow}/executions/exec_missing")).await;
    assert_eq!((missing.status, code(&missing)), (404, "EXECUTION_NOT_FOUND"), "{missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_a_websocket_session_opened_on_one_instance_is_driven_from_another() {
    let upstream = TestServer::start().await;
    let cluster = Cluster::start(ClusterOptions::new(3)).await;
    let api = Api::new(None);
    let [a, b] = [0, 1].map(|index| cluster.instance_url(index));

    let id = open_echo_session(&api, &a, &upstream).await;
    let control = format!("{}/ws/session/{id}", ws(&b));
    let mut socket = Socket::connect(&format!("{control}?afterSeq=0"), None).await;
    let opened = socket.expect("session.opened").await;
    assert_eq!(opened["seq"], 1, "{opened}");
    assert_eq!(opened["payload"]["upstreamUrl"], ws_url(&upstream), "{opened}");
    let end = socket.expect("session.replay.end").await;
    assert_eq!(end["payload"], json!({ "afterSeq": 0, "replayed": 1, "gap": false }), "{end}");

    // From B to the upstream (through A's connection) and back to B.
    socket.send(json!({ "type": "session.send", "payload": "from b" })).await;
    let outbound = socket.expect("session.outbound").await;
    let inbound = socket.expect("session.inbound").await;
    for (envelope, seq) in [(&outbound, 2), (&inbound, 3)] {
        assert_eq!(envelope["seq"], seq, "{envelope}");
        assert_eq!(envelope["payload"], "from b", "{envelope}");
        assert_eq!(envelope["payloadType"], "text", "{envelope}");
        assert_eq!(envelope["wsSessionId"], id.as_str(), "{envelope}");
    }
    socket.send(json!({ "type": "session.send", "payload": { "n": 1 } })).await;
    let json_in = socket.until("session.inbound").await;
    assert_eq!(json_in.last().map(|envelope| envelope["payload"].clone()), Some(json!({ "n": 1 })));

    // A second control socket on B, replaying after seq 1, replaces the first.
    let mut again = Socket::connect(&format!("{control}?afterSeq=1"), None).await;
    let (replayed, end) = again.replay().await;
    assert_eq!(kinds(&replayed), ["session.outbound", "session.inbound", "session.outbound", "session.inbound"]);
    assert_eq!(replayed[0], outbound);
    assert_eq!(replayed[1], inbound);
    assert_eq!(end["payload"], json!({ "afterSeq": 1, "replayed": 4, "gap": false }), "{end}");
    assert_eq!(socket.closed().await, Some(1000), "the replaced socket is closed with 1000");

    // session.close from B closes the upstream connection A holds.
    again.send(json!({ "type": "session.close", "code": 1000, "reason": "done" })).await;
    let closed = again.expect("session.closed").await;
    assert_eq!(closed["payload"]["code"], 1000, "{closed}");
    assert_eq!(again.closed().await, Some(1000));
    // The session is gone on every instance.
    for index in 0..cluster.len() {
        let url = format!("{}/ws/session/{id}", cluster.instance_url(index));
        let gone = eventually(|| async { api.get(&url).await }, |answer| answer.status == 404).await;
        assert_eq!(code(&gone), "WS_SESSION_NOT_FOUND", "instance {index}: {gone:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_a_websocket_session_ends_for_its_client_when_its_owner_dies() {
    let upstream = TestServer::start().await;
    let mut cluster = Cluster::start(ClusterOptions::new(3)).await;
    let api = Api::new(None);

    let id = open_echo_session(&api, &cluster.instance_url(0), &upstream).await;
    let mut socket =
        Socket::connect(&format!("{}/ws/session/{id}?afterSeq=0", ws(&cluster.instance_url(1))), None).await;
    socket.expect("session.opened").await;
    socket.expect("session.replay.end").await;
    socket.send(json!({ "type": "session.send", "payload": "alive" })).await;
    socket.until("session.inbound").await;

    cluster.kill(0);
    // The owner's liveness key expires within seconds: B tells its client, never hangs.
    let started = std::time::Instant::now();
    let error = socket.expect("session.error").await;
    assert_eq!(error["error"]["code"], "WS_UPSTREAM_ERROR", "{error}");
    assert!(error["error"]["message"].is_string(), "{error}");
    let closed = socket.expect("session.closed").await;
    assert_eq!(closed["payload"]["code"], 1006, "{closed}");
    assert_eq!(closed["payload"]["wasClean"], false, "{closed}");
    assert!(socket.closed().await.is_some(), "the control socket closes after session.closed");
    assert!(started.elapsed() < READ, "ended after {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_a_restart_of_every_instance_keeps_replay_and_stored_executions() {
    let upstream = TestServer::start().await;
    let mut cluster = Cluster::start(ClusterOptions::new(3)).await;
    let api = Api::new(None);

    let created = api.post(&format!("{}/flows", cluster.url), json!({})).await;
    assert_eq!(created.status, 201, "{created:?}");
    let flow = text(&created.body["flowId"]);
    let mut executions = Vec::new();
    for n in 0..3 {
        let answer = api.post(&format!("{}/execute", cluster.url), execution(&upstream, &flow, n)).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        executions.push(text(&answer.body["reqExecId"]));
    }
    let total = 1 + executions.len() * EXECUTION_EVENTS.len();
    let before: Vec<Value> = {
        let url = format!("{}/event?flowId={flow}", cluster.instance_url(1));
        let mut sse = EventStream::open(&api, &url, None).await;
        sse.envelopes(total).await.into_iter().map(|(_, envelope)| envelope).collect()
    };

    cluster.restart_all().await;

    let mut sse = EventStream::open(&api, &format!("{}/event?flowId={flow}", cluster.instance_url(2)), None).await;
    let after: Vec<Value> = sse.envelopes(total).await.into_iter().map(|(_, envelope)| envelope).collect();
    assert_eq!(after, before, "the flow's events replay after the restart");
    for (index, exec) in executions.iter().enumerate() {
        let stored = api.get(&format!("{}/flows/{flow}/executions/{exec}", cluster.instance_url(index % 3))).await;
        assert_eq!(stored.status, 200, "{stored:?}");
        assert_eq!(stored.body["status"], "success", "{stored:?}");
        assert_eq!(stored.body["response"]["status"], 200, "{stored:?}");
    }
    // The flow goes on: its next events follow the old ones, live on the same stream.
    let answer = api.post(&format!("{}/execute", cluster.url), execution(&upstream, &flow, 3)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    executions.push(text(&answer.body["reqExecId"]));
    let finished = api.post(&format!("{}/flows/{flow}/finish", cluster.url), json!({})).await;
    assert_eq!(finished.status, 200, "{finished:?}");
    let mut all = after;
    all.extend(sse.envelopes(EXECUTION_EVENTS.len() + 1).await.into_iter().map(|(_, envelope)| envelope));
    check_flow_events(&flow, &executions, &all);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_the_session_limit_counts_every_instance() {
    let cluster = Cluster::start(ClusterOptions::new(3).serve_arg("--max-sessions").serve_arg("2")).await;
    let api = Api::new(None);

    let mut sessions = Vec::new();
    for _ in 0..2 {
        let created = api.post(&format!("{}/session", cluster.url), json!({})).await;
        assert_eq!(created.status, 201, "{created:?}");
        sessions.push(text(&created.body["sessionId"]));
    }
    for index in 0..cluster.len() {
        let refused = api.post(&format!("{}/session", cluster.instance_url(index)), json!({})).await;
        assert_eq!((refused.status, code(&refused)), (429, "SESSION_LIMIT_REACHED"), "instance {index}: {refused:?}");
        assert_eq!(refused.body["error"]["details"]["limit"], 2, "{refused:?}");
    }
    // A session removed on one instance frees its place for every instance.
    let removed = api.delete(&format!("{}/session/{}", cluster.instance_url(2), sessions[0])).await;
    assert_eq!(removed.status, 204, "{removed:?}");
    let created = api.post(&format!("{}/session", cluster.instance_url(1)), json!({})).await;
    assert_eq!(created.status, 201, "{created:?}");
    let refused = api.post(&format!("{}/session", cluster.instance_url(0)), json!({})).await;
    assert_eq!((refused.status, code(&refused)), (429, "SESSION_LIMIT_REACHED"), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_scoped_tokens_and_their_revocation_hold_on_every_instance() {
    let upstream = TestServer::start().await;
    let cluster = Cluster::start(ClusterOptions::new(3).token(MAIN)).await;
    let main = Api::new(Some(MAIN));
    let [a, b, c] = [0, 1, 2].map(|index| cluster.instance_url(index));

    let created = main.post(&format!("{a}/flows"), json!({})).await;
    assert_eq!(created.status, 201, "{created:?}");
    let flow = text(&created.body["flowId"]);
    let issued = main.post(&format!("{a}/tokens"), json!({ "flowId": flow })).await;
    assert_eq!(issued.status, 201, "{issued:?}");
    let scoped = Api::new(Some(issued.body["token"].as_str().expect("token")));
    let jti = text(&issued.body["jti"]);

    // Issued on A, it works on B (and its execution is read on C).
    let answer = scoped.post(&format!("{b}/execute"), execution(&upstream, &flow, 0)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let exec = text(&answer.body["reqExecId"]);
    let stored = scoped.get(&format!("{c}/flows/{flow}/executions/{exec}")).await;
    assert_eq!(stored.status, 200, "{stored:?}");
    // Still only a scoped token there.
    let forbidden = scoped.post(&format!("{b}/session"), json!({})).await;
    assert_eq!((forbidden.status, code(&forbidden)), (403, "FORBIDDEN"), "{forbidden:?}");

    // Revoked on C: refused on A and B from then on.
    let revoked = main.delete(&format!("{c}/tokens/{jti}")).await;
    assert_eq!(revoked.status, 204, "{revoked:?}");
    for base in [&a, &b] {
        let refused = scoped.post(&format!("{base}/execute"), execution(&upstream, &flow, 1)).await;
        assert_eq!((refused.status, code(&refused)), (401, "UNAUTHORIZED"), "{base}: {refused:?}");
    }
    let again = main.delete(&format!("{b}/tokens/{jti}")).await;
    assert_eq!((again.status, code(&again)), (404, "NOT_FOUND"), "{again:?}");
}

/// Checks a flow's whole stream: `seq` 1, 2, 3, … without gaps, `flowStarted` first and
/// `flowFinished` last when there, each execution's events complete and in order.
fn check_flow_events(flow: &str, executions: &[String], envelopes: &[Value]) {
    let seqs: Vec<u64> = envelopes.iter().map(|envelope| envelope["seq"].as_u64().expect("seq")).collect();
    let expected: Vec<u64> = (1..=envelopes.len() as u64).collect();
    assert_eq!(seqs, expected, "seq counts the flow's events without gaps");
    assert_eq!(envelopes[0]["type"], "flowStarted", "{}", envelopes[0]);
    let mut by_execution: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for envelope in envelopes {
        assert_eq!(envelope["flowId"], flow, "{envelope}");
        let kind = envelope["type"].as_str().expect("type");
        match envelope["reqExecId"].as_str() {
            Some(exec) => by_execution.entry(exec).or_default().push(kind),
            None => assert!(matches!(kind, "flowStarted" | "flowFinished"), "{envelope}"),
        }
    }
    let seen: BTreeSet<&str> = by_execution.keys().copied().collect();
    let made: BTreeSet<&str> = executions.iter().map(String::as_str).collect();
    assert_eq!(seen, made, "every execution, and only them");
    for (exec, kinds) in by_execution {
        assert_eq!(kinds, EXECUTION_EVENTS, "the events of {exec}");
    }
}

/// The `/execute` body of execution `n` of a flow: a `GET` of the upstream's `/echo`
/// with an `@assert`, written out (no session, no variables).
fn execution(upstream: &TestServer, flow: &str, n: usize) -> Value {
    let content = format!("# @assert status == 200\nGET {}\n", upstream.url(&format!("/echo?n={n}")));
    json!({ "content": content, "flowId": flow, "reqLabel": format!("execution {n}") })
}

/// Opens a session on the upstream's `/ws/echo` through `base`; its id.
async fn open_echo_session(api: &Api, base: &str, upstream: &TestServer) -> String {
    let answer =
        api.post(&format!("{base}/execute/ws"), json!({ "content": format!("GET {}\n", ws_url(upstream)) })).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["ws"]["lastSeq"], 1, "{answer:?}");
    text(&answer.body["ws"]["wsSessionId"])
}

fn ws_url(upstream: &TestServer) -> String {
    upstream.url("/ws/echo").replacen("http", "ws", 1)
}

/// `ws://…` of an `http://…` base.
fn ws(base: &str) -> String {
    base.replacen("http", "ws", 1)
}

/// The upstream's answer of an `/execute` answer, as JSON.
fn upstream_body(answer: &Answer) -> Value {
    serde_json::from_str(answer.body["response"]["body"].as_str().expect("a response body")).expect("JSON")
}

/// Which instance served an answer that came through nginx.
fn instance(cluster: &Cluster, answer: &Answer) -> usize {
    let tried = answer.upstream.as_deref().expect("nginx names the instance");
    cluster.instance_of(tried).unwrap_or_else(|| panic!("{tried} is not an instance"))
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_else(|| panic!("expected a string, got {value}")).to_owned()
}

fn code(answer: &Answer) -> &str {
    answer.body["error"]["code"].as_str().unwrap_or_default()
}

fn kinds(envelopes: &[Value]) -> Vec<&str> {
    envelopes.iter().map(|envelope| envelope["type"].as_str().expect("type")).collect()
}

/// `attempt` until `done` holds, for up to 5 seconds: for what another instance learns
/// a moment later (a removal); the last answer either way.
async fn eventually<F, T>(attempt: impl Fn() -> F, done: impl Fn(&T) -> bool) -> T
where
    F: Future<Output = T>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let value = attempt().await;
        if done(&value) || std::time::Instant::now() >= deadline {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
