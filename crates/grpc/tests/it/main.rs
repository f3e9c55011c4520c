//! gRPC calls against an independent implementation: grpc-js (`tests/grpc`, npm) on
//! 127.0.0.1, serving `tests/grpc/protos/shop.proto` with every kind of call, errors,
//! metadata and a slow answer. `scripts/test` installs its packages.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::path::PathBuf;
use std::time::Duration;

use volley_echo_server::GrpcJsServer;

use volley_grpc::{CallError, Code, Kind, Outgoing, ReflectionError, Schema, SchemaError, Settings, Target, call};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The grpc-js server of `tests/grpc`.
struct Server(GrpcJsServer);

impl Server {
    fn start() -> Self {
        Self::with(&[])
    }

    fn with(arguments: &[&str]) -> Self {
        Self(GrpcJsServer::start(arguments))
    }

    fn target(&self, method: &str) -> Target {
        Target::parse(&format!("{}/shop.v1.Orders/{method}", self.0.authority)).unwrap()
    }
}

fn schema() -> Schema {
    let protos = root().join("tests/grpc/protos");
    Schema::compile(&[protos.join("shop.proto")], &[protos]).unwrap()
}

fn json(messages: &[&str]) -> Vec<Outgoing> {
    messages.iter().map(|message| Outgoing::message(*message)).collect()
}

