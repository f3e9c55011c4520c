//! The routes of t-req's clients beyond execution: `/workspace/*`, `/parse`, `/config`,
//! `/plugins`, `/import/{source}/*`, and the script and test runners Volley does not
//! have (`501`).

use super::*;

const USERS: &str = "### List users\n# @name listUsers\nGET http://127.0.0.1:9/users?page=1\nAccept: application/json\n\n### Create user\nPOST http://127.0.0.1:9/users\nContent-Type: application/json\n\n{\"name\": \"Ada\"}\n";

async fn put(api: &Api, token: Option<&str>, body: Value) -> Reply {
    api.send(Method::PUT, "/workspace/file", token, Some(body)).await
}

async fn delete(api: &Api, path: &str) -> Reply {
    api.send(Method::DELETE, &format!("/workspace/file?path={path}"), None, None).await
}

/// The events of an observer stream without filters until `count` of `kind` came (or 10 s).
async fn events_of(response: Response<Body>, kind: &str, count: usize) -> Vec<Value> {
    let mut stream = response.into_body().into_data_stream();
    let mut text = String::new();
    let mut found = Vec::new();
    while found.len() < count {
        let Ok(Some(Ok(chunk))) = tokio::time::timeout(Duration::from_secs(10), stream.next()).await else { break };
        text.push_str(&String::from_utf8_lossy(&chunk));
        found = text
            .split("\n\n")
            .filter(|event| event.lines().any(|line| line == format!("event: {kind}")))
            .filter_map(|event| event.lines().find_map(|line| line.strip_prefix("data: ")))
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect();
    }
    found
}

#[tokio::test]
async fn the_files_are_listed_with_their_request_counts_ignored_directories_left_out() {
    let api = Api::open();
    api.workspace.write("users.http", USERS);
    api.workspace.write("api/health.rest", "GET http://127.0.0.1:9/health\n");
    api.workspace.write("notes.txt", "not a request file");
    for ignored in ["node_modules/x.http", ".git/y.http", "target/z.http", "fixtures/old.http"] {
        api.workspace.write(ignored, "GET http://127.0.0.1:9/\n");
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(&api.workspace.base, api.workspace.root.join("up")).expect("symlink");
    let reply = api.get("/workspace/files?ignore=fixtures", None).await;
    let body = ok(&reply, StatusCode::OK);
    assert_eq!(body["workspaceRoot"], json!(api.workspace.root.display().to_string()));
    let mut files: Vec<(String, String, u64)> = body["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|file| {
            assert!(file["lastModified"].as_u64().expect("lastModified") > 1_600_000_000_000, "{file}");
            (
                file["path"].as_str().expect("path").to_owned(),
                file["name"].as_str().expect("name").to_owned(),
                file["requestCount"].as_u64().expect("requestCount"),
            )
        })
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            ("api/health.rest".to_owned(), "health.rest".to_owned(), 1),
            ("users.http".to_owned(), "users.http".to_owned(), 2)
        ],
        "no ignored directory, no symlink followed out of the workspace"
    );
    let all = api.get("/workspace/files", None).await;
    assert_eq!(
        ok(&all, StatusCode::OK)["files"].as_array().expect("files").len(),
        3,
        "fixtures/ is listed unless ignored"
    );
}

