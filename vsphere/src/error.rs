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
    #[error("cannot connect to vCenter {endpoint}: {cause}{}", connect_hint(cause))]
    Connect { endpoint: String, cause: std::io::Error },
    /// No answer within the request limit (`limit`), in `stage`: `connect`, `TLS
    /// handshake`, or the API call waited for.
    #[error("{}", timeout(endpoint, stage, *limit, &COMMAND_LINE))]
    Timeout {
        endpoint: String,
        stage: String,
        limit: std::time::Duration,
    },
    // The option that pins the certificate comes last and whole (see [`Error::pin`]): a
    // front end can set it on a line of its own, which a terminal copy keeps in one piece.
    #[error("{}", unknown_certificate(endpoint, reason, thumbprint, &COMMAND_LINE))]
    UnknownCertificate {
        endpoint: String,
        thumbprint: Thumbprint,
        reason: String,
    },
    #[error("{}", thumbprint_mismatch(endpoint, got, &COMMAND_LINE))]
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
    #[error(
        "vCenter {endpoint} refused the login of `{user}`: wrong user or password ({message}); check the user, \
         with its SSO domain (`monitor@vsphere.local`), and the password given"
    )]
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
    #[error("vCenter {endpoint} answered HTTP {status}: {body_excerpt}{}", http_hint(*status))]
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

/// How the trust and time settings are written where the admin changes them.
struct TrustNames {
    ca: &'static str,
    pin: fn(&Thumbprint) -> String,
    pinned: &'static str,
    timeout: &'static str,
}

const COMMAND_LINE: TrustNames = TrustNames {
    ca: "--vcenter-ca FILE",
    pin: |t| format!("--vcenter-thumbprint {t}"),
    pinned: "--vcenter-thumbprint",
    timeout: "--vcenter-timeout",
};

/// The exporter's configuration (`vcenters:` entries).
const CONFIGURATION: TrustNames = TrustNames {
    ca: "`ca: FILE` in its vcenters: entry",
    pin: |t| format!("thumbprint: \"{t}\""),
    pinned: "`thumbprint:`",
    timeout: "`timeout:` in its vcenters: entry",
};

/// A request that got no answer in time. No connection or TLS session in time is the
/// address's or the network's doing; a call that went unanswered is vCenter's (a loaded
/// appliance, a large inventory): only then is more time the remedy.
fn timeout(endpoint: &str, stage: &str, limit: std::time::Duration, names: &TrustNames) -> String {
    let limit = match limit.subsec_millis() {
        0 => format!("{}s", limit.as_secs()),
        _ => format!("{}ms", limit.as_millis()),
    };
    if matches!(stage, "connect" | "TLS handshake") {
        format!(
            "vCenter {endpoint} did not answer in time ({stage}, within {limit}, the limit {} sets): check that the \
             address and port are vCenter's (its API is served over HTTPS, port 443 unless the address names \
             another) and that no firewall drops the traffic",
            names.timeout
        )
    } else {
        format!(
            "vCenter {endpoint} did not answer {stage} within {limit}, the limit {} sets: a loaded vCenter or a \
             large inventory can take longer; give it more time with {}",
            names.timeout, names.timeout
        )
    }
}

fn unknown_certificate(endpoint: &str, reason: &str, thumbprint: &Thumbprint, names: &TrustNames) -> String {
    format!(
        "the certificate of vCenter {endpoint} is not trusted ({reason}). If it is vCenter's certificate (compare its \
         SHA-256 thumbprint, at the end of this message, with the one the vSphere Client or the appliance shows), \
         give the CA that signed it (the VMCA root from the vCenter landing page) with {}, or pin its SHA-256 \
         thumbprint: {}",
        names.ca,
        (names.pin)(thumbprint)
    )
}

fn thumbprint_mismatch(endpoint: &str, got: &Thumbprint, names: &TrustNames) -> String {
    format!(
        "the certificate of vCenter {endpoint} is not the one pinned with {}. If vCenter's certificate was renewed, \
         compare its SHA-256 thumbprint, at the end of this message, with the one the vSphere Client or the \
         appliance shows, and pin it: {}",
        names.pinned,
        (names.pin)(got)
    )
}

/// What to do when the TCP connection failed.
fn connect_hint(cause: &std::io::Error) -> &'static str {
    match cause.kind() {
        std::io::ErrorKind::ConnectionRefused => {
            "; nothing listens there: check the host and port (vCenter serves its API over HTTPS on port 443 unless \
             the address names another)"
        }
        _ => "; check the address, and that this machine can reach vCenter on its HTTPS port",
    }
}

