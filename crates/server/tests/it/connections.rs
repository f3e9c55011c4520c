//! Connections on a real socket (127.0.0.1, port 0), spoken to byte by byte: the
//! header-read, keep-alive and write timeouts (with the `408` of a request that stopped
//! arriving), the connection cap and one client's share of it, the early 413, and early answers (a 401 before the body
//! was read) that reach the client on keep-alive connections.

use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Running, start};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use volley_server::ServerConfig;

use crate::support;

/// The bound of every wait: far beyond the short timeouts the tests configure, so a
/// slow machine never fails them.
const GENEROUS: Duration = Duration::from_secs(10);

/// A configuration with short connection timeouts (and a cap, when given, that the one
/// client of the tests, 127.0.0.1, may take whole).
fn quick(header: Duration, keep_alive: Duration, max_connections: Option<usize>) -> ServerConfig {
    let config =
        ServerConfig { header_read_timeout: header, keep_alive_timeout: keep_alive, ..ServerConfig::default() };
    match max_connections {
        Some(max_connections) => {
            ServerConfig { max_connections, max_connections_per_client: Some(max_connections), ..config }
        }
        None => config,
    }
}

fn address(server: &Running) -> String {
    server.base.trim_start_matches("http://").to_owned()
}

async fn connect(server: &Running) -> TcpStream {
    let stream = TcpStream::connect(address(server)).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
}

