//! The rustls configuration of a connection: the platform's verifier with a run's CA
//! bundles (or none for `validate_ssl: false`), the client certificate chosen for the
//! host (read as curl reads it: see `client_certificate`), and the ALPN protocols.

use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use volley_transport::TransportError;
use volley_transport::network::{PemFile, TlsChoice, certificate_error};
use volley_transport::transport::{TlsFor, install_crypto_provider};

/// The configuration of a connection its caller describes (`Transport::tls`, a `wss://`
/// handshake): what its network settings choose for its URL, their files read.
pub(crate) fn for_connection(tls: TlsFor<'_>) -> Result<rustls::ClientConfig, TransportError> {
    let choice = match tls.network {
        Some(network) => TlsChoice::for_url(network, tls.url)?,
        None => TlsChoice::default(),
    };
    rustls_config(&choice, tls.validate_ssl, tls.alpn)
}

/// A rustls client configuration: the platform's verifier with `choice`'s CA bundles
/// added (or no verification for `validate_ssl: false`), `choice`'s client certificate
/// (read as curl reads it: see `client_certificate`), and `alpn`.
pub(crate) fn rustls_config(
    choice: &TlsChoice,
    validate_ssl: bool,
    alpn: &[&[u8]],
) -> Result<rustls::ClientConfig, TransportError> {
    install_crypto_provider();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|error| setup_error(&error.to_string()))?;
    let verifier: Arc<dyn rustls::client::danger::ServerCertVerifier> = if validate_ssl {
        let mut roots = Vec::new();
        for file in &choice.ca {
            roots.extend(certificates(file, "CA bundle")?);
        }
        let verifier = if roots.is_empty() {
            rustls_platform_verifier::Verifier::new(Arc::clone(&provider))
        } else {
            rustls_platform_verifier::Verifier::new_with_extra_roots(roots, Arc::clone(&provider))
        };
        Arc::new(NamingVerifier(verifier.map_err(|error| setup_error(&error.to_string()))?))
    } else {
        Arc::new(AcceptAnyCertificate::new())
    };
    let builder = builder.dangerous().with_custom_certificate_verifier(verifier);
    let mut config = match crate::client_certificate::resolver(choice, &provider)? {
        None => builder.with_no_client_auth(),
        Some(resolver) => builder.with_client_cert_resolver(resolver),
    };
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    Ok(config)
}

/// The platform's verifier, whose "unknown issuer" says which issuer it does not know:
/// the name a user needs to find the CA bundle to trust.
#[derive(Debug)]
struct NamingVerifier(rustls_platform_verifier::Verifier);

impl rustls::client::danger::ServerCertVerifier for NamingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now).map_err(|error| {
            if !matches!(error, rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)) {
                return error;
            }
            // The top of the chain the server sent names the CA that is missing.
            let top = intermediates.last().unwrap_or(end_entity);
            match x509_parser::parse_x509_certificate(top) {
                Ok((_, certificate)) => rustls::Error::General(format!(
                    "invalid peer certificate: UnknownIssuer: it is issued by `{}`, a CA this machine does not trust",
                    certificate.issuer()
                )),
                Err(_) => error,
            }
        })
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

fn setup_error(message: &str) -> TransportError {
    TransportError::Other { message: format!("cannot set up TLS: {message}") }
}

/// The certificates of a PEM file; an error when it holds none.
fn certificates(file: &PemFile, what: &str) -> Result<Vec<CertificateDer<'static>>, TransportError> {
    let mut found = Vec::new();
    for item in CertificateDer::pem_slice_iter(&file.bytes) {
        let certificate = item.map_err(|error| {
            certificate_error(
                &file.path,
                &format!("the {what} is not valid PEM: {error}"),
                "the file must hold `-----BEGIN CERTIFICATE-----` blocks",
            )
        })?;
        found.push(certificate);
    }
    if found.is_empty() {
        let hint = if file.bytes.starts_with(&[0x30]) {
            "this looks like DER: convert it with `openssl x509 -inform der -in FILE -out FILE.pem`"
        } else {
            "the file must hold `-----BEGIN CERTIFICATE-----` blocks"
        };
        return Err(certificate_error(&file.path, &format!("the {what} holds no certificate"), hint));
    }
    Ok(found)
}

/// `validate_ssl: false`: any certificate is accepted (signatures are still checked).
#[derive(Debug)]
pub(crate) struct AcceptAnyCertificate {
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl Default for AcceptAnyCertificate {
    fn default() -> Self {
        Self::new()
    }
}

impl AcceptAnyCertificate {
    #[must_use]
    pub(crate) fn new() -> Self {
        Self { algorithms: rustls::crypto::ring::default_provider().signature_verification_algorithms }
    }
}

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
