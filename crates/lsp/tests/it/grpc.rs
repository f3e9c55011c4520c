//! gRPC requests in the editor, through real JSON-RPC messages: completion of services,
//! methods and message fields, and the diagnostics of an unknown method or field and of
//! a proto file that does not compile. The schemas come from the proto files of
//! `tests/grpc/protos` (`shop.v1.Orders`), copied next to the document, or from the
//! catalog of a real server (the echo server's tonic `GrpcServer`) by reflection; a
//! live send streams its messages.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::completion_hover::{complete, item};
use crate::support::{TestClient, range, uri};

/// The document's folder with `protos/shop.proto` and `protos/common/money.proto`.
fn with_protos(dir: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/grpc/protos");
    std::fs::create_dir_all(dir.join("protos/common")).expect("protos folder");
    for file in ["shop.proto", "common/money.proto"] {
        std::fs::copy(source.join(file), dir.join("protos").join(file)).expect("proto file");
    }
}

fn labels(items: &[Value]) -> Vec<&str> {
    items.iter().map(|item| item["label"].as_str().expect("label")).collect()
}

/// The `invalid-grpc` diagnostics: range and message.
fn grpc_diagnostics(diagnostics: &[Value]) -> Vec<(Value, String)> {
    diagnostics
        .iter()
        .filter(|diagnostic| diagnostic["code"] == "invalid-grpc")
        .map(|diagnostic| (diagnostic["range"].clone(), diagnostic["message"].as_str().expect("message").to_owned()))
        .collect()
}

async fn started() -> TestClient {
    let mut client = TestClient::start();
    let capabilities = client.initialize().await["capabilities"].clone();
    assert_eq!(capabilities["completionProvider"]["triggerCharacters"], json!(["{", "$", "@", ".", ":", "/"]));
    client
}

#[tokio::test]
async fn completion_offers_services_methods_and_fields_from_proto_files() {
    let (dir, httpyac) = uri("httpyac.http");
    with_protos(&dir.path);
    let mut client = started().await;
    let text = concat!(
        "proto < ./protos/shop.proto\n",               // 0
        "\n",                                          // 1
        "###\n",                                       // 2
        "GRPC localhost:50051/shop.v1.Orders/Place\n", // 3
        "\n",                                          // 4
        "{\n",                                         // 5
        "  \"item\": \"tea\",\n",                      // 6
        "  \n",                                        // 7
        "}\n",                                         // 8
    );
    client.open(&httpyac, text).await;

    // After `host:port/`: the services, fully qualified.
    let items = complete(&mut client, &httpyac, 3, 21).await;
    assert_eq!(labels(&items), ["shop.v1.Orders"]);
    let orders = item(&items, "shop.v1.Orders");
    assert_eq!(orders["kind"], json!(9), "module");
    assert_eq!(orders["textEdit"], json!({"range": range((3, 21), (3, 21)), "newText": "shop.v1.Orders"}));
    // What was typed of it is replaced (`.` is a trigger character).
    let items = complete(&mut client, &httpyac, 3, 27).await;
    assert_eq!(item(&items, "shop.v1.Orders")["textEdit"]["range"], range((3, 21), (3, 27)));

    // After `Service/`: its methods, with their types.
    let items = complete(&mut client, &httpyac, 3, 38).await;
    assert_eq!(labels(&items), ["Place", "List", "Total", "Chat"]);
    let place = item(&items, "Place");
    assert_eq!(place["detail"], "(shop.v1.PlaceRequest) returns (shop.v1.Order)");
    assert_eq!(place["textEdit"]["range"], range((3, 36), (3, 38)));
    assert_eq!(item(&items, "Total")["detail"], "(stream shop.common.Money) returns (shop.common.Money)");
    assert_eq!(item(&items, "Chat")["detail"], "(stream shop.v1.Line) returns (stream shop.v1.Line)");

    // In the message, where a key goes: the input's fields not written yet.
    let items = complete(&mut client, &httpyac, 7, 2).await;
    assert_eq!(labels(&items), ["quantity", "price", "at"]);
    let price = item(&items, "price");
    assert_eq!(price["kind"], json!(5), "field");
    assert_eq!(price["detail"], "shop.common.Money");
    assert_eq!(price["textEdit"], json!({"range": range((7, 2), (7, 2)), "newText": "\"price\": "}));
    assert_eq!(item(&items, "at")["detail"], "google.protobuf.Timestamp");
    assert_eq!(item(&items, "quantity")["detail"], "int64");
    // In a value: nothing.
    assert_eq!(complete(&mut client, &httpyac, 6, 13).await, Vec::<Value>::new());

    // Kulala's `host:port package.Service/Method`, `@grpc-proto` and `@grpc-import-path`.
    let kulala = httpyac.replace("httpyac.http", "kulala.http");
    let text = concat!(
        "# @grpc-proto ./protos/shop.proto\n",         // 0
        "# @grpc-import-path ./protos\n",              // 1
        "GRPC localhost:50051 shop.v1.Orders/Place\n", // 2
        "\n",                                          // 3
        "{\"item\": \"tea\", \"q\n",                   // 4
    );
    client.open(&kulala, text).await;
    assert_eq!(labels(&complete(&mut client, &kulala, 2, 21).await), ["shop.v1.Orders"]);
    let items = complete(&mut client, &kulala, 2, 36).await;
    assert_eq!(item(&items, "List")["textEdit"]["range"], range((2, 36), (2, 36)));
    // Inside an unclosed quote: the rest of the key and the colon.
    let items = complete(&mut client, &kulala, 4, 18).await;
    assert_eq!(labels(&items), ["quantity", "price", "at"]);
    assert_eq!(
        item(&items, "quantity")["textEdit"],
        json!({"range": range((4, 17), (4, 18)), "newText": "quantity\": "})
    );

    // No proto file: the schema would come from reflection, which completion never asks.
    let reflection = httpyac.replace("httpyac.http", "reflection.http");
    client.open(&reflection, "GRPC localhost:1/\n").await;
    assert_eq!(complete(&mut client, &reflection, 0, 17).await, Vec::<Value>::new());
    client.shutdown().await;
}

