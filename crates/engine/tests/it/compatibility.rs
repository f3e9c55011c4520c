//! Files written for other `.http` tools (JetBrains, REST Client, httpyac, Kulala) send
//! exactly what their authors wrote, checked byte for byte by the echo server.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use serde_json::Value;
use support::{client, client_with_files, echo, echoed_body, echoed_header, in_project};
use volley_echo_server::TestServer;
use volley_engine::io::MemoryFs;
use volley_engine::{Error, RunOptions};

async fn run(text: &str) -> Value {
    echo(&client().run_string(text, RunOptions::default()).await.unwrap()).await
}

#[tokio::test]
async fn an_httpyac_assertion_line_is_not_part_of_the_url() {
    let server = TestServer::start().await;
    let echo =
        run(&format!("GET {}\n?? status == 200\n?? header content-type includes json\n", server.url("/echo"))).await;
    assert_eq!(echo["url"], "/echo");
}

#[tokio::test]
async fn assertion_lines_saved_responses_and_request_lines_are_never_sent_as_a_body() {
    let server = TestServer::start().await;
    let url = server.url("/echo");
    let after_body = run(&format!("POST {url}\nContent-Type: text/plain\n\nhello\n\n?? status == 200\n")).await;
    assert_eq!(echoed_body(&after_body), b"hello");

    let saved = format!(
        "POST {url}\nContent-Type: text/plain\n\nhello\n\nHTTP/1.1 200 - OK\ncontent-type: text/plain\n\nold\n"
    );
    assert_eq!(echoed_body(&run(&saved).await), b"hello");

    let second = format!("POST {url}\nContent-Type: text/plain\n\nhello\n\nGET {url}\n");
    assert_eq!(echoed_body(&run(&second).await), b"hello");
}

#[tokio::test]
async fn spaces_in_the_target_are_percent_encoded_and_the_version_is_not_part_of_it() {
    let server = TestServer::start().await;
    let echo = run(&format!("GET {}?city=New York&q=a b HTTP/1.1\n", server.url("/echo/New Town"))).await;
    assert_eq!(echo["url"], "/echo/New%20Town?city=New%20York&q=a%20b");
}

#[tokio::test]
async fn a_multi_line_target_is_joined() {
    let server = TestServer::start().await;
    let text =
        format!("GET http://127.0.0.1:{}\n    /echo\n    /items\n    ?page=2\n    &size=20\n", server.addr().port());
    assert_eq!(run(&text).await["url"], "/echo/items?page=2&size=20");
}

#[tokio::test]
async fn registered_and_upper_case_methods_are_sent_upper_case() {
    let server = TestServer::start().await;
    let url = server.url("/echo");
    assert_eq!(run(&format!("PROPFIND {url}\nDepth: 1\n")).await["method"], "PROPFIND");
    assert_eq!(run(&format!("mkcol {url}\n")).await["method"], "MKCOL");
    assert_eq!(run(&format!("PURGE {url}\n")).await["method"], "PURGE");
    let typo = client().run_string(&format!("GETT {url}\n"), RunOptions::default()).await;
    assert!(matches!(typo, Err(Error::Invalid { .. })), "{typo:?}");
}

