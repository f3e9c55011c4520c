//! The resolvers of REST Client and JetBrains and the `.env` variables, checked on the
//! wire: each request goes to the test server's `/echo`, which says what it received.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use support::{client, echo, echoed_header};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};
use volley_echo_server::TestServer;
use volley_engine::io::MemoryFs;
use volley_engine::{BuildError, Client, ClientConfig, ConfigSource, Error, RunOptions};

/// The headers `/echo` received for the request `headers` (one `Name: value` per line).
async fn sent(client: &Client, server: &TestServer, headers: &str, options: RunOptions) -> Value {
    let text = format!("GET {}\n{headers}", server.url("/echo"));
    echo(&client.run_string(&text, options).await.unwrap()).await
}

fn header(echo: &Value, name: &str) -> String {
    echoed_header(echo, name).unwrap_or_else(|| panic!("no header {name} in {echo}")).to_owned()
}

/// A client over `files` that discovers the configuration.
fn discovering(files: &MemoryFs) -> Client {
    Client::new(ClientConfig { io: Arc::new(files.clone()), config: ConfigSource::Discover, ..support::config() })
}

fn at(path: &str) -> RunOptions {
    RunOptions::default().source_path(PathBuf::from(path))
}

/// `format` (a `time` format description) of the UTC time `offset` from now.
fn utc_in(offset: Duration, format: &str) -> String {
    let format = time::format_description::parse_borrowed::<2>(format).unwrap();
    (OffsetDateTime::now_utc() + offset).format(&format).unwrap()
}

#[tokio::test]
async fn rest_client_random_int_excludes_its_maximum() {
    let server = TestServer::start().await;
    let many = vec!["{{$randomInt 1 3}}"; 60].join(" ");
    let echo = sent(&client(), &server, &format!("X-Values: {many}\n"), RunOptions::default()).await;
    let values: HashSet<String> = header(&echo, "x-values").split(' ').map(str::to_owned).collect();
    assert_eq!(values, HashSet::from(["1".to_owned(), "2".to_owned()]), "3 is never drawn");

    let ours = vec!["{{$random(1, 2)}}"; 60].join(" ");
    let echo = sent(&client(), &server, &format!("X-Values: {ours}\n"), RunOptions::default()).await;
    let values: HashSet<String> = header(&echo, "x-values").split(' ').map(str::to_owned).collect();
    assert_eq!(values, HashSet::from(["1".to_owned(), "2".to_owned()]), "ours includes the maximum");

    let text = format!("GET {}\nX: {{{{$randomInt 5 5}}}}\n", server.url("/echo"));
    let error = client().run_string(&text, RunOptions::default()).await.unwrap_err();
    assert!(error.to_string().contains("the maximum 5 is excluded"), "{error}");
}

#[tokio::test]
async fn rest_client_dates_with_formats_and_offsets() {
    let server = TestServer::start().await;
    let client = client();
    let headers = "X-Custom: {{$datetime \"DD-MM-YYYY\" -1 d}}\nX-Single: {{$datetime 'DD MMM YYYY' 1 y}}\n\
                   X-Iso: {{$datetime iso8601}}\nX-Rfc: {{$datetime rfc1123}}\nX-Local: {{$localDatetime iso8601}}\n\
                   X-Local-Custom: {{$localDatetime 'YYYY-MM-DD[T]HH'}}\nX-Stamp: {{$timestamp -1 d}}\n\
                   X-Now: {{$timestamp}}\n";
    // Taken before and after the run: a day may turn in between.
    let before = utc_in(-Duration::days(1), "[day]-[month]-[year]");
    let echo = sent(&client, &server, headers, RunOptions::default()).await;
    let yesterday = [before, utc_in(-Duration::days(1), "[day]-[month]-[year]")];
    assert!(yesterday.contains(&header(&echo, "x-custom")), "{} not in {yesterday:?}", header(&echo, "x-custom"));
    let next_year = header(&echo, "x-single");
    let year = OffsetDateTime::now_utc().year() + 1;
    assert!(next_year.ends_with(&year.to_string()) && next_year.split(' ').count() == 3, "{next_year}");

    let iso = header(&echo, "x-iso");
    assert!(OffsetDateTime::parse(&iso, &Rfc3339).is_ok() && iso.len() == 24 && iso.ends_with('Z'), "{iso}");
    let rfc = header(&echo, "x-rfc");
    assert!(rfc.ends_with(" GMT") && rfc.as_bytes()[3] == b',', "{rfc}");
    let local = header(&echo, "x-local");
    let parsed = OffsetDateTime::parse(&local, &Rfc3339).unwrap();
    assert!((parsed - OffsetDateTime::now_utc()).abs() < Duration::minutes(1), "{local}");
    assert!(local.contains('+') || local[19..].starts_with('-'), "an offset, never `Z`: {local}");
    assert_eq!(header(&echo, "x-local-custom").len(), 13);

    let now: i64 = header(&echo, "x-now").parse().unwrap();
    let yesterday: i64 = header(&echo, "x-stamp").parse().unwrap();
    assert!((now - yesterday - 86_400).abs() <= 1, "{now} {yesterday}");
}

