//! TLS towards vCenter, always verified. The certificate check is rustls' own (webpki
//! with the OS roots or the given CA, or an exact SHA-256 pin); what this module adds is
//! a record of the leaf certificate's thumbprint when the check fails, so the refusal can
//! show the thumbprint to pin, as ssh shows a new host key's fingerprint.
use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::endpoint::{Thumbprint, Trust};
use crate::error::Error;

/// Why the last handshake's certificate was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    Untrusted { thumbprint: Thumbprint, reason: String },
    Mismatch { expected: Thumbprint, got: Thumbprint },
}

/// Where the verifier leaves its verdict for the connection code to read.
pub type RejectionSlot = Arc<Mutex<Option<Rejection>>>;

#[derive(Debug)]
enum Check {
    WebPki(Arc<WebPkiServerVerifier>),
    Pinned(Thumbprint),
}

#[derive(Debug)]
struct Verifier {
    check: Check,
    /// The CA file of `Trust::Ca`, named in a refusal; `None`: the system's roots.
    ca: Option<String>,
    provider: Arc<CryptoProvider>,
    rejection: RejectionSlot,
}

impl Verifier {
    fn reject(&self, r: Rejection) {
        if let Ok(mut slot) = self.rejection.lock() {
            *slot = Some(r);
        }
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let got = Thumbprint::of_der(end_entity.as_ref());
        match &self.check {
            Check::WebPki(inner) => inner
                .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
                .inspect_err(|e| {
                    self.reject(Rejection::Untrusted {
                        thumbprint: got,
                        reason: plain_reason(e, self.ca.as_deref()),
                    })
                }),
            // Pinned: that exact certificate, whatever its name, issuer or dates (an
            // appliance's self-signed certificate is the case pinning exists for). The
            // handshake signature is still checked below: the server must hold its key.
            Check::Pinned(expected) if *expected == got => Ok(ServerCertVerified::assertion()),
            Check::Pinned(expected) => {
                self.reject(Rejection::Mismatch {
                    expected: *expected,
                    got,
                });
                Err(rustls::Error::General(
                    "certificate thumbprint differs from the pinned one".into(),
                ))
            }
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// Why webpki refused a certificate, in the words of someone who manages vCenter rather
/// than rustls' names (`UnknownIssuer`); `ca` is the `--vcenter-ca` file, if one was given.
fn plain_reason(error: &rustls::Error, ca: Option<&str>) -> String {
    use rustls::CertificateError as E;
    let rustls::Error::InvalidCertificate(e) = error else {
        return error.to_string();
    };
    match e {
        E::UnknownIssuer => match ca {
            Some(path) => format!("it is not signed by the CA in {path}"),
            None => "it is signed by a CA this system does not trust".into(),
        },
        E::NotValidForNameContext { presented, .. } if !presented.is_empty() => format!(
            "it is not issued for the address given: it names {}; give one of those in the vCenter address",
            presented.join(", ")
        ),
        E::NotValidForName | E::NotValidForNameContext { .. } => "it is not issued for the address given".into(),
        E::Expired | E::ExpiredContext { .. } => "it has expired: renew vCenter's certificate".into(),
        E::NotValidYet | E::NotValidYetContext { .. } => {
            "it is not valid yet: check this machine's clock and vCenter's".into()
        }
        E::Revoked => "it is revoked".into(),
        E::BadSignature => "its signature does not verify".into(),
        other => format!("{other:?}"),
    }
}

/// The roots `trust` names: the OS store, or the certificates of a PEM file.
fn roots(trust: &Trust) -> Result<RootCertStore, Error> {
    let mut store = RootCertStore::empty();
    match trust {
        Trust::System => {
            // Unreadable entries of the OS store are skipped, as the OS' own tools do; an
            // empty store refuses every certificate, with its thumbprint shown.
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
        }
        Trust::Ca(path) => {
            let ca_error = |message: String| Error::CaFile {
                path: path.display().to_string(),
                message,
            };
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| ca_error(e.to_string()))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ca_error(format!("not PEM: {e}")))?;
            if certs.is_empty() {
                return Err(ca_error(
                    "no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into(),
                ));
            }
            for cert in certs {
                store
                    .add(cert)
                    .map_err(|e| ca_error(format!("not a usable CA certificate: {e}")))?;
            }
        }
        Trust::Pinned(_) => {}
    }
    Ok(store)
}

/// The rustls configuration for `trust`, and the slot its verifier reports refusals in.
pub fn client_config(trust: &Trust, endpoint: &str) -> Result<(Arc<rustls::ClientConfig>, RejectionSlot), Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let check = match trust {
        Trust::Pinned(t) => Check::Pinned(*t),
        other => {
            let store = roots(other)?;
            let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
                .build()
                .or_else(|e| match e {
                    // No root at all: every certificate is then unknown, which the
                    // verifier's refusal reports with the thumbprint.
                    rustls::client::VerifierBuilderError::NoRootAnchors => {
                        WebPkiServerVerifier::builder_with_provider(Arc::new(placeholder_roots()), provider.clone())
                            .build()
                    }
                    e => Err(e),
                })
                .map_err(|e| Error::Tls {
                    endpoint: endpoint.into(),
                    message: e.to_string(),
                })?;
            Check::WebPki(verifier)
        }
    };
    let rejection: RejectionSlot = Arc::new(Mutex::new(None));
    let verifier = Arc::new(Verifier {
        check,
        ca: match trust {
            Trust::Ca(path) => Some(path.display().to_string()),
            _ => None,
        },
        provider: provider.clone(),
        rejection: rejection.clone(),
    });
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls {
            endpoint: endpoint.into(),
            message: e.to_string(),
        })?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok((Arc::new(config), rejection))
}

/// A store whose only anchor no real certificate chains to, for machines without any
/// root certificate: webpki then refuses everything as an unknown issuer.
fn placeholder_roots() -> RootCertStore {
    let mut store = RootCertStore::empty();
    store.roots.push(rustls::pki_types::TrustAnchor {
        subject: rustls::pki_types::Der::from_slice(b"\x30\x00"),
        subject_public_key_info: rustls::pki_types::Der::from_slice(b"\x30\x00"),
        name_constraints: None,
    });
    store
}

#[cfg(test)]
mod tests {
    use super::plain_reason;
    use rustls::{CertificateError, Error};

    #[test]
    fn a_refused_certificate_is_explained_without_rustls_names() {
        let unknown = Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let system = plain_reason(&unknown, None);
        assert!(system.contains("a CA this system does not trust"), "{system}");
        // With --vcenter-ca the refusal names that file: "give the CA" alone would send the
        // admin back to the option already given.
        let given = plain_reason(&unknown, Some("/etc/pvrdma-doctor/vcenter.pem"));
        assert_eq!(given, "it is not signed by the CA in /etc/pvrdma-doctor/vcenter.pem");
        let expired = plain_reason(&Error::InvalidCertificate(CertificateError::Expired), None);
        assert!(expired.contains("expired"), "{expired}");
        for text in [system, given, expired] {
            assert!(
                !text.contains("UnknownIssuer") && !text.contains("invalid peer"),
                "{text}"
            );
        }
    }
}
