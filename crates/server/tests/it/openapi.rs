//! The `OpenAPI` document at `/doc` held to the server. For every operation it serves,
//! request bodies and queries are generated from the document itself (`schema/mod.rs`):
//! instances valid at every boundary, on every `oneOf`/`anyOf` branch, and instances that
//! break one rule. A valid one must never be refused as invalid input (400 with
//! `VALIDATION_ERROR` or `CONTENT_OR_PATH_REQUIRED`) nor fail with a 5xx; an invalid one
//! must be refused with 400, one of those codes, in the error shape of docs/protocol.md.
//!
//! HTTP operations go through `volley_server::router` with `oneshot`; operations that
//! answer 101 (WebSocket upgrades) go over a real socket to the same router served on
//! 127.0.0.1. Executions reach the local upstream of `volley-echo-server`. The ids the
//! routes need (a session, a flow in it, a token, a WebSocket session, a stored
//! execution) are made fresh for every request, so that no request depends on another.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use futures_util::{SinkExt as _, StreamExt as _};
use http::{Method, Request, header};
use serde_json::{Map, Value, json};
use tokio_tungstenite::tungstenite::{self, Message, client::IntoClientRequest as _};
use tower::ServiceExt as _;
use volley_echo_server::TestServer;
use volley_server::ServerConfig;

mod document;
mod schema;

/// The main token: the document describes a server started with one.
const MAIN: &str = "main-secret";
/// The codes of a request refused as invalid input.
const INVALID_INPUT: [&str; 2] = ["VALIDATION_ERROR", "CONTENT_OR_PATH_REQUIRED"];
/// How long one request may take before the test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_generated_from_the_document_are_answered_as_it_says() {
    let upstream = TestServer::start().await;
    let workspace = Workspace::new(&upstream);
    let config = ServerConfig {
        workspace: workspace.0.clone(),
        token: Some(MAIN.to_owned()),
        max_sessions: 100_000,
        max_flows: 100_000,
        max_ws_sessions: 100_000,
        ..ServerConfig::default()
    };
    crate::support::install_http();
    let router = volley_server::router(config).expect("a router");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    let served = router.clone();
    tokio::spawn(async move { axum::serve(listener, served).await });
    let api = Api { router, socket_base: format!("ws://{address}"), upstream: upstream.base_url() };

    let (status, document) = api.call(Method::GET, "/doc", None).await;
    assert_eq!(status, 200, "{document}");
    let checker = schema::Document::new(&document);
    let mut report = Report::default();
    let paths = document["paths"].as_object().expect("paths");
    for (path, item) in paths {
        for (method, operation) in item.as_object().expect("a path item") {
            let Ok(method) = method.to_uppercase().parse::<Method>() else { continue };
            let operation = Operation::new(&checker, path, method, operation, &api);
            for case in operation.cases(&checker) {
                let outcome = api.send(&operation, &case).await;
                report.judge(&operation, &case, outcome);
            }
        }
    }
    report.finish();
}

/// The temporary workspace: a `.http` file per execute route, a configuration with a
/// `dev` profile, a subdirectory for `basePath`.
struct Workspace(std::path::PathBuf);

