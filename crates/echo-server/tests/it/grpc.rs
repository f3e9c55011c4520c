//! The tonic gRPC server (`GrpcServer`, feature `grpc`) through volley-grpc's client:
//! every kind of call as `tests/grpc/server.mjs` answers it, the rich error details only
//! this server sends, server reflection v1 and v1alpha (and none when asked), and TLS.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_NO_PAD as BASE64;
use prost::Message as _;
use serde_json::{Value, json};
use volley_echo_server::{GrpcOptions, GrpcServer, TestPki};
use volley_grpc::{CallOutcome, Code, Outgoing, Schema, Settings, Target, call};

/// An upper bound for calls that should answer at once, so a broken server fails the test
/// instead of hanging it.
const PROMPTLY: Duration = Duration::from_secs(10);

fn settings() -> Settings {
    Settings { timeout: Some(PROMPTLY), ..Settings::default() }
}

/// `tests/grpc/protos/shop.proto`, compiled by volley-grpc (not the server's copy).
fn schema() -> Schema {
    let protos = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/grpc/protos");
    Schema::compile(&[protos.join("shop.proto")], &[protos]).expect("shop.proto compiles")
}

fn target(server: &GrpcServer, scheme: &str, method: &str) -> Target {
    Target::parse(&format!("{scheme}{}/shop.v1.Orders/{method}", server.authority())).expect("a target")
}

fn messages(jsons: &[&str]) -> Vec<Outgoing> {
    jsons.iter().map(|json| Outgoing::message(*json)).collect()
}

/// Calls `method` of `shop.v1.Orders` over plaintext HTTP/2.
async fn call_orders(
    server: &GrpcServer,
    method: &str,
    metadata: &[(&str, &str)],
    outgoing: &[Outgoing],
) -> CallOutcome {
    let schema = schema();
    let descriptor = schema.method("shop.v1.Orders", method).expect("shop.v1.Orders has the method");
    let metadata: Vec<(String, String)> =
        metadata.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect();
    call(&target(server, "", method), &descriptor, &metadata, outgoing, &settings())
        .await
        .expect("the call is answered")
}

fn texts(outcome: &CallOutcome) -> Vec<&str> {
    outcome.messages.iter().map(|line| line["text"].as_str().expect("a text")).collect()
}

