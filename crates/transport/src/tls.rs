//! What one TLS connection trusts and presents: the CA bundles and the client
//! certificate, as files read (`network.rs` reads them for a URL; `client_certificate`
//! turns them into what rustls presents).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// A file read for the transport: its path, for messages, and its bytes.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PemFile {
    /// Where it was read.
    pub path: PathBuf,
    /// What it holds.
    pub bytes: Arc<[u8]>,
}

impl fmt::Debug for PemFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The bytes may be a private key.
        f.debug_struct("PemFile").field("path", &self.path).finish_non_exhaustive()
    }
}

/// The trust and client certificate of one TLS connection.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct TlsChoice {
    pub ca: Vec<PemFile>,
    pub cert: Option<PemFile>,
    pub key: Option<PemFile>,
    pub pfx: Option<PemFile>,
    pub passphrase: Option<String>,
}

impl fmt::Debug for TlsChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsChoice")
            .field("ca", &self.ca)
            .field("cert", &self.cert)
            .field("key", &self.key)
            .field("pfx", &self.pfx)
            .field("passphrase", &self.passphrase.as_ref().map(|_| "***"))
            .finish()
    }
}

impl TlsChoice {
    /// Whether a client certificate is presented.
    #[must_use]
    pub fn has_certificate(&self) -> bool {
        self.cert.is_some() || self.pfx.is_some()
    }
}
