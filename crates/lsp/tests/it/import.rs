//! `volley.import` over real JSON-RPC messages: an OpenAPI description in the workspace
//! converted by the engine and written beside it, what was not converted answered.

use crate::support;

use serde_json::{Value, json};
use support::{TestClient, tempdir};

const SPEC: &str = "\
openapi: 3.1.0
info: {title: Todo, version: '1'}
servers: [{url: 'https://todo.example.com', description: Production}]
paths:
  /todos/{id}:
    get:
      operationId: getTodo
      parameters: [{name: id, in: path, required: true, schema: {type: integer, example: 7}}]
      callbacks: {done: {}}
      responses: {'200': {description: ok}}
";

#[tokio::test]
async fn imports_a_file_into_the_workspace() {
    let dir = tempdir::Dir::new();
    std::fs::write(dir.path.join("todo.yaml"), SPEC).expect("spec file");
    let mut client = TestClient::start();
    let capabilities = client.initialize().await["capabilities"].clone();
    assert!(
        capabilities["executeCommandProvider"]["commands"]
            .as_array()
            .expect("commands")
            .contains(&json!("volley.import"))
    );
    let source = format!("file://{}", dir.path.join("todo.yaml").display());
    let target = dir.path.join("api");
    let argument = json!({"format": "openapi", "source": source, "directory": target.display().to_string()});
    let imported: Value =
        client.request("workspace/executeCommand", json!({"command": "volley.import", "arguments": [argument]})).await;
    assert_eq!(imported["written"], json!([target.join("Todo.http"), target.join("volley.jsonc")]), "{imported}");
    let written = std::fs::read_to_string(target.join("Todo.http")).expect("written");
    assert_eq!(
        written,
        "### getTodo\n# the callback `done` is a request the API sends: not converted\n# @name getTodo\nGET {{baseUrl}}/todos/{{id}}\n"
    );
    assert_eq!(imported["files"][0]["text"], json!(written));
    assert_eq!(
        imported["unconverted"],
        json!([{"location": "paths./todos/{id}.get", "reason": "the callback `done` is a request the API sends: not converted"}])
    );
    // A second import would replace the files: refused, nothing written.
    let again = client
        .request_error("workspace/executeCommand", json!({"command": "volley.import", "arguments": [argument]}))
        .await;
    assert_eq!(again["code"], json!(-32803), "{again}");
    assert!(again["message"].as_str().expect("message").contains("exists"), "{again}");
    client.shutdown().await;
}