#[tokio::test]
async fn every_kind_of_call_answers_as_the_grpc_js_server_does() {
    let server = GrpcServer::start(GrpcOptions::default()).await;

    let request = r#"{"item": "tea", "quantity": "9007199254740993", "price": {"currency": "EUR", "units": 3},
                      "at": "2026-11-28T10:00:00Z"}"#;
    let placed = call_orders(&server, "Place", &[("x-request-id", "r-1")], &messages(&[request])).await;
    assert!(placed.status.is_ok(), "{:?}", placed.status);
    assert_eq!(
        placed.messages,
        [json!({"id": "order-1", "item": "tea", "quantity": "9007199254740993",
                "price": {"currency": "EUR", "units": "3", "nanos": 0}, "at": "2026-11-28T10:00:00Z",
                "requestId": "r-1"})]
    );
    assert!(placed.headers.contains(&("x-served-by".to_owned(), "tonic".to_owned())), "{:?}", placed.headers);
    let anonymous = call_orders(&server, "Place", &[], &messages(&[r#"{"item": "tea"}"#])).await;
    assert_eq!(anonymous.messages[0]["requestId"], "", "no x-request-id, an empty one");

    let listed = call_orders(&server, "List", &[], &messages(&[r#"{"count": 3}"#])).await;
    let orders: Vec<(&str, &str, &str)> = listed
        .messages
        .iter()
        .map(|order| {
            (
                order["id"].as_str().unwrap_or(""),
                order["item"].as_str().unwrap_or(""),
                order["quantity"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(orders, [("order-1", "item 1", "1"), ("order-2", "item 2", "2"), ("order-3", "item 3", "3")]);

    let amounts = [r#"{"currency": "EUR", "units": 10}"#, r#"{"currency": "USD", "units": "9007199254740993"}"#];
    let summed = call_orders(&server, "Total", &[], &messages(&amounts)).await;
    assert_eq!(summed.messages, [json!({"currency": "USD", "units": "9007199254741003", "nanos": 0})]);

    let chatted = call_orders(&server, "Chat", &[], &messages(&[r#"{"text": "hello"}"#, r#"{"text": "again"}"#])).await;
    let positions: Vec<&Value> = chatted.messages.iter().map(|line| &line["position"]).collect();
    assert_eq!(positions, [&json!(1), &json!(2)]);
    assert_eq!(texts(&chatted), ["echo: hello", "echo: again"]);
    // A slow line is echoed 300 ms later with the lines heard by then: both when the next
    // line goes at once, one when the client waits for the echo first.
    let at_once =
        call_orders(&server, "Chat", &[], &messages(&[r#"{"text": "slow one"}"#, r#"{"text": "two"}"#])).await;
    assert_eq!(texts(&at_once), ["echo: two", "echo: slow one (heard 2)"]);
    let waiting = [
        Outgoing::message(r#"{"text": "slow one"}"#),
        Outgoing { wait_for_server: 1, json: Some(r#"{"text": "two"}"#.to_owned()) },
        Outgoing { wait_for_server: 1, json: None },
    ];
    let waited = call_orders(&server, "Chat", &[], &waiting).await;
    assert_eq!(texts(&waited), ["echo: slow one (heard 1)", "echo: two"]);
}

/// `google.rpc.Status`, `google.rpc.BadRequest` and its `FieldViolation`, written here again
/// so that the test reads the details independently of the server's definitions.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
    #[prost(message, repeated, tag = "3")]
    details: Vec<prost_types::Any>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct BadRequest {
    #[prost(message, repeated, tag = "1")]
    field_violations: Vec<FieldViolation>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct FieldViolation {
    #[prost(string, tag = "1")]
    field: String,
    #[prost(string, tag = "2")]
    description: String,
}

#[tokio::test]
async fn a_failed_place_carries_a_bad_request_and_a_slow_one_meets_the_deadline() {
    let server = GrpcServer::start(GrpcOptions::default()).await;
    let failed = call_orders(&server, "Place", &[], &messages(&[r#"{"item": "fail"}"#])).await;
    assert_eq!(failed.status.code, Code::InvalidArgument);
    assert_eq!(failed.status.to_string(), "INVALID_ARGUMENT (3): no such item: \"fail\" (try another)");
    assert!(failed.messages.is_empty());
    assert!(!failed.headers.iter().any(|(name, _)| name == "x-served-by"), "{:?}", failed.headers);
    let (_, encoded) = failed
        .headers
        .iter()
        .chain(&failed.trailers)
        .find(|(name, _)| name == "grpc-status-details-bin")
        .unwrap_or_else(|| panic!("no details: {:?} {:?}", failed.headers, failed.trailers));
    let bytes = BASE64.decode(encoded.trim_end_matches('=')).expect("the details are base64");
    let status = RpcStatus::decode(bytes.as_slice()).expect("the details are a google.rpc.Status");
    assert_eq!((status.code, status.message.as_str()), (3, "no such item: \"fail\" (try another)"));
    assert_eq!(status.details.len(), 1);
    assert_eq!(status.details[0].type_url, "type.googleapis.com/google.rpc.BadRequest");
    let bad_request = BadRequest::decode(status.details[0].value.as_slice()).expect("a google.rpc.BadRequest");
    let violation = FieldViolation { field: "item".to_owned(), description: "no such item".to_owned() };
    assert_eq!(bad_request.field_violations, [violation]);

    let schema = schema();
    let place = schema.method("shop.v1.Orders", "Place").expect("Place");
    let started = Instant::now();
    let deadline = Settings { timeout: Some(Duration::from_millis(300)), ..Settings::default() };
    let slow = messages(&[r#"{"item": "slow"}"#]);
    let late = call(&target(&server, "", "Place"), &place, &[], &slow, &deadline).await.expect("an answer");
    assert_eq!(late.status.code, Code::DeadlineExceeded, "{:?}", late.status);
    assert!(started.elapsed() < Duration::from_millis(1500), "not the 2 s of the answer");
}

#[tokio::test]
async fn reflection_answers_in_v1_and_v1alpha_unless_turned_off() {
    let server = GrpcServer::start(GrpcOptions::default()).await;
    let reflected = Schema::from_reflection(&target(&server, "", "Place"), "shop.v1.Orders", &[], &settings())
        .await
        .expect("the schema by reflection");
    let place = reflected.method("shop.v1.Orders", "Place").expect("Place by reflection");
    let request =
        messages(&[r#"{"item": "tea", "price": {"currency": "EUR", "units": 2}, "at": "2026-11-28T10:00:00Z"}"#]);
    let outcome = call(&target(&server, "", "Place"), &place, &[], &request, &settings()).await.expect("an answer");
    assert_eq!(outcome.messages[0]["price"]["units"], "2", "the imported Money type came with it");
    assert_eq!(outcome.messages[0]["at"], "2026-11-28T10:00:00Z", "and Google's Timestamp");

    // Each version asked directly, with its own proto: both list the same services.
    for (version, descriptor_set) in [
        ("v1", tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET),
        ("v1alpha", tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET),
    ] {
        let service = format!("grpc.reflection.{version}.ServerReflection");
        let reflection = Schema::from_descriptor_set("reflection.protoset", descriptor_set).expect("reflection.proto");
        let info = reflection.method(&service, "ServerReflectionInfo").expect("ServerReflectionInfo");
        let target =
            Target::parse(&format!("{}/{service}/ServerReflectionInfo", server.authority())).expect("a target");
        let listed =
            call(&target, &info, &[], &messages(&[r#"{"listServices": "*"}"#]), &settings()).await.expect("an answer");
        assert!(listed.status.is_ok(), "{version}: {:?}", listed.status);
        let mut services: Vec<&str> = listed.messages[0]["listServicesResponse"]["service"]
            .as_array()
            .unwrap_or_else(|| panic!("{version}: {:?}", listed.messages))
            .iter()
            .filter_map(|service| service["name"].as_str())
            .collect();
        services.sort_unstable();
        assert_eq!(services, [service.as_str(), "shop.v1.Orders"], "{version}");
    }

    let silent = GrpcServer::start(GrpcOptions { reflection: false, ..GrpcOptions::default() }).await;
    let error = Schema::from_reflection(&target(&silent, "", "Place"), "shop.v1.Orders", &[], &settings())
        .await
        .expect_err("no reflection");
    assert_eq!(
        error.to_string(),
        format!(
            "the server at {} offers no gRPC reflection (v1 or v1alpha): give the schema as proto files",
            silent.authority()
        )
    );
}

/// A client configuration that trusts `ca_pem` only.
fn trusting(ca_pem: &str) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).expect("the CA's PEM")).expect("a usable root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS 1.2 and 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

#[tokio::test]
async fn over_tls_calls_and_reflection_negotiate_http2() {
    let pki = TestPki::generate("grpc");
    let server = GrpcServer::start(GrpcOptions { tls: Some(&pki), ..GrpcOptions::default() }).await;
    let schema = schema();
    let place = schema.method("shop.v1.Orders", "Place").expect("Place");
    let secure = Settings { tls: Some(trusting(pki.ca_pem())), ..settings() };
    let secure_target = target(&server, "grpcs://", "Place");
    let outcome =
        call(&secure_target, &place, &[], &messages(&[r#"{"item": "tea"}"#]), &secure).await.expect("an answer");
    assert!(outcome.status.is_ok(), "{:?}", outcome.status);
    assert_eq!(outcome.messages[0]["item"], "tea");
    let reflected =
        Schema::from_reflection(&secure_target, "shop.v1.Orders", &[], &secure).await.expect("reflection over TLS");
    assert_eq!(reflected.services(), ["shop.v1.Orders"]);
    let plaintext = call(&target(&server, "grpc://", "Place"), &place, &[], &messages(&["{}"]), &settings()).await;
    assert!(plaintext.is_err(), "HTTP/2 without TLS is not served: {plaintext:?}");
}