#[tokio::test]
async fn hand_written_multipart_bodies_include_files_with_crlf_line_breaks() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert("/project/photo.png", vec![0x89, b'P', b'N', b'G', b'\n', 0, 255]);
    files.insert("/project/note.txt", "line one\nline two {{not substituted}}\n");
    let client = client_with_files(&files);
    client.set_variable("subject", "a cat");
    let text = format!(
        "POST {}\nContent-Type: multipart/form-data; boundary=WebAppBoundary\n\n\
         --WebAppBoundary\nContent-Disposition: form-data; name=\"description\"\n\nA photo of {{{{subject}}}}\n\
         --WebAppBoundary\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.png\"\nContent-Type: image/png\n\n\
         < ./photo.png\n\
         --WebAppBoundary\nContent-Disposition: form-data; name=\"note\"; filename=\"note.txt\"\n\n\
         < ./note.txt\n\
         --WebAppBoundary--\n",
        server.url("/echo")
    );
    let echo = echo(&client.run_string(&text, in_project()).await.unwrap()).await;
    let mut expected = b"--WebAppBoundary\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\nA photo of a cat\r\n\
--WebAppBoundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.png\"\r\nContent-Type: image/png\r\n\r\n"
        .to_vec();
    expected.extend_from_slice(&[0x89, b'P', b'N', b'G', b'\n', 0, 255]);
    expected.extend_from_slice(
        b"\r\n--WebAppBoundary\r\nContent-Disposition: form-data; name=\"note\"; filename=\"note.txt\"\r\n\r\n",
    );
    expected.extend_from_slice(b"line one\nline two {{not substituted}}\n");
    expected.extend_from_slice(b"\r\n--WebAppBoundary--");
    assert_eq!(String::from_utf8_lossy(&echoed_body(&echo)), String::from_utf8_lossy(&expected));
    assert_eq!(echoed_body(&echo), expected, "file bytes as they are, the text's line breaks CRLF");
    assert_eq!(echoed_header(&echo, "content-type"), Some("multipart/form-data; boundary=WebAppBoundary"));
}

#[tokio::test]
async fn url_encoded_lines_starting_with_an_ampersand_are_joined() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("password", "s3cret");
    let text = format!(
        "POST {}\nContent-Type: application/x-www-form-urlencoded\n\nname=foo\n&password={{{{password}}}}\n  &remember=true\n",
        server.url("/echo")
    );
    let echo = echo(&client.run_string(&text, RunOptions::default()).await.unwrap()).await;
    assert_eq!(echoed_body(&echo), b"name=foo&password=s3cret&remember=true");
}

#[tokio::test]
async fn graphql_requests_send_the_query_variables_and_operation_name_as_json() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("userId", "42");
    let url = server.url("/echo");
    let rest_client = format!(
        "POST {url}\nX-REQUEST-TYPE: GraphQL\n\nquery GetUser($id: ID!) {{\n  user(id: $id) {{ name }}\n}}\n\n{{\n  \"id\": \"{{{{userId}}}}\"\n}}\n"
    );
    let echo_rest = echo(&client.run_string(&rest_client, RunOptions::default()).await.unwrap()).await;
    assert_eq!(
        String::from_utf8(echoed_body(&echo_rest)).unwrap(),
        r#"{"query":"query GetUser($id: ID!) {\n  user(id: $id) { name }\n}","operationName":"GetUser","variables":{"id":"42"}}"#
    );
    assert_eq!(echoed_header(&echo_rest, "content-type"), Some("application/json"));
    assert_eq!(echoed_header(&echo_rest, "x-request-type"), None, "the marker header is not sent");
    assert_eq!(echo_rest["method"], "POST");

    let jetbrains = format!("GRAPHQL {url}\n\n{{\n  viewer {{ login }}\n}}\n");
    let echo_jetbrains = run(&jetbrains).await;
    assert_eq!(echo_jetbrains["method"], "POST");
    assert_eq!(String::from_utf8(echoed_body(&echo_jetbrains)).unwrap(), r#"{"query":"{\n  viewer { login }\n}"}"#);

    let bad = format!("GRAPHQL {url}\n\nquery {{ a }}\n\n{{ not json }}\n");
    let error = client.run_string(&bad, RunOptions::default()).await.unwrap_err();
    assert!(error.to_string().contains("GraphQL variables are not valid JSON"), "{error}");
}

