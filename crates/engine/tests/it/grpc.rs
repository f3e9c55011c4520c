//! gRPC requests of `.http` files, as JetBrains', httpyac's and Kulala's files write
//! them, run against an independent server: grpc-js (`tests/grpc`, npm) on 127.0.0.1,
//! with reflection and without. `scripts/test` installs its packages.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::path::PathBuf;

use serde_json::json;
use volley_echo_server::GrpcJsServer;
use volley_engine::{BuildError, Client, Error, Response, RunOptions, TransportError};

use crate::support;

fn grpc_directory() -> PathBuf {
    GrpcJsServer::directory()
}

/// A directory of its own under the system's temporary one, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("volley-grpc-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the request named `name` of `text`, a file of `tests/grpc` (its protos beside it).
async fn run(client: &Client, text: &str, name: &str) -> Result<Response, Error> {
    let options = RunOptions::default().source_path(grpc_directory().join("requests.http")).name(name);
    client.run_string(text, options).await
}

fn messages(response: &Response) -> Vec<serde_json::Value> {
    response.grpc().expect("a gRPC result").messages.clone()
}

#[tokio::test]
async fn the_three_tools_forms_run_every_kind_of_call() {
    let reflecting = GrpcJsServer::start(&[]);
    let plain = GrpcJsServer::start(&["--no-reflection"]);
    let text = format!(
        r#"
### jetbrains
GRPC {reflecting}/shop.v1.Orders/Place
x-request-id: r-7

{{"item": "tea", "quantity": 3, "price": {{"currency": "EUR", "units": 2}}}}

> {{% client.test("placed", function() {{ client.assert(response.body.requestId === "r-7", "requestId"); }}); %}}

### kulala
# @grpc-proto ./protos/shop.proto
# @grpc-import-path ./protos
# @grpc-plaintext
# @assert grpc-status == OK
# @assert grpc-status == 0
# @assert jsonpath $[1].id == "order-2"
GRPC {plain} shop.v1.Orders/List

{{"count": 2}}

### httpyac
proto < ./protos/shop.proto
includeDirs: ["./protos"]
keepCase: true
GRPC grpc://{plain}/shop.v1.Orders/Total
{{"currency": "EUR", "units": 10}}
===
{{"currency": "EUR", "units": "5"}}

### jetbrains stream
# @grpc-proto ./protos/shop.proto
GRPC {plain}/shop.v1.Orders/Chat

===
{{"text": "slow one"}}
=== wait-for-server
{{"text": "two"}}
=== wait-for-server
"#,
        reflecting = reflecting.authority,
        plain = plain.authority
    );
    let client = support::client();

    // Unary, the schema by reflection; metadata out, headers and trailers in.
    let placed = run(&client, &text, "jetbrains").await.unwrap();
    let grpc = placed.grpc().unwrap();
    assert_eq!((grpc.code.as_str(), grpc.number, grpc.kind), ("OK", 0, "unary"));
    assert!(placed.ok());
    assert_eq!(placed.status(), 200);
    assert_eq!(
        messages(&placed),
        [
            json!({"id": "order-1", "item": "tea", "quantity": "3", "price": {"currency": "EUR", "units": "2", "nanos": 0},
                "requestId": "r-7"})
        ]
    );
    assert_eq!(placed.headers().get("x-served-by").unwrap(), "grpc-js");
    assert_eq!(placed.headers().get("grpc-status").unwrap(), "0");
    // The body is the messages as JSON lines; what was sent, the messages as written.
    let body = placed.text().await.unwrap();
    assert_eq!(body.lines().count(), 1);
    assert_eq!(serde_json::from_str::<serde_json::Value>(body.trim()).unwrap(), messages(&placed)[0]);
    assert_eq!(placed.request().url.as_str(), format!("http://{}/shop.v1.Orders/Place", reflecting.authority));
    assert_eq!(placed.request().headers.get("x-request-id").unwrap(), "r-7");
    // Response handlers read the message as JSON.
    let tests: Vec<_> = placed.assertions().iter().map(|test| (test.expression.as_str(), test.passed())).collect();
    assert_eq!(tests, [("placed", true)]);

    // Server streaming, Kulala's grpcurl-style target and proto directives; assertions
    // read the array of the messages and the gRPC status.
    let listed = run(&client, &text, "kulala").await.unwrap();
    assert_eq!(listed.grpc().unwrap().kind, "server-streaming");
    let ids: Vec<_> = messages(&listed).iter().map(|order| order["id"].clone()).collect();
    assert_eq!(ids, [json!("order-1"), json!("order-2")]);
    assert_eq!(listed.text().await.unwrap().lines().count(), 2);
    assert!(
        listed.assertions().iter().all(volley_engine::assert::AssertionResult::passed),
        "{:?}",
        listed.assertions()
    );
    assert_eq!(listed.assertions().len(), 3);

    // Client streaming from httpyac's `proto <` line and `===`; `keepCase` names the
    // fields as the proto file does.
    let total = run(&client, &text, "httpyac").await.unwrap();
    assert_eq!(messages(&total), [json!({"currency": "EUR", "units": "15", "nanos": 0})]);

    // Bidirectional, the second message sent only once the first was answered.
    let chat = run(&client, &text, "jetbrains stream").await.unwrap();
    let echoed: Vec<_> = messages(&chat).iter().map(|line| line["text"].clone()).collect();
    assert_eq!(echoed, [json!("echo: slow one (heard 1)"), json!("echo: two")]);
}

