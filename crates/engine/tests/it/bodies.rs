//! Every body form arrives with exactly the bytes it should, checked by the echo server.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use serde_json::Value;
use support::{client, client_with_files, echo, echoed_body, echoed_header, in_project};
use volley_echo_server::TestServer;
use volley_engine::RunOptions;
use volley_engine::io::MemoryFs;

#[tokio::test]
async fn inline_bodies_are_sent_byte_for_byte_after_substitution() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("name", "Ada");
    let text = format!(
        "POST {}\nContent-Type: application/json\n\n{{\r\n  \"name\": \"{{{{name}}}}\",\r\n  # not a comment\r\n  \"n\": {{{{count}}}}\r\n}}\r\n\r\n\r\n",
        server.url("/echo")
    );
    let response = client.run_string(&text, RunOptions::default().variable("count", 3)).await.unwrap();
    let echo = echo(&response).await;
    assert_eq!(echoed_body(&echo), b"{\r\n  \"name\": \"Ada\",\r\n  # not a comment\r\n  \"n\": 3\r\n}");
    assert_eq!(echoed_header(&echo, "content-type"), Some("application/json"));
    assert_eq!(echo["method"], "POST");
}

#[tokio::test]
async fn get_and_head_without_a_written_body_send_none() {
    let server = TestServer::start().await;
    let response = client().run_string(&format!("GET {}\n", server.url("/echo")), RunOptions::default()).await.unwrap();
    let echo = echo(&response).await;
    assert_eq!(echo["body_len"], 0);
    assert_eq!(echoed_header(&echo, "content-length"), None);
    assert_eq!(echoed_header(&echo, "content-type"), None);
}

#[tokio::test]
async fn file_bodies_are_read_relative_to_the_http_file_with_their_mime_type() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert("/project/payloads/user.json", b"{\"id\": \"{{not substituted}}\"}\n".to_vec());
    files.insert("/project/blob.bin", vec![0u8, 159, 146, 150, 255]);
    let client = client_with_files(&files);

    let text = format!("POST {}\n\n< ./payloads/user.json\n", server.url("/echo"));
    let echo_json = echo(&client.run_string(&text, in_project()).await.unwrap()).await;
    assert_eq!(echoed_body(&echo_json), b"{\"id\": \"{{not substituted}}\"}\n");
    assert_eq!(echoed_header(&echo_json, "content-type"), Some("application/json"));

    let text = format!("POST {}\nContent-Type: application/x-custom\n\n< blob.bin\n", server.url("/echo"));
    let echo_binary = echo(&client.run_string(&text, in_project()).await.unwrap()).await;
    assert_eq!(echoed_body(&echo_binary), [0u8, 159, 146, 150, 255]);
    assert_eq!(echoed_header(&echo_binary, "content-type"), Some("application/x-custom"), "a written type wins");
}

#[tokio::test]
async fn substituted_file_bodies_replace_variables_and_nothing_else() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert("/project/order.json", "{\"id\": \"{{id}}\", \"n\": {{$random(7, 7)}}}\n### kept\n< kept too\n");
    files.insert("/project/legacy.txt", b"caf\xe9 {{id}}".to_vec());
    let client = client_with_files(&files);
    client.set_variable("id", "A-1");
    let text = format!("POST {}\n\n<@ ./order.json\n", server.url("/echo"));
    let echo_order = echo(&client.run_string(&text, in_project()).await.unwrap()).await;
    assert_eq!(echoed_body(&echo_order), b"{\"id\": \"A-1\", \"n\": 7}\n### kept\n< kept too\n");

    let text = format!("POST {}\n\n<@latin1 ./legacy.txt\n", server.url("/echo"));
    let echo_legacy = echo(&client.run_string(&text, in_project()).await.unwrap()).await;
    assert_eq!(echoed_body(&echo_legacy), "café A-1".as_bytes(), "decoded from Latin-1, sent as UTF-8");
}

#[tokio::test]
async fn url_encoded_forms_encode_names_and_values() {
    let server = TestServer::start().await;
    let client = client();
    client.set_variable("secret", "p&ss=1 2");
    let text = format!(
        "POST {}\n\ngrant_type = client_credentials\nclient_secret = {{{{secret}}}}\nscope=read write\nempty =\n",
        server.url("/echo")
    );
    let echo = echo(&client.run_string(&text, RunOptions::default()).await.unwrap()).await;
    assert_eq!(
        String::from_utf8(echoed_body(&echo)).unwrap(),
        "grant_type=client_credentials&client_secret=p%26ss%3D1+2&scope=read+write&empty="
    );
    assert_eq!(echoed_header(&echo, "content-type"), Some("application/x-www-form-urlencoded"));
}

#[tokio::test]
async fn a_hand_encoded_form_line_is_sent_as_written() {
    let server = TestServer::start().await;
    let text =
        format!("POST {}\nContent-Type: application/x-www-form-urlencoded\n\na=1&b=2%20x\n", server.url("/echo"));
    let echo = echo(&client().run_string(&text, RunOptions::default()).await.unwrap()).await;
    assert_eq!(echoed_body(&echo), b"a=1&b=2%20x");
}

