//! The client certificate of a connection (mutual TLS), read the way curl and
//! OpenSSL-based servers read it: PEM chains in either order (leaf first or leaf last),
//! X.509 version 1 certificates as `openssl x509 -req` writes them, keys in PKCS#8
//! (encrypted with a passphrase too), PKCS#1 and SEC1, or a PKCS#12 file. The key is
//! matched to its certificate by comparing public keys, the leaf's dates are checked,
//! and the pair is handed to rustls through a resolver, so that webpki (which parses
//! version 3 certificates only) never reads our own certificate. The server does the
//! verifying; what is found wrong before is said with the file's name.

use std::path::Path;
use std::sync::Arc;

use rustls::client::ResolvesClientCert;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer as _;
use x509_parser::public_key::PublicKey;
use x509_parser::time::ASN1Time;
use x509_parser::x509::SubjectPublicKeyInfo;

use volley_transport::TransportError;
use volley_transport::network::{PemFile, TlsChoice, certificate_error};

/// What to present when a server asks for a client certificate: `None` when `choice`
/// names none.
pub(crate) fn resolver(
    choice: &TlsChoice,
    provider: &CryptoProvider,
) -> Result<Option<Arc<dyn ResolvesClientCert>>, TransportError> {
    let passphrase = choice.passphrase.as_deref();
    let pair = match (&choice.cert, &choice.key, &choice.pfx) {
        (None, None, None) => return Ok(None),
        (None, None, Some(pfx)) => {
            let (chain, key) = pkcs12(pfx, passphrase)?;
            Pair { chain, chain_path: &pfx.path, key, key_path: &pfx.path, from_pkcs12: true }
        }
        (None, Some(key), _) => {
            return Err(certificate_error(
                &key.path,
                "a client key without a certificate",
                "name the certificate too (`cert`, or `--cert FILE`)",
            ));
        }
        (Some(cert), key, _) => {
            let key = key.as_ref().unwrap_or(cert);
            Pair {
                chain: client_chain(cert)?,
                chain_path: &cert.path,
                key: private_key(key, passphrase)?,
                key_path: &key.path,
                from_pkcs12: false,
            }
        }
    };
    let certified = pair.certified(provider)?;
    Ok(Some(Arc::new(ClientCertificate(Arc::new(certified)))))
}

/// The one certificate and key a connection presents, to any server that asks (as curl
/// does: the server's list of acceptable CAs is a hint, and the server decides).
#[derive(Debug)]
struct ClientCertificate(Arc<CertifiedKey>);

impl ResolvesClientCert for ClientCertificate {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[rustls::SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.0))
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// A certificate chain as read (any order) and a private key, with the files they came
/// from (the same file for PKCS#12 and for a PEM file holding both).
struct Pair<'a> {
    chain: Vec<CertificateDer<'static>>,
    chain_path: &'a Path,
    key: PrivateKeyDer<'static>,
    key_path: &'a Path,
    from_pkcs12: bool,
}

/// The key algorithms ring signs with, for hints.
const SUPPORTED_KEYS: &str = "Volley signs with RSA keys of 2048 to 8192 bits, ECDSA P-256 and P-384 keys and \
                              Ed25519 keys: make a new key and certificate with one of them (`openssl req -newkey \
                              rsa:2048 …`, or `-newkey ec -pkeyopt ec_paramgen_curve:P-256`)";