#[tokio::test]
async fn a_status_that_is_not_ok_is_a_result_and_the_timeout_is_the_deadline() {
    let server = GrpcJsServer::start(&[]);
    let text = format!(
        r#"
### fails
# @assert grpc-status == INVALID_ARGUMENT
# @assert grpc-status != OK
# @assert grpc-status == OK
GRPC {0}/shop.v1.Orders/Place

{{"item": "fail"}}

### slow
# @timeout 300
GRPC {0}/shop.v1.Orders/Place

{{"item": "slow"}}
"#,
        server.authority
    );
    let client = support::client();
    let failed = run(&client, &text, "fails").await.unwrap();
    let grpc = failed.grpc().unwrap();
    assert_eq!((grpc.code.as_str(), grpc.number), ("INVALID_ARGUMENT", 3));
    assert_eq!(grpc.message, r#"no such item: "fail" (try another)"#);
    assert!(!failed.ok());
    let passed: Vec<bool> = failed.assertions().iter().map(volley_engine::assert::AssertionResult::passed).collect();
    assert_eq!(passed, [true, true, false]);

    let slow = run(&client, &text, "slow").await.unwrap();
    assert_eq!(slow.grpc().unwrap().code, "DEADLINE_EXCEEDED");
}

#[tokio::test]
async fn mistakes_are_located_in_the_file_with_a_hint() {
    let reflecting = GrpcJsServer::start(&[]);
    let plain = GrpcJsServer::start(&["--no-reflection"]);
    let broken = Scratch::new("bad-proto");
    std::fs::write(broken.path().join("bad.proto"), "syntax = \"proto3\";\npackage bad;\nmessage A { strin x = 1; }\n")
        .unwrap();
    let text = format!(
        r#"
### method
GRPC {reflecting}/shop.v1.Orders/Plase

### field
GRPC {reflecting}/shop.v1.Orders/Place

{{"itme": "tea"}}

### no reflection
GRPC {plain}/shop.v1.Orders/Place

### proto
# @grpc-proto {bad}
GRPC {plain}/bad.S/M

### unreachable
GRPC 127.0.0.1:1/shop.v1.Orders/Place
"#,
        reflecting = reflecting.authority,
        plain = plain.authority,
        bad = broken.path().join("bad.proto").display()
    );
    let client = Client::new(volley_engine::ClientConfig { allow_external_files: true, ..support::config() });
    let grpc_error = |error: Error| match error {
        Error::Build(BuildError::Grpc { message, hint, span }) => (message, hint.unwrap_or_default(), span),
        other => panic!("expected a gRPC build error, got {other:?}"),
    };

    let (message, hint, span) = grpc_error(run(&client, &text, "method").await.unwrap_err());
    assert_eq!(message, "the service `shop.v1.Orders` has no method `Plase`: did you mean `Place`?");
    assert!(hint.contains("Place, List, Total, Chat"), "{hint}");
    assert_eq!(span.start_position.line, 2);

    let (message, _, span) = grpc_error(run(&client, &text, "field").await.unwrap_err());
    assert!(
        message.starts_with("the message is not a `shop.v1.PlaceRequest`: unrecognized field name 'itme'"),
        "{message}"
    );
    assert_eq!(span.start_position.line, 7);

    let (message, hint, _) = grpc_error(run(&client, &text, "no reflection").await.unwrap_err());
    assert!(message.contains("offers no gRPC reflection"), "{message}");
    assert!(hint.contains("@grpc-proto"), "{hint}");

    let (message, _, span) = grpc_error(run(&client, &text, "proto").await.unwrap_err());
    assert!(message.ends_with("bad.proto:3:13: name 'strin' is not defined"), "{message}");
    assert_eq!(span.start_position.line, 13);

    let refused = run(&client, &text, "unreachable").await.unwrap_err();
    assert!(matches!(refused, Error::Transport(TransportError::ConnectionRefused { .. })), "{refused:?}");

    // httpyac's `channelCredentials` header is refused by name, never sent as metadata.
    let credentials = format!("GRPC {}/shop.v1.Orders/Place\nchannelCredentials: ssl\n\n{{}}\n", reflecting.authority);
    let refused = client.run_string(&credentials, RunOptions::default()).await.unwrap_err();
    assert!(
        matches!(&refused, Error::Build(error @ BuildError::Credentials { .. }) if error.code() == "unsupported-auth"),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_compiled_schema_is_kept_until_its_files_change() {
    let server = GrpcJsServer::start(&["--no-reflection"]);
    let project = Scratch::new("schema-cache");
    let protos = grpc_directory().join("protos");
    let full = std::fs::read_to_string(protos.join("shop.proto")).unwrap();
    // The same service without `List` first.
    let without_list = full.replace("  rpc List (ListRequest) returns (stream Order);\n", "");
    assert_ne!(without_list, full);
    std::fs::write(project.path().join("shop.proto"), &without_list).unwrap();
    // Its import beside it, found from its directory.
    std::fs::create_dir_all(project.path().join("common")).unwrap();
    std::fs::copy(protos.join("common/money.proto"), project.path().join("common/money.proto")).unwrap();
    let text =
        format!("# @grpc-proto ./shop.proto\nGRPC {}/shop.v1.Orders/List\n\n{{\"count\": 1}}\n", server.authority);
    let client = Client::new(volley_engine::ClientConfig { allow_external_files: true, ..support::config() });
    let options = || RunOptions::default().source_path(project.path().join("requests.http"));
    let missing = client.run_string(&text, options()).await.unwrap_err();
    assert!(missing.to_string().contains("has no method `List`"), "{missing}");
    // A file's modification time moves on: written again a little later.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(project.path().join("shop.proto"), &full).unwrap();
    let listed = client.run_string(&text, options()).await.unwrap();
    assert_eq!(messages(&listed).len(), 1);
}

/// The catalog an editor completes from: every service of the server by reflection,
/// fetched once per lifetime, read without asking the server again.
#[tokio::test]
async fn a_servers_catalog_is_fetched_once_and_read_without_asking() {
    let server = GrpcJsServer::start(&[]);
    let client = support::client();
    let text = format!(
        "GRPC {}/shop.v1.Orders/Place

{{}}
",
        server.authority
    );
    let document = volley_syntax::parse(&text);
    let request = document.request(0).unwrap();
    let prepared = volley_engine::stages::prepare_request(&client, &document, request, None, &RunOptions::default())
        .await
        .unwrap();
    // Nothing kept yet, and nothing asked.
    assert!(volley_engine::grpc::schema_of(&client, &prepared, false).await.unwrap().is_none());
    let fetch = volley_engine::grpc::catalog_fetch(&client, &prepared).expect("a fetch is due");
    assert!(fetch.await, "a new catalog");
    let (schema, _) = volley_engine::grpc::schema_of(&client, &prepared, false).await.unwrap().expect("kept");
    assert_eq!(schema.services(), ["shop.v1.Orders"]);
    assert_eq!(schema.methods("shop.v1.Orders"), ["Place", "List", "Total", "Chat"]);
    // Asked within its lifetime: not again.
    assert!(volley_engine::grpc::catalog_fetch(&client, &prepared).is_none());
    // A server without reflection: the fetch gives nothing, and nothing is kept.
    let closed = GrpcJsServer::start(&["--no-reflection"]);
    let text = format!(
        "GRPC {}/shop.v1.Orders/Place

{{}}
",
        closed.authority
    );
    let document = volley_syntax::parse(&text);
    let prepared = volley_engine::stages::prepare_request(
        &client,
        &document,
        document.request(0).unwrap(),
        None,
        &RunOptions::default(),
    )
    .await
    .unwrap();
    assert!(!volley_engine::grpc::catalog_fetch(&client, &prepared).expect("due").await);
    assert!(volley_engine::grpc::schema_of(&client, &prepared, false).await.unwrap().is_none());
}

/// Against the second implementation, tonic (the echo server's `GrpcServer`): TLS with the
/// CA of the network settings, and a status's details.
#[tokio::test]
async fn over_tls_with_the_configured_ca_a_status_brings_its_details() {
    use volley_echo_server::{GrpcOptions, GrpcServer, TestPki};
    let pki = TestPki::generate("grpc-engine");
    let server = GrpcServer::start(GrpcOptions { tls: Some(&pki), ..GrpcOptions::default() }).await;
    let certificates = Scratch::new("tls-ca");
    let ca = certificates.path().join("ca.pem");
    std::fs::write(&ca, pki.ca_pem()).unwrap();
    let port = server.addr.port();
    let text = format!(
        "### placed\nGRPC grpcs://localhost:{port}/shop.v1.Orders/Place\n\n{{\"item\": \"tea\"}}\n\n\
         ### fails\nGRPC grpcs://localhost:{port}/shop.v1.Orders/Place\n\n{{\"item\": \"fail\"}}\n"
    );
    let trusting = Client::new(volley_engine::ClientConfig {
        tls: volley_engine::config::TlsSettings { ca: vec![ca], hosts: Vec::new() },
        ..support::config()
    });
    let placed = run(&trusting, &text, "placed").await.unwrap();
    assert_eq!(placed.grpc().unwrap().code, "OK");
    assert_eq!(placed.headers().get("x-served-by").unwrap(), "tonic");

    let failed = run(&trusting, &text, "fails").await.unwrap();
    let grpc = failed.grpc().unwrap();
    assert_eq!(grpc.code, "INVALID_ARGUMENT");
    assert_eq!(
        grpc.details,
        [json!({"@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": "item", "description": "no such item"}]})]
    );

    // Without the CA, the server's certificate is not trusted: a TLS error with its hint.
    let refused = run(&support::client(), &text, "placed").await.unwrap_err();
    match refused {
        Error::Transport(error @ TransportError::Tls { .. }) => {
            assert!(error.hint().unwrap().contains("--cacert"), "{error:?}");
        }
        other => panic!("expected a TLS error, got {other:?}"),
    }
}

/// A proxy of the network settings carries gRPC calls too (a `CONNECT` tunnel), the
/// reflection's and the call's; a proxy that is down is a proxy error.
#[tokio::test]
async fn calls_go_through_the_configured_proxy() {
    use volley_echo_server::{GrpcOptions, GrpcServer, TestProxy};
    let server = GrpcServer::start(GrpcOptions::default()).await;
    let proxy = TestProxy::start(None).await;
    let text = format!("GRPC {}/shop.v1.Orders/Place\n\n{{\"item\": \"tea\"}}\n", server.authority());
    let proxied = Client::new(volley_engine::ClientConfig {
        proxy: volley_engine::config::ProxySettings { http: Some(proxy.url()), ..Default::default() },
        ..support::config()
    });
    let placed = proxied.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(placed.grpc().unwrap().code, "OK");
    let tunnels: Vec<(String, String)> =
        proxy.records().into_iter().map(|record| (record.method, record.target)).collect();
    // Tunnels for the reflection's rounds, then one for the call; none went around it.
    assert!(tunnels.len() >= 2, "{tunnels:?}");
    assert!(tunnels.iter().all(|tunnel| *tunnel == ("CONNECT".to_owned(), server.authority())), "{tunnels:?}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let down = Client::new(volley_engine::ClientConfig {
        proxy: volley_engine::config::ProxySettings { http: Some(format!("http://{closed}")), ..Default::default() },
        ..support::config()
    });
    let error = down.run_string(&text, RunOptions::default()).await.unwrap_err();
    assert!(matches!(error, Error::Transport(TransportError::Proxy { .. })), "{error:?}");
}