#[tokio::test]
async fn unknown_methods_fields_and_broken_proto_files_are_diagnosed() {
    let (dir, uri) = uri("shop.http");
    with_protos(&dir.path);
    std::fs::write(
        dir.path.join("protos/broken.proto"),
        "syntax = \"proto3\";\npackage broken;\nmessage A { string a = 1 }\n",
    )
    .expect("proto file");
    let text = concat!(
        "@k = key\n",                                                                                     // 0
        "# @grpc-proto ./protos/shop.proto\n",                                                            // 1
        "GRPC localhost:50051/shop.v1.Orders/Plac\n",                                                     // 2
        "\n",                                                                                             // 3
        "{\"item\": \"tea\"}\n",                                                                          // 4
        "\n",                                                                                             // 5
        "###\n",                                                                                          // 6
        "# @grpc-proto ./protos/shop.proto\n",                                                            // 7
        "GRPC localhost:50051/shop.v1.Orders/Place\n",                                                    // 8
        "\n",                                                                                             // 9
        "{\"item\": \"tea\", \"quantityy\": 2, \"price\": {\"bogus\": 1}, \"{{k}}\": 1, \"at\": null}\n", // 10
        "===\n",                                                                                          // 11
        "{\"item\": \"coffee\", \"itemz\": 1}\n",                                                         // 12
        "\n",                                                                                             // 13
        "###\n",                                                                                          // 14
        "# @grpc-proto ./protos/broken.proto\n",                                                          // 15
        "GRPC localhost:50051/broken.Nothing/Here\n",                                                     // 16
        "\n",                                                                                             // 17
        "###\n",                                                                                          // 18
        "GRPC localhost:1/shop.v1.Orders/Nope\n",                                                         // 19
    );
    let mut client = started().await;
    client.open(&uri, text).await;
    let diagnostics = grpc_diagnostics(&client.diagnostics(1).await);
    let messages: Vec<&str> = diagnostics.iter().map(|(_, message)| message.as_str()).collect();
    assert_eq!(diagnostics.len(), 4, "{diagnostics:#?}");

    assert_eq!(diagnostics[0].0, range((2, 5), (2, 40)));
    assert!(
        messages[0].starts_with("the service `shop.v1.Orders` has no method `Plac`: did you mean `Place`?")
            && messages[0].contains("hint: the schema has Place, List, Total, Chat"),
        "{}",
        messages[0]
    );
    assert_eq!(diagnostics[1].0, range((10, 16), (10, 27)));
    assert!(
        messages[1]
            .starts_with("the message `shop.v1.PlaceRequest` has no field `quantityy`: did you mean `quantity`?")
            && messages[1].contains("hint: its fields: item, quantity, price, at"),
        "{}",
        messages[1]
    );
    // Each message of the stream is checked.
    assert_eq!(diagnostics[2].0, range((12, 19), (12, 26)));
    assert!(messages[2].contains("no field `itemz`: did you mean `item`?"), "{}", messages[2]);
    // The proto file that does not compile: on the line naming it, where the compiler says.
    assert_eq!(diagnostics[3].0, range((15, 14), (15, 35)));
    assert!(messages[3].starts_with("broken.proto:3:"), "{}", messages[3]);
    // The last request's schema would come from reflection: not diagnosed.

    // Fixed in the document: the method's diagnostic goes.
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"range": range((2, 40), (2, 40)), "text": "e"}]}),
        )
        .await;
    let diagnostics = grpc_diagnostics(&client.diagnostics(2).await);
    assert_eq!(diagnostics.len(), 3, "{diagnostics:#?}");
    assert!(diagnostics[0].1.contains("quantityy"), "{diagnostics:#?}");

    // Fixed on disk: a watched-file event compiles it again.
    std::fs::write(
        dir.path.join("protos/broken.proto"),
        "syntax = \"proto3\";\npackage broken;\nmessage A { string a = 1; }\nservice Nothing { rpc Here (A) returns (A); }\n",
    )
    .expect("proto file");
    let changed = format!("file://{}", dir.path.join("protos/broken.proto").display());
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": changed, "type": 2}]})).await;
    let diagnostics = grpc_diagnostics(&client.diagnostics(2).await);
    assert_eq!(diagnostics.len(), 2, "{diagnostics:#?}");
    client.shutdown().await;
}

