//! The Redis store against a real `redis-server` (started on a free loopback port):
//! the caps, lifetimes, counts and `seq` the scripts keep. `scripts/test` installs
//! Debian's `redis-server` when it is missing.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use volley_protocol::ExecutionStatus;

use super::flows::ClusterFlows;
use super::{Cluster, Lifetimes};
use crate::clock::now_ms;
use crate::hub::{Emitter, Hub, Sequence};
use crate::store::{FlowRecord, TokenStore as _, execution};

/// A `redis-server` of its own, stopped on drop.
struct Redis {
    child: Child,
    url: String,
}

impl Redis {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("port").port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server runs (scripts/install-packages redis-server=redis-server installs it)");
        let url = format!("redis://127.0.0.1:{port}/");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "redis-server did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, url }
    }

    async fn cluster(&self, lifetimes: Lifetimes) -> Arc<Cluster> {
        Cluster::connect(&self.url, "test:", lifetimes).await.expect("connects")
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const LONG: Lifetimes = Lifetimes { session_ms: 60_000, flow_ms: 60_000 };

fn record() -> FlowRecord {
    FlowRecord { session_id: None, label: Some("checkout".to_owned()), meta: None, created_at: now_ms() }
}

#[tokio::test]
async fn flows_keep_their_newest_executions_count_outcomes_once_and_finish_once() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    assert_eq!(cluster.create_flow("flow_a", &record(), 10).await.expect("answered"), Some(None));
    for index in 0..5 {
        cluster.record_execution(&Arc::default(), "flow_a", &execution(&format!("x{index}")), 3);
    }
    let mut done = execution("x4");
    done.status = ExecutionStatus::Success;
    cluster.update_execution(&Arc::default(), "flow_a", &done, Some(ExecutionStatus::Success));
    let mut failed = execution("x1");
    failed.status = ExecutionStatus::Failed;
    // Dropped already (only the last 3 are kept): neither kept nor counted.
    cluster.update_execution(&Arc::default(), "flow_a", &failed, Some(ExecutionStatus::Failed));
    cluster.flush().await;
    assert!(cluster.execution("flow_a", "x1").await.expect("answered").is_none());
    let kept = cluster.execution("flow_a", "x4").await.expect("answered").expect("kept");
    assert_eq!(kept.status, ExecutionStatus::Success);
    let (summary, first) = cluster.finish_flow("flow_a").await.expect("answered").expect("the flow");
    assert!(first);
    assert_eq!((summary.total, summary.succeeded, summary.failed), (5, 1, 0));
    let (again, first) = cluster.finish_flow("flow_a").await.expect("answered").expect("the flow");
    assert!(!first);
    assert_eq!(
        (again.total, again.succeeded, again.duration_ms),
        (summary.total, summary.succeeded, summary.duration_ms)
    );
    assert_eq!(
        cluster.flow("flow_a", false).await.expect("answered").expect("kept").label.as_deref(),
        Some("checkout")
    );
}

#[tokio::test]
async fn flows_and_their_executions_are_listed_from_redis() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    cluster.create_flow("flow_a", &record(), 10).await.expect("answered");
    let later = FlowRecord { session_id: Some("ses_b".to_owned()), label: None, meta: None, created_at: now_ms() + 1 };
    cluster.create_flow("flow_b", &later, 10).await.expect("answered");
    for index in 0..3 {
        cluster.record_execution(&Arc::default(), "flow_a", &execution(&format!("x{index}")), 10);
    }
    let mut failed = execution("x1");
    failed.status = ExecutionStatus::Failed;
    cluster.update_execution(&Arc::default(), "flow_a", &failed, Some(ExecutionStatus::Failed));
    cluster.flush().await;
    cluster.finish_flow("flow_a").await.expect("answered");

    let mut flows = cluster.list_flows().await.expect("listed");
    flows.sort_by(|a, b| a.flow_id.cmp(&b.flow_id));
    let ids: Vec<_> = flows.iter().map(|flow| flow.flow_id.as_str()).collect();
    assert_eq!(ids, ["flow_a", "flow_b"]);
    assert!(flows[0].finished && !flows[1].finished);
    assert_eq!((flows[0].summary.total, flows[0].summary.failed), (3, 1));
    assert_eq!((flows[0].label.as_deref(), flows[1].session_id.as_deref()), (Some("checkout"), Some("ses_b")));
    let executions = cluster.executions("flow_a").await.expect("listed");
    let ids: Vec<_> = executions.iter().map(|stored| stored.req_exec_id.as_str()).collect();
    assert_eq!(ids, ["x0", "x1", "x2"]);
    assert_eq!(executions[1].status, ExecutionStatus::Failed);
    assert!(cluster.executions("flow_b").await.expect("listed").is_empty());
}

