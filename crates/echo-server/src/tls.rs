//! HTTPS for the test server: a self-signed certificate for `localhost` and
//! `127.0.0.1`, made when the server starts, or a test CA ([`TestPki`]) that signs the
//! server's certificate and client certificates; and a listener that does the TLS
//! handshake, asking for a client certificate signed by the test CA when told to.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// A TCP listener that hands out connections after a successful TLS handshake
/// (connections whose handshake fails, such as a client rejecting the certificate, are
/// dropped).
pub(crate) struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

/// A test certificate authority made at run time (no key is ever written to the
/// repository): its certificate, a server certificate for `localhost` and `127.0.0.1`
/// signed by it, and a client certificate signed by it, all as PEM.
pub struct TestPki {
    ca: String,
    server: String,
    server_key: String,
    client: String,
    client_key: String,
    client_der: Vec<u8>,
    client_key_der: Vec<u8>,
}

impl std::fmt::Debug for TestPki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestPki").finish_non_exhaustive()
    }
}

impl TestPki {
    /// A new CA (common name `name`) with its server and client certificates.
    #[must_use]
    pub fn generate(name: &str) -> Self {
        Self::make(name, false)
    }

    /// The same, the server certificate expired (valid in 2020 only).
    #[must_use]
    pub fn generate_with_expired_server(name: &str) -> Self {
        Self::make(name, true)
    }

    fn make(name: &str, expired_server: bool) -> Self {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
        let fail = |what: &str| -> ! { panic!("test PKI: cannot make the {what}") };
        let ca_key = KeyPair::generate().unwrap_or_else(|_| fail("CA key"));
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|_| fail("CA"));
        ca_params.distinguished_name.push(DnType::CommonName, name);
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca_params.self_signed(&ca_key).unwrap_or_else(|_| fail("CA certificate"));
        let issuer = Issuer::new(ca_params, ca_key);

        let server_key = KeyPair::generate().unwrap_or_else(|_| fail("server key"));
        let mut server_params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap_or_else(|_| fail("server certificate"));
        server_params.distinguished_name.push(DnType::CommonName, "localhost");
        if expired_server {
            server_params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            server_params.not_after = rcgen::date_time_ymd(2020, 12, 31);
        }
        let server = server_params.signed_by(&server_key, &issuer).unwrap_or_else(|_| fail("server certificate"));

        let client_key = KeyPair::generate().unwrap_or_else(|_| fail("client key"));
        let mut client_params =
            CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|_| fail("client certificate"));
        client_params.distinguished_name.push(DnType::CommonName, "volley test client");
        client_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let client = client_params.signed_by(&client_key, &issuer).unwrap_or_else(|_| fail("client certificate"));

        Self {
            ca: ca_cert.pem(),
            server: server.pem(),
            server_key: server_key.serialize_pem(),
            client: client.pem(),
            client_key: client_key.serialize_pem(),
            client_der: client.der().to_vec(),
            client_key_der: client_key.serialize_der(),
        }
    }

    /// The CA's certificate (PEM): what clients trust.
    #[must_use]
    pub fn ca_pem(&self) -> &str {
        &self.ca
    }

    /// The server certificate (PEM, for `localhost` and `127.0.0.1`), signed by the CA:
    /// for servers of other implementations in the tests.
    #[must_use]
    pub fn server_pem(&self) -> &str {
        &self.server
    }

    /// The server certificate's private key (PKCS#8 PEM).
    #[must_use]
    pub fn server_key_pem(&self) -> &str {
        &self.server_key
    }

    /// The client certificate (PEM), signed by the CA.
    #[must_use]
    pub fn client_pem(&self) -> &str {
        &self.client
    }

    /// The client certificate's private key (PKCS#8 PEM).
    #[must_use]
    pub fn client_key_pem(&self) -> &str {
        &self.client_key
    }

    /// The client certificate's private key encrypted with `passphrase` (PKCS#8
    /// `ENCRYPTED PRIVATE KEY`, PBES2 with PBKDF2-SHA256 and AES-256-CBC, as
    /// `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes it).
    #[must_use]
    pub fn client_key_encrypted_pem(&self, passphrase: &str) -> String {
        use pkcs8::der::pem::LineEnding;
        // A fixed salt and IV: a test key, and no random generator to thread through.
        let parameters = pkcs8::pkcs5::pbes2::Parameters::generate_pbkdf2_sha256_aes256cbc(2048, &[7; 16], [9; 16])
            .expect("test PKI: PBES2 parameters");
        let info = pkcs8::PrivateKeyInfoRef::try_from(self.client_key_der.as_slice()).expect("test PKI: PKCS#8 key");
        let encrypted = info.encrypt_with_params(parameters, passphrase).expect("test PKI: key encryption");
        encrypted.to_pem("ENCRYPTED PRIVATE KEY", LineEnding::LF).expect("test PKI: PEM").to_string()
    }

    /// The client certificate and its key as a PKCS#12 file protected by `passphrase`
    /// (AES-256 and HMAC-SHA256, as OpenSSL 3 writes them).
    #[must_use]
    pub fn client_pkcs12(&self, passphrase: &str) -> Vec<u8> {
        self.pkcs12(passphrase, false)
    }

    /// The same, with the legacy 3DES and HMAC-SHA1 of Windows and OpenSSL 1.x exports.
    #[must_use]
    pub fn client_pkcs12_legacy(&self, passphrase: &str) -> Vec<u8> {
        self.pkcs12(passphrase, true)
    }

    fn pkcs12(&self, passphrase: &str, legacy: bool) -> Vec<u8> {
        let key = p12_keystore::PrivateKey::from_der(&self.client_key_der).expect("test PKI: PKCS#8 key");
        let certificate = p12_keystore::Certificate::from_der(&self.client_der).expect("test PKI: client certificate");
        let chain = p12_keystore::PrivateKeyChain::new("volley-test-client", key, [certificate]);
        let mut store = p12_keystore::KeyStore::new();
        store.add_entry("volley test client", p12_keystore::KeyStoreEntry::PrivateKeyChain(chain));
        let writer = store.writer(passphrase);
        let writer = if legacy {
            writer
                .encryption_algorithm(p12_keystore::EncryptionAlgorithm::PbeWithShaAnd3KeyTripleDesCbc)
                .mac_algorithm(p12_keystore::MacAlgorithm::HmacSha1)
        } else {
            writer
        };
        writer.write().expect("test PKI: PKCS#12 writing")
    }
}

