//! The connections of calls: opened directly or by the caller's `Connect` (a proxy's
//! tunnel), TLS with ALPN `h2`, the HTTP/2 handshake; and `Connections`, those kept for
//! the next calls to the same server.

use std::sync::Arc;

use crate::error::CallError;
use crate::outgoing::RequestBody;
use crate::target::Target;

/// Opens the TCP connection of a call to `host:port` (through a proxy, say); the error is
/// said to the user as it is.
pub type Connect = Arc<
    dyn Fn(String) -> std::pin::Pin<Box<dyn Future<Output = Result<tokio::net::TcpStream, String>> + Send>>
        + Send
        + Sync,
>;

/// The sending half of an HTTP/2 connection.
pub(crate) type Http2Sender = hyper::client::conn::http2::SendRequest<RequestBody>;

/// HTTP/2 connections kept for the next calls to the same server (calls share one, as
/// gRPC's clients do); dropping it closes them.
#[derive(Default)]
pub struct Connections(pub(crate) std::sync::Mutex<std::collections::HashMap<String, Http2Sender>>);

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.0.lock().map_or(0, |connections| connections.len());
        f.debug_struct("Connections").field("open", &count).finish()
    }
}

impl Connections {
    /// How many kept connections are still open (a connection the server closed is
    /// seen closed once its driver has read the end).
    #[must_use]
    pub fn open_count(&self) -> usize {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .filter(|sender| !sender.is_closed())
            .count()
    }

    /// A new connection to `target`, kept under `key` (in place of a closed one).
    pub(crate) async fn open(
        &self,
        key: &str,
        target: &Target,
        tls: Option<Arc<rustls::ClientConfig>>,
        connect: Option<&Connect>,
    ) -> Result<Http2Sender, CallError> {
        let (mut connection, _driver) = open(target, tls, connect).await?;
        connection.ready().await.map_err(|error| CallError::Http(error.to_string()))?;
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key.to_owned(), connection.clone());
        Ok(connection)
    }
}

/// A connection to `target`: TCP (or what `connect` opens), TLS when `tls` says, the
/// HTTP/2 handshake; its driver runs in a task of its own until the connection ends
/// (every sender dropped, or the server gone).
pub(crate) async fn open(
    target: &Target,
    tls: Option<Arc<rustls::ClientConfig>>,
    connect: Option<&Connect>,
) -> Result<(Http2Sender, tokio::task::JoinHandle<()>), CallError> {
    let connect_failed = |reason: String| CallError::Connect { authority: target.authority.clone(), reason };
    let stream = match connect {
        Some(connect) => connect(target.authority.clone()).await.map_err(connect_failed)?,
        None => tokio::net::TcpStream::connect(&target.authority)
            .await
            .map_err(|error| connect_failed(error.to_string()))?,
    };
    let _ = stream.set_nodelay(true);
    match tls {
        None => handshake(stream).await,
        Some(config) => {
            let mut config = (*config).clone();
            config.alpn_protocols = vec![b"h2".to_vec()];
            let host = target.authority.rsplit_once(':').map_or(target.authority.as_str(), |(host, _)| host);
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let name = rustls::pki_types::ServerName::try_from(host.to_owned()).map_err(|error| {
                CallError::Handshake { authority: target.authority.clone(), reason: error.to_string() }
            })?;
            let stream =
                tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, stream).await.map_err(|error| {
                    CallError::Handshake { authority: target.authority.clone(), reason: error.to_string() }
                })?;
            handshake(stream).await
        }
    }
}

/// The HTTP/2 handshake on `stream` (prior knowledge, or ALPN's `h2`), its driver spawned.
async fn handshake<S>(stream: S) -> Result<(Http2Sender, tokio::task::JoinHandle<()>), CallError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .map_err(|error| CallError::Http(error.to_string()))?;
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok((sender, driver))
}