#[tokio::test]
async fn every_kind_of_call_with_the_proto3_json_mapping_and_metadata() {
    let server = Server::start();
    let schema = schema();

    let place = schema.method("shop.v1.Orders", "Place").unwrap();
    assert_eq!(Kind::of(&place), Kind::Unary);
    let request = r#"{"item": "tea", "quantity": "9007199254740993", "price": {"currency": "EUR", "units": 3, "nanos": 500000000},
                      "at": "2026-11-28T10:00:00Z"}"#;
    let metadata = [("X-Request-Id".to_owned(), "r-1".to_owned())];
    let outcome =
        call(&server.target("Place"), &place, &metadata, &json(&[request]), &Settings::default()).await.unwrap();
    assert!(outcome.status.is_ok(), "{:?}", outcome.status);
    assert_eq!(outcome.messages.len(), 1);
    let order = &outcome.messages[0];
    assert_eq!(order["id"], "order-1");
    assert_eq!(order["quantity"], "9007199254740993", "int64 as a string, exactly");
    assert_eq!(order["price"], serde_json::json!({"currency": "EUR", "units": "3", "nanos": 500_000_000}));
    assert_eq!(order["at"], "2026-11-28T10:00:00Z", "a Timestamp as RFC 3339");
    assert_eq!(order["requestId"], "r-1", "the metadata reached the server");
    assert!(outcome.headers.contains(&("x-served-by".to_owned(), "grpc-js".to_owned())), "{:?}", outcome.headers);
    assert!(outcome.trailers.iter().any(|(name, value)| name == "grpc-status" && value == "0"));

    let list = schema.method("shop.v1.Orders", "List").unwrap();
    assert_eq!(Kind::of(&list), Kind::ServerStreaming);
    let listed =
        call(&server.target("List"), &list, &[], &json(&[r#"{"count": 3}"#]), &Settings::default()).await.unwrap();
    let ids: Vec<&str> = listed.messages.iter().map(|order| order["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["order-1", "order-2", "order-3"]);

    let total = schema.method("shop.v1.Orders", "Total").unwrap();
    assert_eq!(Kind::of(&total), Kind::ClientStreaming);
    let amounts = [
        r#"{"currency": "EUR", "units": 10}"#,
        r#"{"currency": "EUR", "units": 20}"#,
        r#"{"currency": "EUR", "units": "30"}"#,
    ];
    let summed = call(&server.target("Total"), &total, &[], &json(&amounts), &Settings::default()).await.unwrap();
    assert_eq!(summed.messages, [serde_json::json!({"currency": "EUR", "units": "60", "nanos": 0})]);

    let chat = schema.method("shop.v1.Orders", "Chat").unwrap();
    assert_eq!(Kind::of(&chat), Kind::Bidirectional);
    let lines = [r#"{"text": "hello"}"#, r#"{"text": "again"}"#];
    let echoed = call(&server.target("Chat"), &chat, &[], &json(&lines), &Settings::default()).await.unwrap();
    let texts: Vec<(i64, &str)> = echoed
        .messages
        .iter()
        .map(|line| (line["position"].as_i64().unwrap(), line["text"].as_str().unwrap()))
        .collect();
    assert_eq!(texts, [(1, "echo: hello"), (2, "echo: again")]);

    // `=== wait-for-server`: the second line goes once the first is echoed (300 ms
    // later), not at once.
    let texts_of = |outcome: volley_grpc::CallOutcome| -> Vec<String> {
        outcome.messages.iter().map(|line| line["text"].as_str().unwrap().to_owned()).collect()
    };
    let at_once = json(&[r#"{"text": "slow one"}"#, r#"{"text": "two"}"#]);
    let sent = call(&server.target("Chat"), &chat, &[], &at_once, &Settings::default()).await.unwrap();
    assert_eq!(texts_of(sent), ["echo: two", "echo: slow one (heard 2)"]);
    let waiting = [
        Outgoing::message(r#"{"text": "slow one"}"#),
        Outgoing { wait_for_server: 1, json: Some(r#"{"text": "two"}"#.to_owned()) },
        Outgoing { wait_for_server: 1, json: None },
    ];
    let sent = call(&server.target("Chat"), &chat, &[], &waiting, &Settings::default()).await.unwrap();
    assert_eq!(texts_of(sent), ["echo: slow one (heard 1)", "echo: two"]);
}

#[tokio::test]
async fn a_status_that_is_not_ok_is_an_answer_and_the_deadline_ends_a_call() {
    let server = Server::start();
    let schema = schema();
    let place = schema.method("shop.v1.Orders", "Place").unwrap();
    let failed = call(&server.target("Place"), &place, &[], &json(&[r#"{"item": "fail"}"#]), &Settings::default())
        .await
        .unwrap();
    assert_eq!(failed.status.code, Code::InvalidArgument);
    assert_eq!(failed.status.to_string(), "INVALID_ARGUMENT (3): no such item: \"fail\" (try another)");
    assert!(failed.messages.is_empty());

    let slow = json(&[r#"{"item": "slow"}"#]);
    let started = std::time::Instant::now();
    let settings = Settings { timeout: Some(Duration::from_millis(300)), ..Settings::default() };
    let late = call(&server.target("Place"), &place, &[], &slow, &settings).await.unwrap();
    assert_eq!(late.status.code, Code::DeadlineExceeded, "{:?}", late.status);
    assert!(started.elapsed() < Duration::from_millis(1500), "not the 2 s of the answer");
}

#[tokio::test]
async fn mistakes_are_said_before_or_instead_of_a_call() {
    let server = Server::start();
    let schema = schema();
    let place = schema.method("shop.v1.Orders", "Place").unwrap();
    let unknown = call(&server.target("Place"), &place, &[], &json(&[r#"{"itme": "tea"}"#]), &Settings::default())
        .await
        .unwrap_err();
    assert!(matches!(unknown, CallError::Json { number: 1, .. }), "{unknown}");
    assert!(
        unknown
            .to_string()
            .starts_with("request message 1 is not a `shop.v1.PlaceRequest`: unrecognized field name 'itme'"),
        "{unknown}"
    );
    let two = call(&server.target("Place"), &place, &[], &json(&["{}", "{}"]), &Settings::default()).await.unwrap_err();
    assert!(matches!(two, CallError::TooManyMessages { kind: "unary", count: 2 }), "{two}");

    let method = schema.method("shop.v1.Orders", "Plac").unwrap_err();
    assert_eq!(method.to_string(), "the service `shop.v1.Orders` has no method `Plac`: did you mean `Place`?");
    let service = schema.method("shop.Orders", "Place").unwrap_err();
    assert!(matches!(service, SchemaError::UnknownService { .. }), "{service}");
    assert_eq!(service.to_string(), "the schema has no service `shop.Orders`: did you mean `shop.v1.Orders`?");
    let far = schema.method("billing.Invoices", "Send").unwrap_err();
    assert_eq!(far.to_string(), "the schema has no service `billing.Invoices` (it has shop.v1.Orders)");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let refused = Target::parse(&format!("127.0.0.1:{port}/shop.v1.Orders/Place")).unwrap();
    let error = call(&refused, &place, &[], &[], &Settings::default()).await.unwrap_err();
    assert!(matches!(error, CallError::Connect { .. }), "{error}");
    let tls = Target::parse(&format!("grpcs://{}/shop.v1.Orders/Place", server.0.authority)).unwrap();
    assert!(matches!(call(&tls, &place, &[], &[], &Settings::default()).await.unwrap_err(), CallError::Tls));
    let grpcurl = Target::parse(&format!("{} shop.v1.Orders/Place", server.0.authority)).unwrap();
    assert!(
        matches!(call(&grpcurl, &place, &[], &[], &Settings::default()).await.unwrap_err(), CallError::Tls),
        "grpcurl's default"
    );
}

#[test]
fn a_proto_that_does_not_compile_is_placed() {
    let directory = std::env::temp_dir().join(format!("volley-grpc-proto-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let file = directory.join("broken.proto");
    std::fs::write(&file, "syntax = \"proto3\";\n\nmessage A {\n  strin name = 1;\n}\n").unwrap();
    let error = Schema::compile(std::slice::from_ref(&file), &[]).unwrap_err();
    let SchemaError::Compile { location, message } = &error else { panic!("{error}") };
    assert_eq!(location.as_deref(), Some("broken.proto:4:3"), "{message}");
    let missing = directory.join("imports.proto");
    std::fs::write(&missing, "syntax = \"proto3\";\nimport \"nowhere/else.proto\";\n").unwrap();
    let error = Schema::compile(&[missing], &[]).unwrap_err();
    assert!(error.to_string().contains("import 'nowhere/else.proto' not found"), "{error}");
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn a_compiled_descriptor_set_is_a_schema_too() {
    use prost::Message as _;
    let protos = root().join("tests/grpc/protos");
    let set = protox::compile([protos.join("shop.proto")], [&protos]).unwrap();
    let schema = Schema::from_descriptor_set("shop.protoset", &set.encode_to_vec()).unwrap();
    assert_eq!(schema.services(), ["shop.v1.Orders"]);
    assert_eq!(Kind::of(&schema.method("shop.v1.Orders", "Chat").unwrap()), Kind::Bidirectional);
    let error = Schema::from_descriptor_set("notes.txt", b"plain text").unwrap_err();
    assert!(error.to_string().starts_with("`notes.txt` is not a compiled descriptor set"), "{error}");
}

#[tokio::test]
async fn a_schema_asked_of_the_server_by_reflection_serves_calls() {
    let server = Server::start();
    let deadline = &Settings { timeout: Some(Duration::from_secs(10)), ..Settings::default() };
    let schema = Schema::from_reflection(&server.target("Place"), "shop.v1.Orders", &[], deadline).await.unwrap();
    let place = schema.method("shop.v1.Orders", "Place").unwrap();
    let request = json(&[r#"{"item": "tea", "price": {"currency": "EUR", "units": 2}, "at": "2026-11-28T10:00:00Z"}"#]);
    let outcome = call(&server.target("Place"), &place, &[], &request, deadline).await.unwrap();
    assert!(outcome.status.is_ok(), "{:?}", outcome.status);
    assert_eq!(outcome.messages[0]["price"]["units"], "2", "the imported Money type came with it");
    assert_eq!(outcome.messages[0]["at"], "2026-11-28T10:00:00Z", "and Google's Timestamp");
    assert_eq!(Kind::of(&schema.method("shop.v1.Orders", "Chat").unwrap()), Kind::Bidirectional);

    let missing = Schema::from_reflection(&server.target("Place"), "shop.v1.Nothing", &[], deadline).await.unwrap_err();
    assert!(matches!(missing, ReflectionError::Answered(_)), "{missing}");

    let silent = Server::with(&["--no-reflection"]);
    let error = Schema::from_reflection(&silent.target("Place"), "shop.v1.Orders", &[], deadline).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the server at {} offers no gRPC reflection (v1 or v1alpha): give the schema as proto files",
            silent.0.authority
        )
    );
}

/// The certificates of a test CA written where the grpc-js server reads them.
fn certificates(pki: &volley_echo_server::TestPki) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("volley-grpc-tls-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::write(directory.join("ca.pem"), pki.ca_pem()).unwrap();
    std::fs::write(directory.join("server.pem"), pki.server_pem()).unwrap();
    std::fs::write(directory.join("server-key.pem"), pki.server_key_pem()).unwrap();
    directory
}

/// A client configuration that trusts `ca_pem` only.
fn trusting(ca_pem: &str) -> std::sync::Arc<rustls::ClientConfig> {
    use rustls_pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in rustls_pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(certificate.unwrap()).unwrap();
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    std::sync::Arc::new(config)
}

#[tokio::test]
async fn calls_over_tls_negotiate_http2_and_check_the_certificate() {
    let pki = volley_echo_server::TestPki::generate("grpc");
    let directory = certificates(&pki);
    let server = Server::with(&["--tls", directory.to_str().unwrap()]);
    let schema = schema();
    let place = schema.method("shop.v1.Orders", "Place").unwrap();
    let target = Target::parse(&format!("grpcs://{}/shop.v1.Orders/Place", server.0.authority)).unwrap();
    let settings = Settings { tls: Some(trusting(pki.ca_pem())), ..Settings::default() };
    let outcome = call(&target, &place, &[], &json(&[r#"{"item": "tea"}"#]), &settings).await.unwrap();
    assert!(outcome.status.is_ok(), "{:?}", outcome.status);
    assert_eq!(outcome.messages[0]["item"], "tea");
    // Kulala's grpcurl form is TLS unless it says otherwise.
    let grpcurl = Target::parse(&format!("{} shop.v1.Orders/Place", server.0.authority)).unwrap();
    assert!(call(&grpcurl, &place, &[], &[], &settings).await.unwrap().status.is_ok());
    // Reflection goes over TLS too.
    let reflected = Schema::from_reflection(&target, "shop.v1.Orders", &[], &settings).await.unwrap();
    assert_eq!(reflected.services(), ["shop.v1.Orders"]);

    let other = volley_echo_server::TestPki::generate("other");
    let untrusted = Settings { tls: Some(trusting(other.ca_pem())), ..Settings::default() };
    let error = call(&target, &place, &[], &[], &untrusted).await.unwrap_err();
    assert!(matches!(error, CallError::Handshake { .. }), "{error}");
    assert!(error.to_string().contains("UnknownIssuer"), "{error}");
    let _ = std::fs::remove_dir_all(&directory);
}

/// Kept connections: calls to one server share one, and one the server closed is
/// replaced rather than failing the next call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_share_a_kept_connection_and_a_closed_one_is_replaced() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let schema = schema();
    let place = schema.method("shop.v1.Orders", "Place").unwrap();
    let opened = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&opened);
    let connect: volley_grpc::Connect = Arc::new(move |authority| {
        counted.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move { tokio::net::TcpStream::connect(authority).await.map_err(|error| error.to_string()) })
    });
    let connections = Arc::new(volley_grpc::Connections::default());
    let settings =
        Settings { connect: Some(connect), connections: Some(Arc::clone(&connections)), ..Settings::default() };
    let server = Server::start();
    for _ in 0..3 {
        let placed = call(&server.target("Place"), &place, &[], &json(&["{}"]), &settings).await.unwrap();
        assert!(placed.status.is_ok());
    }
    assert_eq!(opened.load(Ordering::Relaxed), 1, "three calls, one connection");

    assert_eq!(connections.open_count(), 1);
    // The server goes away and comes back on the same port: the kept connection is
    // closed (seen once its driver has read the end), and the next call opens another.
    let port = server.0.authority.rsplit_once(':').unwrap().1.to_owned();
    drop(server);
    let seen_closed = async {
        while connections.open_count() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), seen_closed).await.expect("the closed connection is seen closed");
    let again = Server::with(&["--port", &port]);
    let placed = call(&again.target("Place"), &place, &[], &json(&["{}"]), &settings).await.unwrap();
    assert!(placed.status.is_ok());
    assert_eq!(opened.load(Ordering::Relaxed), 2);
}