#[tokio::test]
async fn the_requests_of_a_file_have_the_index_execute_takes() {
    let api = Api::open();
    api.workspace.write("users.http", USERS);
    api.workspace.write("events.http", "# @sse\nGET http://127.0.0.1:9/stream\n\n###\nGET ws://127.0.0.1:9/chat\n");
    let reply = api.get("/workspace/requests?path=users.http", None).await;
    assert_eq!(
        ok(&reply, StatusCode::OK),
        &json!({ "path": "users.http", "requests": [
            { "index": 0, "name": "listUsers", "method": "GET", "url": "http://127.0.0.1:9/users?page=1", "protocol": "http", "line": 3 },
            { "index": 1, "name": "Create user", "method": "POST", "url": "http://127.0.0.1:9/users", "protocol": "http", "line": 7 },
        ]})
    );
    let reply = api.get("/workspace/requests?path=events.http", None).await;
    let protocols: Vec<&Value> = ok(&reply, StatusCode::OK)["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|request| &request["protocol"])
        .collect();
    assert_eq!(protocols, [&json!("sse"), &json!("ws")]);
    // A password written in a URL is not given out.
    api.workspace.write("secret.http", "GET http://user:hunter2@127.0.0.1:9/\n");
    let reply = api.get("/workspace/requests?path=secret.http", None).await;
    assert!(!reply.2.to_string().contains("hunter2"), "{}", reply.2);
}

#[tokio::test]
async fn reads_are_confined_to_the_workspace() {
    let api = Api::open();
    api.workspace.write("users.http", USERS);
    let reply = api.get("/workspace/file?path=users.http", None).await;
    let body = ok(&reply, StatusCode::OK);
    assert_eq!((&body["path"], &body["content"]), (&json!("users.http"), &json!(USERS)));
    assert!(body["lastModified"].as_u64().expect("lastModified") > 0);
    let outside = api.workspace.base.join("outside.http").display().to_string();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(api.workspace.base.join("outside.http"), api.workspace.root.join("link.http"))
            .expect("symlink");
        std::os::unix::fs::symlink(&api.workspace.base, api.workspace.root.join("up")).expect("symlink");
    }
    for route in ["/workspace/file", "/workspace/requests"] {
        for path in
            ["../outside.http", "a/../../outside.http", outside.as_str(), "/etc/passwd", "link.http", "up/outside.http"]
        {
            if cfg!(not(unix)) && (path == "link.http" || path == "up/outside.http") {
                continue;
            }
            let reply = api.get(&format!("{route}?path={path}"), None).await;
            expect_error(&reply, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
        }
        expect_error(
            &api.get(&format!("{route}?path=missing.http"), None).await,
            StatusCode::NOT_FOUND,
            "FILE_NOT_FOUND",
        );
        expect_error(&api.get(route, None).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }
    api.workspace.write("binary.http", "");
    std::fs::write(api.workspace.root.join("binary.http"), [0xff, 0xfe, 0x00]).expect("write");
    expect_error(&api.get("/workspace/file?path=binary.http", None).await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
}

#[tokio::test]
async fn files_are_created_updated_and_deleted_and_each_change_is_announced() {
    let api = Api::open();
    let observer = api.raw(request(Method::GET, "/event", None, None)).await;
    assert_eq!(observer.status(), StatusCode::OK);

    let reply = api
        .post("/workspace/file", None, json!({ "path": "new/dir/a.http", "content": "GET http://127.0.0.1:9/a\n" }))
        .await;
    let body = ok(&reply, StatusCode::CREATED);
    assert_eq!((&body["path"], &body["content"]), (&json!("new/dir/a.http"), &json!("GET http://127.0.0.1:9/a\n")));
    assert_eq!(
        std::fs::read_to_string(api.workspace.root.join("new/dir/a.http")).expect("created"),
        "GET http://127.0.0.1:9/a\n"
    );
    let again = api.post("/workspace/file", None, json!({ "path": "new/dir/a.http" })).await;
    expect_error(&again, StatusCode::CONFLICT, "FILE_EXISTS");
    let empty = api.post("/workspace/file", None, json!({ "path": "empty.http" })).await;
    assert_eq!(ok(&empty, StatusCode::CREATED)["content"], json!(""));

    ok(
        &put(&api, None, json!({ "path": "new/dir/a.http", "content": "GET http://127.0.0.1:9/b\n" })).await,
        StatusCode::OK,
    );
    assert_eq!(
        std::fs::read_to_string(api.workspace.root.join("new/dir/a.http")).expect("updated"),
        "GET http://127.0.0.1:9/b\n"
    );
    let leftovers: Vec<_> = std::fs::read_dir(api.workspace.root.join("new/dir"))
        .expect("read_dir")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(leftovers, ["a.http"], "no temporary file is left beside it");
    // An update keeps the file's mode (a private file stays private).
    let file = api.workspace.root.join("new/dir/a.http");
    #[cfg(unix)]
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).expect("chmod");
    let reply = put(&api, None, json!({ "path": "new/dir/a.http", "content": "GET http://127.0.0.1:9/b\n" })).await;
    ok(&reply, StatusCode::OK);
    #[cfg(unix)]
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).expect("metadata").permissions()) & 0o777,
        0o600
    );

    assert_eq!(delete(&api, "new/dir/a.http").await.0, StatusCode::NO_CONTENT);
    assert!(!api.workspace.root.join("new/dir/a.http").exists());

    let changes: Vec<(Value, Value)> = events_of(observer, "workspaceFileChanged", 5)
        .await
        .into_iter()
        .map(|event| (event["payload"]["path"].clone(), event["payload"]["change"].clone()))
        .collect();
    assert_eq!(
        changes,
        [
            (json!("new/dir/a.http"), json!("created")),
            (json!("empty.http"), json!("created")),
            (json!("new/dir/a.http"), json!("updated")),
            (json!("new/dir/a.http"), json!("updated")),
            (json!("new/dir/a.http"), json!("deleted")),
        ]
    );
}

