//! A recording proxy for tests: plain requests in absolute form (`GET
//! http://host/path`) are forwarded, `CONNECT host:port` opens a tunnel (HTTPS, `wss://`
//! through the proxy), a SOCKS5 client (no authentication) gets a tunnel too, and every
//! request is kept with its `Proxy-Authorization`, so that a test can tell what went
//! through the proxy and what did not.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What one request to the proxy was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyRecord {
    /// The method: `CONNECT` for a tunnel, `SOCKS5` for a SOCKS tunnel, else the
    /// forwarded request's.
    pub method: String,
    /// The target: `host:port` for tunnels, the absolute URL otherwise.
    pub target: String,
    /// The `Proxy-Authorization` header, if any.
    pub authorization: Option<String>,
}

/// A running proxy on 127.0.0.1 with an ephemeral port; dropping it stops it.
#[derive(Debug)]
pub struct TestProxy {
    addr: SocketAddr,
    records: Arc<Mutex<Vec<ProxyRecord>>>,
    task: JoinHandle<()>,
}

impl TestProxy {
    /// Binds 127.0.0.1:0 and proxies in a background tokio task. With `credentials`
    /// (`Some(("user", "password"))`), requests without that `Proxy-Authorization: Basic`
    /// are answered `407 Proxy Authentication Required`.
    pub async fn start(credentials: Option<(&str, &str)>) -> TestProxy {
        use base64::Engine as _;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("test proxy: cannot bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("test proxy: bound listener has no local address");
        let records = Arc::new(Mutex::new(Vec::new()));
        let expected = credentials.map(|(user, password)| {
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
        });
        let kept = Arc::clone(&records);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let records = Arc::clone(&kept);
                let expected = expected.clone();
                tokio::spawn(async move {
                    let _ = handle(stream, &records, expected.as_deref()).await;
                });
            }
        });
        TestProxy { addr, records, task }
    }

    /// `http://127.0.0.1:PORT`.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `socks5://127.0.0.1:PORT`: the same port speaks SOCKS5 to clients that do.
    #[must_use]
    pub fn socks_url(&self) -> String {
        format!("socks5://{}", self.addr)
    }

    /// Every request the proxy received, in order.
    #[must_use]
    pub fn records(&self) -> Vec<ProxyRecord> {
        self.records.lock().clone()
    }
}

impl Drop for TestProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One client connection: the head of its first request, then a tunnel or a forward.
/// The forwarded request asks the server to close the connection after answering, so
/// that each request the client sends arrives here as a connection of its own.
async fn handle(
    mut client: TcpStream,
    records: &Mutex<Vec<ProxyRecord>>,
    expected: Option<&str>,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut first = [0_u8; 1];
    if client.read(&mut first).await? == 0 {
        return Ok(());
    }
    if first[0] == 5 {
        return socks(client, records).await;
    }
    buffer.push(first[0]);
    let head_end = loop {
        let mut chunk = [0_u8; 4096];
        let read = client.read(&mut chunk).await?;
        if read == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end + 4;
        }
        if buffer.len() > 64 * 1024 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let rest = buffer[head_end..].to_vec();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let headers: Vec<&str> = lines.filter(|line| !line.is_empty()).collect();
    let authorization = headers.iter().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim().eq_ignore_ascii_case("proxy-authorization").then(|| value.trim().to_owned())
    });
    records.lock().push(ProxyRecord {
        method: method.clone(),
        target: target.clone(),
        authorization: authorization.clone(),
    });
    if let Some(expected) = expected
        && authorization.as_deref() != Some(expected)
    {
        let answer = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test proxy\"\r\n\
                      Content-Length: 0\r\nConnection: close\r\n\r\n";
        client.write_all(answer.as_bytes()).await?;
        return Ok(());
    }
    if method == "CONNECT" {
        let Ok(mut server) = TcpStream::connect(&target).await else {
            client.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n").await?;
            return Ok(());
        };
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await?;
        server.write_all(&rest).await?;
        tokio::io::copy_bidirectional(&mut client, &mut server).await?;
        return Ok(());
    }
    // `GET http://host:port/path HTTP/1.1`: to the host, in origin form.
    let Some(after_scheme) = target.strip_prefix("http://") else {
        client.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n").await?;
        return Ok(());
    };
    let (authority, path) = after_scheme.split_at(after_scheme.find('/').unwrap_or(after_scheme.len()));
    let path = if path.is_empty() { "/" } else { path };
    let authority = if authority.contains(':') { authority.to_owned() } else { format!("{authority}:80") };
    let Ok(mut server) = TcpStream::connect(&authority).await else {
        client.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n").await?;
        return Ok(());
    };
    let version = parts.next().unwrap_or("HTTP/1.1");
    let mut forwarded = format!("{method} {path} {version}\r\n");
    for line in headers {
        let name = line.split(':').next().unwrap_or_default().trim();
        if ["proxy-authorization", "proxy-connection", "connection"].iter().any(|skip| name.eq_ignore_ascii_case(skip))
        {
            continue;
        }
        forwarded.push_str(line);
        forwarded.push_str("\r\n");
    }
    forwarded.push_str("Connection: close\r\n\r\n");
    server.write_all(forwarded.as_bytes()).await?;
    server.write_all(&rest).await?;
    tokio::io::copy_bidirectional(&mut client, &mut server).await?;
    Ok(())
}

/// SOCKS5 (RFC 1928), no authentication, `CONNECT` only; the version byte is read.
async fn socks(mut client: TcpStream, records: &Mutex<Vec<ProxyRecord>>) -> std::io::Result<()> {
    let methods = client.read_u8().await?;
    let mut offered = vec![0_u8; usize::from(methods)];
    client.read_exact(&mut offered).await?;
    client.write_all(&[5, 0]).await?;
    let mut request = [0_u8; 4];
    client.read_exact(&mut request).await?;
    let host = match request[3] {
        1 => {
            let mut octets = [0_u8; 4];
            client.read_exact(&mut octets).await?;
            std::net::Ipv4Addr::from(octets).to_string()
        }
        3 => {
            let length = client.read_u8().await?;
            let mut name = vec![0_u8; usize::from(length)];
            client.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).into_owned()
        }
        _ => {
            client.write_all(&[5, 8, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
            return Ok(());
        }
    };
    let port = client.read_u16().await?;
    let target = format!("{host}:{port}");
    records.lock().push(ProxyRecord { method: "SOCKS5".to_owned(), target: target.clone(), authorization: None });
    let Ok(mut server) = TcpStream::connect(&target).await else {
        client.write_all(&[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
        return Ok(());
    };
    client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
    tokio::io::copy_bidirectional(&mut client, &mut server).await?;
    Ok(())
}