impl Workspace {
    fn new(upstream: &TestServer) -> Self {
        let root = std::env::temp_dir().join(format!("volley-openapi-{}", std::process::id()));
        std::fs::create_dir_all(root.join("sub")).expect("workspace");
        for (file, text) in texts(&upstream.base_url()) {
            std::fs::write(root.join(file), text).expect("a .http file");
        }
        std::fs::write(root.join("volley.jsonc"), r#"{ "profiles": { "dev": { "variables": { "who": "dev" } } } }"#)
            .expect("volley.jsonc");
        Self(root.canonicalize().expect("canonical"))
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `.http` text each execute route runs, by the file that holds it too.
fn texts(upstream: &str) -> [(&'static str, String); 3] {
    let socket = upstream.replacen("http", "ws", 1);
    [
        ("execute.http", format!("# @name first\nGET {upstream}/echo\n")),
        ("sse.http", format!("# @name first\n# @sse\nGET {upstream}/sse/events\n")),
        ("ws.http", format!("# @name first\nGET {socket}/ws/echo\n")),
    ]
}

/// The router, and where its WebSocket routes are served.
struct Api {
    router: Router,
    socket_base: String,
    upstream: String,
}

/// What an operation answered: the status, and the error body of a refusal.
struct Outcome {
    status: u16,
    body: Value,
}

impl Api {
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> (u16, Value) {
        let mut request =
            Request::builder().method(method).uri(path).header(header::AUTHORIZATION, format!("Bearer {MAIN}"));
        let body = match body {
            Some(body) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Body::from(body.to_string())
            }
            None => Body::empty(),
        };
        let response =
            tokio::time::timeout(PATIENCE, self.router.clone().oneshot(request.body(body).expect("request")))
                .await
                .expect("an answer in time")
                .expect("the router is infallible");
        let status = response.status().as_u16();
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/json"));
        // Event streams are left unread: their head is the answer.
        if !is_json {
            return (status, Value::Null);
        }
        let bytes = tokio::time::timeout(PATIENCE, axum::body::to_bytes(response.into_body(), usize::MAX))
            .await
            .expect("a body in time")
            .expect("a body");
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// A fresh session, a flow in it, and what `path` needs besides.
    async fn fixtures(&self, path: &str) -> BTreeMap<&'static str, String> {
        let id = |answer: &Value, field: &str| {
            answer[field].as_str().unwrap_or_else(|| panic!("{field}: {answer}")).to_owned()
        };
        let mut fixtures = BTreeMap::new();
        let (_, session) = self.call(Method::POST, "/session", None).await;
        let session = id(&session, "sessionId");
        let (_, flow) = self.call(Method::POST, "/flows", Some(&json!({ "sessionId": session }))).await;
        let flow = id(&flow, "flowId");
        if path.contains("{jti}") {
            let (_, token) = self.call(Method::POST, "/tokens", Some(&json!({ "flowId": flow }))).await;
            fixtures.insert("$jti", id(&token, "jti"));
        }
        if path.contains("{exec}") {
            let content = &texts(&self.upstream)[0].1;
            let body = json!({ "content": content, "flowId": flow });
            let (_, execution) = self.call(Method::POST, "/execute", Some(&body)).await;
            fixtures.insert("$exec", id(&execution, "reqExecId"));
        }
        if path.contains("{wsSessionId}") {
            let body = json!({ "content": texts(&self.upstream)[2].1 });
            let (_, opened) = self.call(Method::POST, "/execute/ws", Some(&body)).await;
            fixtures.insert("$ws", opened["ws"]["wsSessionId"].as_str().expect("wsSessionId").to_owned());
        }
        fixtures.insert("$session", session);
        fixtures.insert("$flow", flow);
        fixtures.insert("$source", "curl".to_owned());
        fixtures.insert("$run", "run_x".to_owned());
        fixtures
    }

    async fn send(&self, operation: &Operation, case: &Case) -> Outcome {
        let fixtures = self.fixtures(&operation.path).await;
        let mut path = operation.path.clone();
        for (name, placeholder) in &operation.path_parameters {
            path = path.replace(&format!("{{{name}}}"), &fixtures[placeholder.as_str()]);
        }
        if let Some(query) = &case.query {
            path =
                format!("{path}?{}", substitute(&Value::String(query.clone()), &fixtures).as_str().unwrap_or_default());
        }
        let body = case.body.as_ref().map(|body| substitute(body, &fixtures));
        if operation.upgrades && !case.plain {
            return self.upgrade(&path).await;
        }
        let (status, body) = self.call(operation.method.clone(), &path, body.as_ref()).await;
        Outcome { status, body }
    }

    /// A WebSocket handshake on `path`; when it succeeds, a ping must come back as a pong.
    async fn upgrade(&self, path: &str) -> Outcome {
        let mut request = format!("{}{path}", self.socket_base).into_client_request().expect("request");
        request.headers_mut().insert(header::AUTHORIZATION, format!("Bearer {MAIN}").parse().expect("header"));
        let connected =
            tokio::time::timeout(PATIENCE, tokio_tungstenite::connect_async(request)).await.expect("in time");
        match connected {
            Ok((mut socket, _)) => {
                socket.send(Message::Ping(b"alive?".to_vec().into())).await.expect("ping");
                let alive = tokio::time::timeout(PATIENCE, async {
                    while let Some(Ok(message)) = socket.next().await {
                        if matches!(message, Message::Pong(_)) {
                            return true;
                        }
                    }
                    false
                })
                .await
                .unwrap_or(false);
                let _ = socket.close(None).await;
                Outcome { status: if alive { 101 } else { 599 }, body: Value::Null }
            }
            Err(tungstenite::Error::Http(response)) => {
                let body = response.body().as_deref().and_then(|bytes| serde_json::from_slice(bytes).ok());
                Outcome { status: response.status().as_u16(), body: body.unwrap_or(Value::Null) }
            }
            Err(other) => panic!("the handshake on {path} failed: {other}"),
        }
    }
}

/// `value` with the fixtures' placeholders (`$session`, …) replaced by live ids.
fn substitute(value: &Value, fixtures: &BTreeMap<&'static str, String>) -> Value {
    match value {
        Value::String(text) => {
            let mut text = text.clone();
            for (placeholder, id) in fixtures {
                text = text.replace(placeholder, id);
            }
            Value::String(text)
        }
        Value::Array(items) => Value::Array(items.iter().map(|item| substitute(item, fixtures)).collect()),
        Value::Object(object) => {
            Value::Object(object.iter().map(|(key, item)| (key.clone(), substitute(item, fixtures))).collect())
        }
        other => other.clone(),
    }
}

/// One operation of the document, as the test drives it.
struct Operation {
    method: Method,
    path: String,
    /// Path parameters and the fixture each takes.
    path_parameters: Vec<(String, String)>,
    /// The schema of the JSON body, and whether the body is required.
    body: Option<(Value, bool)>,
    /// The query parameters as one object schema.
    query: Option<Value>,
    /// A WebSocket upgrade (it answers 101).
    upgrades: bool,
    /// Values to try first, by property name.
    fixtures: BTreeMap<&'static str, Vec<Value>>,
}

/// One request of an operation.
#[derive(Clone)]
struct Case {
    body: Option<Value>,
    query: Option<String>,
    /// The rule it breaks, for an invalid one.
    breaks: Option<String>,
    /// Sent without the handshake's headers, to a route that upgrades.
    plain: bool,
}

impl Case {
    fn valid(body: Option<Value>, query: Option<String>) -> Self {
        Self { body, query, breaks: None, plain: false }
    }

    fn invalid(body: Option<Value>, query: Option<String>, rule: String) -> Self {
        Self { body, query, breaks: Some(rule), plain: false }
    }
}

impl Operation {
    fn new(checker: &schema::Document<'_>, path: &str, method: Method, operation: &Value, api: &Api) -> Self {
        let mut path_parameters = Vec::new();
        let mut query_parts = Vec::new();
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            let parameter = checker.resolve(parameter);
            let name = parameter["name"].as_str().expect("a name").to_owned();
            match parameter["in"].as_str() {
                Some("path") => {
                    let placeholder = match (path, name.as_str()) {
                        (_, "jti") => "$jti",
                        (_, "wsSessionId") => "$ws",
                        (_, "exec") => "$exec",
                        (_, "source") => "$source",
                        (_, "runId") => "$run",
                        (path, _) if path.starts_with("/session") => "$session",
                        (path, _) if path.starts_with("/flows") => "$flow",
                        _ => panic!("no fixture for the path parameter {name} of {path}"),
                    };
                    path_parameters.push((name, placeholder.to_owned()));
                }
                Some("query") => {
                    let exploded = parameter["style"].as_str().is_none_or(|style| style == "form")
                        && parameter["explode"].as_bool().unwrap_or(true);
                    let object = schema::types(checker.resolve(&parameter["schema"])).contains(&"object")
                        || parameter["schema"].get("allOf").is_some();
                    if exploded && object {
                        query_parts.push(parameter["schema"].clone());
                    } else {
                        let required = parameter["required"].as_bool().unwrap_or(false);
                        let mut part = json!({ "type": "object", "properties": { name.clone(): parameter["schema"] } });
                        if required {
                            part["required"] = json!([name]);
                        }
                        query_parts.push(part);
                    }
                }
                // The handshake's headers: the WebSocket client sends them (and a case
                // without them is added).
                Some("header") => assert!(operation["responses"].get("101").is_some(), "a header of {path}"),
                other => panic!("a parameter in {other:?} of {path}"),
            }
        }
        let body = operation.get("requestBody").map(|body| {
            let schema = body["content"]["application/json"]["schema"].clone();
            (schema, body["required"].as_bool().unwrap_or(false))
        });
        let upgrades = operation["responses"].get("101").is_some();
        let texts = texts(&api.upstream);
        let (content, file) = match path {
            "/execute/sse" => (&texts[1].1, texts[1].0),
            "/execute/ws" => (&texts[2].1, texts[2].0),
            _ => (&texts[0].1, texts[0].0),
        };
        let fixtures = BTreeMap::from([
            ("content", vec![json!(content)]),
            ("path", vec![json!(file)]),
            ("basePath", vec![json!("."), json!("sub")]),
            ("requestName", vec![json!("first")]),
            ("profile", vec![json!("dev")]),
            ("sessionId", vec![json!("$session")]),
            ("flowId", vec![json!("$flow")]),
            ("input", vec![json!("curl http://127.0.0.1:9/imported")]),
            ("planOptions", vec![json!({ "outputDir": "imported" })]),
            ("applyOptions", vec![json!({ "outputDir": "imported", "onConflict": "overwrite" })]),
        ]);
        Self {
            method,
            path: path.to_owned(),
            path_parameters,
            body,
            query: (!query_parts.is_empty()).then(|| json!({ "allOf": query_parts })),
            upgrades,
            fixtures,
        }
    }

    fn name(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// The requests to send: valid ones first, then those that break one rule.
    fn cases(&self, checker: &schema::Document<'_>) -> Vec<Case> {
        let seed =
            self.path.bytes().fold(0x9e37_79b9_7f4a_7c15_u64, |hash, byte| hash.rotate_left(5) ^ u64::from(byte));
        let mut cases = Vec::new();
        if let Some((schema, required)) = &self.body {
            let instances = checker.instances(schema, &self.fixtures, seed);
            if !required {
                cases.push(Case::valid(None, None));
            }
            cases.extend(instances.valid.into_iter().map(|body| Case::valid(Some(body), None)));
            cases.extend(instances.invalid.into_iter().map(|(body, rule)| Case::invalid(Some(body), None, rule)));
        }
        if let Some(schema) = &self.query {
            let instances = checker.instances(schema, &self.fixtures, seed);
            let typed = property_types(checker, schema);
            let mut sent = std::collections::BTreeSet::new();
            let all = instances.valid.into_iter().chain(instances.invalid.into_iter().map(|(instance, _)| instance));
            for instance in all {
                let Some(object) = instance.as_object() else { continue };
                // What goes on the wire is text: judge the instance as the server reads it.
                let (query, read) = wire_query(object, &typed);
                if !sent.insert(query.clone()) {
                    continue;
                }
                match checker.check(schema, &Value::Object(read)) {
                    Ok(()) => cases.push(Case::valid(None, Some(query))),
                    Err(rule) => cases.push(Case::invalid(None, Some(query), rule)),
                }
            }
        }
        if cases.is_empty() {
            cases.push(Case::valid(None, None));
        }
        if self.upgrades {
            let first = cases.iter().find(|case| case.breaks.is_none()).cloned().unwrap_or(Case::valid(None, None));
            let rule = "the required handshake headers (`Upgrade`, …)".to_owned();
            cases.push(Case { breaks: Some(rule), plain: true, ..first });
        }
        cases
    }
}

/// The JSON types of every property an object schema (with its `allOf` parts) declares.
fn property_types(checker: &schema::Document<'_>, schema: &Value) -> BTreeMap<String, Vec<String>> {
    let schema = checker.resolve(schema);
    let mut types = BTreeMap::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let kinds = schema::types(checker.resolve(property)).into_iter().map(str::to_owned);
        types.entry(name.clone()).or_insert_with(Vec::new).extend(kinds);
    }
    for part in schema["allOf"].as_array().into_iter().flatten() {
        for (name, kinds) in property_types(checker, part) {
            types.entry(name).or_insert_with(Vec::new).extend(kinds);
        }
    }
    types
}

/// `object` as a query string, and as the server reads it back (integers and booleans
/// where the property takes them, text otherwise).
fn wire_query(object: &Map<String, Value>, declared: &BTreeMap<String, Vec<String>>) -> (String, Map<String, Value>) {
    let mut pairs = Vec::new();
    let mut read = Map::new();
    for (name, value) in object {
        let text = match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let kinds = declared.get(name).cloned().unwrap_or_default();
        let integer = text.parse::<i64>().map(Value::from).or_else(|_| text.parse::<u64>().map(Value::from));
        let typed = if kinds.iter().any(|kind| kind == "integer")
            && let Ok(number) = integer
        {
            number
        } else if kinds.iter().any(|kind| kind == "boolean") && (text == "true" || text == "false") {
            json!(text == "true")
        } else {
            json!(text)
        };
        pairs.push(format!("{}={}", encode(name), encode(&text)));
        read.insert(name.clone(), typed);
    }
    (pairs.join("&"), read)
}

/// Percent-encodes everything but unreserved characters (and the fixtures' `$`).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'$' => char::from(byte).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// What was sent and what went wrong.
#[derive(Default)]
struct Report {
    sent: BTreeMap<String, (usize, usize)>,
    failures: Vec<String>,
}

impl Report {
    fn judge(&mut self, operation: &Operation, case: &Case, outcome: Outcome) {
        let counts = self.sent.entry(operation.name()).or_default();
        let Outcome { status, body } = outcome;
        let code = body["error"]["code"].as_str().unwrap_or_default();
        let refused_as_invalid = status == 400 && INVALID_INPUT.contains(&code);
        let shaped = body["error"]["message"].as_str().is_some_and(|message| !message.is_empty())
            && body.as_object().is_some_and(|object| object.len() == 1);
        let request =
            format!("{} body {:?} query {:?}", operation.name(), case.body.as_ref().map(Value::to_string), case.query);
        match &case.breaks {
            None => {
                counts.0 += 1;
                // A route the server documents as not served answers 501 NOT_IMPLEMENTED.
                let not_served = status == 501 && code == "NOT_IMPLEMENTED" && shaped;
                if refused_as_invalid || (status >= 500 && !not_served) {
                    self.failures.push(format!("valid, answered {status} {body}: {request}"));
                }
            }
            Some(rule) => {
                counts.1 += 1;
                if !(refused_as_invalid && shaped) {
                    self.failures.push(format!("invalid ({rule}), answered {status} {body}: {request}"));
                }
            }
        }
    }

    fn finish(self) {
        for (operation, (valid, _)) in &self.sent {
            assert!(*valid > 0, "{operation}: no valid request was made");
        }
        assert!(self.sent.len() >= 18, "every operation is driven: {:?}", self.sent.keys().collect::<Vec<_>>());
        let refused = self.sent.values().filter(|(_, invalid)| *invalid > 0).count();
        assert!(refused >= 9, "operations with rules get invalid requests: {:?}", self.sent);
        assert!(self.failures.is_empty(), "{} disagreements:\n{}", self.failures.len(), self.failures.join("\n"));
    }
}

#[test]
fn the_checker_reads_the_keywords_of_the_document() {
    let document = json!({ "components": { "schemas": { "Mode": { "type": "string", "enum": ["a", "b"] } } } });
    let checker = schema::Document::new(&document);
    let schema = json!({
        "allOf": [
            { "type": "object", "properties": {
                "n": { "type": ["integer", "null"], "minimum": 1, "maximum": 5 },
                "s": { "type": "string", "maxLength": 2, "pattern": "^[a-z]*$" },
                "m": { "$ref": "#/components/schemas/Mode" },
                "o": { "type": "object", "maxProperties": 1 },
            }, "dependentRequired": { "n": ["s"] } },
            { "oneOf": [{ "required": ["s"] }, { "required": ["m"] }] },
        ]
    });
    for valid in [json!({ "s": "ab" }), json!({ "m": "a", "o": { "k": 1 } }), json!({ "n": 5, "s": "" })] {
        assert_eq!(checker.check(&schema, &valid), Ok(()), "{valid}");
    }
    let invalid = [
        json!({ "s": "abc" }),
        json!({ "s": "A" }),
        json!({ "m": "c" }),
        json!({ "s": "a", "m": "a" }),
        json!({}),
        json!({ "n": 0, "s": "a" }),
        json!({ "n": 6, "s": "a" }),
        json!({ "n": 1, "m": "a" }),
        json!({ "m": "a", "o": { "k": 1, "l": 2 } }),
        json!({ "s": 1 }),
    ];
    for value in invalid {
        assert!(checker.check(&schema, &value).is_err(), "{value}");
    }
    let instances = checker.instances(&schema, &BTreeMap::new(), 1);
    assert!(instances.valid.iter().all(|value| checker.check(&schema, value).is_ok()));
    assert!(instances.invalid.iter().all(|(value, _)| checker.check(&schema, value).is_err()));
    for boundary in [json!(1), json!(5)] {
        assert!(instances.valid.iter().any(|value| value["n"] == boundary), "n = {boundary} is tried");
    }
    for broken in [json!(0), json!(6)] {
        assert!(instances.invalid.iter().any(|(value, _)| value["n"] == broken), "n = {broken} is tried");
    }
    assert!(instances.invalid.iter().any(|(value, _)| value.get("s").is_some() && value.get("m").is_some()));
}