impl Pair<'_> {
    /// The chain leaf first, with its signing key, once the key is known to be the
    /// leaf's and the leaf valid now.
    fn certified(self, provider: &CryptoProvider) -> Result<CertifiedKey, TransportError> {
        let Pair { chain, chain_path, key, key_path, from_pkcs12 } = self;
        let parsed = chain
            .iter()
            .map(|der| {
                x509_parser::parse_x509_certificate(der).map(|(_, certificate)| certificate).map_err(|error| {
                    certificate_error(
                        chain_path,
                        &format!("not a certificate Volley can read: {error}"),
                        "the file must hold X.509 certificates (`openssl x509 -noout -text -in FILE` shows them)",
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let signing_key = provider.key_provider.load_private_key(key).map_err(|error| {
            let algorithm = key_algorithm(parsed[likely_leaf(&parsed)].public_key());
            if algorithm.supported {
                certificate_error(
                    key_path,
                    &format!("the client key cannot be read: {error}"),
                    "write the key again with OpenSSL (`openssl pkey -in KEY -out NEW.pem`)",
                )
            } else {
                certificate_error(
                    key_path,
                    &format!("unsupported key algorithm: the client key is {}", algorithm.name),
                    SUPPORTED_KEYS,
                )
            }
        })?;
        // The leaf is the certificate of the key, wherever it is in the file.
        let leaf = match signing_key.public_key() {
            Some(public_key) => {
                let public_key = SubjectPublicKeyInfo::from_der(public_key.as_ref()).map(|(_, key)| key).ok();
                let position = public_key.and_then(|public_key| {
                    parsed.iter().position(|certificate| same_key(certificate.public_key(), &public_key))
                });
                position.ok_or_else(|| mismatch(chain_path, key_path, from_pkcs12, parsed.len()))?
            }
            // A key that cannot say its public key: the server will tell.
            None => likely_leaf(&parsed),
        };
        check_dates(&parsed[leaf], chain_path)?;
        let ordered = chain_order(&parsed, leaf).into_iter().map(|index| chain[index].clone()).collect();
        Ok(CertifiedKey::new(ordered, signing_key))
    }
}

/// Without the key's public key, the leaf is the first certificate that is not a CA's.
fn likely_leaf(certificates: &[X509Certificate<'_>]) -> usize {
    certificates.iter().position(|certificate| !certificate.is_ca()).unwrap_or(0)
}

/// The error of a key that is not the public key of any certificate given with it.
fn mismatch(chain_path: &Path, key_path: &Path, from_pkcs12: bool, certificates: usize) -> TransportError {
    if from_pkcs12 {
        return certificate_error(
            chain_path,
            "the certificate and the key of the PKCS#12 file do not go together",
            "export the file again from the certificate and its own private key (`openssl pkcs12 -export \
                 -inkey KEY -in CERT`)",
        );
    }
    let key = key_path.file_name().map_or_else(|| key_path.display(), |name| Path::new(name).display());
    let which = if certificates == 1 { "the certificate's" } else { "that of any certificate in the file" };
    certificate_error(
        chain_path,
        &format!("the client certificate and its key do not go together: the public key of `{key}` is not {which}"),
        "`cert` and `key` must be the certificate and the private key of the same pair: `openssl x509 -noout \
             -pubkey -in CERT` and `openssl pkey -pubout -in KEY` print the same key when they are",
    )
}

/// Whether two public keys are the same key: the same algorithm and key bits (RSA's
/// absent or NULL parameters alike; an EC point's length is its curve's).
fn same_key(a: &SubjectPublicKeyInfo<'_>, b: &SubjectPublicKeyInfo<'_>) -> bool {
    a.algorithm.algorithm == b.algorithm.algorithm && a.subject_public_key.data == b.subject_public_key.data
}

/// A key algorithm, named for messages, and whether ring signs with it.
struct KeyAlgorithm {
    name: String,
    supported: bool,
}

fn key_algorithm(public_key: &SubjectPublicKeyInfo<'_>) -> KeyAlgorithm {
    let oid = public_key.algorithm.algorithm.to_id_string();
    let (name, supported) = match public_key.parsed() {
        Ok(PublicKey::RSA(rsa)) => {
            let bits = rsa.key_size();
            (format!("RSA of {bits} bits"), (2048..=8192).contains(&bits))
        }
        Ok(PublicKey::EC(_)) => {
            let curve = public_key.algorithm.parameters.as_ref().and_then(|parameters| parameters.as_oid().ok());
            match curve.map(|curve| curve.to_id_string()).as_deref() {
                Some("1.2.840.10045.3.1.7") => ("ECDSA P-256".to_owned(), true),
                Some("1.3.132.0.34") => ("ECDSA P-384".to_owned(), true),
                Some("1.3.132.0.35") => ("ECDSA P-521".to_owned(), false),
                Some(other) => (format!("EC on the curve {other}"), false),
                None => ("EC on an unnamed curve".to_owned(), false),
            }
        }
        Ok(PublicKey::DSA(_)) => ("DSA".to_owned(), false),
        _ if oid == "1.3.101.112" => ("Ed25519".to_owned(), true),
        _ if oid == "1.3.101.113" => ("Ed448".to_owned(), false),
        _ if oid == "1.2.840.113549.1.1.10" => ("RSA-PSS (an RSA key restricted to PSS signatures)".to_owned(), false),
        _ => (format!("of the algorithm {oid}"), false),
    };
    KeyAlgorithm { name, supported }
}

/// An error unless `certificate` is valid now.
fn check_dates(certificate: &X509Certificate<'_>, path: &Path) -> Result<(), TransportError> {
    let validity = certificate.validity();
    let now = ASN1Time::now();
    if now > validity.not_after {
        return Err(certificate_error(
            path,
            &format!(
                "the client certificate expired on {} (it was valid from {})",
                date(validity.not_after),
                date(validity.not_before)
            ),
            "servers refuse expired certificates: make or ask for a new one (`openssl x509 -noout -dates -in FILE` \
             shows its dates); if the date looks wrong, check this machine's clock",
        ));
    }
    if now < validity.not_before {
        return Err(certificate_error(
            path,
            &format!("the client certificate is not valid before {}", date(validity.not_before)),
            "servers refuse certificates before their start date: check this machine's clock, or the dates the \
             certificate was made with (`openssl x509 -noout -dates -in FILE`)",
        ));
    }
    Ok(())
}

fn date(time: ASN1Time) -> String {
    let time = time.to_datetime();
    format!(
        "{}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        time.year(),
        u8::from(time.month()),
        time.day(),
        time.hour(),
        time.minute(),
        time.second()
    )
}

/// The indices of `certificates` in the order TLS sends them: the leaf, then its issuer,
/// that one's issuer and so on by name, then any others in the order of the file.
fn chain_order(certificates: &[X509Certificate<'_>], leaf: usize) -> Vec<usize> {
    let mut order = vec![leaf];
    let mut current = leaf;
    loop {
        let issuer = certificates[current].issuer().as_raw();
        let next = (0..certificates.len())
            .find(|&index| !order.contains(&index) && certificates[index].subject().as_raw() == issuer);
        match next {
            Some(next) => {
                order.push(next);
                current = next;
            }
            None => break,
        }
    }
    order.extend((0..certificates.len()).filter(|index| !order.contains(index)).collect::<Vec<_>>());
    order
}

/// The certificates of a `cert` file; an error naming the file when it holds none.
fn client_chain(file: &PemFile) -> Result<Vec<CertificateDer<'static>>, TransportError> {
    let found = CertificateDer::pem_slice_iter(&file.bytes).collect::<Result<Vec<_>, _>>().map_err(|error| {
        certificate_error(
            &file.path,
            &format!("the client certificate is not valid PEM: {error}"),
            "the file must hold `-----BEGIN CERTIFICATE-----` blocks",
        )
    })?;
    if !found.is_empty() {
        return Ok(found);
    }
    let text = String::from_utf8_lossy(&file.bytes);
    let (problem, hint) = if text.contains("PRIVATE KEY-----") {
        (
            "the file holds a private key, not a certificate",
            "name the certificate in `cert` (`--cert FILE`) and this key in `key` (`--key FILE`)",
        )
    } else if file.bytes.starts_with(&[0x30]) {
        (
            "the file is not a PEM certificate (it looks like DER)",
            "`cert` names a PEM file: convert it with `openssl x509 -inform der -in FILE -out FILE.pem`; PKCS#12 \
             files go in `pfx`",
        )
    } else {
        (
            "not a certificate: the file holds no `-----BEGIN CERTIFICATE-----` block",
            "`cert` names a PEM file of `-----BEGIN CERTIFICATE-----` blocks",
        )
    };
    Err(certificate_error(&file.path, problem, hint))
}

/// The certificate chain and the key of a PKCS#12 file.
fn pkcs12(
    file: &PemFile,
    passphrase: Option<&str>,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TransportError> {
    use p12_keystore::error::Error as P12Error;
    let store = p12_keystore::KeyStore::from_pkcs12(
        &file.bytes,
        passphrase.unwrap_or(""),
        p12_keystore::Pkcs12ImportPolicy::Relaxed,
    )
    .map_err(|error| {
        let (problem, hint) = match error {
            P12Error::MacError(_) if passphrase.is_none() => (
                "the PKCS#12 file is protected by a passphrase, and none was given".to_owned(),
                "give it with `passphrase` (`\"{{$secret CLIENT_CERT_PASSPHRASE}}\"`) or `--cert-passphrase`",
            ),
            P12Error::MacError(_) => (
                "wrong passphrase for the PKCS#12 file".to_owned(),
                "check the `passphrase` (or `--cert-passphrase`) and the secret it names",
            ),
            P12Error::UnsupportedEncryptionScheme => (
                "the PKCS#12 file is encrypted with a legacy scheme (3DES or RC2) that Volley does not read".to_owned(),
                "export it again with AES: `openssl pkcs12 -in OLD.p12 -nodes | openssl pkcs12 -export -out NEW.p12`",
            ),
            other => (
                format!("not a readable PKCS#12 file: {other}"),
                "`pfx` names a `.p12`/`.pfx` file; PEM files go in `cert` and `key`",
            ),
        };
        certificate_error(&file.path, &problem, hint)
    })?;
    let Some((_, chain)) = store.private_key_chain() else {
        return Err(certificate_error(
            &file.path,
            "the PKCS#12 file holds no private key with its certificate",
            "export the file with the private key (`openssl pkcs12 -export -inkey KEY -in CERT`)",
        ));
    };
    let certificates: Vec<CertificateDer<'static>> =
        chain.certs().iter().map(|certificate| CertificateDer::from(certificate.as_der().to_vec())).collect();
    if certificates.is_empty() {
        return Err(certificate_error(
            &file.path,
            "the PKCS#12 file holds a private key but no certificate",
            "export the file with the certificate (`openssl pkcs12 -export -inkey KEY -in CERT`)",
        ));
    }
    let key = PrivateKeyDer::Pkcs8(chain.key().as_der().to_vec().into());
    Ok((certificates, key))
}

/// The key blocks `key` may hold, for hints.
const KEY_BLOCKS: &str =
    "a `-----BEGIN PRIVATE KEY-----`, `RSA PRIVATE KEY` or `EC PRIVATE KEY` block (PKCS#8, PKCS#1 or SEC1)";

/// The private key of a PEM file (PKCS#8, PKCS#1 or SEC1), decrypted with `passphrase`
/// when it is encrypted (PKCS#8 `ENCRYPTED PRIVATE KEY`).
fn private_key(file: &PemFile, passphrase: Option<&str>) -> Result<PrivateKeyDer<'static>, TransportError> {
    let text = String::from_utf8_lossy(&file.bytes);
    if text.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(certificate_error(
            &file.path,
            "the client key is encrypted in the legacy OpenSSL format, which Volley does not read",
            "convert it to encrypted PKCS#8: `openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY -out KEY.p8.pem`",
        ));
    }
    if let Some(start) = text.find("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
        return encrypted_private_key(file, &text[start..], passphrase);
    }
    PrivateKeyDer::from_pem_slice(&file.bytes).map_err(|error| match error {
        rustls::pki_types::pem::Error::NoItemsFound if text.contains("-----BEGIN CERTIFICATE-----") => {
            certificate_error(
                &file.path,
                "the file holds a certificate, not a private key",
                &format!("name the private key in `key` (`--key FILE`): {KEY_BLOCKS}; the certificate goes in `cert`"),
            )
        }
        rustls::pki_types::pem::Error::NoItemsFound => certificate_error(
            &file.path,
            "not a private key: the file holds no private key block",
            &format!("name the key with `key` (`--key FILE`): {KEY_BLOCKS}"),
        ),
        other => certificate_error(
            &file.path,
            &format!("the private key is not valid PEM: {other}"),
            &format!("name the key with `key` (`--key FILE`): {KEY_BLOCKS}"),
        ),
    })
}

fn encrypted_private_key(
    file: &PemFile,
    pem: &str,
    passphrase: Option<&str>,
) -> Result<PrivateKeyDer<'static>, TransportError> {
    use pkcs8::der::Decode as _;
    let Some(passphrase) = passphrase else {
        return Err(certificate_error(
            &file.path,
            "the client key is encrypted, and no passphrase was given",
            "give it with `passphrase` (`\"{{$secret CLIENT_KEY_PASSPHRASE}}\"`) or `--cert-passphrase`",
        ));
    };
    let end = pem.find("-----END ENCRYPTED PRIVATE KEY-----").map_or(pem.len(), |end| end + 35);
    let (_, document) = pkcs8::der::Document::from_pem(&pem[..end]).map_err(|error| {
        certificate_error(&file.path, &format!("the encrypted key is not valid PEM: {error}"), "export the key again")
    })?;
    let info = pkcs8::EncryptedPrivateKeyInfoRef::from_der(document.as_bytes()).map_err(|error| {
        certificate_error(&file.path, &format!("not an encrypted PKCS#8 key: {error}"), "export the key again")
    })?;
    let decrypted = info.decrypt(passphrase).map_err(|_| {
        certificate_error(
            &file.path,
            "wrong passphrase for the client key (or an encryption scheme Volley does not read)",
            "check the `passphrase` (or `--cert-passphrase`) and the secret it names; keys are read when \
             encrypted with PBES2 (AES, `openssl pkcs8 -topk8 -v2 aes-256-cbc`)",
        )
    })?;
    Ok(PrivateKeyDer::Pkcs8(decrypted.as_bytes().to_vec().into()))
}