/// What to do when the address answered HTTP but not as the vSphere API.
fn http_hint(status: u16) -> &'static str {
    match status {
        404 | 405 => {
            " (no vSphere API at this path: vCenter serves it at /sdk, which `vc01` and `https://vc01` already \
             mean; give the address without another path)"
        }
        503 => " (vCenter's services may still be starting; try again in a few minutes)",
        _ => "",
    }
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
    /// The option that pins the certificate vCenter presented (`--vcenter-thumbprint
    /// AA:BB:…`), for the refusals that end with it: a terminal shows it on a line of its
    /// own, unbroken, to be checked and copied.
    pub fn pin(&self) -> Option<String> {
        match self {
            Error::UnknownCertificate { thumbprint, .. } | Error::ThumbprintMismatch { got: thumbprint, .. } => {
                Some((COMMAND_LINE.pin)(thumbprint))
            }
            _ => None,
        }
    }

    /// The message for the exporter's log: a refused certificate names the keys of the
    /// configuration's `vcenters:` entry (`ca:`, `thumbprint:`), not the command line's
    /// options, which the exporter does not take.
    pub fn for_configuration(&self) -> String {
        match self {
            Error::UnknownCertificate {
                endpoint,
                thumbprint,
                reason,
            } => unknown_certificate(endpoint, reason, thumbprint, &CONFIGURATION),
            Error::ThumbprintMismatch { endpoint, got, .. } => thumbprint_mismatch(endpoint, got, &CONFIGURATION),
            Error::Timeout { endpoint, stage, limit } => timeout(endpoint, stage, *limit, &CONFIGURATION),
            other => other.to_string(),
        }
    }

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
    fn a_certificate_refusal_ends_with_the_option_that_pins_it_whole() {
        let (expected, got) = (Thumbprint([0x11; 32]), Thumbprint([0xab; 32]));
        let refusals = [
            Error::UnknownCertificate {
                endpoint: "vc01".into(),
                thumbprint: got,
                reason: "signed by a CA this system does not trust".into(),
            },
            Error::ThumbprintMismatch {
                endpoint: "vc01".into(),
                expected,
                got,
            },
        ];
        for e in refusals {
            let pin = e.pin().expect("a refused certificate has a pin");
            assert_eq!(pin, format!("--vcenter-thumbprint {got}"));
            let text = e.to_string();
            assert!(text.ends_with(&format!(": {pin}")), "{text}");
            // The thumbprint is said once, in the option: a wrapped message never breaks
            // a second copy of it.
            assert_eq!(text.matches(&got.to_string()).count(), 1, "{text}");
            assert!(!text.contains(&expected.to_string()), "{text}");
            assert!(text.contains("vc01") && !text.contains('\n'), "{text}");
        }
        let other = Error::Cancelled {
            endpoint: "vc01".into(),
        };
        assert_eq!(other.pin(), None);
    }

    #[test]
    fn the_exporter_is_told_the_keys_of_its_configuration_not_command_line_options() {
        let got = Thumbprint([0xab; 32]);
        let unknown = Error::UnknownCertificate {
            endpoint: "vc01".into(),
            thumbprint: got,
            reason: "it is signed by a CA this system does not trust".into(),
        };
        let text = unknown.for_configuration();
        assert!(text.ends_with(&format!("thumbprint: \"{got}\"")), "{text}");
        assert!(text.contains("`ca: FILE` in its vcenters: entry"), "{text}");
        let mismatch = Error::ThumbprintMismatch {
            endpoint: "vc01".into(),
            expected: Thumbprint([0x11; 32]),
            got,
        };
        let text = mismatch.for_configuration();
        assert!(text.contains("pinned with `thumbprint:`"), "{text}");
        for text in [unknown.for_configuration(), mismatch.for_configuration()] {
            assert!(!text.contains("--vcenter"), "{text}");
        }
        let other = Error::Cancelled {
            endpoint: "vc01".into(),
        };
        assert_eq!(other.for_configuration(), other.to_string());
    }

    #[test]
    fn an_address_that_is_not_the_api_says_what_to_write() {
        let refused = Error::Connect {
            endpoint: "vc01:1".into(),
            cause: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        };
        assert!(refused.to_string().contains("check the host and port"), "{refused}");
        let not_sdk = Error::Http {
            endpoint: "vc01".into(),
            status: 404,
            body_excerpt: "404 page not found".into(),
        };
        assert!(not_sdk.to_string().contains("vCenter serves it at /sdk"), "{not_sdk}");
        let late = Error::Timeout {
            endpoint: "vc01".into(),
            stage: "TLS handshake".into(),
            limit: std::time::Duration::from_secs(30),
        };
        assert!(late.to_string().contains("port 443"), "{late}");
    }

    #[test]
    fn an_unanswered_call_names_the_limit_and_where_it_is_raised() {
        let slow = Error::Timeout {
            endpoint: "vc01".into(),
            stage: "RetrievePropertiesEx".into(),
            limit: std::time::Duration::from_millis(1500),
        };
        let text = slow.to_string();
        assert!(
            text.starts_with("vCenter vc01 did not answer RetrievePropertiesEx within 1500ms"),
            "{text}"
        );
        assert!(text.contains("give it more time with --vcenter-timeout"), "{text}");
        assert!(!text.contains("port 443"), "{text}");
        let text = slow.for_configuration();
        assert!(text.contains("`timeout:` in its vcenters: entry"), "{text}");
        assert!(!text.contains("--vcenter"), "{text}");
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