#[tokio::test]
async fn a_proto_line_of_the_global_region_is_diagnosed_where_it_is() {
    let (dir, uri) = uri("global.http");
    with_protos(&dir.path);
    let text = concat!(
        "proto < ./protos/broken.proto\n",             // 0
        "\n",                                          // 1
        "###\n",                                       // 2
        "GRPC localhost:50051/shop.v1.Orders/Place\n", // 3
        "\n",                                          // 4
        "###\n",                                       // 5
        "GRPC localhost:50051/shop.v1.Orders/List\n",  // 6
    );
    std::fs::write(dir.path.join("protos/broken.proto"), "syntax = \"proto3\";\nmessage {\n").expect("proto file");
    let mut client = started().await;
    client.open(&uri, text).await;
    let diagnostics = grpc_diagnostics(&client.diagnostics(1).await);
    // Both requests use it: one diagnostic.
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0].0, range((0, 8), (0, 29)));
    assert!(diagnostics[0].1.starts_with("broken.proto:2:"), "{}", diagnostics[0].1);
    client.shutdown().await;
}

/// In a file of several chunks (about 32 KiB each, reparsed alone), a request far from
/// the `proto <` line above the first `###` still has its schema.
#[tokio::test]
async fn the_proto_lines_of_the_global_region_reach_requests_in_other_chunks() {
    let (dir, uri) = uri("large.http");
    with_protos(&dir.path);
    let mut text = String::from("proto < ./protos/shop.proto\n\n");
    for index in 0..1500 {
        writeln!(text, "### request {index}\nGET https://example.com/{index}\n").expect("formatting");
    }
    let line = u32::try_from(text.lines().count()).expect("line") + 1;
    text.push_str("###\nGRPC localhost:50051/shop.v1.Orders/Plac\n");
    assert!(text.len() > 64 * 1024);
    let mut client = started().await;
    client.open(&uri, &text).await;
    let diagnostics = grpc_diagnostics(&client.diagnostics(1).await);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0].0, range((line, 5), (line, 40)));
    assert!(diagnostics[0].1.contains("did you mean `Place`?"), "{}", diagnostics[0].1);
    assert_eq!(labels(&complete(&mut client, &uri, line, 21).await), ["shop.v1.Orders"]);
    client.shutdown().await;
}

