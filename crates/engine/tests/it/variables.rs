//! Variables and resolvers: precedence, nesting, file variables, request chaining,
//! built-in and custom resolvers, and errors that point at the text.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use support::{client, client_with_files, config, echo, echoed_header, in_project};
use volley_echo_server::TestServer;
use volley_engine::io::MemoryFs;
use volley_engine::resolvers::{async_resolver, resolver};
use volley_engine::{BuildError, Client, ClientConfig, ConfigSource, Error, RunOptions};

/// Echoes `{{x}}` in a header, with `x` defined at every level the `levels` say.
async fn winner(server: &TestServer, levels: &[&str]) -> String {
    let files = MemoryFs::new();
    let mut config = json!({"variables": {}, "profiles": {"dev": {"variables": {}}}});
    if levels.contains(&"config") {
        config["variables"]["x"] = json!("config");
    }
    if levels.contains(&"profile") {
        config["profiles"]["dev"]["variables"]["x"] = json!("profile");
    }
    files.insert("/project/volley.json", config.to_string());
    let client = Client::new(ClientConfig {
        io: Arc::new(files),
        config: ConfigSource::Discover,
        profile: Some("dev".to_owned()),
        ..support::config()
    });
    if levels.contains(&"client") {
        client.set_variable("x", "client");
    }
    let mut options = in_project();
    if levels.contains(&"run") {
        options = options.variable("x", "run");
    }
    if levels.contains(&"cli") {
        options = options.override_variable("x", json!("cli"));
    }
    let file_line = if levels.contains(&"file") { "@x = file\n" } else { "" };
    let text = format!("{file_line}GET {}\nX-Value: {{{{x}}}}\n", server.url("/echo"));
    let response = client.run_string(&text, options).await.unwrap();
    echoed_header(&echo(&response).await, "x-value").unwrap().to_owned()
}

#[tokio::test]
async fn precedence_runs_file_config_profile_client_run_cli() {
    let server = TestServer::start().await;
    let order = ["file", "config", "profile", "client", "run", "cli"];
    for (index, level) in order.iter().enumerate() {
        // Defined at this level and every level below it: this level wins.
        assert_eq!(winner(&server, &order[..=index]).await, *level, "levels {:?}", &order[..=index]);
        // Defined only at this level: it is found.
        assert_eq!(winner(&server, &[level]).await, *level);
    }
}

