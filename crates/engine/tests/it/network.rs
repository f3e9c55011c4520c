//! Certificates and proxies against real TLS and a real proxy: a private CA trusted by
//! file, client certificates (mutual TLS) over HTTPS and `wss://`, JetBrains'
//! `SSLConfiguration`, HTTP and HTTPS through a recording proxy, `noProxy`, proxy
//! credentials from `$secret`, and the HTTP version of a client.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt as _;
use support::{echo, in_project};
use volley_echo_server::{TestPki, TestProxy, TestServer};
use volley_engine::config::{HostTls, ProxySettings, TlsSettings};
use volley_engine::io::MemoryFs;
use volley_engine::resolvers::Environment;
use volley_engine::websocket::WsMessage;
use volley_engine::{Client, ClientConfig, ConfigSource, Error, HttpVersion, TransportError};

/// A project with the test CA, the client certificate and its key as files, and `config`
/// as its volley.jsonc (none when empty).
fn project(pki: &TestPki, config: &str) -> MemoryFs {
    let files = MemoryFs::new();
    files.insert("/project/certs/ca.pem", pki.ca_pem());
    files.insert("/project/certs/client.pem", pki.client_pem());
    files.insert("/project/certs/client.key", pki.client_key_pem());
    files.insert("/project/certs/both.pem", format!("{}{}", pki.client_pem(), pki.client_key_pem()));
    if !config.is_empty() {
        files.insert("/project/volley.jsonc", config);
    }
    files
}

fn client_in(files: &MemoryFs, configure: impl FnOnce(&mut ClientConfig)) -> Client {
    let mut config = ClientConfig {
        io: Arc::new(files.clone()),
        config: ConfigSource::Discover,
        environment: Environment::fixed([("PROXY_PASSWORD".to_owned(), "s3cret-pass".to_owned())]),
        ..support::config()
    };
    configure(&mut config);
    Client::new(config)
}

async fn get(client: &Client, url: &str) -> Result<volley_engine::Response, Error> {
    client.run_string(&format!("GET {url}\n"), in_project()).await
}