#[tokio::test]
async fn requests_of_unsupported_protocols_are_refused_by_name() {
    let server = TestServer::start().await;
    // (gRPC requests run: tests/it/grpc.rs.)
    for text in ["MQTT mqtt.example.com:1883\n", "GET mqtt://127.0.0.1:1/topic\n"] {
        let error = client().run_string(text, RunOptions::default()).await.unwrap_err();
        assert!(matches!(error, Error::Invalid { .. }), "{error:?}");
        assert!(error.to_string().contains("are not supported"), "{error}");
    }
    drop(server);
}

#[tokio::test]
async fn graphql_fragments_of_the_file_are_sent_after_the_query_that_spreads_them() {
    let server = TestServer::start().await;
    let text = format!(
        "fragment Parts on Continent {{\n  code\n  ...More\n}}\nfragment More on Continent {{ name }}\nfragment Unused on X {{ id }}\n\n\
         GRAPHQL {}\n\nquery {{ continents {{ ...Parts }} }}\n",
        server.url("/echo")
    );
    let echo = run(&text).await;
    let body: Value = serde_json::from_slice(&echoed_body(&echo)).unwrap();
    assert_eq!(
        body["query"],
        "query { continents { ...Parts } }\nfragment Parts on Continent {\n  code\n  ...More\n}\nfragment More on Continent { name }"
    );
}

#[tokio::test]
async fn a_json_body_right_after_the_headers_is_sent_as_httpyac_reads_it() {
    let server = TestServer::start().await;
    let text = format!(
        "POST {}\nContent-Type: application/json\n{{\n  \"name\": \"lamp\"\n}}\n\n?? status == 200\n",
        server.url("/echo")
    );
    let echo = run(&text).await;
    assert_eq!(echoed_body(&echo), b"{\n  \"name\": \"lamp\"\n}");
    assert_eq!(echoed_header(&echo, "content-type"), Some("application/json"));
}

#[tokio::test]
async fn a_path_target_goes_to_the_host_variable_when_there_is_no_host_header() {
    let server = TestServer::start().await;
    let echo = run(&format!("@host = {}\n\nGET /echo/items?page=2\n", server.base_url())).await;
    assert_eq!(echo["url"], "/echo/items?page=2");
    let without = client().run_string("GET /echo/items\n", RunOptions::default()).await.unwrap_err();
    assert!(without.to_string().contains("needs a `Host` header or a variable `host`"), "{without}");
}

#[tokio::test]
async fn a_request_name_stands_for_its_response_body_as_in_httpyac() {
    let server = TestServer::start().await;
    let url = server.url("/echo");
    let client = client();
    let text = format!(
        "# @name first\nPOST {url}/one\nContent-Type: text/plain\n\nhi\n\n###\nPOST {url}\n\n{{{{first.path}}}} {{{{first.body_len}}}} {{{{first.headers.0.0}}}}\n"
    );
    let document = volley_syntax::parse(&text);
    let first = document.request(0).unwrap();
    volley_engine::stages::run_request(&client, &document, first, None, RunOptions::default()).await.unwrap();
    let second = document.request(1).unwrap();
    let echo = echo(
        &volley_engine::stages::run_request(&client, &document, second, None, RunOptions::default()).await.unwrap(),
    )
    .await;
    assert_eq!(echoed_body(&echo), b"/echo/one 2 content-type");
    let analysis = volley_engine::analysis::Analyzer::new(&client).analyze(&document, &text, None);
    assert!(analysis.diagnostics.is_empty(), "{:?}", analysis.diagnostics);
}

#[tokio::test]
async fn a_quoted_word_argument_may_hold_a_variable() {
    let server = TestServer::start().await;
    let text = format!("@format = YYYY\n\nGET {}/{{{{$datetime '{{{{format}}}}' 1 d}}}}\n", server.url("/echo"));
    let echo = run(&text).await;
    let url = echo["url"].as_str().unwrap();
    let year = url.strip_prefix("/echo/").unwrap();
    assert!(year.len() == 4 && year.bytes().all(|byte| byte.is_ascii_digit()), "{url}");
}