#[tokio::test]
async fn nested_paths_indices_dotted_names_and_non_string_values() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("user", json!({"name": "ada", "roles": ["admin", "dev"], "age": 36, "tags": {"a": 1}}));
    let text = format!(
        "@api.version = v2\nGET {}/{{{{api.version}}}}/{{{{user.roles.1}}}}\nX-Name: {{{{ user.name }}}}\nX-Age: {{{{user.age}}}}\nX-Tags: {{{{user.tags}}}}\n",
        server.url("/echo")
    );
    let echo = echo(&client.run_string(&text, RunOptions::default()).await.unwrap()).await;
    assert_eq!(echo["path"], "/echo/v2/dev");
    assert_eq!(echoed_header(&echo, "x-name"), Some("ada"));
    assert_eq!(echoed_header(&echo, "x-age"), Some("36"));
    assert_eq!(echoed_header(&echo, "x-tags"), Some(r#"{"a":1}"#));
}

#[tokio::test]
async fn file_variables_refer_to_each_other_later_ones_win_and_cycles_are_errors() {
    let server = TestServer::start().await;
    let client = client();
    let text = format!(
        "@host = {}\n@base = {{{{host}}}}/echo\n@id = 1\n@id = 2\nGET {{{{base}}}}/{{{{id}}}}\n",
        server.base_url()
    );
    let echo = echo(&client.run_string(&text, RunOptions::default()).await.unwrap()).await;
    assert_eq!(echo["path"], "/echo/2");

    let cycle = "@a = {{b}}\n@b = {{a}}\nGET http://127.0.0.1/{{a}}\n";
    let error = client.run_string(cycle, RunOptions::default()).await.unwrap_err();
    let Error::Build(BuildError::Cycle { name, chain, .. }) = error else { panic!("{error}") };
    assert_eq!(name, "a");
    assert_eq!(chain, ["a", "b", "a"]);
}

#[tokio::test]
async fn a_client_keeps_the_last_thousand_named_responses_and_says_so() {
    let server = TestServer::start().await;
    let client = client();
    let limit = volley_engine::stages::MAX_CHAINED_RESPONSES;
    for n in 0..=limit {
        let text = format!("# @name r{n}\nGET {}\n", server.url("/echo"));
        client.run_string(&text, RunOptions::default()).await.unwrap();
    }
    let error =
        client.run_string("GET http://127.0.0.1/{{r0.response.status}}\n", RunOptions::default()).await.unwrap_err();
    let Error::Build(BuildError::RequestVariable { message, .. }) = error else { panic!("{error}") };
    assert!(message.contains("ran before the last 1000 named responses"), "{message}");
    assert!(volley_engine::stages::chained_response(&client, "r1").is_some());
    assert!(volley_engine::stages::chained_response(&client, "r0").is_none());
}

#[tokio::test]
async fn substitution_is_one_pass() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("tricky", "{{secret}}");
    client.set_variable("secret", "leaked");
    let text = format!("GET {}\nX-Tricky: {{{{tricky}}}}\n", server.url("/echo"));
    let echo = echo(&client.run_string(&text, RunOptions::default()).await.unwrap()).await;
    assert_eq!(echoed_header(&echo, "x-tricky"), Some("{{secret}}"));
}

#[tokio::test]
async fn request_chaining_reads_status_headers_and_body_of_named_requests() {
    let server = TestServer::start().await;
    let client = client();
    let text = format!(
        "### Login\n# @name login\nPOST {login}\nContent-Type: application/json\n\n{{\"user\": \"ada\", \"password\": \"lovelace\"}}\n\n\
         ### Use it\nGET {echo}\nX-Token: {{{{login.response.body.$.token}}}}\nX-Header: {{{{login.response.headers.X-Token}}}}\nX-Status: {{{{login.response.status}}}}\n",
        login = server.url("/login"),
        echo = server.url("/echo"),
    );
    let error = client.run_string(&text, RunOptions::default().index(1)).await.unwrap_err();
    let Error::Build(BuildError::RequestVariable { message, span, .. }) = error else { panic!("{error}") };
    assert!(message.contains("no request named `login` has run yet"), "{message}");
    assert_eq!(span.start_position.line, 9, "the X-Token line");

    let login = client.run_string(&text, RunOptions::default().name("login")).await.unwrap();
    assert_eq!(login.status(), 200);
    let echo = echo(&client.run_string(&text, RunOptions::default().index(1)).await.unwrap()).await;
    let token = echoed_header(&echo, "x-token").unwrap();
    assert!(token.starts_with("token-"), "{token}");
    assert_eq!(echoed_header(&echo, "x-header"), Some(token));
    assert_eq!(echoed_header(&echo, "x-status"), Some("200"));
}