#[tokio::test]
async fn at_the_cap_the_least_recently_used_finished_flow_makes_room() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    for id in ["flow_1", "flow_2"] {
        assert_eq!(cluster.create_flow(id, &record(), 2).await.expect("answered"), Some(None));
    }
    assert_eq!(cluster.create_flow("flow_3", &record(), 2).await.expect("answered"), None, "no finished flow");
    cluster.finish_flow("flow_2").await.expect("answered");
    let evicted = cluster.create_flow("flow_3", &record(), 2).await.expect("answered");
    assert_eq!(evicted, Some(Some("flow_2".to_owned())));
    assert!(cluster.flow("flow_2", false).await.expect("answered").is_none(), "gone with its parts");
}

#[tokio::test]
async fn redis_expires_idle_sessions_and_flows() {
    let redis = Redis::start();
    let cluster = redis.cluster(Lifetimes { session_ms: 300, flow_ms: 300 }).await;
    assert!(cluster.create_session("ses_1", &Map::new(), "", 1).await.expect("answered"));
    cluster.create_flow("flow_1", &record(), 1).await.expect("answered");
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Used: it lives on.
    assert!(cluster.session("ses_1", true, 0).await.expect("answered").is_some());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(cluster.session("ses_1", false, 0).await.expect("answered").is_some(), "touched 200 ms ago");
    assert!(cluster.flow("flow_1", false).await.expect("answered").is_none(), "idle 400 ms: expired");
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(cluster.session("ses_1", false, 0).await.expect("answered").is_none());
    // The cap counts live sessions only.
    assert!(cluster.create_session("ses_2", &Map::new(), "", 1).await.expect("answered"));
}

#[tokio::test]
async fn flows_are_kept_as_every_flow_store_keeps_them() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    // What every flow store does (the memory one runs the same in store/flows.rs).
    let store = ClusterFlows(Arc::clone(&cluster));
    crate::store::check_flow_store(&store, |ledger| {
        let cluster = Arc::clone(&cluster);
        async move { cluster.settle(&ledger).await.expect("written") }
    })
    .await;
}

#[tokio::test]
async fn sessions_are_kept_as_every_session_store_keeps_them() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    // What every session store does (the memory one runs the same in store/sessions.rs).
    crate::store::check_session_store(cluster.as_ref()).await;
}

#[tokio::test]
async fn sessions_are_capped_and_versioned() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    let mut variables = Map::new();
    variables.insert("who".to_owned(), Value::from("alice"));
    assert!(cluster.create_session("ses_1", &variables, "", 1).await.expect("answered"));
    assert!(!cluster.create_session("ses_2", &Map::new(), "", 1).await.expect("answered"), "at the cap");
    let read = cluster.session("ses_1", true, 0).await.expect("answered").expect("kept");
    let (read_variables, _) = read.state.expect("another version than the one held");
    assert_eq!((read.version, read_variables.get("who")), (1, Some(&Value::from("alice"))));
    variables.insert("token".to_owned(), Value::from("t-1"));
    assert_eq!(cluster.save_session("ses_1", Some(&variables), None).await.expect("answered"), Some(2));
    assert_eq!(cluster.save_session("ses_1", None, Some("[]")).await.expect("answered"), Some(3));
    let read = cluster.session("ses_1", false, 0).await.expect("answered").expect("kept");
    let (variables, cookies) = read.state.expect("another version than the one held");
    assert_eq!((read.version, variables.len(), cookies.as_str()), (3, 2, "[]"));
    let read = cluster.session("ses_1", false, 3).await.expect("answered").expect("kept");
    assert!(read.state.is_none(), "the version held: nothing more to read");
    assert!(cluster.remove_session("ses_1").await.expect("answered"));
    assert_eq!(cluster.save_session("ses_1", Some(&variables), None).await.expect("answered"), None);
    assert!(cluster.create_session("ses_2", &Map::new(), "", 1).await.expect("answered"), "room again");
}