#[tokio::test]
async fn bad_writes_are_refused_and_nothing_leaves_the_workspace() {
    let api = Api::open();
    api.workspace.write("notes.txt", "keep");
    for path in ["notes.txt", "script.ts", "dir/"] {
        let reply = api.post("/workspace/file", None, json!({ "path": path, "content": "x" })).await;
        expect_error(&reply, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }
    expect_error(
        &put(&api, None, json!({ "path": "notes.txt", "content": "x" })).await,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
    );
    expect_error(&delete(&api, "notes.txt").await, StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert_eq!(std::fs::read_to_string(api.workspace.root.join("notes.txt")).expect("kept"), "keep");
    expect_error(
        &put(&api, None, json!({ "path": "missing.http", "content": "x" })).await,
        StatusCode::NOT_FOUND,
        "FILE_NOT_FOUND",
    );
    expect_error(
        &put(&api, None, json!({ "path": "missing.http" })).await,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
    );
    expect_error(&delete(&api, "missing.http").await, StatusCode::NOT_FOUND, "FILE_NOT_FOUND");
    expect_error(
        &api.post("/workspace/file", None, json!({ "content": "x" })).await,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
    );

    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(api.workspace.base.join("outside.http"), api.workspace.root.join("link.http"))
            .expect("symlink");
        std::os::unix::fs::symlink(&api.workspace.base, api.workspace.root.join("up")).expect("symlink");
    }
    let made = api.workspace.base.join("made.http").display().to_string();
    for path in ["../made.http", "a/../../made.http", made.as_str(), "up/made.http", "up/outside.http", "link.http"] {
        if cfg!(not(unix)) && (path.starts_with("up/") || path == "link.http") {
            continue;
        }
        let created = api.post("/workspace/file", None, json!({ "path": path, "content": "x" })).await;
        expect_error(&created, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
    }
    let outside = api.workspace.base.join("outside.http").display().to_string();
    for path in ["../outside.http", "a/../../outside.http", outside.as_str(), "up/outside.http", "link.http"] {
        if cfg!(not(unix)) && (path.starts_with("up/") || path == "link.http") {
            continue;
        }
        expect_error(
            &put(&api, None, json!({ "path": path, "content": "x" })).await,
            StatusCode::FORBIDDEN,
            "PATH_OUTSIDE_WORKSPACE",
        );
        expect_error(&delete(&api, path).await, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
    }
    assert!(!api.workspace.base.join("made.http").exists());
    assert_eq!(
        std::fs::read_to_string(api.workspace.base.join("outside.http")).expect("outside"),
        "GET http://127.0.0.1:9/outside\n",
        "the file outside is untouched"
    );
}

#[tokio::test]
async fn parse_answers_requests_and_diagnostics_in_t_reqs_shape() {
    let api = Api::open();
    api.workspace.write("users.http", USERS);
    let reply = api.post("/parse", None, json!({ "path": "users.http", "includeBodyContent": true })).await;
    let body = ok(&reply, StatusCode::OK);
    let requests = body["requests"].as_array().expect("requests");
    assert_eq!(requests.len(), 2);
    let create = &requests[1]["request"];
    assert_eq!(create["name"], json!("Create user"));
    assert_eq!(create["headers"], json!({ "Content-Type": "application/json" }));
    assert_eq!(
        (&create["hasBody"], &create["hasFormData"], &create["hasBodyFile"]),
        (&json!(true), &json!(false), &json!(false))
    );
    assert_eq!(
        create["body"],
        json!({ "kind": "inline", "text": "{\"name\": \"Ada\"}", "isJsonLike": true, "contentType": "application/json" })
    );
    let url = &create["spans"]["url"];
    let (start, end) =
        (url["startOffset"].as_u64().expect("start") as usize, url["endOffset"].as_u64().expect("end") as usize);
    assert_eq!(&USERS[start..end], "http://127.0.0.1:9/users");
    assert_eq!(body["resolved"]["httpFilePath"], json!("users.http"));

    let reply = api.post("/parse", None, json!({ "content": "GET http://127.0.0.1:9/\nX-Bad header\n" })).await;
    let body = ok(&reply, StatusCode::OK);
    let diagnostic = &body["diagnostics"][0];
    assert!(diagnostic["code"].is_string() && diagnostic["message"].is_string(), "{body}");
    assert!(["error", "warning", "info"].contains(&diagnostic["severity"].as_str().expect("severity")));
    assert_eq!(diagnostic["range"]["start"]["line"], json!(1), "lines from 0: {body}");
    assert!(body["resolved"].get("httpFilePath").is_none());
    let quiet = api
        .post(
            "/parse",
            None,
            json!({ "content": "GET http://127.0.0.1:9/\nX-Bad header\n", "includeDiagnostics": false }),
        )
        .await;
    assert_eq!(ok(&quiet, StatusCode::OK)["diagnostics"], json!([]));

    expect_error(&api.post("/parse", None, json!({})).await, StatusCode::BAD_REQUEST, "CONTENT_OR_PATH_REQUIRED");
    expect_error(
        &api.post("/parse", None, json!({ "content": "x", "path": "users.http" })).await,
        StatusCode::BAD_REQUEST,
        "CONTENT_OR_PATH_REQUIRED",
    );
    expect_error(
        &api.post("/parse", None, json!({ "path": "../outside.http" })).await,
        StatusCode::FORBIDDEN,
        "PATH_OUTSIDE_WORKSPACE",
    );
    expect_error(
        &api.post("/parse", None, json!({ "path": "missing.http" })).await,
        StatusCode::NOT_FOUND,
        "FILE_NOT_FOUND",
    );
}

#[tokio::test]
async fn config_lists_profiles_and_hides_secrets() {
    let api = Api::with(|config| {
        config.environment =
            volley_engine::resolvers::Environment::fixed([("HOST_FROM_ENV".to_owned(), "env-value".to_owned())]);
    });
    let bare = api.get("/config", None).await;
    let body = ok(&bare, StatusCode::OK);
    assert_eq!((&body["availableProfiles"], &body["resolvedConfig"]["variables"]), (&json!([]), &json!({})));
    assert_eq!(body["resolvedConfig"]["plugins"], Value::Null);

    api.workspace.write(
        "volley.jsonc",
        r#"{
          // comments are fine
          "variables": { "baseUrl": "http://127.0.0.1:9", "apiToken": "s3cr3t-value", "fromEnv": "{env:HOST_FROM_ENV}" },
          "profiles": { "staging": { "variables": { "baseUrl": "http://staging" } }, "prod": {} }
        }"#,
    );
    let reply = api.get("/config?profile=staging", None).await;
    let body = ok(&reply, StatusCode::OK);
    assert_eq!(body["availableProfiles"], json!(["prod", "staging"]));
    assert_eq!(body["profile"], json!("staging"));
    assert_eq!(body["format"], json!("jsonc"));
    let variables = &body["resolvedConfig"]["variables"];
    assert_eq!(variables["baseUrl"], json!("http://staging"));
    assert_eq!(variables["apiToken"], json!("[redacted]"));
    assert_eq!(variables["fromEnv"], json!("[redacted]"));
    let text = body.to_string();
    assert!(!text.contains("s3cr3t-value") && !text.contains("env-value"), "{text}");
    expect_error(&api.get("/config?profile=nope", None).await, StatusCode::NOT_FOUND, "NOT_FOUND");
    expect_error(&api.get("/config?path=../outside.http", None).await, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");

    assert_eq!(ok(&api.get("/plugins", None).await, StatusCode::OK), &json!({ "plugins": [], "count": 0 }));
}

#[tokio::test]
async fn curl_imports_are_previewed_then_applied() {
    let api = Api::open();
    let input = "curl -X POST http://127.0.0.1:9/users -H 'Content-Type: application/json' -d '{\"a\":1}'";
    let plan = json!({ "input": input, "convertOptions": { "fileName": "New User", "requestName": "createUser" }, "planOptions": { "outputDir": "imported" } });
    let reply = api.post("/import/curl/preview", None, plan).await;
    let body = ok(&reply, StatusCode::OK);
    assert_eq!(body["result"]["written"], json!(["imported/new-user.http"]));
    assert_eq!(body["stats"]["fileCount"], json!(1));
    assert!(!api.workspace.root.join("imported").exists(), "a preview writes nothing");

    let apply = json!({ "input": input, "convertOptions": { "fileName": "New User", "requestName": "createUser" }, "applyOptions": { "outputDir": "imported" } });
    ok(&api.post("/import/curl/apply", None, apply.clone()).await, StatusCode::OK);
    let text = std::fs::read_to_string(api.workspace.root.join("imported/new-user.http")).expect("written");
    assert!(text.starts_with("# @name createUser\n") && text.contains("\nPOST http://127.0.0.1:9/users\n"), "{text}");
    let listed = api.get("/workspace/requests?path=imported/new-user.http", None).await;
    assert_eq!(ok(&listed, StatusCode::OK)["requests"][0]["name"], json!("createUser"));

    expect_error(&api.post("/import/curl/apply", None, apply.clone()).await, StatusCode::CONFLICT, "FILE_EXISTS");
    let mut rename = apply.clone();
    rename["applyOptions"]["onConflict"] = json!("rename");
    let reply = api.post("/import/curl/apply", None, rename).await;
    assert_eq!(
        ok(&reply, StatusCode::OK)["result"]["renamed"],
        json!([{ "original": "imported/new-user.http", "actual": "imported/new-user-1.http" }])
    );
    let mut skip = apply.clone();
    skip["applyOptions"]["onConflict"] = json!("skip");
    assert_eq!(
        ok(&api.post("/import/curl/apply", None, skip).await, StatusCode::OK)["result"]["skipped"],
        json!(["imported/new-user.http"])
    );

    let mut outside = apply.clone();
    outside["applyOptions"]["outputDir"] = json!("../escaped");
    expect_error(&api.post("/import/curl/apply", None, outside).await, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
    assert!(!api.workspace.base.join("escaped").exists());

    let broken = json!({ "input": "curl", "applyOptions": { "outputDir": "imported" } });
    let reply = api.post("/import/curl/apply", None, broken).await;
    assert_eq!(reply.0, StatusCode::UNPROCESSABLE_ENTITY, "{}", reply.2);
    assert_eq!(reply.2["diagnostics"][0]["severity"], json!("error"));
    expect_error(
        &api.post("/import/curl/preview", None, json!({ "input": input })).await,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
    );
    expect_error(
        &api.post("/import/nope/preview", None, json!({ "input": input, "planOptions": { "outputDir": "." } })).await,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
    );
}

#[tokio::test]
async fn scripts_and_tests_are_not_run() {
    let api = Api::open();
    api.workspace.write("script.ts", "console.log('never run')");
    for route in ["/script/runners?filePath=script.ts", "/test/frameworks"] {
        assert_eq!(ok(&api.get(route, None).await, StatusCode::OK), &json!({ "detected": null, "options": [] }));
    }
    for (method, route) in [
        (Method::POST, "/script"),
        (Method::POST, "/test"),
        (Method::DELETE, "/script/run_1"),
        (Method::DELETE, "/test/run_1"),
    ] {
        let reply = api.send(method, route, None, Some(json!({ "filePath": "script.ts" }))).await;
        expect_error(&reply, StatusCode::NOT_IMPLEMENTED, "NOT_IMPLEMENTED");
    }
}

#[tokio::test]
async fn only_the_main_token_reaches_the_workspace() {
    let api = Api::secured();
    api.workspace.write("users.http", USERS);
    let flow = api.flow(Some(MAIN), json!({})).await;
    let reply = api.post("/tokens", Some(MAIN), json!({ "flowId": flow })).await;
    let scoped = ok(&reply, StatusCode::CREATED)["token"].as_str().expect("token").to_owned();
    ok(&api.get("/workspace/files", Some(MAIN)).await, StatusCode::OK);
    ok(&api.get("/workspace/requests?path=users.http", Some(MAIN)).await, StatusCode::OK);
    for (method, path, body) in [
        (Method::GET, "/workspace/files", None),
        (Method::GET, "/workspace/requests?path=users.http", None),
        (Method::GET, "/workspace/file?path=users.http", None),
        (Method::POST, "/workspace/file", Some(json!({ "path": "b.http", "content": "" }))),
        (Method::PUT, "/workspace/file", Some(json!({ "path": "users.http", "content": "" }))),
        (Method::DELETE, "/workspace/file?path=users.http", None),
        (Method::POST, "/parse", Some(json!({ "path": "users.http" }))),
        (Method::GET, "/config", None),
        (Method::GET, "/plugins", None),
        (
            Method::POST,
            "/import/curl/apply",
            Some(json!({ "input": "curl http://x", "applyOptions": { "outputDir": "." } })),
        ),
        (Method::GET, "/script/runners", None),
        (Method::POST, "/script", Some(json!({ "filePath": "x.ts" }))),
    ] {
        let reply = api.send(method.clone(), path, Some(&scoped), body.clone()).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "FORBIDDEN");
        expect_error(&api.send(method, path, None, body).await, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    }
    assert_eq!(std::fs::read_to_string(api.workspace.root.join("users.http")).expect("kept"), USERS);
}

#[tokio::test]
async fn the_listing_counts_requests_within_one_budget() {
    let api = Api::with(|config| config.parse_budget = Duration::ZERO);
    api.workspace.write("users.http", USERS);
    let reply = api.get("/workspace/files", None).await;
    let files = &ok(&reply, StatusCode::OK)["files"];
    assert_eq!(
        (&files[0]["path"], &files[0]["requestCount"]),
        (&json!("users.http"), &json!(0)),
        "listed, not counted"
    );
}

const COLLECTION: &str = r#"{"info": {"name": "Shop API", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
  "variable": [{"key": "baseUrl", "value": "http://127.0.0.1:9"}],
  "item": [{"name": "Users", "item": [
    {"name": "List users", "request": {"method": "GET", "url": "{{baseUrl}}/users"}},
    {"name": "Create user", "request": {"method": "POST", "url": "{{baseUrl}}/users", "body": {"mode": "raw", "raw": "{}"}}}]}]}"#;

#[tokio::test]
async fn postman_collections_are_imported_with_their_variables_when_asked() {
    let api = Api::open();
    let plan = json!({ "input": COLLECTION, "planOptions": { "outputDir": "shop" } });
    let reply = api.post("/import/postman/preview", None, plan).await;
    let body = ok(&reply, StatusCode::OK);
    assert_eq!(body["result"]["written"], json!(["shop/Users.http"]));
    assert_eq!(body["result"]["variablesMerged"], json!(false));
    assert!(
        body["result"]["variableMergeInstructions"].as_str().is_some_and(|text| text.contains("baseUrl")),
        "{body}"
    );
    assert_eq!((&body["stats"]["requestCount"], &body["stats"]["fileCount"]), (&json!(2), &json!(1)));
    assert!(!api.workspace.root.join("shop").exists(), "a preview writes nothing");

    let apply = json!({ "input": COLLECTION, "applyOptions": { "outputDir": "shop", "mergeVariables": true } });
    let reply = api.post("/import/postman/apply", None, apply.clone()).await;
    assert_eq!(ok(&reply, StatusCode::OK)["result"]["variablesMerged"], json!(true));
    let listed = api.get("/workspace/requests?path=shop/Users.http", None).await;
    let names: Vec<&Value> = ok(&listed, StatusCode::OK)["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|request| &request["name"])
        .collect();
    assert_eq!(names, [&json!("Users / List users"), &json!("Users / Create user")]);
    let config = std::fs::read_to_string(api.workspace.root.join("shop/volley.jsonc")).expect("volley.jsonc");
    assert!(config.contains("\"baseUrl\""), "{config}");

    // Again, overwriting: the volley.jsonc written before is not changed, and says so.
    std::fs::write(api.workspace.root.join("shop/volley.jsonc"), "{ \"variables\": {} }").expect("edit");
    let mut again = apply;
    again["applyOptions"]["onConflict"] = json!("overwrite");
    let reply = api.post("/import/postman/apply", None, again).await;
    let body = ok(&reply, StatusCode::OK);
    assert_eq!(body["result"]["variablesMerged"], json!(false));
    assert!(body["result"]["variableMergeInstructions"].as_str().is_some_and(|text| text.contains("exists")), "{body}");
    assert_eq!(
        std::fs::read_to_string(api.workspace.root.join("shop/volley.jsonc")).expect("kept"),
        "{ \"variables\": {} }"
    );

    let broken = api
        .post("/import/postman/apply", None, json!({ "input": "{ not json", "applyOptions": { "outputDir": "x" } }))
        .await;
    assert_eq!(broken.0, StatusCode::UNPROCESSABLE_ENTITY, "{}", broken.2);
    for source in ["har", "insomnia", "openapi"] {
        let reply = api
            .post(
                &format!("/import/{source}/preview"),
                None,
                json!({ "input": "{}", "planOptions": { "outputDir": "x" } }),
            )
            .await;
        assert!(
            matches!(reply.0, StatusCode::OK | StatusCode::UNPROCESSABLE_ENTITY),
            "{source}: {} {}",
            reply.0,
            reply.2
        );
    }
}