#[tokio::test]
async fn jetbrains_random_values() {
    let server = TestServer::start().await;
    let headers = "X-Integer: {{$random.integer(10, 12)}}\nX-Float: {{$random.float(0.5, 0.75)}}\n\
                   X-Alpha: {{$random.alphabetic(12)}}\nX-Alnum: {{$random.alphanumeric(40)}}\n\
                   X-Hex: {{$random.hexadecimal(16)}}\nX-Email: {{$random.email}}\nX-Uuid: {{$random.uuid}}\n\
                   X-Int: {{$randomInt}}\nX-Default: {{$random.integer()}}\nX-Iso: {{$isoTimestamp}}\n\
                   X-Env: {{$env.HOME}}\n";
    let echo = sent(&client(), &server, headers, RunOptions::default()).await;
    assert!(["10", "11"].contains(&header(&echo, "x-integer").as_str()));
    let float: f64 = header(&echo, "x-float").parse().unwrap();
    assert!((0.5..0.75).contains(&float), "{float}");
    let alpha = header(&echo, "x-alpha");
    assert!(alpha.len() == 12 && alpha.chars().all(|character| character.is_ascii_alphabetic()), "{alpha}");
    let alnum = header(&echo, "x-alnum");
    assert!(alnum.len() == 40 && alnum.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{alnum}");
    let hex = header(&echo, "x-hex");
    assert!(hex.len() == 16 && hex.chars().all(|character| character.is_ascii_hexdigit()), "{hex}");
    assert!(header(&echo, "x-email").ends_with("@example.com"));
    assert_eq!(header(&echo, "x-uuid").len(), 36);
    for name in ["x-int", "x-default"] {
        let value: i64 = header(&echo, name).parse().unwrap();
        assert!((0..1000).contains(&value), "{name}: {value}");
    }
    let iso = header(&echo, "x-iso");
    assert!(iso.len() == 24 && OffsetDateTime::parse(&iso, &Rfc3339).is_ok(), "milliseconds, UTC: {iso}");
    assert_eq!(header(&echo, "x-env"), "/home/ada");
}

#[tokio::test]
async fn process_env_reads_a_variable_named_by_percent() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("keyName", "API_KEY");
    let headers = "X-Direct: {{$processEnv HOME}}\nX-Indirect: {{$processEnv %keyName}}\n\
                   X-Fallback: {{$processEnv %HOME}}\nX-Unset: [{{$processEnv NOT_SET}}]\n";
    let echo = sent(&client, &server, headers, RunOptions::default()).await;
    assert_eq!(header(&echo, "x-direct"), "/home/ada");
    assert_eq!(header(&echo, "x-indirect"), volley_echo_server::API_KEY, "`keyName` names the variable");
    assert_eq!(header(&echo, "x-fallback"), "/home/ada", "no variable `HOME`: the name itself");
    assert_eq!(header(&echo, "x-unset"), "[]");
}

