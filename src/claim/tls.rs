//! TLS to the stores, with rustls: the CA files (`REDIS_CA_FILE`, `DATABASE_CA_FILE`) and
//! PostgreSQL's `sslmode`, read as libpq reads it.
//!
//! `sslmode` (libpq: <https://www.postgresql.org/docs/current/libpq-ssl.html#LIBPQ-SSL-PROTECTION>):
//! - `disable`: plain text.
//! - `prefer` (libpq's default, and ours): TLS when the server offers it, without verifying its
//!   certificate; plain text otherwise, which the store logs as a warning at startup.
//! - `require`: TLS or no connection; the certificate is not verified, unless a CA file is given,
//!   which makes it `verify-ca` (as libpq does when its root certificate file exists).
//! - `verify-ca`: TLS, certificate signed by a trusted CA (`DATABASE_CA_FILE`, else the system's
//!   roots), any host name.
//! - `verify-full`: as `verify-ca`, and the certificate names the host connected to.
//!
//! tokio-postgres itself reads only `disable`, `prefer` and `require`, so `sslmode` is taken off
//! the URL here and the verification is this module's rustls configuration.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A TLS setting that cannot be used. Names the setting and what to do.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The CA file cannot be read, or holds no PEM certificate.
    #[error("cannot use {var}={}: {reason}; it must be a PEM file of the CA certificates that sign the server's certificate", path.display())]
    CaFile {
        /// The setting naming the file.
        var: &'static str,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// No trusted root: no CA file and none in the system's store.
    #[error("no CA certificate to verify the server with: set {var} to a PEM file of them (the system's store has none: {reason})")]
    NoRoots {
        /// The setting that would give them.
        var: &'static str,
        /// What the system's store said.
        reason: String,
    },
    /// `sslmode` in `DATABASE_URL` has a value libpq does not know.
    #[error("sslmode={0:?} in DATABASE_URL is not one of disable, prefer, require, verify-ca, verify-full")]
    SslMode(String),
}

/// PostgreSQL's `sslmode`: how much TLS a connection insists on (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain text.
    Disable,
    /// TLS if offered, unverified; plain text (logged) otherwise.
    Prefer,
    /// TLS, unverified (verified as `VerifyCa` with a CA file).
    Require,
    /// TLS, signed by a trusted CA.
    VerifyCa,
    /// TLS, signed by a trusted CA, for the host connected to.
    VerifyFull,
}

impl SslMode {
    fn parse(raw: &str) -> Result<SslMode, TlsError> {
        Ok(match raw {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => return Err(TlsError::SslMode(other.to_string())),
        })
    }

    /// What tokio-postgres is told: whether plain text is acceptable.
    pub fn for_driver(self) -> tokio_postgres::config::SslMode {
        match self {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => tokio_postgres::config::SslMode::Require,
        }
    }
}

/// `url` without its `sslmode` parameter, and that mode (`prefer` when absent, as in libpq).
/// The other parameters are kept byte for byte (re-encoding them could change what the driver
/// reads, e.g. a space in `options`).
///
/// # Errors
/// [`TlsError::SslMode`] when `sslmode` is not a libpq mode.
pub fn split_sslmode(url: &str) -> Result<(String, SslMode), TlsError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), SslMode::Prefer));
    };
    let mut mode = SslMode::Prefer;
    let mut rest: Vec<&str> = Vec::new();
    for part in query.split('&') {
        match part.strip_prefix("sslmode=") {
            Some(value) => mode = SslMode::parse(value)?,
            None => rest.push(part),
        }
    }
    let url = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok((url, mode))
}

/// The crypto this crate's TLS uses: ring (reqwest's too), chosen explicitly so that
/// no other provider compiled into the binary can make the choice ambiguous.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Makes ring the process' default rustls provider, for clients that build their TLS
/// configuration from the default (the Redis client). Installing twice is harmless.
pub(super) fn install_default_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The bytes of the CA file `path` (setting `var`), checked to hold at least one PEM
/// certificate.
///
/// # Errors
/// [`TlsError::CaFile`] when it cannot be read or holds no certificate.
pub(super) fn read_ca_file(var: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    let ca_error = |reason: String| TlsError::CaFile {
        var,
        path: path.to_path_buf(),
        reason,
    };
    let pem = std::fs::read(path).map_err(|e| ca_error(e.to_string()))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ca_error(e.to_string()))?;
    if certs.is_empty() {
        return Err(ca_error("no certificate in it".into()));
    }
    Ok(pem)
}

