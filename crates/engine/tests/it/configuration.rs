//! Configuration files as runs see them: discovery, profiles, defaults, JetBrains env
//! files, and clear errors.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use support::{echo, echoed_header, in_project};
use volley_echo_server::TestServer;
use volley_engine::io::MemoryFs;
use volley_engine::{Client, ClientConfig, ConfigError, ConfigSource, Error, RunOptions, TransportError};

fn client(files: &MemoryFs, profile: Option<&str>) -> Client {
    Client::new(ClientConfig {
        io: Arc::new(files.clone()),
        config: ConfigSource::Discover,
        profile: profile.map(str::to_owned),
        ..support::config()
    })
}

#[tokio::test]
async fn config_and_profile_defaults_apply_with_profile_over_config() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert(
        "/project/volley.jsonc",
        r#"{
          // The nearest config above the .http file is used.
          "variables": {"host": "unused"},
          "defaults": {"headers": {"X-Team": "platform", "X-Env": "base"}, "followRedirects": false, "timeoutMs": 100},
          "profiles": {
            "dev": {"variables": {"host": "HOST"}, "defaults": {"headers": {"X-Env": "dev"}, "timeoutMs": 3000}},
          },
        }"#
        .replace("HOST", &server.base_url()),
    );
    let client = client(&files, Some("dev"));
    let response = client.run_string("GET {{host}}/echo\n", in_project()).await.unwrap();
    let echo = echo(&response).await;
    assert_eq!(echoed_header(&echo, "x-team"), Some("platform"));
    assert_eq!(echoed_header(&echo, "x-env"), Some("dev"));
    let redirect = client.run_string("GET {{host}}/redirect/1\n", in_project()).await.unwrap();
    assert_eq!(redirect.status(), 302, "followRedirects: false from the config");
    // The profile's 3 s timeout wins over the config's 100 ms.
    let slow = client.run_string("GET {{host}}/slow?ms=300\n", in_project()).await.unwrap();
    assert_eq!(slow.status(), 200);

    let base = self::client(&files, None);
    let error = base.run_string(&format!("GET {}\n", server.url("/slow?ms=1000")), in_project()).await.unwrap_err();
    assert!(
        matches!(error, Error::Transport(TransportError::Timeout { after }) if after == Duration::from_millis(100)),
        "{error}"
    );
}