/// A project with `.env` files at its root and in a subdirectory, and a `.env` above it
/// that is never read.
fn project() -> MemoryFs {
    let files = MemoryFs::new();
    files.insert("/work/.env", "OUTSIDE=above the project\n");
    files.insert("/work/project/.git/HEAD", "ref: main\n");
    files.insert(
        "/work/project/.env",
        "# the project's\nTOKEN=root-token\nROOT_ONLY=r\nDB_PASSWORD=\"hunter 2\"\nexport REGION=eu\nNAME_OF_KEY=TOKEN\n",
    );
    files.insert("/work/project/api/.env", "TOKEN=api-token\n");
    files
}

#[tokio::test]
async fn dotenv_files_from_the_directory_up_to_the_root_the_nearest_winning() {
    let server = TestServer::start().await;
    let files = project();
    let client = discovering(&files);
    let headers = "X-Dotenv: {{$dotenv TOKEN}}\nX-Root: {{$dotenv ROOT_ONLY}}\nX-Variable: {{TOKEN}}\n\
                   X-Quoted: {{DB_PASSWORD}}\nX-Exported: {{REGION}}\nX-Indirect: {{$dotenv %NAME_OF_KEY}}\n\
                   X-Secret: {{$secret(DB_PASSWORD)}}\n";
    let response = client
        .run_string(&format!("GET {}\n{headers}", server.url("/echo")), at("/work/project/api/users.http"))
        .await
        .unwrap();
    let shown = response.redact("hunter 2");
    let echo = echo(&response).await;
    assert_eq!(header(&echo, "x-dotenv"), "api-token", "the nearest .env wins");
    assert_eq!(header(&echo, "x-root"), "r");
    assert_eq!(header(&echo, "x-variable"), "api-token", "`.env` keys are variables too");
    assert_eq!(header(&echo, "x-quoted"), "hunter 2");
    assert_eq!(header(&echo, "x-exported"), "eu");
    assert_eq!(header(&echo, "x-indirect"), "api-token", "`%NAME_OF_KEY` names the key");
    assert_eq!(header(&echo, "x-secret"), "hunter 2");
    assert_eq!(shown, "[REDACTED]", "`$secret` values are redacted");

    let text = format!("GET {}\nX: {{{{$dotenv OUTSIDE}}}}\n", server.url("/echo"));
    let error = client.run_string(&text, at("/work/project/api/users.http")).await.unwrap_err().to_string();
    assert!(
        error.contains(
            "`OUTSIDE` is not in any .env file (looked at /work/project/api/env/.env, /work/project/api/.env, \
             /work/project/env/.env, /work/project/.env)"
        ),
        "the .env above the project root is not read: {error}"
    );
    let text = format!("GET {}\nX: {{{{OUTSIDE}}}}\n", server.url("/echo"));
    let error = client.run_string(&text, at("/work/project/api/users.http")).await.unwrap_err();
    assert!(matches!(error, Error::Build(BuildError::UndefinedVariable { .. })), "{error}");
}