impl TlsListener {
    /// HTTPS with `pki`'s server certificate; with `require_client_certificate`, the
    /// handshake fails unless the client presents a certificate signed by `pki`'s CA.
    pub(crate) fn with_pki(tcp: TcpListener, pki: &TestPki, require_client_certificate: bool) -> Self {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let _ = rustls::crypto::ring::default_provider().install_default();
        let chain = vec![CertificateDer::from_pem_slice(pki.server.as_bytes()).expect("test PKI: server PEM")];
        let key = PrivateKeyDer::from_pem_slice(pki.server_key.as_bytes()).expect("test PKI: server key PEM");
        let builder = rustls::ServerConfig::builder();
        let builder = if require_client_certificate {
            let mut roots = rustls::RootCertStore::empty();
            roots
                .add(CertificateDer::from_pem_slice(pki.ca.as_bytes()).expect("test PKI: CA PEM"))
                .expect("test PKI: the CA is a usable root");
            let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
                .build()
                .expect("test PKI: a client verifier");
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        let mut config = builder.with_single_cert(chain, key).expect("test PKI: the server certificate is usable");
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Self { tcp, acceptor: TlsAcceptor::from(Arc::new(config)) }
    }

    /// HTTPS with `pki`'s server certificate, over TLS 1.3, refusing clients without a
    /// certificate that [`OpenSslStyleClientVerifier`](crate::client_ca::OpenSslStyleClientVerifier)
    /// accepts for the CA `client_ca_pem`.
    pub(crate) fn with_client_ca(
        tcp: TcpListener,
        pki: &TestPki,
        client_ca_pem: &str,
        verified: crate::client_ca::VerifiedClients,
    ) -> Self {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let chain = vec![CertificateDer::from_pem_slice(pki.server.as_bytes()).expect("test PKI: server PEM")];
        let key = PrivateKeyDer::from_pem_slice(pki.server_key.as_bytes()).expect("test PKI: server key PEM");
        let ca = CertificateDer::from_pem_slice(client_ca_pem.as_bytes()).expect("test server: the client CA's PEM");
        let client_verifier = crate::client_ca::OpenSslStyleClientVerifier::new(&ca, verified);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .expect("test server: TLS 1.3 with ring")
            .with_client_cert_verifier(Arc::new(client_verifier))
            .with_single_cert(chain, key)
            .expect("test PKI: the server certificate is usable");
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Self { tcp, acceptor: TlsAcceptor::from(Arc::new(config)) }
    }

    pub(crate) fn new(tcp: TcpListener) -> Self {
        // The process may have installed a provider already; ring otherwise.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("test server: cannot generate a self-signed certificate");
        let certificate = certified.cert.der().clone();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
        let mut config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(vec![certificate], key)
            .expect("test server: the generated certificate is usable");
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Self { tcp, acceptor: TlsAcceptor::from(Arc::new(config)) }
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}