/// `defaultProfile`: the profile of a run that names none; a named one wins; a name
/// `profiles` does not have is an error at the key, with the closest name; the analysis
/// counts the default profile's variables as a run does.
#[tokio::test]
async fn the_default_profile_applies_when_none_is_named() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert(
        "/project/volley.jsonc",
        r#"{"defaultProfile": "dev",
            "profiles": {"dev": {"variables": {"env": "dev"}}, "prod": {"variables": {"env": "prod"}}}}"#,
    );
    let text = format!(
        "GET {}
X-Env: {{{{env}}}}
",
        server.url("/echo")
    );
    let response = client(&files, None).run_string(&text, in_project()).await.unwrap();
    assert_eq!(echoed_header(&echo(&response).await, "x-env"), Some("dev"));
    let response = client(&files, Some("prod")).run_string(&text, in_project()).await.unwrap();
    assert_eq!(echoed_header(&echo(&response).await, "x-env"), Some("prod"));
    let analysed = client(&files, None);
    let (mut context, error) = volley_engine::analysis::Analyzer::new(&analysed)
        .context(Some(std::path::Path::new("/project/api.http")), None);
    assert!(error.is_none(), "{error:?}");
    context.exact_profile = true;
    let document = volley_syntax::parse(&text);
    assert_eq!(volley_engine::analysis::Analyzer::new(&analysed).analyze_in(&document, &text, &context), []);

    files.insert("/project/volley.jsonc", r#"{"defaultProfile": "dve", "profiles": {"dev": {}}}"#);
    let error = client(&files, None)
        .run_string(
            "GET http://127.0.0.1/
",
            in_project(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`/project/volley.jsonc`: `defaultProfile` is `dve`, which is not a profile of `profiles` (did you mean `dev`?)"
    );
}

#[tokio::test]
async fn jetbrains_env_files_are_profiles_when_there_is_no_volley_config() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert(
        "/project/http-client.env.json",
        format!(r#"{{"dev": {{"host": "{}", "user": "public"}}}}"#, server.base_url()),
    );
    files.insert("/project/http-client.private.env.json", r#"{"dev": {"user": "private"}}"#);
    let client = client(&files, Some("dev"));
    let response = client.run_string("GET {{host}}/echo\nX-User: {{user}}\n", in_project()).await.unwrap();
    assert_eq!(echoed_header(&echo(&response).await, "x-user"), Some("private"));
}

#[tokio::test]
async fn unknown_profiles_and_broken_files_are_clear_errors() {
    let files = MemoryFs::new();
    files.insert("/project/volley.json", r#"{"profiles": {"staging": {}, "dev": {}}}"#);
    let error = client(&files, Some("stagng")).run_string("GET http://127.0.0.1/\n", in_project()).await.unwrap_err();
    assert_eq!(error.to_string(), "unknown profile `stagng` (did you mean `staging`?)");
    let error =
        client(&MemoryFs::new(), Some("dev")).run_string("GET http://127.0.0.1/\n", in_project()).await.unwrap_err();
    assert!(matches!(error, Error::Config(ConfigError::UnknownProfile { .. })), "{error}");

    files.insert("/project/volley.json", "{\n  \"defaults\": {\"folowRedirects\": true}\n}");
    let error = client(&files, None).run_string("GET http://127.0.0.1/\n", in_project()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "`/project/volley.json`: unknown key `defaults.folowRedirects` (did you mean `followRedirects`?)"
    );
    files.insert("/project/volley.json", "{\n  \"variables\": {\"a\": }\n}");
    let error = client(&files, None).run_string("GET http://127.0.0.1/\n", in_project()).await.unwrap_err();
    assert!(error.to_string().starts_with("`/project/volley.json`:2:"), "{error}");
}

#[tokio::test]
async fn a_given_configuration_is_used_as_is() {
    let server = TestServer::start().await;
    let mut config = volley_engine::config::Config::default();
    config.variables.insert("host".to_owned(), server.base_url().into());
    let client = Client::new(ClientConfig { config: ConfigSource::Given(Arc::new(config)), ..support::config() });
    let response = client.run_string("GET {{host}}/echo/given\n", RunOptions::default()).await.unwrap();
    assert_eq!(echo(&response).await["path"], "/echo/given");
}

#[tokio::test]
async fn a_changed_configuration_is_read_again_and_a_new_one_after_reload() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    let client = client(&files, None);
    let text = format!("GET {}/echo?v={{{{v}}}}\n", server.base_url());
    files.insert("/project/volley.jsonc", r#"{"variables": {"v": "one"}}"#);
    let query = |response: &volley_engine::Response| response.url().query().unwrap_or_default().to_owned();
    assert_eq!(query(&client.run_string(&text, in_project()).await.unwrap()), "v=one");
    files.insert("/project/volley.jsonc", r#"{"variables": {"v": "two"}}"#);
    assert_eq!(query(&client.run_string(&text, in_project()).await.unwrap()), "v=two", "an edit is seen");
    // A configuration nearer to the file is only found after a reload.
    let options = || RunOptions::default().source_path("/project/sub/requests.http");
    assert_eq!(query(&client.run_string(&text, options()).await.unwrap()), "v=two");
    files.insert("/project/sub/volley.jsonc", r#"{"variables": {"v": "sub"}}"#);
    assert_eq!(query(&client.run_string(&text, options()).await.unwrap()), "v=two");
    volley_engine::stages::reload_config(&client);
    assert_eq!(query(&client.run_string(&text, options()).await.unwrap()), "v=sub");
}

/// httpyac's project layout: `environments` of `.httpyac.json` (`$shared`, `$default`,
/// values with `{{ }}`) and `env/<name>.env` files, each environment a profile.
#[tokio::test]
async fn httpyac_environments_and_env_folders_are_profiles() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert(
        "/project/.httpyac.json",
        r#"{"environments": {
            "$shared": {"host": "HOST", "base": "{{host}}/echo"},
            "$default": {"user": "anonymous"},
            "dev": {"user": "mario"}
        }}"#
        .replace("HOST", &server.base_url()),
    );
    files.insert("/project/env/dev.env", "TOKEN=dev-token\n");
    files.insert("/project/env/staging.env", "TOKEN=staging-token\nuser=stagehand\n");
    let text = "GET {{base}}?user={{user}}\nX-Token: {{TOKEN}}\n";

    let dev = client(&files, Some("dev")).run_string(text, in_project()).await.unwrap();
    let echo = echo(&dev).await;
    assert_eq!(echo["query"], "user=mario");
    assert_eq!(echoed_header(&echo, "x-token"), Some("dev-token"));

    // An environment only an `env/` file names is a profile too.
    let staging = client(&files, Some("staging")).run_string(text, in_project()).await.unwrap();
    let echo = self::echo(&staging).await;
    assert_eq!(echo["query"], "user=stagehand");
    assert_eq!(echoed_header(&echo, "x-token"), Some("staging-token"));

    // No profile: `$default`, and no environment's `.env` file.
    let error = client(&files, None).run_string(text, in_project()).await.unwrap_err().to_string();
    assert!(error.contains("undefined variable `TOKEN`"), "{error}");
    let plain = client(&files, None).run_string("GET {{base}}?user={{user}}\n", in_project()).await.unwrap();
    assert_eq!(self::echo(&plain).await["query"], "user=anonymous");

    let error = client(&files, Some("stagin")).run_string(text, in_project()).await.unwrap_err().to_string();
    assert!(error.contains("unknown profile `stagin`") && error.contains("did you mean `staging`"), "{error}");
    let profiles = volley_engine::stages::profiles_for(&client(&files, None), std::path::Path::new("/project"));
    assert_eq!(profiles.unwrap(), ["$default", "dev", "staging"]);
}

/// REST Client's environments in `.vscode/settings.json`: `$shared`, values that use
/// other variables and `{{$shared name}}`; a cycle is an error at the use.
#[tokio::test]
async fn rest_client_environments_expand_their_values() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert(
        "/project/.vscode/settings.json",
        r#"{
          "rest-client.environmentVariables": {
            "$shared": {"version": "v2", "host": "HOST"},
            "local": {"version": "v1", "api": "{{host}}/echo/{{version}}", "previous": "{{$shared version}}",
                      "loop": "{{again}}", "again": "x{{loop}}"}
          }
        }"#
        .replace("HOST", &server.base_url()),
    );
    let local = client(&files, Some("local"));
    let response = local.run_string("GET {{api}}?was={{previous}}\n", in_project()).await.unwrap();
    let echo = echo(&response).await;
    assert_eq!(echo["path"], "/echo/v1");
    assert_eq!(echo["query"], "was=v2");
    let error = local.run_string("GET {{host}}/echo?x={{loop}}\n", in_project()).await.unwrap_err().to_string();
    assert!(error.contains("`loop` refers to itself (through loop → again → loop)"), "{error}");
}
