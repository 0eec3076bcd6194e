//! TLS towards vCenter, always verified. The certificate check is rustls' own (webpki
//! with the OS roots or the given CA, or an exact SHA-256 pin); what this module adds is
//! a record of the leaf certificate's thumbprint when the check fails, so the refusal can
//! show the thumbprint to pin, as ssh shows a new host key's fingerprint.
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::endpoint::{Thumbprint, Trust};
use crate::error::{CertificateProblem, Error};

/// Why the last handshake's certificate was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    Untrusted {
        thumbprint: Thumbprint,
        problem: CertificateProblem,
    },
    Mismatch {
        expected: Thumbprint,
        got: Thumbprint,
    },
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
    ca: Option<PathBuf>,
    /// The CA file's certificates. One the server presents as it is (a self-signed vCenter
    /// or ESXi certificate, which says it is a CA) is a trust anchor of its own, as curl,
    /// Python's ssl and Go take it: its dates and names are checked, not its issuer.
    anchors: Vec<CertificateDer<'static>>,
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
            Check::WebPki(inner) => {
                let refused = match inner.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
                {
                    Ok(verified) => return Ok(verified),
                    Err(e) => e,
                };
                let problem = match &self.ca {
                    Some(file) if self.anchors.iter().any(|a| a.as_ref() == end_entity.as_ref()) => {
                        match anchor_problem(end_entity, server_name, now) {
                            None => return Ok(ServerCertVerified::assertion()),
                            Some(p) => CertificateProblem::Anchor {
                                ca_file: file.clone(),
                                problem: Box::new(p),
                            },
                        }
                    }
                    _ => problem(&refused, self.ca.as_ref()),
                };
                self.reject(Rejection::Untrusted {
                    thumbprint: got,
                    problem,
                });
                Err(refused)
            }
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

/// Why webpki refused a certificate; `ca` is the CA file of `Trust::Ca`, if one was given.
fn problem(error: &rustls::Error, ca: Option<&PathBuf>) -> CertificateProblem {
    use rustls::CertificateError as E;
    let rustls::Error::InvalidCertificate(e) = error else {
        return CertificateProblem::Other(error.to_string());
    };
    match e {
        E::UnknownIssuer => CertificateProblem::UnknownIssuer { ca_file: ca.cloned() },
        E::NotValidForNameContext { presented, .. } => CertificateProblem::WrongName {
            names: presented.iter().map(|n| plain_name(n)).collect(),
        },
        E::NotValidForName => CertificateProblem::WrongName { names: Vec::new() },
        E::Expired | E::ExpiredContext { .. } => CertificateProblem::Expired,
        E::NotValidYet | E::NotValidYetContext { .. } => CertificateProblem::NotValidYet,
        E::Revoked => CertificateProblem::Revoked,
        E::BadSignature => CertificateProblem::BadSignature,
        E::Other(other) if other.0.downcast_ref::<webpki::Error>() == Some(&webpki::Error::CaUsedAsEndEntity) => {
            CertificateProblem::CaCertificate { ca_file: ca.cloned() }
        }
        other => CertificateProblem::Other(format!("{other:?}")),
    }
}