/// A send with a `live` id: a streaming call's response messages come as `volley/stream`
/// notifications (kind `grpc`) while the call runs, before the command answers.
#[tokio::test]
async fn a_streaming_call_tells_its_messages_while_it_runs() {
    use volley_echo_server::{GrpcOptions, GrpcServer};
    let server = GrpcServer::start(GrpcOptions::default()).await;
    let (_dir, uri) = uri("chat.http");
    let mut client = started().await;
    // Each `slow` line is echoed 300 ms after it came, and the next goes only then.
    let mut text = format!("GRPC {}/shop.v1.Orders/Chat\n\n{{\"text\": \"first\"}}\n", server.authority());
    for round in 0..3 {
        writeln!(text, "=== wait-for-server\n{{\"text\": \"slow {round}\"}}").expect("formatting");
    }
    client.open(&uri, &text).await;
    let id = client
        .start_request(
            "workspace/executeCommand",
            json!({"command": "volley.send", "arguments": [{"uri": uri, "index": 0, "live": "live-grpc"}]}),
        )
        .await;
    // Taken before the answer: `notification` would skip the answer, and it never came.
    let first = client.notification("volley/stream").await;
    assert_eq!(first["live"], "live-grpc");
    assert_eq!(first["kind"], "grpc");
    assert_eq!(first["item"]["event"], "message");
    assert_eq!(first["item"]["id"], "1");
    let message: Value = serde_json::from_str(first["item"]["data"].as_str().expect("data")).expect("JSON");
    assert_eq!(message["text"], "echo: first", "{message}");
    let answer = client.response(id).await["result"].clone();
    assert_eq!(answer["response"]["grpc"]["code"], "OK", "{answer}");
    assert_eq!(answer["response"]["grpc"]["messages"], 4);
    // The rest came too (the last ones may follow the answer, as docs/lsp.md says).
    let mut told = Vec::new();
    for _ in 2..=4 {
        told.push(client.notification("volley/stream").await["item"]["id"].clone());
    }
    assert_eq!(told, ["2", "3", "4"]);
    client.shutdown().await;
}

/// A request without proto files takes its schema from the server's reflection: the
/// server's catalog is fetched in the background once the document is checked, then
/// the document is checked again against it, and completion offers its services.
#[tokio::test]
async fn without_proto_files_the_servers_catalog_is_fetched_in_the_background() {
    use volley_echo_server::{GrpcOptions, GrpcServer};
    let server = GrpcServer::start(GrpcOptions::default()).await;
    let (_dir, uri) = uri("reflected.http");
    let mut client = started().await;
    let text = format!(
        "GRPC {0}/shop.v1.Orders/Plac\n\n{{}}\n\n###\nGRPC grpc://{0}/shop.v1.Orders/List\n\n{{\"count\": 1, \"colour\": 2}}\n",
        server.authority()
    );
    client.open(&uri, &text).await;
    // First without the catalog (nothing asked on the way), then with it. The catalog
    // may arrive while a check is under way: that check finds it for the parts after its
    // arrival only, and the check it sets off finds it for all. So the publishes are
    // awaited until one has both parts' diagnostics (each wait bounded by the client's).
    let diagnostics = loop {
        let diagnostics = grpc_diagnostics(&client.diagnostics(1).await);
        if diagnostics.len() >= 2 {
            break diagnostics;
        }
    };
    let messages: Vec<&str> = diagnostics.iter().map(|(_, message)| message.as_str()).collect();
    assert_eq!(diagnostics.len(), 2, "{diagnostics:#?}");
    assert!(messages[0].contains("did you mean `Place`?"), "{messages:?}");
    assert!(messages[1].contains("colour"), "{messages:?}");
    // Completion reads the catalog now kept: services after the authority.
    let column = u32::try_from(server.authority().len() + 6).expect("column");
    assert_eq!(labels(&complete(&mut client, &uri, 0, column).await), ["shop.v1.Orders"]);
    client.shutdown().await;
}