#[tokio::test]
async fn a_sessions_turn_is_one_at_a_time() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    let first = cluster.session_turn("ses_1").await.expect("taken");
    let other = Arc::clone(&cluster);
    let waiting = tokio::spawn(async move { other.session_turn("ses_1").await.map(drop) });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!waiting.is_finished(), "the second waits for the first");
    drop(first);
    tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("taken once freed").expect("ran").expect("ok");
}

#[tokio::test]
async fn flow_events_are_numbered_in_redis_and_replayed_from_the_flows_stream() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    let other_instance = redis.cluster(LONG).await;
    cluster.create_flow("flow_1", &record(), 10).await.expect("answered");
    let emitter = |cluster: &Arc<Cluster>| Emitter {
        hub: Arc::new(Hub::new(Arc::clone(cluster) as Arc<dyn crate::store::EventStore>)),
        run_id: Some("run_1".to_owned()),
        session_id: None,
        flow_id: Some("flow_1".to_owned()),
        req_exec_id: None,
        sequence: Sequence::Shared,
    };
    // Two instances publish into one flow: one count.
    for round in 0..3 {
        let payload =
            volley_protocol::RequestLine { method: "GET".to_owned(), url: format!("http://a/\"seq\":{round}") };
        emitter(&cluster).emit(volley_protocol::ObserverEvent::FetchStarted(payload.clone()));
        cluster.flush().await;
        emitter(&other_instance).emit(volley_protocol::ObserverEvent::FetchStarted(payload));
        other_instance.flush().await;
    }
    let (events, oldest) = cluster.retained_after("flow_1", 2).await;
    assert_eq!(oldest, Some(1));
    let seqs: Vec<u64> = events.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, [3, 4, 5, 6]);
    let envelope: Value = serde_json::from_str(&events[0].json).expect("json");
    assert_eq!(envelope["seq"], 3, "{envelope}");
    assert_eq!(envelope["payload"]["url"], "http://a/\"seq\":1", "a payload that looks like the seq is kept");
    assert_eq!(events[0].kind, "fetchStarted");
}

#[tokio::test]
async fn flow_events_are_kept_as_every_event_store_keeps_them() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    cluster.create_flow("flow_a", &record(), 10).await.expect("answered");
    // What every event store does (the memory one runs the same in store/events.rs).
    crate::store::check_event_store(cluster.as_ref(), "flow_a").await;
}

#[tokio::test]
async fn revoking_on_one_instance_revokes_everywhere() {
    let redis = Redis::start();
    let (one, two) = (redis.cluster(LONG).await, redis.cluster(LONG).await);
    // What every token store does (the memory one runs the same in store/tokens.rs).
    crate::store::check_token_store(one.as_ref()).await;
    one.issued("tok_1", now_ms() + 60_000).await.expect("kept");
    assert!(two.live("tok_1").await.expect("answered"));
    assert!(two.revoke("tok_1").await.expect("answered"));
    assert!(!one.live("tok_1").await.expect("answered"));
    assert!(!one.revoke("tok_1").await.expect("answered"));
}

#[tokio::test]
async fn chained_responses_keep_their_bytes_and_are_versioned() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    assert!(cluster.create_session("ses_1", &Map::new(), "", 1).await.expect("answered"));
    let mut headers = http::HeaderMap::new();
    headers.insert("x-token", http::HeaderValue::from_bytes(b"t\xff-1").expect("a value"));
    headers.append("set-cookie", http::HeaderValue::from_static("a=1"));
    headers.append("set-cookie", http::HeaderValue::from_static("b=2"));
    let response = volley_engine::stages::ChainedResponse {
        status: 201,
        headers,
        body: bytes::Bytes::from_static(b"\x00\x01 not text"),
    };
    assert_eq!(cluster.save_chained("ses_1", "login", &response).await.expect("answered"), Some(1));
    assert_eq!(cluster.save_chained("ses_1", "login", &response).await.expect("answered"), Some(2));
    let read = cluster.session("ses_1", false, 0).await.expect("answered").expect("kept");
    assert_eq!(read.chain, 2);
    let chained = cluster.chained("ses_1").await.expect("answered");
    assert_eq!(chained, [("login".to_owned(), response.clone())]);
    cluster.remove_session("ses_1").await.expect("answered");
    assert!(cluster.chained("ses_1").await.expect("answered").is_empty(), "removed with the session");
    assert_eq!(cluster.save_chained("ses_1", "login", &response).await.expect("answered"), None);
}