/// What keeps a certificate of the CA file, presented as it is, from being this server's,
/// checked as curl checks a trust anchor it is given: its dates, and that it is issued for
/// the address given. `None`: nothing; it is trusted.
fn anchor_problem(
    end_entity: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Option<CertificateProblem> {
    let Some((not_before, not_after)) = crate::validity::validity(end_entity.as_ref()) else {
        return Some(CertificateProblem::Other("its validity dates cannot be read".into()));
    };
    let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    if now < not_before {
        return Some(CertificateProblem::NotValidYet);
    }
    if now > not_after {
        return Some(CertificateProblem::Expired);
    }
    let certificate = match webpki::EndEntityCert::try_from(end_entity) {
        Ok(c) => c,
        Err(e) => return Some(CertificateProblem::Other(format!("it cannot be read: {e}"))),
    };
    match certificate.verify_is_valid_for_subject_name(server_name) {
        Ok(()) => None,
        Err(webpki::Error::CertNotValidForName(context)) => Some(CertificateProblem::WrongName {
            names: context.presented.iter().map(|n| plain_name(n)).collect(),
        }),
        Err(_) => Some(CertificateProblem::WrongName { names: Vec::new() }),
    }
}

/// A name a certificate is issued for as an admin writes it: webpki gives each in its
/// own notation (`DnsName("vc01.lab")`, `IpAddress(10.0.0.5)`).
fn plain_name(presented: &str) -> String {
    let inner = |prefix: &str| presented.strip_prefix(prefix)?.strip_suffix(')');
    match (inner("DnsName("), inner("IpAddress(")) {
        (Some(dns), _) => dns.trim_matches('"').to_string(),
        (_, Some(ip)) => ip.to_string(),
        _ => presented.to_string(),
    }
}

/// The roots `trust` names: the OS store, or the certificates of a PEM file (also
/// returned as they are).
fn roots(trust: &Trust) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), Error> {
    let mut store = RootCertStore::empty();
    let mut anchors = Vec::new();
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
                    .add(cert.clone())
                    .map_err(|e| ca_error(format!("not a usable CA certificate: {e}")))?;
                anchors.push(cert);
            }
        }
        Trust::Pinned(_) => {}
    }
    Ok((store, anchors))
}

/// The rustls configuration for `trust`, and the slot its verifier reports refusals in.
pub fn client_config(trust: &Trust, endpoint: &str) -> Result<(Arc<rustls::ClientConfig>, RejectionSlot), Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut anchors = Vec::new();
    let check = match trust {
        Trust::Pinned(t) => Check::Pinned(*t),
        other => {
            let (store, certificates) = roots(other)?;
            anchors = certificates;
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
            Trust::Ca(path) => Some(path.clone()),
            _ => None,
        },
        anchors,
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
    use super::{plain_name, problem};
    use crate::error::CertificateProblem;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    use rustls::{CertificateError, Error};
    use std::path::PathBuf;

    /// The names a certificate is issued for, as webpki reports them when the address is
    /// not one of them, then as the refusal says them.
    #[test]
    fn a_wrong_name_refusal_says_the_names_as_an_admin_writes_them() {
        let pem = include_bytes!("../tests/fixtures/self-signed-vcenter.pem");
        let der = CertificateDer::from_pem_slice(pem).unwrap();
        let certificate = webpki::EndEntityCert::try_from(&der).unwrap();
        let other = ServerName::try_from("vc02.lab.example").unwrap();
        let Err(webpki::Error::CertNotValidForName(context)) = certificate.verify_is_valid_for_subject_name(&other)
        else {
            panic!("vc02 is not a name of the certificate")
        };
        assert_eq!(context.presented, [r#"DnsName("vc01.lab.example")"#]);
        let refused = Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            expected: other.to_owned(),
            presented: context.presented,
        });
        let said = problem(&refused, None);
        assert_eq!(
            said.to_string(),
            "it is not issued for the address given: it names vc01.lab.example; give one of those in the vCenter address"
        );
        assert_eq!(plain_name("IpAddress(10.0.0.5)"), "10.0.0.5");
        assert_eq!(plain_name("DirectoryName"), "DirectoryName");
    }

    #[test]
    fn a_refusal_keeps_which_roots_were_used() {
        let unknown = Error::InvalidCertificate(CertificateError::UnknownIssuer);
        assert_eq!(
            problem(&unknown, None),
            CertificateProblem::UnknownIssuer { ca_file: None }
        );
        let ca = PathBuf::from("/etc/pvrdma-doctor/vcenter.pem");
        assert_eq!(
            problem(&unknown, Some(&ca)),
            CertificateProblem::UnknownIssuer { ca_file: Some(ca) }
        );
        let expired = Error::InvalidCertificate(CertificateError::Expired);
        assert_eq!(problem(&expired, None), CertificateProblem::Expired);
        for text in [problem(&unknown, None).to_string(), problem(&expired, None).to_string()] {
            assert!(
                !text.contains("UnknownIssuer") && !text.contains("invalid peer"),
                "{text}"
            );
        }
    }
}
