//! `CONNECT` tunnels through HTTP proxies, for the connections reqwest does not make:
//! WebSockets and gRPC.

use crate::error::TransportError;

/// A TCP connection to `url`'s host through the HTTP proxy `proxy` (`CONNECT`, with
/// the proxy URL's credentials as `Proxy-Authorization: Basic`), as browsers open
/// WebSockets through proxies. Every failure is a [`TransportError::Proxy`].
pub async fn open(proxy: &str, url: &url::Url) -> Result<tokio::net::TcpStream, TransportError> {
    use base64::Engine as _;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let shown = crate::network::without_password(proxy);
    let failed = |message: String| TransportError::Proxy { proxy: shown.clone(), message };
    let parsed = url::Url::parse(proxy).map_err(|error| failed(format!("not a proxy URL: {error}")))?;
    if parsed.scheme() != "http" {
        return Err(failed(format!(
            "WebSocket and gRPC connections go through `http://` proxies only, not `{}://`",
            parsed.scheme()
        )));
    }
    let (Some(proxy_host), Some(proxy_port)) = (parsed.host_str(), parsed.port_or_known_default()) else {
        return Err(failed("the proxy URL has no host".to_owned()));
    };
    let mut stream = tokio::net::TcpStream::connect((proxy_host, proxy_port)).await.map_err(|error| {
        if error.kind() == std::io::ErrorKind::ConnectionRefused {
            failed("the proxy refused the connection (is it running, and is the port right?)".to_owned())
        } else {
            failed(error.to_string())
        }
    })?;
    let target = crate::error::host_of(url);
    let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if !parsed.username().is_empty() {
        let decode = |text: &str| percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned();
        let credentials = format!("{}:{}", decode(parsed.username()), decode(parsed.password().unwrap_or("")));
        let token = base64::engine::general_purpose::STANDARD.encode(credentials);
        head.push_str("Proxy-Authorization: Basic ");
        head.push_str(&token);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.map_err(|error| failed(error.to_string()))?;
    // The answer's head, byte by byte: nothing of the tunnelled stream may be read here.
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        if answer.len() > 16 * 1024 {
            return Err(failed("the proxy's answer to CONNECT has no end".to_owned()));
        }
        let byte = stream.read_u8().await.map_err(|error| failed(format!("the proxy closed the tunnel: {error}")))?;
        answer.push(byte);
    }
    let status_line = String::from_utf8_lossy(&answer).lines().next().unwrap_or_default().to_owned();
    let status = status_line.split(' ').nth(1).unwrap_or_default();
    if !status.starts_with('2') {
        return Err(failed(format!("the proxy answered CONNECT with `{}`", status_line.trim())));
    }
    Ok(stream)
}
