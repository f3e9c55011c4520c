//! The client-certificate check of an OpenSSL-based server, for tests of certificates
//! made with the `openssl` command: a certificate is accepted when it is valid now and
//! chains by signature to the trusted CA, whatever its X.509 version (OpenSSL's
//! `x509 -req` writes version 1 certificates, which webpki refuses to parse). The
//! subjects of the accepted certificates are kept, so a test can see what the server saw.

use std::sync::Arc;

use parking_lot::Mutex;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, SubjectPublicKeyInfoDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, Error, SignatureScheme};
use x509_parser::certificate::X509Certificate;
use x509_parser::time::ASN1Time;

/// The subjects of the client certificates a server accepted (`CN=…`), in order.
#[derive(Debug, Clone, Default)]
pub struct VerifiedClients(Arc<Mutex<Vec<String>>>);

impl VerifiedClients {
    /// The subjects accepted so far, one per handshake.
    #[must_use]
    pub fn subjects(&self) -> Vec<String> {
        self.0.lock().clone()
    }
}

/// Accepts client certificates signed by one CA, as OpenSSL's verifier does for a chain
/// of RSA, ECDSA or Ed25519 signatures; TLS 1.3 only (its handshake signature is checked
/// against the certificate's public key, without webpki's parse of the certificate).
#[derive(Debug)]
pub(crate) struct OpenSslStyleClientVerifier {
    ca: Vec<u8>,
    hints: Vec<DistinguishedName>,
    provider: Arc<rustls::crypto::CryptoProvider>,
    verified: VerifiedClients,
}

impl OpenSslStyleClientVerifier {
    /// Trusting the certificate `ca` (DER), recording into `verified`.
    pub(crate) fn new(ca: &CertificateDer<'_>, verified: VerifiedClients) -> Self {
        let (_, parsed) = x509_parser::parse_x509_certificate(ca).expect("test server: the client CA is a certificate");
        let hints = vec![DistinguishedName::from(parsed.subject().as_raw().to_vec())];
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        Self { ca: ca.to_vec(), hints, provider, verified }
    }
}

fn parse(der: &[u8]) -> Result<X509Certificate<'_>, Error> {
    x509_parser::parse_x509_certificate(der)
        .map(|(_, certificate)| certificate)
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))
}

/// Whether `issuer`'s key made `certificate`'s signature.
fn signed_by(certificate: &X509Certificate<'_>, issuer: &X509Certificate<'_>) -> bool {
    use ring::signature as sig;
    let algorithms: Vec<&'static dyn sig::VerificationAlgorithm> =
        match certificate.signature_algorithm.algorithm.to_id_string().as_str() {
            "1.2.840.113549.1.1.11" => vec![&sig::RSA_PKCS1_2048_8192_SHA256],
            "1.2.840.113549.1.1.12" => vec![&sig::RSA_PKCS1_2048_8192_SHA384],
            "1.2.840.113549.1.1.13" => vec![&sig::RSA_PKCS1_2048_8192_SHA512],
            "1.2.840.10045.4.3.2" => vec![&sig::ECDSA_P256_SHA256_ASN1, &sig::ECDSA_P384_SHA256_ASN1],
            "1.2.840.10045.4.3.3" => vec![&sig::ECDSA_P256_SHA384_ASN1, &sig::ECDSA_P384_SHA384_ASN1],
            "1.3.101.112" => vec![&sig::ED25519],
            _ => Vec::new(),
        };
    let key = issuer.public_key().subject_public_key.data.as_ref();
    let signed = certificate.tbs_certificate.as_ref();
    let signature = certificate.signature_value.data.as_ref();
    algorithms
        .into_iter()
        .any(|algorithm| sig::UnparsedPublicKey::new(algorithm, key).verify(signed, signature).is_ok())
}

impl ClientCertVerifier for OpenSslStyleClientVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        let leaf = parse(end_entity)?;
        let now = ASN1Time::from_timestamp(i64::try_from(now.as_secs()).unwrap_or(i64::MAX))
            .map_err(|_| Error::General("the clock is out of range".to_owned()))?;
        if now < leaf.validity().not_before {
            return Err(Error::InvalidCertificate(CertificateError::NotValidYet));
        }
        if now > leaf.validity().not_after {
            return Err(Error::InvalidCertificate(CertificateError::Expired));
        }
        let ca = parse(&self.ca)?;
        let others = intermediates.iter().map(|der| parse(der)).collect::<Result<Vec<_>, _>>()?;
        // Up the chain the client sent, by issuer name and signature, to the CA.
        let mut current = &leaf;
        for _ in 0..=others.len() {
            if current.issuer().as_raw() == ca.subject().as_raw() && signed_by(current, &ca) {
                self.verified.0.lock().push(leaf.subject().to_string());
                return Ok(ClientCertVerified::assertion());
            }
            let issuer = others.iter().find(|other| {
                other.subject().as_raw() == current.issuer().as_raw() && other.is_ca() && signed_by(current, other)
            });
            match issuer {
                Some(issuer) => current = issuer,
                None => break,
            }
        }
        Err(Error::InvalidCertificate(CertificateError::UnknownIssuer))
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        // The server offers TLS 1.3 only.
        Err(Error::General("TLS 1.2 is not offered".to_owned()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let certificate = parse(cert)?;
        let key = SubjectPublicKeyInfoDer::from(certificate.public_key().raw);
        rustls::crypto::verify_tls13_signature_with_raw_key(
            message,
            &key,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}