fn tls_error(error: &Error) -> String {
    match error {
        Error::Transport(transport @ TransportError::Tls { message, .. }) => {
            format!("{message} / {}", transport.hint().unwrap_or_default())
        }
        other => panic!("expected a TLS error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_private_ca_is_trusted_from_a_file_for_every_host_or_for_one() {
    let pki = TestPki::generate("Volley Test CA");
    let server = TestServer::start_tls_with(&pki, false).await;
    let url = server.url("/echo");

    let untrusted = get(&client_in(&project(&pki, ""), |_| {}), &url).await.unwrap_err();
    let message = tls_error(&untrusted);
    assert!(message.contains("UnknownIssuer") && message.contains("--cacert"), "{message}");
    assert!(message.contains("issued by `CN=Volley Test CA`"), "the issuer is named: {message}");

    let everywhere = project(&pki, r#"{"tls": {"ca": "certs/ca.pem"}}"#);
    echo(&get(&client_in(&everywhere, |_| {}), &url).await.unwrap()).await;

    let this_host = project(&pki, r#"{"tls": {"hosts": {"127.0.0.1": {"ca": ["certs/ca.pem"]}}}}"#);
    echo(&get(&client_in(&this_host, |_| {}), &url).await.unwrap()).await;
    let other_host = project(&pki, r#"{"tls": {"hosts": {"api.example.com": {"ca": ["certs/ca.pem"]}}}}"#);
    tls_error(&get(&client_in(&other_host, |_| {}), &url).await.unwrap_err());

    // The library's (and the CLI's `--cacert`) beside the configuration's.
    let from_client = client_in(&project(&pki, ""), |config| {
        config.tls.ca = vec![PathBuf::from("/project/certs/ca.pem")];
    });
    echo(&get(&from_client, &url).await.unwrap()).await;

    let missing = project(&pki, r#"{"tls": {"ca": "certs/nope.pem"}}"#);
    let error = get(&client_in(&missing, |_| {}), &url).await.unwrap_err();
    let Error::Transport(TransportError::Certificate { path, message, .. }) = &error else { panic!("{error:?}") };
    assert!(path.ends_with("certs/nope.pem") && message.contains("cannot read"), "{message}");

    let not_pem = project(&pki, r#"{"tls": {"ca": "certs/garbage.pem"}}"#);
    not_pem.insert("/project/certs/garbage.pem", "not a certificate");
    let error = get(&client_in(&not_pem, |_| {}), &url).await.unwrap_err();
    let Error::Transport(TransportError::Certificate { path, message, .. }) = &error else { panic!("{error:?}") };
    assert!(path.ends_with("certs/garbage.pem") && message.contains("holds no certificate"), "{message}");
}

#[tokio::test]
async fn an_expired_server_certificate_is_said_to_be_expired() {
    let pki = TestPki::generate_with_expired_server("Volley Test CA");
    let server = TestServer::start_tls_with(&pki, false).await;
    let trusting = project(&pki, r#"{"tls": {"ca": "certs/ca.pem"}}"#);
    let message = tls_error(&get(&client_in(&trusting, |_| {}), &server.url("/echo")).await.unwrap_err());
    assert!(message.contains("certificate expired") && message.contains("has expired"), "{message}");
}

#[tokio::test]
async fn a_client_certificate_is_presented_to_the_hosts_it_is_for() {
    let pki = TestPki::generate("Volley Test CA");
    let server = TestServer::start_tls_with(&pki, true).await;
    let url = server.url("/echo");
    let port = server.addr().port();

    // No client certificate: the server's refusal, said as such.
    let without = project(&pki, r#"{"tls": {"ca": "certs/ca.pem"}}"#);
    let message = tls_error(&get(&client_in(&without, |_| {}), &url).await.unwrap_err());
    let said = message.contains("CertificateRequired") || message.contains("no client certificate was sent");
    assert!(said && message.contains("--cert"), "{message}");

    // PEM certificate and key, for `host:port`.
    let config = r#"{"tls": {"ca": "certs/ca.pem",
        "hosts": {"127.0.0.1:PORT": {"cert": "certs/client.pem", "key": "certs/client.key"},
                  "*.example.com": {"cert": "certs/missing.pem"}}}}"#
        .replace("PORT", &port.to_string());
    echo(&get(&client_in(&project(&pki, &config), |_| {}), &url).await.unwrap()).await;

    // One PEM file holding both, for every host, from the library (the CLI's `--cert`).
    let from_client = client_in(&project(&pki, r#"{"tls": {"ca": "certs/ca.pem"}}"#), |config| {
        config.tls.hosts = vec![HostTls {
            host: "*".to_owned(),
            cert: Some(PathBuf::from("/project/certs/both.pem")),
            ..HostTls::default()
        }];
    });
    echo(&get(&from_client, &url).await.unwrap()).await;

    // A certificate signed by another CA: the server refuses it.
    let stranger = TestPki::generate("Another CA");
    let files = project(&pki, "");
    files.insert("/project/certs/stranger.pem", stranger.client_pem());
    files.insert("/project/certs/stranger.key", stranger.client_key_pem());
    files.insert(
        "/project/volley.jsonc",
        r#"{"tls": {"ca": "certs/ca.pem", "hosts": {"*": {"cert": "certs/stranger.pem", "key": "certs/stranger.key"}}}}"#,
    );
    let message = tls_error(&get(&client_in(&files, |_| {}), &url).await.unwrap_err());
    assert!(message.contains("UnknownCA") || message.contains("BadCertificate"), "{message}");

    // A key that is not the certificate's.
    files.insert(
        "/project/volley.jsonc",
        r#"{"tls": {"ca": "certs/ca.pem", "hosts": {"*": {"cert": "certs/client.pem", "key": "certs/stranger.key"}}}}"#,
    );
    let error = get(&client_in(&files, |_| {}), &url).await.unwrap_err();
    let Error::Transport(TransportError::Certificate { path, message, .. }) = &error else { panic!("{error:?}") };
    assert!(path.ends_with("certs/client.pem") && message.contains("do not go together"), "{message}");
}

fn environment_with(passphrase: &str) -> Environment {
    Environment::fixed([("CLIENT_PASSPHRASE".to_owned(), passphrase.to_owned())])
}

#[tokio::test]
async fn encrypted_keys_and_pkcs12_files_open_with_their_passphrase_from_a_secret() {
    let pki = TestPki::generate("Volley Test CA");
    let server = TestServer::start_tls_with(&pki, true).await;
    let url = server.url("/echo");
    let files = project(&pki, "");
    files.insert("/project/certs/client.enc.key", pki.client_key_encrypted_pem("correct horse"));
    files.insert("/project/certs/client.p12", pki.client_pkcs12("battery staple"));
    let with = |entry: &str, passphrase: &str| {
        files.insert(
            "/project/volley.jsonc",
            format!(r#"{{"tls": {{"ca": "certs/ca.pem", "hosts": {{"127.0.0.1": {{{entry}}}}}}}}}"#),
        );
        client_in(&files, |config| config.environment = environment_with(passphrase))
    };
    let encrypted =
        r#""cert": "certs/client.pem", "key": "certs/client.enc.key", "passphrase": "{{$secret CLIENT_PASSPHRASE}}""#;
    let pkcs12 = r#""pfx": "certs/client.p12", "passphrase": "{{$secret CLIENT_PASSPHRASE}}""#;

    echo(&get(&with(encrypted, "correct horse"), &url).await.unwrap()).await;
    echo(&get(&with(pkcs12, "battery staple"), &url).await.unwrap()).await;
    files.insert("/project/certs/legacy.p12", pki.client_pkcs12_legacy("battery staple"));
    let legacy = r#""pfx": "certs/legacy.p12", "passphrase": "{{$secret CLIENT_PASSPHRASE}}""#;
    echo(&get(&with(legacy, "battery staple"), &url).await.unwrap()).await;

    for (entry, what) in [(encrypted, "client key"), (pkcs12, "PKCS#12 file")] {
        let error = get(&with(entry, "wrong guess"), &url).await.unwrap_err();
        let Error::Transport(transport @ TransportError::Certificate { message, .. }) = &error else {
            panic!("{error:?}")
        };
        assert!(message.contains("wrong passphrase") && message.contains(what), "{message}");
        let shown = format!("{transport} {}", transport.hint().unwrap_or_default());
        assert!(!shown.contains("wrong guess"), "the passphrase is never shown: {shown}");
    }

    // No passphrase at all.
    files.insert(
        "/project/volley.jsonc",
        r#"{"tls": {"ca": "certs/ca.pem", "hosts": {"*": {"cert": "certs/client.pem", "key": "certs/client.enc.key"}}}}"#,
    );
    let error = get(&client_in(&files, |_| {}), &url).await.unwrap_err();
    let Error::Transport(transport) = &error else { panic!("{error:?}") };
    let (message, hint) = (transport.to_string(), transport.hint().unwrap_or_default());
    assert!(message.contains("client.enc.key") && message.contains("no passphrase"), "{message}");
    assert!(hint.contains("$secret"), "{hint}");

    // The library's (the CLI's `--cert FILE.p12 --cert-passphrase`).
    let from_client = client_in(&project(&pki, r#"{"tls": {"ca": "certs/ca.pem"}}"#), |config| {
        config.io = Arc::new(files.clone());
        config.environment = environment_with("battery staple");
        config.tls.hosts = vec![HostTls {
            host: "*".to_owned(),
            pfx: Some(PathBuf::from("/project/certs/client.p12")),
            passphrase: Some("{{$secret CLIENT_PASSPHRASE}}".to_owned()),
            ..HostTls::default()
        }];
    });
    files.insert("/project/volley.jsonc", r#"{"tls": {"ca": "certs/ca.pem"}}"#);
    echo(&get(&from_client, &url).await.unwrap()).await;
}

#[tokio::test]
async fn secure_websockets_present_the_client_certificate_too() {
    let pki = TestPki::generate("Volley Test CA");
    let server = TestServer::start_tls_with(&pki, true).await;
    let url = server.url("/ws/echo").replacen("https", "wss", 1);
    let without = project(&pki, r#"{"tls": {"ca": "certs/ca.pem"}}"#);
    let error = get(&client_in(&without, |_| {}), &url).await.unwrap_err();
    assert!(matches!(error, Error::Transport(TransportError::Tls { .. })), "{error:?}");
    let with = project(
        &pki,
        r#"{"tls": {"ca": "certs/ca.pem", "hosts": {"127.0.0.1": {"cert": "certs/client.pem", "key": "certs/client.key"}}}}"#,
    );
    let response = get(&client_in(&with, |_| {}), &url).await.unwrap();
    let mut socket = response.websocket().unwrap();
    socket.send_text("mutual").await.unwrap();
    assert_eq!(socket.next().await.unwrap().unwrap(), WsMessage::Text("mutual".to_owned()));
}

#[tokio::test]
async fn event_streams_present_the_client_certificate_too() {
    let pki = TestPki::generate("Volley Test CA");
    let server = TestServer::start_tls_with(&pki, true).await;
    let with = project(
        &pki,
        r#"{"tls": {"ca": "certs/ca.pem", "hosts": {"127.0.0.1": {"cert": "certs/client.pem", "key": "certs/client.key"}}}}"#,
    );
    let response = get(&client_in(&with, |_| {}), &server.url("/sse/events")).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut events = response.events().unwrap();
    assert!(events.next().await.unwrap().is_ok());
}

#[tokio::test]
async fn jetbrains_ssl_configuration_gives_the_client_certificate() {
    let pki = TestPki::generate("Volley Test CA");
    let server = TestServer::start_tls_with(&pki, true).await;
    let files = project(&pki, "");
    files.insert(
        "/project/http-client.env.json",
        r#"{"dev": {"host": "HOST", "SSLConfiguration": {"clientCertificate": "certs/client.pem",
            "hasCertificatePassphrase": false, "verifyHostCertificate": false}}}"#
            .replace("HOST", &server.base_url()),
    );
    // The key's path is in the private file, as it is machine-specific.
    files.insert(
        "/project/http-client.private.env.json",
        r#"{"dev": {"SSLConfiguration": {"clientCertificateKey": {"path": "certs/client.key"}}}}"#,
    );
    let client = client_in(&files, |config| config.profile = Some("dev".to_owned()));
    let response = client.run_string("GET {{host}}/echo\n", in_project()).await.unwrap();
    let echoed = echo(&response).await;
    assert!(echoed.get("SSLConfiguration").is_none());
    let error = client_in(&files, |_| {}).run_string(&format!("GET {}\n", server.url("/echo")), in_project()).await;
    assert!(error.is_err(), "without the profile: no certificate and the CA unknown");
}

#[tokio::test]
async fn http_and_https_go_through_the_configured_proxy_unless_no_proxy_says_not_to() {
    let pki = TestPki::generate("Volley Test CA");
    let plain = TestServer::start().await;
    let secure = TestServer::start_tls_with(&pki, false).await;
    let proxy = TestProxy::start(None).await;
    let config = r#"{"tls": {"ca": "certs/ca.pem"}, "proxy": {"http": "PROXY", "https": "PROXY"}}"#
        .replace("PROXY", &proxy.url());
    let client = client_in(&project(&pki, &config), |_| {});
    echo(&get(&client, &plain.url("/echo")).await.unwrap()).await;
    echo(&get(&client, &secure.url("/echo")).await.unwrap()).await;
    let records = proxy.records();
    assert_eq!(records[0].method, "GET");
    assert_eq!(records[0].target, plain.url("/echo"));
    assert_eq!(records[1].method, "CONNECT");
    assert_eq!(records[1].target, secure.addr().to_string());
    assert_eq!(records.len(), 2);

    let config =
        r#"{"tls": {"ca": "certs/ca.pem"}, "proxy": {"http": "PROXY", "https": "PROXY", "noProxy": ["127.0.0.1"]}}"#
            .replace("PROXY", &proxy.url());
    let direct = client_in(&project(&pki, &config), |_| {});
    echo(&get(&direct, &plain.url("/echo")).await.unwrap()).await;
    echo(&get(&direct, &secure.url("/echo")).await.unwrap()).await;
    assert_eq!(proxy.records().len(), 2, "noProxy: nothing more went through the proxy");

    // The client's (the CLI's `--proxy`, `--noproxy`) over the configuration's.
    let overridden = client_in(&project(&pki, &config), |config| {
        config.proxy = ProxySettings { no_proxy: Some(Vec::new()), ..ProxySettings::default() };
    });
    echo(&get(&overridden, &plain.url("/echo")).await.unwrap()).await;
    assert_eq!(proxy.records().len(), 3, "an empty --noproxy sends everything through the proxy");
}

#[tokio::test]
async fn websockets_go_through_the_proxy_with_its_credentials() {
    let pki = TestPki::generate("Volley Test CA");
    let plain = TestServer::start().await;
    let secure = TestServer::start_tls_with(&pki, true).await;
    let proxy = TestProxy::start(Some(("ada", "s3cret-pass"))).await;
    let address = proxy.url().replace("http://", "");
    let config = r#"{"tls": {"ca": "certs/ca.pem", "hosts": {"*": {"cert": "certs/client.pem", "key": "certs/client.key"}}},
        "proxy": {"http": "http://ada:{{$secret PROXY_PASSWORD}}@ADDRESS", "https": "http://ada:{{$secret PROXY_PASSWORD}}@ADDRESS"}}"#
        .replace("ADDRESS", &address);
    let client = client_in(&project(&pki, &config), |_| {});
    for server in [&plain, &secure] {
        let url = server.url("/ws/echo").replacen("http", "ws", 1);
        let response = get(&client, &url).await.unwrap();
        let mut socket = response.websocket().unwrap();
        socket.send_text("tunnelled").await.unwrap();
        assert_eq!(socket.next().await.unwrap().unwrap(), WsMessage::Text("tunnelled".to_owned()));
    }
    let records = proxy.records();
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(records.iter().all(|record| record.method == "CONNECT"), "{records:?}");
    assert_eq!(records[1].target, secure.addr().to_string());
    assert_eq!(records[0].authorization.as_deref(), Some("Basic YWRhOnMzY3JldC1wYXNz"));

    let wrong = r#"{"proxy": {"http": "http://ada:nope@ADDRESS"}}"#.replace("ADDRESS", &address);
    let url = plain.url("/ws/echo").replacen("http", "ws", 1);
    let error = get(&client_in(&project(&pki, &wrong), |_| {}), &url).await.unwrap_err();
    let Error::Transport(TransportError::Proxy { proxy: named, message }) = &error else { panic!("{error:?}") };
    assert!(message.contains("407") && !named.contains("nope"), "{named}: {message}");
}

#[tokio::test]
async fn http_and_https_go_through_a_socks5_proxy() {
    let pki = TestPki::generate("Volley Test CA");
    let plain = TestServer::start().await;
    let secure = TestServer::start_tls_with(&pki, false).await;
    let proxy = TestProxy::start(None).await;
    let config = r#"{"tls": {"ca": "certs/ca.pem"}, "proxy": {"http": "SOCKS", "https": "SOCKS"}}"#
        .replace("SOCKS", &proxy.socks_url());
    let client = client_in(&project(&pki, &config), |_| {});
    echo(&get(&client, &plain.url("/echo")).await.unwrap()).await;
    echo(&get(&client, &secure.url("/echo")).await.unwrap()).await;
    let records = proxy.records();
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(records.iter().all(|record| record.method == "SOCKS5"), "{records:?}");
    assert_eq!(records[0].target, plain.addr().to_string());
    assert_eq!(records[1].target, secure.addr().to_string());
}

#[tokio::test]
async fn proxy_credentials_come_from_secrets_and_failures_name_the_proxy() {
    let pki = TestPki::generate("Volley Test CA");
    let secure = TestServer::start_tls_with(&pki, false).await;
    let proxy = TestProxy::start(Some(("ada", "s3cret-pass"))).await;
    let address = proxy.url().replace("http://", "");
    let config =
        r#"{"tls": {"ca": "certs/ca.pem"}, "proxy": {"https": "http://ada:{{$secret PROXY_PASSWORD}}@ADDRESS"}}"#
            .replace("ADDRESS", &address);
    let client = client_in(&project(&pki, &config), |_| {});
    echo(&get(&client, &secure.url("/echo")).await.unwrap()).await;
    let records = proxy.records();
    assert_eq!(records[0].method, "CONNECT");
    assert_eq!(records[0].authorization.as_deref(), Some("Basic YWRhOnMzY3JldC1wYXNz"));

    let config = r#"{"tls": {"ca": "certs/ca.pem"}, "proxy": {"https": "http://ada:wrong@ADDRESS"}}"#
        .replace("ADDRESS", &address);
    let error = get(&client_in(&project(&pki, &config), |_| {}), &secure.url("/echo")).await.unwrap_err();
    let Error::Transport(TransportError::Proxy { proxy: named, message }) = &error else { panic!("{error:?}") };
    assert!(named.contains("***") && !named.contains("wrong"), "{named}");
    assert!(message.contains("407") || message.contains("auth"), "{message}");

    let config = r#"{"proxy": {"http": "http://127.0.0.1:1"}}"#;
    let plain = TestServer::start().await;
    let error = get(&client_in(&project(&pki, config), |_| {}), &plain.url("/echo")).await.unwrap_err();
    let Error::Transport(TransportError::Proxy { message, .. }) = &error else { panic!("{error:?}") };
    assert!(message.contains("refused"), "{message}");
}

#[tokio::test]
async fn the_client_http_version_applies_to_requests_that_name_none() {
    let pki = TestPki::generate("Volley Test CA");
    let plain = TestServer::start().await;
    let secure = TestServer::start_tls_with(&pki, false).await;
    let h2 = client_in(&project(&pki, ""), |config| config.http_version = Some(HttpVersion::HTTP_2));
    let response = get(&h2, &plain.url("/echo")).await.unwrap();
    assert_eq!(response.version(), HttpVersion::HTTP_2, "prior knowledge on http://");
    let h1 = client_in(&project(&pki, ""), |config| {
        config.http_version = Some(HttpVersion::HTTP_11);
        config.tls = TlsSettings { ca: vec![PathBuf::from("/project/certs/ca.pem")], hosts: Vec::new() };
    });
    let response = get(&h1, &secure.url("/echo")).await.unwrap();
    assert_eq!(response.version(), HttpVersion::HTTP_11, "ALPN offers http/1.1 only");
    let response = h1.run_string(&format!("GET {} HTTP/2\n", secure.url("/echo")), in_project()).await.unwrap();
    assert_eq!(response.version(), HttpVersion::HTTP_2, "the request line wins");
}

#[tokio::test]
async fn http_1_1_on_the_request_line_keeps_to_http_1_1_over_tls() {
    let server = TestServer::start_tls().await;
    let client = Client::new(ClientConfig {
        defaults: volley_engine::RequestDefaults { validate_ssl: Some(false), ..Default::default() },
        ..support::config()
    });
    let negotiated = client.run_string(&format!("GET {}\n", server.url("/echo")), in_project()).await.unwrap();
    assert_eq!(negotiated.version(), HttpVersion::HTTP_2, "ALPN picks HTTP/2 when the line names none");
    let kept = client.run_string(&format!("GET {} HTTP/1.1\n", server.url("/echo")), in_project()).await.unwrap();
    assert_eq!(kept.version(), HttpVersion::HTTP_11);
}

/// httpyac's client certificate header: the request's connection presents the files it
/// names (relative to the `.http` file), the passphrase may come from a secret, and the
/// header itself never reaches the server.
#[tokio::test]
async fn httpyacs_client_certificate_header_is_the_requests_certificate() {
    let pki = TestPki::generate("Volley Test CA");
    let server = TestServer::start_tls_with(&pki, true).await;
    let url = server.url("/echo");
    let files = project(&pki, r#"{"tls": {"ca": "certs/ca.pem"}}"#);
    files.insert("/project/certs/client.p12", pki.client_pkcs12("battery staple"));
    let client = client_in(&files, |config| config.environment = environment_with("battery staple"));
    for header in [
        "X-ClientCert: cert: ./certs/client.pem key: ./certs/client.key",
        "clientcert: pfx:certs/client.p12 passphrase:{{$secret CLIENT_PASSPHRASE}}",
    ] {
        let response = client.run_string(&format!("GET {url}\n{header}\n"), in_project()).await.unwrap();
        let echoed = echo(&response).await;
        let names: Vec<&str> =
            echoed["headers"].as_array().unwrap().iter().map(|pair| pair[0].as_str().unwrap()).collect();
        assert!(!names.iter().any(|name| name.ends_with("clientcert")), "{header}: {names:?}");
    }
    // Without the header, the same request has no certificate: the server refuses it.
    let error = client.run_string(&format!("GET {url}\n"), in_project()).await.unwrap_err();
    assert!(tls_error(&error).contains("--cert"), "{error}");
    // A wrong passphrase: a TLS error that never shows it.
    let wrong = format!("GET {url}\nX-ClientCert: pfx: certs/client.p12 passphrase: wrong-horse-9\n");
    let error = client.run_string(&wrong, in_project()).await.unwrap_err();
    assert!(!error.to_string().contains("wrong-horse-9"), "{error}");
    // No certificate named: refused before anything is sent.
    let error =
        client.run_string(&format!("GET {url}\nX-ClientCert: passphrase: x\n"), in_project()).await.unwrap_err();
    let Error::Build(build) = error else { panic!("{error:?}") };
    assert_eq!(build.code(), "invalid-credentials");
    assert!(build.message().contains("names no certificate"), "{}", build.message());
}