#[tokio::test]
async fn builtin_resolvers_and_peer_aliases() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("user", "ada");
    let text = format!(
        "GET {}\nX-Uuid-1: {{{{$uuid()}}}}\nX-Uuid-2: {{{{$uuid()}}}}\nX-Guid: {{{{$guid}}}}\nX-Random-Uuid: {{{{$random.uuid}}}}\n\
         X-Ts: {{{{$timestamp()}}}}\nX-Ts-Alias: {{{{$timestamp}}}}\nX-Rand: {{{{$randomInt 4 5}}}}\nX-Env: {{{{$env(HOME)}}}}\n\
         X-Env-Alias: {{{{$processEnv HOME}}}}\nX-Missing: [{{{{$env(NOT_SET)}}}}]\nX-Basic: {{{{$basicAuth({{{{user}}}}, \"pa,ss\")}}}}\n\
         X-B64: {{{{$base64(hi)}}}}\nX-Date: {{{{$datetime iso8601}}}}\nX-Iso: {{{{$isoTimestamp}}}}\n",
        server.url("/echo")
    );
    let echo = echo(&client.run_string(&text, RunOptions::default()).await.unwrap()).await;
    let uuid_1 = echoed_header(&echo, "x-uuid-1").unwrap();
    assert_eq!(uuid_1.len(), 36);
    assert_ne!(Some(uuid_1), echoed_header(&echo, "x-uuid-2"), "each occurrence is evaluated");
    assert_eq!(echoed_header(&echo, "x-guid").unwrap().len(), 36);
    assert_eq!(echoed_header(&echo, "x-random-uuid").unwrap().len(), 36);
    let seconds: i64 = echoed_header(&echo, "x-ts").unwrap().parse().unwrap();
    let now =
        i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()).unwrap();
    assert!((now - seconds).abs() < 60, "seconds, not milliseconds: {seconds}");
    assert_eq!(echoed_header(&echo, "x-rand"), Some("4"));
    assert_eq!(echoed_header(&echo, "x-env"), Some("/home/ada"));
    assert_eq!(echoed_header(&echo, "x-env-alias"), Some("/home/ada"));
    assert_eq!(echoed_header(&echo, "x-missing"), Some("[]"));
    assert_eq!(echoed_header(&echo, "x-basic"), Some("Basic YWRhOnBhLHNz"), "ada:pa,ss");
    assert_eq!(echoed_header(&echo, "x-b64"), Some("aGk="));
    assert!(echoed_header(&echo, "x-date").unwrap().ends_with('Z'));
    assert!(echoed_header(&echo, "x-iso").unwrap().contains('T'));
}

#[tokio::test]
async fn secrets_come_from_the_environment_or_the_project_env_file_and_are_redacted() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert("/project/.env", "DB_PASSWORD=hunter2\n");
    let client = client_with_files(&files);
    let text = format!(
        "GET {}\nX-Password: {{{{$secret(DB_PASSWORD)}}}}\nX-Key: {{{{$secret(API_KEY)}}}}\n",
        server.url("/echo")
    );
    let response = client.run_string(&text, in_project()).await.unwrap();
    let echo = echo(&response).await;
    assert_eq!(echoed_header(&echo, "x-password"), Some("hunter2"));
    assert_eq!(echoed_header(&echo, "x-key"), Some(volley_echo_server::API_KEY));
    let shown = response.redact(&format!("sent {}", response.text().await.unwrap()));
    assert!(!shown.contains("hunter2") && shown.contains("[REDACTED]"), "{shown}");

    let missing = format!("GET {}\nX: {{{{$secret(NOPE)}}}}\n", server.url("/echo"));
    let error = client.run_string(&missing, in_project()).await.unwrap_err().to_string();
    assert!(error.contains("resolver `$secret` failed") && error.contains("`NOPE` is set neither"), "{error}");
}