#[test]
fn the_seq_marker_is_the_placeholder_as_written() {
    let json = format!(r#"{{"payload":{{"url":"\"seq\":{0}"}},"seq":{0},"ts":1}}"#, crate::hub::SEQ_PLACEHOLDER);
    let (head, tail) = super::events::split_at_seq(&json).expect("a placeholder");
    assert_eq!(format!("{head}7{tail}"), r#"{"payload":{"url":"\"seq\":18446744073709551615"},"seq":7,"ts":1}"#);
    assert!(super::events::split_at_seq(r#"{"seq":3}"#).is_none());
}

#[tokio::test]
async fn an_event_outside_a_flow_is_written_as_its_envelope() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    let hub = Arc::new(Hub::new(Arc::clone(&cluster) as Arc<dyn crate::store::EventStore>));
    let _observer = hub.listen().await;
    let emitter = run_emitter(&hub);
    emitter.emit(volley_protocol::ObserverEvent::FetchStarted(volley_protocol::RequestLine::default()));
    cluster.flush().await;
    let written: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
        .arg(cluster.keys.events())
        .arg("-")
        .arg("+")
        .query_async(&mut cluster.connection())
        .await
        .expect("read");
    let entry = written.ids.first().expect("written");
    let json = super::text(&entry.map, "j").expect("an envelope");
    let envelope: Value = serde_json::from_str(&json).unwrap_or_else(|error| panic!("{error}: {json}"));
    assert_eq!((envelope["type"].as_str(), envelope["seq"].as_u64()), (Some("fetchStarted"), Some(1)));
    assert_eq!(super::text(&entry.map, "q").as_deref(), Some("1"));
}

/// Pauses every client of `redis` for `pause` (as a Redis far behind the instances).
async fn pause(redis: &Redis, pause: Duration) {
    let client = redis::Client::open(redis.url.as_str()).expect("a URL");
    let mut connection = client.get_multiplexed_async_connection().await.expect("connects");
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(pause.as_millis() as u64)
        .arg("ALL")
        .query_async(&mut connection)
        .await
        .expect("paused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_write_queue_full_stored_executions_wait_for_room() {
    let redis = Redis::start();
    let cluster = Cluster::connect_with_queue(&redis.url, "test:", LONG, 2).await.expect("connects");
    cluster.create_flow("flow_a", &record(), 10).await.expect("answered");
    pause(&redis, Duration::from_millis(300)).await;
    let ledger = Arc::default();
    for index in 0..40 {
        cluster.record_execution(&ledger, "flow_a", &execution(&format!("x{index}")), 100);
    }
    assert!(ledger.has_waiting(), "a queue of 2 is full: the writes wait in their execution's ledger");
    cluster.settle(&ledger).await.expect("every write reached Redis");
    assert_eq!(cluster.executions("flow_a").await.expect("listed").len(), 40, "none was dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_execution_redis_refused_is_an_error_for_its_execution() {
    let mut redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    cluster.create_flow("flow_a", &record(), 10).await.expect("answered");
    let ledger = Arc::default();
    cluster.record_execution(&ledger, "flow_a", &execution("x1"), 100);
    cluster.settle(&ledger).await.expect("written");
    let _ = redis.child.kill();
    let _ = redis.child.wait();
    let mut done = execution("x1");
    done.status = ExecutionStatus::Success;
    cluster.update_execution(&ledger, "flow_a", &done, Some(ExecutionStatus::Success));
    let started = std::time::Instant::now();
    assert_eq!(cluster.settle(&ledger).await, Err(crate::store::NotStored { writes: 1 }));
    assert!(started.elapsed() <= super::writes::SETTLE_WAIT + Duration::from_secs(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observers_are_told_how_many_events_the_full_queue_dropped() {
    let redis = Redis::start();
    let cluster = Cluster::connect_with_queue(&redis.url, "test:", LONG, 2).await.expect("connects");
    let hub = Arc::new(Hub::new(Arc::clone(&cluster) as Arc<dyn crate::store::EventStore>));
    cluster.start(&hub);
    let mut observer = hub.listen().await;
    let emitter = run_emitter(&hub);
    pause(&redis, Duration::from_millis(300)).await;
    let published: u64 = 50;
    for _ in 0..published {
        emitter.emit(volley_protocol::ObserverEvent::FetchStarted(volley_protocol::RequestLine::default()));
    }
    let (mut heard, mut missed) = (0, 0);
    while heard + missed < published {
        let event = tokio::time::timeout(Duration::from_secs(5), observer.recv())
            .await
            .unwrap_or_else(|_| panic!("{heard} heard and {missed} told missed of {published}"))
            .expect("an event");
        match event.missed() {
            Some(count) => missed += count,
            None => heard += 1,
        }
    }
    assert!(missed > 0, "a queue of 2 dropped some");
    assert_eq!(heard + missed, published);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relay_hears_what_is_published_right_after_the_instance_connected() {
    let redis = Redis::start();
    let cluster = redis.cluster(LONG).await;
    let hub = Arc::new(Hub::new(Arc::clone(&cluster) as Arc<dyn crate::store::EventStore>));
    cluster.start(&hub);
    let mut observer = hub.listen().await;
    let emitter = run_emitter(&hub);
    emitter.emit(volley_protocol::ObserverEvent::FetchStarted(volley_protocol::RequestLine::default()));
    let event = tokio::time::timeout(Duration::from_secs(5), observer.recv()).await.expect("heard").expect("an event");
    let envelope: Value = serde_json::from_str(&event.json).unwrap_or_else(|error| panic!("{error}: {}", event.json));
    assert_eq!((envelope["type"].as_str(), envelope["seq"].as_u64()), (Some("fetchStarted"), Some(1)));
    assert_eq!(event.seq, 1);
}

#[test]
fn losses_are_logged_at_every_power_of_two_they_pass() {
    let logged: Vec<u64> = (0..20).filter(|&before| super::writes::crossed_power_of_two(before, 1)).collect();
    assert_eq!(logged, [0, 1, 3, 7, 15], "the 1st, 2nd, 4th, 8th and 16th loss");
    assert!(super::writes::crossed_power_of_two(5, 10), "5 + 10 passes 8");
    assert!(!super::writes::crossed_power_of_two(9, 3));
    assert!(!super::writes::crossed_power_of_two(0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_write_queue_full_a_websocket_session_waits_for_its_mirror() {
    let redis = Redis::start();
    let cluster = Cluster::connect_with_queue(&redis.url, "test:", LONG, 2).await.expect("connects");
    let sessions = crate::ws::WsSessions::new(1);
    let new = crate::ws::NewSession {
        flow_id: None,
        session_id: None,
        req_exec_id: None,
        replay_capacity: 100,
        idle_timeout: Duration::from_secs(60),
        max_frame: 1024,
        emitter: Emitter {
            hub: Arc::new(Hub::default()),
            run_id: None,
            session_id: None,
            flow_id: None,
            req_exec_id: None,
            sequence: Sequence::run(),
        },
        redactor: volley_engine::redact::Redactor::default(),
        mirror: crate::ws::Mirror {
            store: Arc::new(super::ws::ClusterWs(Arc::clone(&cluster))),
            writes: Arc::clone(&cluster) as _,
            lifetime: Duration::from_secs(60),
        },
    };
    let session = sessions.add(sessions.reserve().expect("a slot"), new, tokio::sync::mpsc::channel(1).0);
    pause(&redis, Duration::from_millis(300)).await;
    for _ in 0..40 {
        session.publish(volley_protocol::SessionEnvelopeKind::Inbound, serde_json::json!({})).await;
    }
    cluster.flush().await;
    let mirrored: usize = redis::cmd("XLEN")
        .arg(cluster.keys.ws_part(&session.id, "envelopes"))
        .query_async(&mut cluster.connection())
        .await
        .expect("read");
    assert_eq!(mirrored, 40, "every envelope reached the session's stream in Redis");
}

/// An emitter of events outside a flow, for run `run_1`.
fn run_emitter(hub: &Arc<Hub>) -> Emitter {
    Emitter {
        hub: Arc::clone(hub),
        run_id: Some("run_1".to_owned()),
        session_id: None,
        flow_id: None,
        req_exec_id: None,
        sequence: Sequence::run(),
    }
}
