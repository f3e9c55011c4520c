//! The floor of a sequential HTTP/1.1 client on tokio, for `bench/sequential`: N GETs
//! (`/status/200?i=0` … `?i=N-1`) one after the other on one keep-alive connection, on a
//! current-thread runtime as `volley run` has, in one of two ways:
//!
//! - `raw`: no HTTP library, the request written whole and the answer read up to its
//!   `Content-Length` (the least any client on tokio does per request);
//! - `hyper`: hyper's HTTP/1.1 client connection, its connection task spawned, bodies
//!   collected (what the transport's plain path is built on).
//!
//! Between them and wrk (C, epoll, no runtime) and `volley run` (the engine), the run's
//! time tells how much of a request is tokio's, hyper's and the engine's own.
//!
//! Usage: `cargo run --release -p volley-http --example floor -- raw|hyper http://127.0.0.1:PORT [N]`

use std::time::Instant;

use http_body_util::{BodyExt as _, Empty};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

type Failure = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Failure> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(base)) = (arguments.first(), arguments.get(1)) else {
        return Err("usage: floor raw|hyper http://127.0.0.1:PORT [N]".into());
    };
    let count: usize = arguments.get(2).map_or(Ok(1000), |text| text.parse())?;
    let authority = base.strip_prefix("http://").ok_or("an http:// base URL")?.trim_end_matches('/').to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let started = Instant::now();
    runtime.block_on(async {
        match mode.as_str() {
            "raw" => raw(&authority, count).await,
            "hyper" => with_hyper(&authority, count).await,
            other => Err(format!("no mode {other:?}: raw or hyper").into()),
        }
    })?;
    eprintln!("{count} GETs in {:.1} ms", started.elapsed().as_secs_f64() * 1000.0);
    Ok(())
}

/// The request written whole, the answer's head read and its `Content-Length` body after.
async fn raw(authority: &str, count: usize) -> Result<(), Failure> {
    let mut stream = TcpStream::connect(authority).await?;
    stream.set_nodelay(true)?;
    let mut buffer = Vec::with_capacity(16 * 1024);
    for index in 0..count {
        let request = format!("GET /status/200?i={index} HTTP/1.1\r\nhost: {authority}\r\naccept: */*\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        buffer.clear();
        let head_end = loop {
            if let Some(at) = memchr::memmem::find(&buffer, b"\r\n\r\n") {
                break at + 4;
            }
            if stream.read_buf(&mut buffer).await? == 0 {
                return Err("the connection closed before an answer".into());
            }
        };
        let head = std::str::from_utf8(&buffer[..head_end])?;
        if !head.starts_with("HTTP/1.1 200") {
            return Err(format!("not a 200: {head}").into());
        }
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok())?
            })
            .ok_or("an answer without Content-Length")?;
        while buffer.len() < head_end + length {
            if stream.read_buf(&mut buffer).await? == 0 {
                return Err("the connection closed inside a body".into());
            }
        }
    }
    Ok(())
}

/// hyper's HTTP/1.1 client connection, as the transport's plain path uses it.
async fn with_hyper(authority: &str, count: usize) -> Result<(), Failure> {
    let stream = TcpStream::connect(authority).await?;
    stream.set_nodelay(true)?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    for index in 0..count {
        let request = http::Request::get(format!("/status/200?i={index}"))
            .header(http::header::HOST, authority)
            .header(http::header::ACCEPT, "*/*")
            .body(Empty::<bytes::Bytes>::new())?;
        sender.ready().await?;
        let response = sender.send_request(request).await?;
        if response.status() != http::StatusCode::OK {
            return Err(format!("not a 200: {}", response.status()).into());
        }
        response.into_body().collect().await?;
    }
    Ok(())
}