#[tokio::test]
async fn errors_and_assertion_results_leave_the_engine_redacted() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert("/project/.env", "DB_PASSWORD=hunter2-from-dotenv\n");
    files.insert("/project/volley.json", r#"{"variables": {"apiKey": "k3y-from-config"}}"#);
    let client = Client::new(ClientConfig { io: Arc::new(files), config: ConfigSource::Discover, ..config() });
    client.set_variable("sessionToken", "t0ken-of-the-client");
    let all = "{{$secret(DB_PASSWORD)}}.{{apiKey}}.{{sessionToken}}.{{runSecret}}.{{$env(API_KEY)}}";
    let values =
        ["hunter2-from-dotenv", "k3y-from-config", "t0ken-of-the-client", "run-s3cret", volley_echo_server::API_KEY];
    let options = || in_project().variable("runSecret", "run-s3cret");
    // A URL that fails to parse after substitution.
    let error = client.run_string(&format!("GET http://[{all}/x\n"), options()).await.unwrap_err();
    let Error::Build(build @ BuildError::InvalidUrl { .. }) = &error else { panic!("{error:?}") };
    assert!(build.message().starts_with("invalid URL `http://[[REDACTED].[REDACTED]."), "{build}");
    assert!(values.iter().all(|value| !error.to_string().contains(value)), "{error}");
    // Assertion expressions, expected and actual values, the excerpt of a long body
    // included (cut after the secrets are hidden, so no part of one is left).
    let text = format!(
        "# @assert header x-missing == {all}\n# @assert body contains nope\n# @assert jsonpath $.url == \"x\"\n\
         POST {}?all={all}\nContent-Type: text/plain\n\n{}{all}\n",
        server.url("/echo"),
        // The echo's body is `{"body":"xxx…`: the 200 characters of the excerpt end 10
        // characters into the first secret.
        "x".repeat(181)
    );
    let response = client.run_string(&text, options()).await.unwrap();
    let shown = format!("{:?}", response.assertions());
    assert_eq!(response.assertions().len(), 3);
    assert!(shown.contains("[REDACTED]"), "{shown}");
    assert!(!shown.contains("hunter2-fr"), "no part of a secret: {shown}");
    assert!(values.iter().all(|value| !shown.contains(value)), "{shown}");
    assert_eq!(response.redact(response.request().url.as_str()).matches("[REDACTED]").count(), 5);
    // Unless asked not to (`volley run --show-secrets`).
    let options = options().show_secrets(true);
    let error = client.run_string(&format!("GET http://[{all}/x\n"), options.clone()).await.unwrap_err();
    assert!(error.to_string().contains("hunter2-from-dotenv.k3y-from-config"), "{error}");
    let response = client.run_string(&text, options).await.unwrap();
    assert!(format!("{:?}", response.assertions()).contains("k3y-from-config"));
    assert!(response.redact("k3y-from-config").contains("k3y-from-config"));
}

#[tokio::test]
async fn custom_resolvers_sync_async_and_json_array_arguments() {
    let server = TestServer::start().await;
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let mut resolvers = HashMap::new();
    resolvers.insert("$join".to_owned(), resolver(|arguments| Ok(arguments.join("+"))));
    resolvers.insert(
        "$fetch".to_owned(),
        async_resolver(move |arguments| {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                Ok(format!("token-for-{}", arguments.first().cloned().unwrap_or_default()))
            }
        }),
    );
    resolvers.insert("$fail".to_owned(), resolver(|_| Err("vault is sealed".into())));
    let client = Client::new(ClientConfig { resolvers, ..config() });
    client.set_variable("b", "two");
    let text = format!(
        "GET {}\nX-Join: {{{{$join([\"a\", \"{{{{b}}}}\", 3])}}}}\nX-Fetch: {{{{$fetch(svc)}}}}\nX-Fetch-2: {{{{$fetch(svc)}}}}\n",
        server.url("/echo")
    );
    let echo = echo(&client.run_string(&text, RunOptions::default()).await.unwrap()).await;
    assert_eq!(echoed_header(&echo, "x-join"), Some("a+two+3"));
    assert_eq!(echoed_header(&echo, "x-fetch"), Some("token-for-svc"));
    assert_eq!(calls.load(Ordering::SeqCst), 2, "evaluated once per occurrence");

    let error = client.run_string("GET http://127.0.0.1/{{$fail()}}\n", RunOptions::default()).await.unwrap_err();
    assert!(error.to_string().contains("resolver `$fail` failed: vault is sealed"), "{error}");
}

