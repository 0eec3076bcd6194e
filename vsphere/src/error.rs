//! What can go wrong reading vCenter, typed where the caller acts on it (trust a
//! certificate, fix a password, grant a privilege, retry later). Every error names the
//! endpoint; none ever carries the password.
use crate::endpoint::Thumbprint;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// DNS failure, connection refused, unreachable network.
    // The cause is in the message, not also a `source`: error reporters that print the
    // chain (`{:#}`) would say it twice.
    #[error("cannot connect to vCenter {endpoint}: {cause}")]
    Connect { endpoint: String, cause: std::io::Error },
    #[error("vCenter {endpoint} did not answer in time ({stage})")]
    Timeout { endpoint: String, stage: String },
    #[error(
        "the certificate of vCenter {endpoint} is not trusted ({reason}); its SHA-256 thumbprint is {thumbprint}. \
         If that is vCenter's certificate (compare it in the vSphere Client or on the appliance), trust it with \
         --vcenter-thumbprint {thumbprint}, or give the CA that signed it (the VMCA root from the vCenter landing \
         page) with --vcenter-ca FILE"
    )]
    UnknownCertificate {
        endpoint: String,
        thumbprint: Thumbprint,
        reason: String,
    },
    #[error(
        "the certificate of vCenter {endpoint} has the SHA-256 thumbprint {got}, not the pinned {expected}: \
         if vCenter's certificate was renewed, pin the new one after checking it"
    )]
    ThumbprintMismatch {
        endpoint: String,
        expected: Thumbprint,
        got: Thumbprint,
    },
    /// Other TLS failures: no common protocol version or cipher, an alert from the server.
    #[error("TLS with vCenter {endpoint} failed: {message}")]
    Tls { endpoint: String, message: String },
    /// The CA file of `Trust::Ca` cannot be used.
    #[error("the CA file {path} cannot be used: {message}")]
    CaFile { path: String, message: String },
    #[error("vCenter {endpoint} refused the login of `{user}`: wrong user or password ({message})")]
    Login {
        endpoint: String,
        user: String,
        message: String,
    },
    /// The session expired or was terminated, and logging in again did not help.
    #[error("vCenter {endpoint}: the session is not authenticated (expired or terminated)")]
    NotAuthenticated { endpoint: String },
    #[error("vCenter {endpoint} answered with the fault {fault}: {message}{}", fault_hint(fault))]
    Fault {
        endpoint: String,
        fault: String,
        message: String,
    },
    #[error("vCenter {endpoint} answered HTTP {status}: {body_excerpt}")]
    Http {
        endpoint: String,
        status: u16,
        body_excerpt: String,
    },
    /// An answer that is not the XML the vSphere API sends.
    #[error("vCenter {endpoint}: unexpected answer: {message}")]
    Protocol { endpoint: String, message: String },
    /// The caller's cancellation (Ctrl-C) came first; the session was logged out.
    #[error("reading vCenter {endpoint} was cancelled")]
    Cancelled { endpoint: String },
}

fn fault_hint(fault: &str) -> &'static str {
    match fault {
        "NoPermission" => {
            " (the account lacks the System.View and System.Read privileges on the inventory: \
             a read-only role on the vCenter root, propagated to its children, is enough)"
        }
        "RequestCanceled" => " (vCenter cancelled the request; try again)",
        _ => "",
    }
}

impl Error {
    /// The endpoint label every variant but `CaFile` carries.
    pub fn endpoint(&self) -> Option<&str> {
        match self {
            Error::Connect { endpoint, .. }
            | Error::Timeout { endpoint, .. }
            | Error::UnknownCertificate { endpoint, .. }
            | Error::ThumbprintMismatch { endpoint, .. }
            | Error::Tls { endpoint, .. }
            | Error::Login { endpoint, .. }
            | Error::NotAuthenticated { endpoint }
            | Error::Fault { endpoint, .. }
            | Error::Http { endpoint, .. }
            | Error::Protocol { endpoint, .. }
            | Error::Cancelled { endpoint } => Some(endpoint),
            Error::CaFile { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_certificate_names_its_thumbprint_and_the_options() {
        let tp = Thumbprint([0xab; 32]);
        let e = Error::UnknownCertificate {
            endpoint: "vc01".into(),
            thumbprint: tp,
            reason: "invalid peer certificate: UnknownIssuer".into(),
        };
        let text = e.to_string();
        let colon = tp.to_string();
        assert!(colon.starts_with("AB:AB:") && colon.len() == 32 * 3 - 1);
        assert!(text.contains(&format!("--vcenter-thumbprint {colon}")), "{text}");
        assert!(text.contains("--vcenter-ca FILE") && text.contains("vc01") && text.contains("not trusted"));
    }

    #[test]
    fn faults_say_what_to_do() {
        let e = Error::Fault {
            endpoint: "vc01".into(),
            fault: "NoPermission".into(),
            message: "Permission to perform this operation was denied.".into(),
        };
        assert!(e.to_string().contains("read-only role"), "{e}");
        let e = Error::Login {
            endpoint: "vc01:8443".into(),
            user: "monitor@vsphere.local".into(),
            message: "Cannot complete login due to an incorrect user name or password.".into(),
        };
        assert!(e.to_string().contains("wrong user or password") && e.to_string().contains("vc01:8443"));
        assert_eq!(e.endpoint(), Some("vc01:8443"));
    }
}
