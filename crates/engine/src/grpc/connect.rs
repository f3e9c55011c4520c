//! How a gRPC call connects: its target from the prepared URL, TLS from the network
//! settings, the proxy (a `CONNECT` tunnel), the client's kept connections.

use std::sync::Arc;

use volley_grpc::Target;
use volley_syntax::Span;

use crate::client::Client;
use crate::error::{BuildError, TransportError};
use crate::prepared::PreparedRequest;

/// The settings of a call of `prepared` by `client` (and the proxy it goes through, for
/// its errors): its deadline, TLS, proxy and whether it may use a kept connection.
pub(super) fn settings(
    client: &Client,
    prepared: &PreparedRequest,
    proto_field_names: bool,
) -> Result<(volley_grpc::Settings, Option<String>), TransportError> {
    let tls = if prepared.url.scheme() == "https" { Some(Arc::new(tls(client, prepared)?)) } else { None };
    let proxy = proxy_for(prepared);
    // Kept connections only for calls that connect as every call using them does:
    // directly, with the default trust (no CA, certificate or `--insecure` of their own).
    let shared = prepared.network.is_none() && proxy.is_none() && prepared.validate_ssl;
    let settings = volley_grpc::Settings {
        timeout: Some(prepared.timeout),
        tls,
        proto_field_names,
        connect: proxy.as_ref().map(|proxy| through(proxy, &prepared.url)),
        on_message: None,
        connections: shared.then(|| Arc::clone(&client.inner.grpc_connections)),
    };
    Ok((settings, proxy))
}

/// The target of a call from its URL (`http(s)://host:port/package.Service/Method`),
/// with the port a URL leaves out when it is the scheme's (443, 80).
pub(super) fn target_of(url: &url::Url, span: Span) -> Result<Target, BuildError> {
    let mut target = Target::parse(url.as_str()).map_err(|error| BuildError::Grpc {
        message: error.to_string(),
        hint: None,
        span,
    })?;
    if let (None, Some(host), Some(port)) = (url.port(), url.host_str(), url.port_or_known_default()) {
        target.authority = format!("{host}:{port}");
    }
    Ok(target)
}

/// The TLS configuration of a call, from the client's transport: the CA bundles and
/// client certificate the network settings choose for its host, HTTP/2 by ALPN.
fn tls(client: &Client, prepared: &PreparedRequest) -> Result<rustls::ClientConfig, TransportError> {
    client.inner.transport.tls(crate::transport::TlsFor {
        url: &prepared.url,
        network: prepared.network.as_deref(),
        validate_ssl: prepared.validate_ssl,
        alpn: &[b"h2"],
    })
}

/// The proxy a call to `prepared`'s URL goes through: the network settings', else the
/// environment's, as for HTTP.
fn proxy_for(prepared: &PreparedRequest) -> Option<String> {
    let set = prepared.network.as_deref().and_then(|network| network.proxies.clone());
    set.unwrap_or_else(crate::network::Proxies::from_environment).for_url(&prepared.url)
}

/// Connections through the HTTP proxy `proxy` (a `CONNECT` tunnel, as for WebSockets).
fn through(proxy: &str, url: &url::Url) -> volley_grpc::Connect {
    let (proxy, url) = (proxy.to_owned(), url.clone());
    Arc::new(move |_authority| {
        let (proxy, url) = (proxy.clone(), url.clone());
        Box::pin(async move {
            volley_transport::tunnel::open(&proxy, &url).await.map_err(|error| match error {
                TransportError::Proxy { message, .. } => message,
                other => other.to_string(),
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::target_of;

    #[test]
    fn a_target_keeps_the_port_a_url_leaves_out() {
        let at =
            |url: &str| target_of(&url::Url::parse(url).unwrap(), volley_syntax::Span::default()).unwrap().authority;
        assert_eq!(at("https://api.example.com/shop.v1.Orders/List"), "api.example.com:443");
        assert_eq!(at("http://localhost/shop.v1.Orders/List"), "localhost:80");
        assert_eq!(at("http://localhost:50051/shop.v1.Orders/List"), "localhost:50051");
        assert_eq!(at("https://[::1]/s.S/M"), "[::1]:443");
    }
}