#[cfg(unix)]
#[tokio::test]
async fn command_resolvers_from_the_configuration_run_in_its_directory() {
    let server = TestServer::start().await;
    let directory = std::env::temp_dir().join(format!("volley-command-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::write(directory.join("token.txt"), "from-file\n").unwrap();
    std::fs::write(
        directory.join("volley.jsonc"),
        r#"{"resolvers": {"token": {"type": "command", "command": "cat token.txt"}, "echo": {"type": "command", "command": "echo \"$1-$2\""}}}"#,
    )
    .unwrap();
    let http = directory.join("api.http");
    std::fs::write(
        &http,
        format!("GET {}\nX-Token: {{{{$token()}}}}\nX-Args: {{{{$echo(a, b)}}}}\n", server.url("/echo")),
    )
    .unwrap();
    let client = Client::new(ClientConfig { config: ConfigSource::Discover, ..config() });
    let echo = echo(&client.run(&http, RunOptions::default()).await.unwrap()).await;
    assert_eq!(echoed_header(&echo, "x-token"), Some("from-file"));
    assert_eq!(echoed_header(&echo, "x-args"), Some("a-b"));
    std::fs::remove_dir_all(&directory).unwrap();
}

#[tokio::test]
async fn build_errors_name_the_problem_and_point_at_it() {
    let client = client();
    let undefined =
        client.run_string("GET http://127.0.0.1/x\nX-A: ok\nX-B: {{missing}}\n", RunOptions::default()).await;
    let Err(Error::Build(BuildError::UndefinedVariable { name, span })) = undefined else { panic!("{undefined:?}") };
    assert_eq!(name, "missing");
    assert_eq!((span.start_position.line, span.start_position.column), (2, 7));
    assert_eq!(
        Error::Build(BuildError::UndefinedVariable { name, span }).to_string(),
        "3:8: undefined variable `missing`"
    );

    let unknown = client.run_string("GET http://127.0.0.1/{{$uuidd()}}\n", RunOptions::default()).await.unwrap_err();
    assert!(unknown.to_string().contains("unknown resolver `$uuidd` (did you mean `$uuid`?)"), "{unknown}");

    let arity = client.run_string("GET http://127.0.0.1/{{$random(1)}}\n", RunOptions::default()).await.unwrap_err();
    assert!(arity.to_string().contains("takes 2 arguments `$random(min, max)`, got 1"), "{arity}");

    client.set_variable("host", "not a host");
    let url = client.run_string("GET http://{{host}}/\n", RunOptions::default()).await.unwrap_err();
    let Error::Build(BuildError::InvalidUrl { url, .. }) = url else { panic!("{url:?}") };
    assert_eq!(url, "http://not a host/");

    let files = MemoryFs::new();
    let missing_file =
        client_with_files(&files).run_string("POST http://127.0.0.1/\n\n< ./nope.json\n", in_project()).await;
    let Err(Error::Build(BuildError::File { path, span, .. })) = missing_file else { panic!("{missing_file:?}") };
    assert_eq!(path, std::path::Path::new("/project/nope.json"));
    assert_eq!(span.start_position.line, 2);

    let invalid = client.run_string("GETT http://127.0.0.1/\n", RunOptions::default()).await.unwrap_err();
    let Error::Invalid { diagnostics } = invalid else { panic!("{invalid:?}") };
    assert_eq!(diagnostics[0].code, volley_syntax::Code::UnknownMethod);

    let selection =
        client.run_string("# @name login\nGET http://127.0.0.1/\n", RunOptions::default().name("logn")).await;
    assert_eq!(selection.unwrap_err().to_string(), "no request named `logn` (did you mean `login`?)");
}

#[tokio::test]
async fn a_broken_file_variable_refuses_only_the_requests_that_use_it() {
    let server = TestServer::start().await;
    let client = client();
    // The broken `@token` is in the block of `plain`, which does not use it.
    let text = format!(
        "@auth = Bearer {{{{token}}}}\n\n###\n# @name plain\n@token = {{{{unclosed\nGET {}\n\n\
         ###\n# @name uses\nGET {}\nAuthorization: {{{{auth}}}}\n",
        server.url("/status/200"),
        server.url("/echo")
    );
    let plain = client.run_string(&text, RunOptions::default().name("plain")).await.unwrap();
    assert_eq!(plain.status(), 200);

    let refused = client.run_string(&text, RunOptions::default().name("uses")).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("error[broken-variable]: `auth` uses `token`, declared on line 5, which has errors"),
        "{refused}"
    );
    let Error::Invalid { diagnostics } = refused else { panic!("{refused:?}") };
    assert_eq!(diagnostics[0].code, volley_syntax::Code::BrokenVariable);
    assert_eq!(diagnostics[0].span.start_position.line, 10, "where the request uses it");
}

#[tokio::test]
async fn json_values_and_unicode_survive_in_bodies() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("who", "Zoë 😀");
    client.set_variable("list", json!([1, 2]));
    let text = format!("POST {}\n\n{{\"who\": \"{{{{who}}}}\", \"list\": {{{{list}}}}}}\n", server.url("/echo"));
    let echo = echo(&client.run_string(&text, RunOptions::default()).await.unwrap()).await;
    let body: Value = serde_json::from_slice(&support::echoed_body(&echo)).unwrap();
    assert_eq!(body, json!({"who": "Zoë 😀", "list": [1, 2]}));
}