#[tokio::test]
async fn multipart_forms_send_fields_and_files_with_custom_filenames() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert("/project/files/report.pdf", b"%PDF-1.7 fake".to_vec());
    files.insert("/project/files/data.csv", "a,b\n1,2\n");
    let client = client_with_files(&files);
    client.set_variable("quarter", "q3");
    let text = format!(
        "POST {}\nContent-Type: multipart/form-data\n\ntitle = Report {{{{quarter}}}}\nreport = @./files/report.pdf\ndata = @./files/data.csv | export-{{{{quarter}}}}.csv\n",
        server.url("/upload")
    );
    let response = client.run_string(&text, in_project()).await.unwrap();
    assert_eq!(response.status(), 200);
    let parts: Value = response.json().await.unwrap();
    let parts = parts["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0]["name"], "title");
    assert_eq!(parts[0]["filename"], Value::Null);
    assert_eq!(parts[0]["text"], "Report q3");
    assert_eq!(parts[1]["name"], "report");
    assert_eq!(parts[1]["filename"], "report.pdf");
    assert_eq!(parts[1]["content_type"], "application/pdf");
    assert_eq!(parts[1]["text"], "%PDF-1.7 fake");
    assert_eq!(parts[2]["filename"], "export-q3.csv");
    assert_eq!(parts[2]["content_type"], "text/csv");
    assert_eq!(parts[2]["text"], "a,b\n1,2\n");
    let content_type = response.request().headers["content-type"].to_str().unwrap();
    assert!(content_type.starts_with("multipart/form-data; boundary=volley-"), "{content_type}");
}

#[tokio::test]
async fn a_file_field_makes_a_form_multipart_and_a_written_boundary_is_kept() {
    let server = TestServer::start().await;
    let files = MemoryFs::new();
    files.insert("/project/a.txt", "hello");
    let client = client_with_files(&files);
    let text = format!("POST {}\n\nfile = @a.txt\n", server.url("/echo"));
    let echo_inferred = echo(&client.run_string(&text, in_project()).await.unwrap()).await;
    let content_type = echoed_header(&echo_inferred, "content-type").unwrap().to_owned();
    let boundary = content_type.strip_prefix("multipart/form-data; boundary=").unwrap();
    let expected = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--{boundary}--\r\n"
    );
    assert_eq!(String::from_utf8(echoed_body(&echo_inferred)).unwrap(), expected);

    let text = format!("POST {}\nContent-Type: multipart/form-data; boundary=fixed\n\nx = 1\n", server.url("/echo"));
    let echo_fixed = echo(&client.run_string(&text, in_project()).await.unwrap()).await;
    assert_eq!(echoed_header(&echo_fixed, "content-type"), Some("multipart/form-data; boundary=fixed"));
    assert_eq!(
        String::from_utf8(echoed_body(&echo_fixed)).unwrap(),
        "--fixed\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--fixed--\r\n"
    );
}

#[tokio::test]
async fn headers_repeat_in_order_and_defaults_fill_the_gaps() {
    let server = TestServer::start().await;
    let client = volley_engine::Client::new(volley_engine::ClientConfig {
        defaults: volley_engine::RequestDefaults {
            headers: vec![("X-Default".to_owned(), "d".to_owned()), ("Accept".to_owned(), "text/plain".to_owned())],
            ..Default::default()
        },
        ..support::config()
    });
    let text = format!(
        "GET {}\nAccept: application/json\nX-Multi: one\nX-Multi: two\nX-Greeting: grüß dich\n",
        server.url("/echo")
    );
    let echo = echo(&client.run_string(&text, RunOptions::default()).await.unwrap()).await;
    assert_eq!(support::echoed_headers(&echo, "x-multi"), ["one", "two"]);
    assert_eq!(echoed_header(&echo, "accept"), Some("application/json"), "the request wins over defaults");
    assert_eq!(echoed_header(&echo, "x-default"), Some("d"));
    assert_eq!(echoed_header(&echo, "user-agent"), Some(volley_engine::stages::DEFAULT_USER_AGENT));
    assert_eq!(echoed_header(&echo, "x-greeting"), Some("grüß dich"));
}

/// `>> ./file` saves the response body to a new file each time (`name-1.ext` beside an
/// existing one), `>>! ./file` over it; paths outside the project are refused before
/// anything is sent.
#[tokio::test]
async fn response_bodies_are_saved_where_the_request_says() {
    let server = TestServer::start().await;
    let project = std::env::temp_dir().join(format!("volley-save-it-{}", std::process::id()));
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let client = support::client();
    let options = || RunOptions::default().source_path(project.join("requests.http"));
    let url = server.url("/status/200");
    let text = format!("GET {url}\n\n>> ./out/{{{{name}}}}.txt\n\n###\nGET {url}\n\n>>! ./out/fixed.txt\n");
    let saved = |name: &str| std::fs::read_to_string(project.join("out").join(name)).ok();
    for _ in 0..2 {
        let response = client
            .run_string(
                &text,
                options().variables(serde_json::Map::from_iter([(
                    "name".to_owned(),
                    serde_json::Value::String("first".to_owned()),
                )])),
            )
            .await
            .unwrap();
        assert!(response.logs().iter().any(|line| line.starts_with("response saved to")), "{:?}", response.logs());
        client.run_string(&text, options().index(1)).await.unwrap();
    }
    assert!(saved("first.txt").is_some());
    assert_eq!(saved("first-1.txt"), saved("first.txt"), "a second file beside the first");
    assert!(saved("first-2.txt").is_none());
    assert!(saved("fixed.txt").is_some());
    assert!(saved("fixed-1.txt").is_none(), "`>>!` writes over");
    let outside = format!("GET {url}\n\n>> ../escaped.txt\n");
    let error = client.run_string(&outside, options()).await.unwrap_err();
    assert!(error.to_string().contains("outside"), "{error}");
    std::fs::remove_dir_all(&project).unwrap();
}
