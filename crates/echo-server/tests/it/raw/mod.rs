//! A minimal HTTP/1.1 client over a raw `TcpStream`, so the server's tests see exactly
//! the bytes it writes (statuses, header order, chunk sizes) with no client library in
//! between.
#![allow(dead_code)] // Each test file uses a different part.

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use volley_echo_server::TestServer;

/// A parsed HTTP/1.1 response; `chunks` are the sizes of a chunked body's chunks.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) chunks: Vec<usize>,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(found, _)| found.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    pub(crate) fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(found, _)| found.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
            .collect()
    }

    pub(crate) fn json(&self) -> Value {
        assert_eq!(self.header("content-type"), Some("application/json"), "{self:?}");
        serde_json::from_slice(&self.body).unwrap_or_else(|error| panic!("body is not JSON ({error}): {self:?}"))
    }
}

/// The bytes of a request with `Host`, `Connection: close` and, for a body or a POST,
/// `Content-Length`.
pub(crate) fn request_bytes(method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n").into_bytes();
    for (name, value) in headers {
        bytes.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    if !body.is_empty() || method == "POST" {
        bytes.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(body);
    bytes
}

/// Connects and writes the request; the stream is left to read the answer from.
pub(crate) async fn open(
    server: &TestServer,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> TcpStream {
    let mut stream = TcpStream::connect(server.addr()).await.expect("connect to the test server");
    stream.write_all(&request_bytes(method, target, headers, body)).await.expect("write the request");
    stream
}

/// The whole response, read until the server closes the connection.
pub(crate) async fn send(
    server: &TestServer,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut stream = open(server, method, target, headers, body).await;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read the response");
    parse_response(&raw)
}

pub(crate) fn head_end(raw: &[u8]) -> Option<usize> {
    raw.windows(4).position(|window| window == b"\r\n\r\n").map(|position| position + 4)
}

/// Reads until the response head is complete; returns everything read so far.
pub(crate) async fn read_head(stream: &mut TcpStream) -> Vec<u8> {
    let mut raw = Vec::new();
    let mut buffer = [0; 4096];
    while head_end(&raw).is_none() {
        let read = stream.read(&mut buffer).await.expect("read the response");
        assert_ne!(read, 0, "connection closed before the head was complete");
        raw.extend_from_slice(&buffer[..read]);
    }
    raw
}

/// Parses a complete response; a `Content-Length` must match the body.
pub(crate) fn parse_response(raw: &[u8]) -> Response {
    let response = parse_head(raw);
    if let Some(length) = response.header("content-length") {
        assert_eq!(
            response.body.len(),
            length.parse::<usize>().expect("numeric content-length"),
            "content-length matches the body"
        );
    }
    response
}

/// Parses the head of a response and whatever body bytes follow it, unchecked.
pub(crate) fn parse_head(raw: &[u8]) -> Response {
    let end = head_end(raw).expect("response has a complete head");
    let head = std::str::from_utf8(&raw[..end]).expect("response head is UTF-8");
    let mut lines = head.split("\r\n").filter(|line| !line.is_empty());
    let status_line = lines.next().expect("response has a status line");
    let status = status_line.split(' ').nth(1).and_then(|code| code.parse().ok()).expect("status line has a code");
    let headers: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(':').expect("header line has a colon");
            (name.to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    let chunked = headers.iter().any(|(name, value)| name == "transfer-encoding" && value == "chunked");
    let (body, chunks) = if chunked { dechunk(&raw[end..]) } else { (raw[end..].to_vec(), Vec::new()) };
    Response { status, headers, body, chunks }
}

/// The body of a chunked transfer encoding and the size of each chunk.
pub(crate) fn dechunk(mut raw: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut body = Vec::new();
    let mut chunks = Vec::new();
    loop {
        let line_end = raw.windows(2).position(|window| window == b"\r\n").expect("chunk size line");
        let size = std::str::from_utf8(&raw[..line_end])
            .ok()
            .and_then(|size| usize::from_str_radix(size.trim(), 16).ok())
            .expect("hexadecimal chunk size");
        raw = &raw[line_end + 2..];
        if size == 0 {
            return (body, chunks);
        }
        body.extend_from_slice(&raw[..size]);
        chunks.push(size);
        raw = &raw[size + 2..];
    }
}