#[tokio::test]
async fn a_fork_shares_the_setup_but_not_the_state() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert("/project/volley.jsonc", r#"{"variables": {"from": "config"}}"#);
    let parent = Client::new(ClientConfig { io: Arc::new(files.clone()), config: ConfigSource::Discover, ..config() });
    parent.set_variable("who", "parent");
    let file = format!(
        "# @name first\nGET {}/echo?who={{{{who}}}}&from={{{{from}}}}\n\n###\nGET {}/echo?again={{{{first.response.status}}}}\n",
        server.base_url(),
        server.base_url()
    );
    parent.run_string(&file, in_project().name("first")).await.unwrap();
    let fork =
        volley_engine::stages::fork(&parent, serde_json::Map::from_iter([("who".to_owned(), json!("fork"))]), None);
    let response = fork.run_string(&file, in_project().name("first")).await.unwrap();
    let echoed = echo(&response).await;
    assert_eq!(echoed["query"], "who=fork&from=config", "own variables, the parent's configuration");
    assert_eq!(parent.get_variables()["who"], "parent");
    // The parent's history is not the fork's: its `first` is the fork's own run.
    let other = volley_engine::stages::fork(&fork, serde_json::Map::new(), None);
    let missing = other.run_string(&file, in_project().index(1)).await;
    assert!(missing.is_err(), "a fresh fork has no `first` response to chain from");
}