/// The trusted roots: the certificates of the CA file `ca_file` (setting `var`), or else the
/// system's store (rustls-native-certs: `/etc/ssl/certs` and the like).
fn roots(var: &'static str, ca_file: Option<&Path>) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    match ca_file {
        Some(path) => {
            let pem = read_ca_file(var, path)?;
            for cert in CertificateDer::pem_slice_iter(&pem).flatten() {
                roots.add(cert).map_err(|e| TlsError::CaFile {
                    var,
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                })?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                let reason = found
                    .errors
                    .first()
                    .map_or_else(|| "no certificate found".to_string(), ToString::to_string);
                return Err(TlsError::NoRoots { var, reason });
            }
        }
    }
    Ok(roots)
}

/// The rustls configuration for PostgreSQL in `mode`, trusting `ca_file` (`DATABASE_CA_FILE`) or
/// the system's roots. For `disable` it is never used (the driver is told not to ask for TLS).
///
/// # Errors
/// [`TlsError`] when the roots cannot be loaded.
pub(super) fn postgres_client_config(mode: SslMode, ca_file: Option<&Path>) -> Result<ClientConfig, TlsError> {
    const VAR: &str = "DATABASE_CA_FILE";
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::NoRoots {
            var: VAR,
            reason: e.to_string(),
        })?;
    // None: not checked; Some(false): chain only; Some(true): chain and host name.
    let verify = match (mode, ca_file) {
        (SslMode::Disable | SslMode::Prefer, _) | (SslMode::Require, None) => None,
        (SslMode::Require | SslMode::VerifyCa, _) => Some(false),
        (SslMode::VerifyFull, _) => Some(true),
    };
    let chain = match verify {
        None => None,
        Some(_) => Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots(VAR, ca_file)?), provider.clone())
                .build()
                .map_err(|e| TlsError::NoRoots {
                    var: VAR,
                    reason: e.to_string(),
                })?,
        ),
    };
    let config = match (verify, chain) {
        (Some(true), Some(webpki)) => builder.with_webpki_verifier(webpki).with_no_client_auth(),
        (_, chain) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Relaxed { chain, provider }))
            .with_no_client_auth(),
    };
    Ok(config)
}

/// What `prefer`, `require` and `verify-ca` check (`verify-full` is rustls' own verifier).
/// Without `chain` (`prefer`, `require` without a CA file: libpq's meaning of those modes),
/// the certificate is not checked. With it (`verify-ca`), the chain must lead to a trusted
/// root but the host name is not checked: rustls checks the chain before the name, so a name
/// error means the chain was good. Either way the handshake's signatures are verified, so the
/// session is with whoever holds the certificate's key.
#[derive(Debug)]
struct Relaxed {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Relaxed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_is_taken_off_the_url_and_the_other_parameters_stay() {
        let (url, mode) =
            split_sslmode("postgres://u:p%40ss@db:5432/x?sslmode=verify-full&options=-c%20search_path%3Ds").unwrap();
        assert_eq!(mode, SslMode::VerifyFull);
        assert_eq!(url, "postgres://u:p%40ss@db:5432/x?options=-c%20search_path%3Ds");
        assert_eq!(
            split_sslmode("postgres://db/x").unwrap(),
            ("postgres://db/x".to_string(), SslMode::Prefer)
        );
        assert_eq!(
            split_sslmode("postgres://db/x?sslmode=disable").unwrap(),
            ("postgres://db/x".to_string(), SslMode::Disable)
        );
        let e = split_sslmode("postgres://db/x?sslmode=allow").unwrap_err().to_string();
        assert!(e.contains("\"allow\"") && e.contains("verify-full"), "{e}");
    }
}