#[tokio::test]
async fn dotenv_variables_are_the_lowest_layer() {
    let server = TestServer::start().await;
    let files = project();
    files.insert("/work/project/volley.jsonc", r#"{"variables": {"REGION": "from-config"}}"#);
    let client = discovering(&files);
    let text = format!(
        "@TOKEN = from-file\nGET {}\nX-Token: {{{{TOKEN}}}}\nX-Region: {{{{REGION}}}}\nX-Root: {{{{ROOT_ONLY}}}}\n",
        server.url("/echo")
    );
    let echo = echo(&client.run_string(&text, at("/work/project/api/users.http")).await.unwrap()).await;
    assert_eq!(header(&echo, "x-token"), "from-file", "the file's variables win over .env");
    assert_eq!(header(&echo, "x-region"), "from-config", "so do the configuration's");
    assert_eq!(header(&echo, "x-root"), "r");

    // With a configuration, .env files apply up to its directory, not above it.
    files.insert("/work/project/api/volley.jsonc", "{}");
    volley_engine::stages::reload_config(&client);
    let text = format!("GET {}\nX: {{{{$dotenv ROOT_ONLY}}}}\n", server.url("/echo"));
    let error = client.run_string(&text, at("/work/project/api/users.http")).await.unwrap_err().to_string();
    assert!(error.contains("looked at /work/project/api/env/.env, /work/project/api/.env)"), "{error}");
}

#[tokio::test]
async fn dotenv_changes_are_seen_by_the_next_run() {
    let server = TestServer::start().await;
    let files = project();
    let client = discovering(&files);
    let text = format!("GET {}\nX-Token: {{{{TOKEN}}}}\nX-Region: {{{{REGION}}}}\n", server.url("/echo"));
    let run = || async { echo(&client.run_string(&text, at("/work/project/web/page.http")).await.unwrap()).await };
    assert_eq!(header(&run().await, "x-token"), "root-token");
    files.insert("/work/project/.env", "TOKEN=changed\nREGION=us\n");
    let echo = run().await;
    assert_eq!((header(&echo, "x-token"), header(&echo, "x-region")), ("changed".to_owned(), "us".to_owned()));
    files.insert("/work/project/web/.env", "TOKEN=new-nearer-file\n");
    assert_eq!(header(&run().await, "x-token"), "new-nearer-file");
}

#[tokio::test]
async fn a_broken_dotenv_matters_only_when_a_value_is_looked_for_there() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert("/p/.git/HEAD", "ref: main\n");
    files.insert("/p/.env", "GOOD=1\nnot an assignment\n");
    let client = discovering(&files);
    let fine = format!("@x = 1\nGET {}\nX: {{{{x}}}}\n", server.url("/echo"));
    assert!(client.run_string(&fine, at("/p/a.http")).await.is_ok());
    let needs = format!("GET {}\nX: {{{{GOOD}}}}\n", server.url("/echo"));
    let error = client.run_string(&needs, at("/p/a.http")).await.unwrap_err().to_string();
    assert!(error.contains("the .env files cannot be read: `/p/.env`:2:1: expected `KEY=value`"), "{error}");
}

#[tokio::test]
async fn the_values_of_sensitive_dotenv_keys_are_redacted_even_unused() {
    let files = project();
    let client = discovering(&files);
    let prepared = volley_engine::stages::prepare(
        &client,
        "GET http://localhost/{{REGION}}\n",
        &at("/work/project/api/users.http"),
    )
    .await
    .unwrap();
    assert_eq!(
        prepared.redactor.redact("api-token, hunter 2, hunter%202, eu"),
        "[REDACTED], [REDACTED], [REDACTED], eu"
    );
}

#[tokio::test]
async fn resolvers_of_other_tools_volley_does_not_support_are_refused_before_sending() {
    let server = TestServer::start().await;
    for (call, tool) in [
        ("{{$aadToken}}", "(REST Client: an Azure Active Directory token"),
        ("{{$aadV2Token new AzureCloud}}", "(REST Client: an Azure Active Directory v2 token"),
        ("{{$oidcAccessToken}}", "(REST Client: an OpenID Connect"),
        ("{{$exampleServer}}", "(JetBrains: the address of the IDE's built-in example server)"),
    ] {
        let text = format!("GET {}\nAuthorization: {call}\n", server.url("/echo"));
        let error = client().run_string(&text, RunOptions::default()).await.unwrap_err();
        let Error::Build(build @ BuildError::UnsupportedResolver { .. }) = &error else { panic!("{error:?}") };
        assert!(build.message().contains(tool) && build.message().ends_with(") is not supported by Volley"));
        assert_eq!(build.code(), "unknown-resolver");
        assert!(build.hint().is_some());
        assert_eq!(build.span().start_position.line, 1, "it points at the call");
    }
    let text = format!("GET {}\n", server.url("/stats"));
    let stats: Value = client().run_string(&text, RunOptions::default()).await.unwrap().json().await.unwrap();
    assert_eq!(stats["requests"].get("/echo"), None, "nothing was sent: {stats}");
}
