//! gRPC calls through `volley serve` against the echo server's tonic `GrpcServer`:
//! `/execute/sse` relays a call's response messages as events while it runs, then its
//! end; observers hear each message as `grpcMessage`.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::fmt::Write as _;

use serde_json::{Value, json};
use volley_echo_server::{GrpcOptions, GrpcServer};
use volley_server::ServerConfig;

use crate::support::{Observer, client, post, start};

/// `POST /execute/sse` of `content` in `flow`.
async fn relay(http: &reqwest::Client, base: &str, content: &str, flow: &str) -> reqwest::Response {
    http.post(format!("{base}/execute/sse"))
        .header("content-type", "application/json")
        .body(json!({ "content": content, "flowId": flow }).to_string())
        .send()
        .await
        .expect("execute/sse")
}

/// A gRPC server, an execution server, a flow and an observer of it.
struct Setup {
    upstream: GrpcServer,
    server: crate::support::Running,
    http: reqwest::Client,
    flow: String,
}

async fn setup() -> (Setup, Observer) {
    let upstream = GrpcServer::start(GrpcOptions::default()).await;
    let server = start(ServerConfig::default()).await;
    let http = client();
    let (_, flow) = post(&http, format!("{}/flows", server.base), json!({})).await;
    let flow = flow["flowId"].as_str().unwrap().to_owned();
    let observer = Observer::open(&http, format!("{}/event?flowId={flow}", server.base)).await;
    (Setup { upstream, server, http, flow }, observer)
}

#[tokio::test]
async fn a_streamed_call_is_relayed_message_by_message_then_its_result() {
    let (Setup { upstream, server, http, flow }, mut observer) = setup().await;
    let content =
        format!("# @assert grpc-status == OK\nGRPC {}/shop.v1.Orders/List\n\n{{\"count\": 3}}\n", upstream.authority());
    let response = relay(&http, &server.base, &content, &flow).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert!(response.headers()["x-volley-req-exec-id"].to_str().unwrap().starts_with("exec"));
    let mut relayed = Observer::reading(response);
    for number in 1..=3 {
        let event = relayed.next().await.expect("a message");
        assert_eq!((event.event.as_str(), event.id.as_deref()), ("message", Some(number.to_string().as_str())));
        let message: Value = serde_json::from_str(&event.data).unwrap();
        assert_eq!(message["id"], format!("order-{number}"), "{message}");
    }
    let result = relayed.next().await.expect("the result");
    assert_eq!(result.event, "result");
    let answer: Value = serde_json::from_str(&result.data).unwrap();
    let grpc = &answer["response"]["grpc"];
    assert_eq!((grpc["code"].as_str(), grpc["kind"].as_str()), (Some("OK"), Some("server-streaming")), "{answer}");
    // The messages were the events: the answer does not carry them again.
    assert_eq!(answer["response"]["bodyMode"], "none");
    assert!(answer["response"].get("body").is_none());
    assert_eq!(answer["assertions"]["passed"], true, "{answer}");
    assert!(relayed.next().await.is_none(), "the relay ends after the result");

    let events = observer.until("executionFinished").await;
    let numbers: Vec<u64> = events
        .iter()
        .filter(|event| event.event == "grpcMessage")
        .map(|event| event.json::<Value>().unwrap()["payload"]["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3]);
    let end: Value = events.last().unwrap().json().unwrap();
    assert_eq!(end["payload"]["events"], 3, "{end}");
}

#[tokio::test]
async fn a_unary_call_is_one_message_then_its_result_and_a_mistake_is_answered_before() {
    let (Setup { upstream, server, http, flow }, _observer) = setup().await;
    let content = format!("GRPC {}/shop.v1.Orders/Place\n\n{{\"item\": \"fail\"}}\n", upstream.authority());
    let mut relayed = Observer::reading(relay(&http, &server.base, &content, &flow).await);
    // A status that is not OK, with no message: the result is the only event.
    let result = relayed.next().await.expect("the result");
    assert_eq!(result.event, "result");
    let answer: Value = serde_json::from_str(&result.data).unwrap();
    assert_eq!(answer["response"]["grpc"]["code"], "INVALID_ARGUMENT", "{answer}");
    assert_eq!(answer["response"]["grpc"]["details"][0]["@type"], "type.googleapis.com/google.rpc.BadRequest");

    let content = format!("GRPC {}/shop.v1.Orders/Place\n\n{{\"item\": \"tea\"}}\n", upstream.authority());
    let mut relayed = Observer::reading(relay(&http, &server.base, &content, &flow).await);
    let message = relayed.next().await.expect("the message");
    assert_eq!((message.event.as_str(), message.id.as_deref()), ("message", Some("1")));
    assert_eq!(serde_json::from_str::<Value>(&message.data).unwrap()["item"], "tea");
    assert_eq!(relayed.next().await.expect("the result").event, "result");

    // Nothing was sent: answered as `/execute` answers it, located.
    let content = format!("GRPC {}/shop.v1.Orders/Plaec\n\n{{}}\n", upstream.authority());
    let response = relay(&http, &server.base, &content, &flow).await;
    assert_eq!(response.status(), 400);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("Place"), "{body}");
}

#[tokio::test]
async fn a_client_that_leaves_mid_call_cancels_it_and_observers_are_told() {
    let (Setup { upstream, server, http, flow }, mut observer) = setup().await;
    // Each `slow` line is echoed 300 ms after it came, and the next goes only then:
    // the call lasts seconds after its first message.
    let mut content = format!("GRPC {}/shop.v1.Orders/Chat\n\n{{\"text\": \"first\"}}\n", upstream.authority());
    for round in 0..20 {
        writeln!(content, "=== wait-for-server\n{{\"text\": \"slow {round}\"}}").unwrap();
    }
    let mut relayed = Observer::reading(relay(&http, &server.base, &content, &flow).await);
    let first = relayed.next().await.expect("the first echo");
    assert_eq!(first.event, "message");
    assert!(first.data.contains("echo: first"), "{}", first.data);
    drop(relayed);
    let events = observer.until("executionFailed").await;
    let failed: Value = events.last().unwrap().json().unwrap();
    assert_eq!(failed["payload"]["stage"], "fetch", "{failed}");
    assert!(events.iter().all(|event| event.event != "executionFinished"));
}