#[tokio::test]
async fn a_value_that_doubles_itself_is_stopped_before_it_is_built() {
    // 614 bytes that would make 1.3 GB: `@aN = {{aN-1}}{{aN-1}}`.
    use std::fmt::Write as _;
    let mut text = String::from("@a0 = 0123456789\n");
    for n in 1..=27 {
        let previous = n - 1;
        let _ = writeln!(text, "@a{n} = {{{{a{previous}}}}}{{{{a{previous}}}}}");
    }
    text.push_str("\nGET http://127.0.0.1:1/{{a27}}\n");
    let started = std::time::Instant::now();
    let error = support::client().run_string(&text, RunOptions::default()).await.unwrap_err();
    let Error::Build(build) = &error else { panic!("{error:?}") };
    assert_eq!(build.code(), "too-large", "{build}");
    assert!(build.to_string().contains("would exceed 16 MiB"), "{build}");
    // Stopped at the first value over 16 MiB (a21, 20 MB), not after building 1.3 GB.
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

#[tokio::test]
async fn all_the_substituted_text_of_a_request_is_bounded_too() {
    // Five headers of 15 MiB each: every one within the value limit, not together.
    use std::fmt::Write as _;
    let mut text = String::from("@big = ");
    text.push_str(&"x".repeat(15 * 1024 * 1024));
    text.push_str("\n\nGET http://127.0.0.1:1/\n");
    for n in 0..5 {
        let _ = writeln!(text, "X-{n}: {{{{big}}}}");
    }
    let error = support::client().run_string(&text, RunOptions::default()).await.unwrap_err();
    let Error::Build(build) = &error else { panic!("{error:?}") };
    assert_eq!(build.code(), "too-large");
    assert!(build.to_string().contains("the request's substituted text would exceed 64 MiB"), "{build}");
}

/// httpyac's `@ref` runs a named request first unless it already ran, `@forceRef`
/// every time; a cycle and a name no request has are errors at the directive; `@sleep`
/// waits before sending.
#[tokio::test]
async fn references_run_their_request_first_and_sleep_waits() {
    let server = volley_echo_server::TestServer::start().await;
    let base = server.base_url();
    let text = format!(
        "# @name login\nGET {base}/status/200\n\n\
         ###\n# @name me\n# @ref login\nGET {base}/echo?status={{{{login.response.status}}}}\n\n\
         ###\n# @name again\n# @forceRef login\n# @sleep 300\nGET {base}/echo\n\n\
         ###\n# @name a\n# @ref b\nGET {base}/echo\n\n\
         ###\n# @name b\n# @ref a\nGET {base}/echo\n\n\
         ###\n# @name typo\n# @ref logn\nGET {base}/echo\n"
    );
    let logins = || async {
        let stats = format!("GET {base}/stats\n");
        let stats: serde_json::Value =
            support::client().run_string(&stats, RunOptions::default()).await.unwrap().json().await.unwrap();
        stats["requests"]["/status/200"].as_u64().unwrap_or(0)
    };
    let client = support::client();
    let me = client.run_string(&text, RunOptions::default().name("me")).await.unwrap();
    assert_eq!(support::echo(&me).await["query"], "status=200", "login ran first");
    client.run_string(&text, RunOptions::default().name("me")).await.unwrap();
    assert_eq!(logins().await, 1, "`@ref`: not again once it ran");
    let started = std::time::Instant::now();
    client.run_string(&text, RunOptions::default().name("again")).await.unwrap();
    assert_eq!(logins().await, 2, "`@forceRef`: every time");
    assert!(started.elapsed() >= std::time::Duration::from_millis(300), "`@sleep 300` waited");
    let error = client.run_string(&text, RunOptions::default().name("a")).await.unwrap_err().to_string();
    assert!(error.contains("refers back to itself (a → b → a)"), "{error}");
    let error = client.run_string(&text, RunOptions::default().name("typo")).await.unwrap_err().to_string();
    assert!(error.contains("no request of this file is named `logn`: did you mean `login`?"), "{error}");
}

/// httpyac's prompts through the client's `ValuePrompt`: a password is sent and hidden
/// wherever the run shows it, an `-askonce` answer is asked once per client, a variable
/// named as the label answers without asking, and without a prompt the request is
/// refused, naming it.
#[tokio::test]
async fn prompts_are_asked_of_the_clients_prompt() {
    use volley_engine::prompt::{Prompt, PromptKind, ValuePrompt};
    struct Answering(AtomicUsize);
    impl ValuePrompt for Answering {
        fn ask(&self, prompt: &Prompt) -> volley_engine::transport::BoxFuture<'_, Option<String>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            let answer = match prompt.kind {
                PromptKind::Password => "s3cr3t-value".to_owned(),
                _ => format!("typed {}", prompt.label),
            };
            Box::pin(async move { Some(answer) })
        }
    }
    let server = TestServer::start().await;
    let asked = Arc::new(Answering(AtomicUsize::new(0)));
    let client = volley_engine::Client::new(volley_engine::ClientConfig {
        value_prompt: Some(Arc::clone(&asked) as Arc<dyn ValuePrompt>),
        ..config()
    });
    let text = format!("GET {}?token={{{{$password token}}}}&who={{{{$input-askonce who}}}}\n", server.url("/echo"));
    let response = client.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(echo(&response).await["query"], "token=s3cr3t-value&who=typed%20who");
    assert_eq!(response.redact("sent s3cr3t-value"), "sent [REDACTED]");
    client.run_string(&text, RunOptions::default()).await.unwrap();
    assert_eq!(asked.0.load(Ordering::SeqCst), 3, "the password twice, `who` once");
    let given = RunOptions::default().variables(json!({"token": "given"}).as_object().unwrap().clone());
    let response = client.run_string(&text, given).await.unwrap();
    assert!(echo(&response).await["query"].as_str().unwrap().starts_with("token=given&"));
    assert_eq!(asked.0.load(Ordering::SeqCst), 3, "a variable named as the label answers");
    let error = support::client().run_string(&text, RunOptions::default()).await.unwrap_err().to_string();
    assert!(error.contains("`token` asks for a value and no one can answer here"), "{error}");
    // REST Client's `# @prompt name [description]`: asked unless a variable has it; a
    // name that says secret is a password.
    let rest_client = format!(
        "# @prompt user The user\n# @prompt api_key\nGET {}?user={{{{user}}}}&key={{{{api_key}}}}\n",
        server.url("/echo")
    );
    let response = client.run_string(&rest_client, RunOptions::default()).await.unwrap();
    assert_eq!(echo(&response).await["query"], "user=typed%20The%20user&key=s3cr3t-value");
    assert_eq!(response.redact("s3cr3t-value"), "[REDACTED]");
}

