//! TLS with rustls: a worker's certificate and key ([`ServerTls`]) and the
//! private CA a caller trusts for `https://` workers ([`TlsCa`]).
//!
//! PEM files are checked when read, so that a file holding no certificate
//! or no key is an error naming it (rustls would silently skip what does
//! not parse). Without a [`TlsCa`], `https://` workers are verified
//! against the system's roots.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

use crate::error::Error;

/// How long a TLS handshake may take, on either side.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::ReadFile {
        what,
        path: path.to_path_buf(),
        source,
    })
}

/// The certificates of a PEM file; at least one.
fn certificates(what: &'static str, path: &Path, pem: &[u8]) -> Result<usize, Error> {
    let invalid = |reason: String| Error::Pem {
        what,
        path: path.to_path_buf(),
        reason,
    };
    let mut n = 0;
    for cert in CertificateDer::pem_slice_iter(pem) {
        cert.map_err(|e| invalid(format!("does not parse as PEM: {e}")))?;
        n += 1;
    }
    if n == 0 {
        return Err(invalid("holds no PEM certificate".into()));
    }
    Ok(n)
}

/// A worker's TLS identity: its certificate chain and private key.
/// `Debug` shows neither.
#[derive(Clone)]
pub struct ServerTls {
    identity: Identity,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerTls(<certificate and key>)")
    }
}

impl ServerTls {
    /// The certificate chain in `cert` and the private key in `key`, both
    /// PEM (the worker's certificate first, then any intermediates).
    ///
    /// # Errors
    ///
    /// [`Error::ReadFile`] when a file cannot be read, [`Error::Pem`] when
    /// `cert` holds no certificate or `key` no private key.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, Error> {
        let cert_pem = read("TLS certificate", cert)?;
        certificates("TLS certificate", cert, &cert_pem)?;
        let key_pem = read("TLS key", key)?;
        // The parse error says what is wrong with the framing, never what
        // the key holds.
        PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| Error::Pem {
            what: "TLS key",
            path: key.to_path_buf(),
            reason: format!("holds no private key: {e}"),
        })?;
        Ok(Self {
            identity: Identity::from_pem(cert_pem, key_pem),
        })
    }

    /// The tonic server configuration of this identity (a handshake must
    /// finish within 10 seconds).
    pub fn server_config(&self) -> ServerTlsConfig {
        ServerTlsConfig::new()
            .identity(self.identity.clone())
            .timeout(HANDSHAKE_TIMEOUT)
    }
}

/// Certificates of a private CA that a caller trusts for `https://`
/// workers, instead of the system's roots.
#[derive(Debug, Clone)]
pub struct TlsCa {
    certificates: Certificate,
}

impl TlsCa {
    /// The CA certificates in the PEM file at `path` (one or more).
    ///
    /// # Errors
    ///
    /// [`Error::ReadFile`] when it cannot be read, [`Error::Pem`] when it
    /// holds no certificate.
    pub fn from_pem_file(path: &Path) -> Result<Self, Error> {
        let pem = read("TLS CA", path)?;
        certificates("TLS CA", path, &pem)?;
        Ok(Self {
            certificates: Certificate::from_pem(pem),
        })
    }
}

/// The client configuration for `https://` workers: the private CA if one
/// is given, else the system's roots.
pub(crate) fn client_config(ca: Option<&TlsCa>) -> ClientTlsConfig {
    let config = ClientTlsConfig::new().timeout(HANDSHAKE_TIMEOUT);
    match ca {
        Some(ca) => config.ca_certificate(ca.certificates.clone()),
        None => config.with_native_roots(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_files_without_what_they_should_hold_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = TlsCa::from_pem_file(&empty).unwrap_err().to_string();
        assert!(err.contains("holds no PEM certificate"), "{err}");
        assert!(err.contains("empty.pem"), "{err}");

        let missing = dir.path().join("missing.pem");
        let err = ServerTls::from_pem_files(&missing, &empty)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cannot read the TLS certificate file"),
            "{err}"
        );

        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let cert_file = dir.path().join("cert.pem");
        std::fs::write(&cert_file, cert.pem()).unwrap();
        // The certificate given as the key: no private key in it, and the
        // error shows nothing of the file.
        let err = ServerTls::from_pem_files(&cert_file, &cert_file)
            .unwrap_err()
            .to_string();
        assert!(err.contains("holds no private key"), "{err}");
        assert!(!err.contains("BEGIN"), "{err}");

        let key_file = dir.path().join("key.pem");
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        ServerTls::from_pem_files(&cert_file, &key_file).unwrap();
        TlsCa::from_pem_file(&cert_file).unwrap();
    }
}