/// One HTTP/1.1 answer as received.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// The server said it closes the connection after this answer.
    fn closes(&self) -> bool {
        self.header("connection").is_some_and(|value| value.to_ascii_lowercase().contains("close"))
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// Reads one answer (the server's answers here all have a `Content-Length`); `None`
/// when the connection ends (or is reset) before a whole answer came.
async fn read_answer<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Option<Answer> {
    let mut line = String::new();
    if reader.read_line(&mut line).await.ok()? == 0 {
        return None;
    }
    let status = line.split(' ').nth(1)?.parse().ok()?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut answer = Answer { status, headers, body: Vec::new() };
    let length: usize = answer.header("content-length").map_or(Some(0), |value| value.parse().ok())?;
    answer.body = vec![0; length];
    reader.read_exact(&mut answer.body).await.ok()?;
    Some(answer)
}

/// Whether the server closed (or reset) the connection within `limit`. Bytes that come
/// instead are a failure: nothing was asked.
async fn closed_within<R: AsyncRead + Unpin>(stream: &mut R, limit: Duration) -> bool {
    let mut buffer = [0u8; 256];
    match tokio::time::timeout(limit, stream.read(&mut buffer)).await {
        Ok(Ok(0) | Err(_)) => true,
        Ok(Ok(read)) => panic!("unexpected bytes: {:?}", String::from_utf8_lossy(&buffer[..read])),
        Err(_) => false,
    }
}

const HEALTH: &[u8] = b"GET /health HTTP/1.1\r\nHost: volley\r\n\r\n";

#[tokio::test]
async fn a_silent_connection_is_closed_after_the_header_timeout() {
    let timeout = Duration::from_millis(300);
    let server = start(quick(timeout, GENEROUS * 3, None)).await;
    let opened = Instant::now();
    let mut silent = connect(&server).await;
    assert!(closed_within(&mut silent, GENEROUS).await, "a connection that sends nothing stays open");
    assert!(opened.elapsed() >= timeout, "closed before the timeout: {:?}", opened.elapsed());
}

/// Reads the `408` a connection that timed out in a request gets, and its close.
async fn assert_request_timeout<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) {
    let answer = tokio::time::timeout(GENEROUS, read_answer(reader))
        .await
        .expect("an answer within the header timeout window")
        .expect("a 408, not a bare close");
    assert_eq!(answer.status, 408, "{answer:?}");
    assert!(answer.closes(), "{answer:?}");
    let body = answer.json();
    assert_eq!(body["error"]["code"], "REQUEST_TIMEOUT", "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|message| !message.is_empty()), "{body}");
    assert!(closed_within(reader, GENEROUS).await, "the connection stays open after its 408");
}

#[tokio::test]
async fn a_partial_head_is_answered_408_at_the_header_timeout() {
    let timeout = Duration::from_millis(300);
    let server = start(quick(timeout, GENEROUS * 3, None)).await;
    // The header timeout counts from the connection's opening.
    let opened = Instant::now();
    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    writer.write_all(b"GET /health HTTP/1.1\r\nHost: vol").await.expect("write");
    assert_request_timeout(&mut reader).await;
    assert!(opened.elapsed() >= timeout, "answered before the timeout: {:?}", opened.elapsed());
}

#[tokio::test]
async fn a_partial_head_after_an_answer_is_answered_408_and_empty_lines_are_not_a_head() {
    let header = Duration::from_millis(300);
    let server = start(quick(header, GENEROUS * 3, None)).await;
    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    writer.write_all(HEALTH).await.expect("write");
    assert_eq!(read_answer(&mut reader).await.expect("an answer").status, 200);
    // Empty lines between requests (RFC 9112, section 2.2) are no request: closed
    // quietly at the header timeout.
    writer.write_all(b"\r\n").await.expect("write");
    assert!(closed_within(&mut reader, GENEROUS).await, "a connection that sent an empty line stays open");

    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    writer.write_all(HEALTH).await.expect("write");
    assert_eq!(read_answer(&mut reader).await.expect("an answer").status, 200);
    writer.write_all(b"GET /hea").await.expect("write");
    assert_request_timeout(&mut reader).await;
}

#[tokio::test]
async fn a_head_sent_byte_by_byte_is_cut_off_at_the_header_timeout() {
    let server = start(quick(Duration::from_millis(300), GENEROUS * 3, None)).await;
    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    // A byte every 20 ms: the head would take 40 s to finish.
    let trickle = tokio::spawn(async move {
        let head = format!("GET /health HTTP/1.1\r\nHost: volley\r\nX-Slow: {}\r\n\r\n", "a".repeat(2000));
        for byte in head.bytes() {
            if writer.write_all(&[byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    // Answered, and then closed once the client stops (a lingering close reads on).
    assert_request_timeout(&mut reader).await;
    trickle.abort();
}

#[tokio::test]
async fn a_body_that_stops_arriving_is_answered_408() {
    let timeout = Duration::from_millis(300);
    let server = start(quick(timeout, GENEROUS * 3, None)).await;
    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    writer
        .write_all(b"POST /execute HTTP/1.1\r\nHost: volley\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"content\":")
        .await
        .expect("write");
    let paused = Instant::now();
    assert_request_timeout(&mut reader).await;
    assert!(paused.elapsed() >= timeout, "closed before the timeout: {:?}", paused.elapsed());
}

/// Over HTTP/2 (prior knowledge), a connection that timed out gets a `GOAWAY` frame
/// before it closes, not a bare close.
#[tokio::test]
async fn an_http2_connection_that_times_out_gets_a_goaway() {
    const GOAWAY: u8 = 0x7;
    let server = start(quick(Duration::from_millis(300), GENEROUS * 3, None)).await;
    let mut stream = connect(&server).await;
    // The preface and an empty SETTINGS frame; then no request.
    stream.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0").await.expect("write");
    let frames = async {
        let mut header = [0u8; 9];
        loop {
            stream.read_exact(&mut header).await.ok()?;
            let length = usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
            let mut payload = vec![0u8; length];
            stream.read_exact(&mut payload).await.ok()?;
            if header[3] == GOAWAY {
                return Some(());
            }
        }
    };
    let goaway = tokio::time::timeout(GENEROUS, frames).await.expect("the connection ends");
    assert!(goaway.is_some(), "closed without a GOAWAY");
}

/// A socket whose receive buffer is small, so that the server's writes block soon when
/// it stops reading.
async fn connect_small_window(server: &Running) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    let address = address(server).parse().expect("an address");
    let stream = socket.connect(address).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
}

/// A configuration whose connections wait long for heads and idle clients, and whose
/// writes time out soon.
fn writes_time_out(max_connections: usize) -> ServerConfig {
    ServerConfig {
        write_timeout: Duration::from_millis(300),
        max_body_size: 64 * 1024 * 1024,
        ..quick(GENEROUS * 3, GENEROUS * 3, Some(max_connections))
    }
}

/// `/health` is answered within [`GENEROUS`]: a slot is free.
async fn assert_served(server: &Running, what: &str) {
    let (reader, mut writer) = connect(server).await.into_split();
    let mut reader = BufReader::new(reader);
    writer.write_all(HEALTH).await.expect("write");
    let answer = tokio::time::timeout(GENEROUS, read_answer(&mut reader))
        .await
        .unwrap_or_else(|_| panic!("{what}: no slot was freed"))
        .expect("an answer");
    assert_eq!(answer.status, 200, "{answer:?}");
}

/// Reads what the server still sent, until it closes (or resets) within [`GENEROUS`];
/// the count of bytes read.
async fn read_until_closed<R: AsyncRead + Unpin>(stream: &mut R) -> usize {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut read = 0;
    let until_closed = async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(count) => read += count,
            }
        }
    };
    tokio::time::timeout(GENEROUS, until_closed).await.expect("the server closes the connection");
    read
}

#[tokio::test]
async fn a_client_that_stops_reading_a_large_answer_is_closed_after_the_write_timeout() {
    // One slot: `/health` is served only once the stuck connection has let go of it.
    let server = start(writes_time_out(1)).await;
    // Far more than the kernel's buffers hold (a few MiB on loopback).
    let size = 16 * 1024 * 1024;
    std::fs::write(server.workspace.0.join("large.http"), "#".repeat(size)).expect("a large file");
    let mut stuck = connect_small_window(&server).await;
    stuck.write_all(b"GET /workspace/file?path=large.http HTTP/1.1\r\nHost: volley\r\n\r\n").await.expect("write");
    assert_served(&server, "a client that stopped reading a 16 MiB answer").await;
    let read = read_until_closed(&mut stuck).await;
    assert!(read < size, "the whole answer arrived: {read} bytes");
}

/// Runs an execution whose URL is `url_length` bytes long on its own connection (which
/// closes after it): each of its observer events that names the URL is that large.
async fn execute_long_url(server: &Running, url_length: usize) {
    let content = format!("GET http://127.0.0.1:1/{}\n", "a".repeat(url_length));
    let body = serde_json::json!({ "content": content }).to_string();
    let (reader, mut writer) = connect(server).await.into_split();
    let mut reader = BufReader::new(reader);
    let head = format!(
        "POST /execute HTTP/1.1\r\nHost: volley\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    writer.write_all(head.as_bytes()).await.expect("write");
    writer.write_all(body.as_bytes()).await.expect("write");
    let answer = tokio::time::timeout(GENEROUS, read_answer(&mut reader)).await.expect("answered").expect("an answer");
    assert!(answer.status < 500, "{answer:?}");
    assert!(closed_within(&mut reader, GENEROUS).await);
}

/// Observer events, each of them large, until far more than the kernel's buffers hold
/// (a few MiB on loopback) were sent to observers.
async fn many_large_events(server: &Running) {
    for _ in 0..40 {
        execute_long_url(server, 128 * 1024).await;
    }
}

/// Two slots: the stuck observer holds one, and a silent connection the other; `/health`
/// is served only once the observer's connection has let go of its slot.
async fn assert_observer_cut_off(server: &Running) {
    many_large_events(server).await;
    let _silent = connect(server).await;
    assert_served(server, "an observer that stopped reading").await;
}

#[tokio::test]
async fn a_client_that_stops_reading_an_event_stream_is_closed_after_the_write_timeout() {
    let server = start(writes_time_out(2)).await;
    let (reader, mut writer) = connect_small_window(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    writer.write_all(b"GET /event HTTP/1.1\r\nHost: volley\r\n\r\n").await.expect("write");
    // Subscribed once the stream began; from here on the client reads nothing.
    let mut line = String::new();
    while !line.starts_with("event: connected") {
        line.clear();
        let read = tokio::time::timeout(GENEROUS, reader.read_line(&mut line)).await.expect("the stream begins");
        assert!(read.expect("read") > 0, "the stream ended at once");
    }
    assert_observer_cut_off(&server).await;
    read_until_closed(&mut reader).await;
}

#[tokio::test]
async fn a_client_that_stops_reading_an_observer_websocket_is_closed_after_the_write_timeout() {
    let server = start(writes_time_out(2)).await;
    let stream = connect_small_window(&server).await;
    let url = format!("ws://{}/event/ws", address(&server));
    let (socket, _) = tokio::time::timeout(GENEROUS, tokio_tungstenite::client_async(url, stream))
        .await
        .expect("handshake in time")
        .expect("handshake");
    // The server subscribed before it answered the handshake; the client reads nothing.
    assert_observer_cut_off(&server).await;
    let mut stream = socket.into_inner();
    read_until_closed(&mut stream).await;
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_keep_alive_timeout() {
    let keep_alive = Duration::from_millis(300);
    // The header timeout is long: what closes the connection is the keep-alive timeout.
    let server = start(quick(GENEROUS * 3, keep_alive, None)).await;
    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    writer.write_all(HEALTH).await.expect("write");
    let answer = read_answer(&mut reader).await.expect("an answer");
    assert_eq!(answer.status, 200);
    assert!(!answer.closes(), "{answer:?}");
    let answered = Instant::now();
    assert!(closed_within(&mut reader, GENEROUS).await, "an idle keep-alive connection stays open");
    assert!(answered.elapsed() >= keep_alive, "closed before the timeout: {:?}", answered.elapsed());
}

#[tokio::test]
async fn a_keep_alive_connection_may_idle_longer_than_the_header_timeout() {
    let header = Duration::from_millis(200);
    let server = start(quick(header, GENEROUS * 3, None)).await;
    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    for _ in 0..2 {
        writer.write_all(HEALTH).await.expect("write");
        let answer = read_answer(&mut reader).await.expect("an answer on the same connection");
        assert_eq!(answer.status, 200);
        // Idle for three header timeouts, far less than the keep-alive timeout.
        tokio::time::sleep(header * 3).await;
    }
}

#[tokio::test]
async fn at_the_connection_cap_a_new_connection_waits_for_a_free_slot() {
    let header = Duration::from_millis(500);
    let cap = 4;
    let server = start(quick(header, GENEROUS * 3, Some(cap))).await;
    // Plain sockets, read without waiting: whether the server closed them is what the
    // kernel knows, nothing else.
    let silent: Vec<std::net::TcpStream> = (0..cap)
        .map(|_| {
            let stream = std::net::TcpStream::connect(address(&server)).expect("connect");
            stream.set_nonblocking(true).expect("nonblocking");
            stream
        })
        .collect();
    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    writer.write_all(HEALTH).await.expect("write");
    let answer = tokio::time::timeout(GENEROUS, read_answer(&mut reader))
        .await
        .expect("/health answers within the header timeout window")
        .expect("an answer");
    assert_eq!(answer.status, 200);
    // It was served in a slot that a silent connection left at its header timeout, not
    // beside them.
    let closed = silent
        .iter()
        .filter(|stream| {
            let mut stream: &std::net::TcpStream = stream;
            let mut buffer = [0u8; 16];
            match std::io::Read::read(&mut stream, &mut buffer) {
                Ok(0) => true,
                Ok(_) => panic!("a silent connection got bytes"),
                Err(error) => error.kind() != std::io::ErrorKind::WouldBlock,
            }
        })
        .count();
    assert!(closed >= 1, "/health was served while {cap} silent connections held every slot");
}

#[tokio::test]
async fn a_connection_beyond_its_address_share_is_answered_429_and_others_are_served() {
    let share = 3;
    let config = ServerConfig { max_connections_per_client: Some(share), ..quick(GENEROUS * 3, GENEROUS * 3, Some(8)) };
    let server = start(config).await;
    // The share of 127.0.0.1, held by silent connections (accepted in order, before the
    // next one).
    let mut held = Vec::new();
    for _ in 0..share {
        held.push(connect(&server).await);
    }
    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    let _ = writer.write_all(HEALTH).await;
    let answer = tokio::time::timeout(GENEROUS, read_answer(&mut reader))
        .await
        .expect("answered at once")
        .expect("a 429, not a bare close");
    assert_eq!(answer.status, 429, "{answer:?}");
    assert!(answer.closes(), "{answer:?}");
    assert_eq!(answer.header("retry-after"), Some("1"), "{answer:?}");
    assert_eq!(answer.json()["error"]["code"], "CONNECTION_LIMIT_REACHED", "{answer:?}");
    assert!(closed_within(&mut reader, GENEROUS).await, "a refused connection stays open");

    // Another address is served meanwhile (all of 127.0.0.0/8 is this machine).
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.bind("127.0.0.2:0".parse().expect("an address")).expect("bind 127.0.0.2");
    let other = socket.connect(address(&server).parse().expect("an address")).await.expect("connect");
    let (reader, mut writer) = other.into_split();
    let mut reader = BufReader::new(reader);
    writer.write_all(HEALTH).await.expect("write");
    let answer = tokio::time::timeout(GENEROUS, read_answer(&mut reader)).await.expect("answered").expect("an answer");
    assert_eq!(answer.status, 200, "{answer:?}");

    // Once one of its connections closed, the address is served again (the server sees
    // the close soon, not at once: ask until it did).
    drop(held.pop());
    let served_again = tokio::time::timeout(GENEROUS, async {
        loop {
            let (reader, mut writer) = connect(&server).await.into_split();
            let mut reader = BufReader::new(reader);
            let _ = writer.write_all(HEALTH).await;
            match read_answer(&mut reader).await {
                Some(answer) if answer.status == 200 => return,
                Some(answer) => assert_eq!(answer.status, 429, "{answer:?}"),
                None => {}
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(served_again.is_ok(), "the address was not served again after one of its connections closed");
}

#[tokio::test]
async fn an_announced_body_over_the_limit_is_answered_413_before_it_is_read() {
    let server = start(ServerConfig::default()).await;
    let (reader, mut writer) = connect(&server).await.into_split();
    let mut reader = BufReader::new(reader);
    // 1 TiB announced, nothing sent.
    writer
        .write_all(
            b"POST /execute HTTP/1.1\r\nHost: volley\r\nContent-Type: application/json\r\nContent-Length: 1099511627776\r\n\r\n",
        )
        .await
        .expect("write");
    let answer = tokio::time::timeout(GENEROUS, read_answer(&mut reader))
        .await
        .expect("answered without the body")
        .expect("an answer");
    assert_eq!(answer.status, 413, "{answer:?}");
    let body = answer.json();
    assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE", "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|message| !message.is_empty()), "{body}");
    // The body will not be read: the connection ends after the answer.
    assert!(answer.closes(), "{answer:?}");
    assert!(closed_within(&mut reader, GENEROUS).await);
}

const TOKEN: &str = "main-secret";
const BODY: usize = 64 * 1024;

fn unauthorized_head() -> String {
    format!(
        "POST /execute HTTP/1.1\r\nHost: volley\r\nContent-Type: application/json\r\nContent-Length: {BODY}\r\n\r\n"
    )
}

/// Each request's head and first KiB go out, then the client waits for the answer (the
/// server answers 401 without reading the body), then sends the rest of the body and the
/// next request on the same connection, unless the answer said it closes.
#[tokio::test]
async fn early_401s_on_keep_alive_connections_all_arrive() {
    let server = start(ServerConfig { token: Some(TOKEN.to_owned()), ..ServerConfig::default() }).await;
    let body = vec![b' '; BODY];
    let mut received = 0;
    let mut connections = 0;
    let mut lost = Vec::new();
    while received + lost.len() < 300 {
        connections += 1;
        let (reader, mut writer) = connect(&server).await.into_split();
        let mut reader = BufReader::new(reader);
        loop {
            let sent = writer.write_all(unauthorized_head().as_bytes()).await.is_ok()
                && writer.write_all(&body[..1024]).await.is_ok();
            let answer =
                if sent { tokio::time::timeout(GENEROUS, read_answer(&mut reader)).await.ok().flatten() } else { None };
            let Some(answer) = answer else {
                lost.push(received + lost.len());
                break;
            };
            assert_eq!(answer.status, 401, "{answer:?}");
            assert_eq!(answer.json()["error"]["code"], "UNAUTHORIZED");
            received += 1;
            if answer.closes() || received + lost.len() == 300 {
                break;
            }
            if writer.write_all(&body[1024..]).await.is_err() {
                lost.push(received + lost.len());
                break;
            }
        }
    }
    assert!(lost.is_empty(), "{} of 300 answers never came ({connections} connections): {lost:?}", lost.len());
    // The bodies were read beside the answers, so the connection was kept.
    assert_eq!(connections, 1);
}

/// Batches of requests with 64 KiB bodies written back to back on one connection;
/// requests after an answer that closes the connection are sent again on a new one, as
/// a pipelining client must.
#[tokio::test]
async fn pipelined_401s_with_64_kib_bodies_all_arrive() {
    let server = start(ServerConfig { token: Some(TOKEN.to_owned()), ..ServerConfig::default() }).await;
    let mut request = unauthorized_head().into_bytes();
    request.extend(std::iter::repeat_n(b' ', BODY));
    let mut remaining = 300;
    let mut failures = Vec::new();
    let mut connections = 0;
    while remaining > 0 && connections < 600 {
        connections += 1;
        let batch = remaining.min(30);
        let (reader, mut writer) = connect(&server).await.into_split();
        let mut reader = BufReader::new(reader);
        let requests = request.repeat(batch);
        let writing = tokio::spawn(async move {
            let _ = writer.write_all(&requests).await;
            writer
        });
        for _ in 0..batch {
            match tokio::time::timeout(GENEROUS, read_answer(&mut reader)).await {
                Ok(Some(answer)) => {
                    assert_eq!(answer.status, 401, "{answer:?}");
                    remaining -= 1;
                    if answer.closes() {
                        break;
                    }
                }
                Ok(None) => {
                    failures.push(format!("connection {connections}: ended without an answer it owed"));
                    break;
                }
                Err(_) => {
                    failures.push(format!("connection {connections}: no answer within {GENEROUS:?}"));
                    break;
                }
            }
        }
        writing.abort();
    }
    let shown: Vec<&String> = failures.iter().take(3).collect();
    assert!(
        failures.is_empty() && remaining == 0,
        "{remaining} of 300 unanswered, {} connections ended early: {shown:?}",
        failures.len()
    );
}

/// When the server closes a connection whose body it did not read (more than it
/// drains), it reads on what the client still sends before closing: the client can send
/// the rest of its body without a reset, and then sees the end of the stream.
#[tokio::test]
async fn a_connection_closed_with_its_body_unread_takes_the_rest_without_a_reset() {
    let server = start(ServerConfig { token: Some(TOKEN.to_owned()), ..ServerConfig::default() }).await;
    // 2 MiB: within the body limit (a 401), but more than is drained; 64 MiB: over the
    // limit (an early 413); 64 KiB from a client that closes after this request.
    for (announced, status, close) in
        [(2 * 1024 * 1024, 401, ""), (64 * 1024 * 1024, 413, ""), (64 * 1024, 401, "Connection: close\r\n")]
    {
        let (reader, mut writer) = connect(&server).await.into_split();
        let mut reader = BufReader::new(reader);
        let head = format!(
            "POST /execute HTTP/1.1\r\nHost: volley\r\nContent-Type: application/json\r\n{close}Content-Length: {announced}\r\n\r\n"
        );
        writer.write_all(head.as_bytes()).await.expect("write the head");
        let answer = tokio::time::timeout(GENEROUS, read_answer(&mut reader))
            .await
            .expect("answered before the body")
            .expect("an answer");
        assert_eq!(answer.status, status, "{answer:?}");
        assert!(answer.closes(), "{answer:?}");
        // The client goes on sending (a part of) its body, then stops.
        let chunk = vec![b' '; 16 * 1024];
        for sent in 0..(announced / chunk.len()).min(16) {
            if let Err(error) = writer.write_all(&chunk).await {
                panic!("{status}: the server reset the connection after {sent} chunks: {error}");
            }
            writer.flush().await.expect("flush");
        }
        writer.shutdown().await.expect("shutdown");
        let mut rest = Vec::new();
        let end = tokio::time::timeout(GENEROUS, reader.read_to_end(&mut rest)).await.expect("the connection ends");
        assert!(end.is_ok() && rest.is_empty(), "{status}: {end:?} {rest:?}");
    }
}