/// Imports and `run` lines through the library: `# @import` gives another file's
/// variables (the file's own win) and named requests (`@ref` runs them in their file);
/// `run` lines above a request line run first, with the variables they set; a name no
/// file has is an error at the line.
#[tokio::test]
async fn imports_and_run_lines_compose_files() {
    let server = volley_echo_server::TestServer::start().await;
    let base = server.base_url();
    let directory = std::env::temp_dir().join(format!("volley-compose-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::write(
        directory.join("auth.http"),
        format!("@user = ada\n@shared = from-auth\n\n###\n# @name login\nGET {base}/echo?login={{{{user}}}}\n"),
    )
    .unwrap();
    let main = directory.join("main.http");
    std::fs::write(
        &main,
        format!(
            "# @import ./auth.http\n@user = grace\n\n\
             ###\n# @name me\n# @ref login\nGET {base}/echo?user={{{{user}}}}&shared={{{{shared}}}}&login={{{{login.response.body.$.query}}}}\n\n\
             ###\n# @name again\nrun #login (@user=zed)\nGET {base}/echo?after={{{{login.response.body.$.query}}}}\n\n\
             ###\n# @name typo\nrun #logn\nGET {base}/echo\n\n\
             ###\n# @name settings\n@mode = fast\n\n\
             ###\n# @name withSettings\n# @ref settings\nGET {base}/echo?mode={{{{mode}}}}\n"
        ),
    )
    .unwrap();
    let client = support::client();
    let me = client.run(&main, RunOptions::default().name("me")).await.unwrap();
    assert_eq!(support::echo(&me).await["query"], "user=grace&shared=from-auth&login=login=ada");
    let again = client.run(&main, RunOptions::default().name("again")).await.unwrap();
    assert_eq!(support::echo(&again).await["query"], "after=login=zed", "the run line ran first, as zed");
    let error = client.run(&main, RunOptions::default().name("typo")).await.unwrap_err().to_string();
    assert!(error.contains("no request of this file or the files it imports is named `logn`"), "{error}");
    // `@ref` of a named part without a request line (httpyac's variables region) runs nothing.
    let with = client.run(&main, RunOptions::default().name("withSettings")).await.unwrap();
    assert_eq!(support::echo(&with).await["query"], "mode=fast");
    let _ = std::fs::remove_dir_all(&directory);
}
