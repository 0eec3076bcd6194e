//! What can go wrong reading vCenter, typed where the caller acts on it (trust a
//! certificate, fix a password, grant a privilege, retry later), with the facts a front
//! end words its advice from. Every error names the endpoint; none ever carries the
//! password. A remedy that points to a setting names it through the front end's
//! [`Vocabulary`] (its command-line options, its configuration keys); `Display` uses
//! neutral words.
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::endpoint::Thumbprint;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// DNS failure, connection refused, unreachable network.
    // The cause is in the message, not also a `source`: error reporters that print the
    // chain (`{:#}`) would say it twice.
    #[error("cannot connect to vCenter {endpoint}: {cause}{}", connect_hint(cause))]
    Connect { endpoint: String, cause: std::io::Error },
    /// No answer within the request limit (`limit`), in `stage`.
    #[error("{}", timeout(endpoint, *stage, *limit, &Vocabulary::NEUTRAL))]
    Timeout {
        endpoint: String,
        stage: Stage,
        limit: Duration,
    },
    /// The certificate vCenter presented (`thumbprint`) is not trusted, and why.
    // The setting that pins the certificate comes last and whole (see [`Error::pin`]): a
    // front end can set it on a line of its own, which a terminal copy keeps in one piece.
    #[error("{}", unknown_certificate(endpoint, problem, thumbprint, &Vocabulary::NEUTRAL))]
    UnknownCertificate {
        endpoint: String,
        thumbprint: Thumbprint,
        problem: CertificateProblem,
    },
    /// vCenter presented `got`, not the pinned `expected`.
    #[error("{}", thumbprint_mismatch(endpoint, got, &Vocabulary::NEUTRAL))]
    ThumbprintMismatch {
        endpoint: String,
        expected: Thumbprint,
        got: Thumbprint,
    },
    /// The port answered plain HTTP to the TLS handshake.
    #[error(
        "vCenter {endpoint}: this port speaks HTTP, not HTTPS; vCenter serves its API over HTTPS (port 443 unless \
         the address names another): check the port"
    )]
    PlainHttp { endpoint: String },
    /// The server speaks HTTPS but not as the vSphere API: `url` answered `status` with
    /// this (`content_type`, the start of its body).
    #[error(
        "vCenter {endpoint}: this is not a vSphere API endpoint ({url} answered HTTP {status}{}: {body_excerpt}); \
         check that the address and port are vCenter's or an ESXi host's",
        content_type.as_deref().map(|t| format!(", {t}")).unwrap_or_default()
    )]
    NotVsphere {
        endpoint: String,
        url: String,
        status: u16,
        content_type: Option<String>,
        body_excerpt: String,
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

/// Where a request stopped waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The TCP connection.
    Connect,
    /// The TLS handshake.
    Handshake,
    /// The answer to this API method (`RetrievePropertiesEx`).
    Call(&'static str),
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Connect => "connect",
            Stage::Handshake => "TLS handshake",
            Stage::Call(method) => method,
        })
    }
}

/// Why the certificate vCenter presented was refused, in the words of someone who
/// manages vCenter rather than the TLS library's names (`UnknownIssuer`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertificateProblem {
    /// No trusted CA signed it: the CA file given (`ca_file`), or, without one, the
    /// operating system's roots.
    UnknownIssuer {
        ca_file: Option<PathBuf>,
    },
    /// It is issued for other names than the address given: `names`, when it says.
    WrongName {
        names: Vec<String>,
    },
    /// It is a CA's certificate, not a server's, and not itself one of the CA file's
    /// (`ca_file`; `None`: the system's roots were used).
    CaCertificate {
        ca_file: Option<PathBuf>,
    },
    /// It is one of the CA file's certificates, taken as a trust anchor as it is (a
    /// self-signed vCenter or ESXi certificate), but `problem` (its dates, its names)
    /// keeps it from being this server's.
    Anchor {
        ca_file: PathBuf,
        problem: Box<CertificateProblem>,
    },
    Expired,
    NotValidYet,
    Revoked,
    BadSignature,
    /// Anything else, as the TLS library says it.
    Other(String),
}

impl fmt::Display for CertificateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CertificateProblem::UnknownIssuer { ca_file: Some(path) } => {
                write!(f, "it is not signed by the CA in {}", path.display())
            }
            CertificateProblem::UnknownIssuer { ca_file: None } => {
                f.write_str("it is signed by a CA this system does not trust")
            }
            CertificateProblem::WrongName { names } if !names.is_empty() => write!(
                f,
                "it is not issued for the address given: it names {}; give one of those in the vCenter address",
                names.join(", ")
            ),
            CertificateProblem::WrongName { .. } => f.write_str("it is not issued for the address given"),
            CertificateProblem::CaCertificate { ca_file: Some(path) } => write!(
                f,
                "it is a CA's certificate, not a server's, and not the one in {}",
                path.display()
            ),
            CertificateProblem::CaCertificate { ca_file: None } => {
                f.write_str("it is a CA's certificate, not a server's")
            }
            CertificateProblem::Anchor { ca_file, problem } => {
                write!(f, "it is the certificate in {}, but {problem}", ca_file.display())
            }
            CertificateProblem::Expired => f.write_str("it has expired: renew vCenter's certificate"),
            CertificateProblem::NotValidYet => {
                f.write_str("it is not valid yet: check this machine's clock and vCenter's")
            }
            CertificateProblem::Revoked => f.write_str("it is revoked"),
            CertificateProblem::BadSignature => f.write_str("its signature does not verify"),
            CertificateProblem::Other(text) => f.write_str(text),
        }
    }
}

/// How a front end names the settings a remedy points to, as its users write them: the
/// command line's options, a configuration file's keys. [`Error::worded`] and
/// [`crate::SelectError::worded`] say a refusal with them.
#[derive(Debug, Clone, Copy)]
pub struct Vocabulary {
    /// Where the CA that signs vCenter's certificate is given.
    pub ca_file: &'static str,
    /// The setting that pins a certificate's thumbprint, by its name alone.
    pub pin_setting: &'static str,
    /// That setting given this thumbprint, whole, as it is written.
    pub pin: fn(&Thumbprint) -> String,
    /// The setting of the limit on each request.
    pub timeout: &'static str,
    /// The setting that names this cluster (its inventory path), as it is written.
    pub cluster: fn(&str) -> String,
}

impl Vocabulary {
    /// No front end's names: what `Display` says.
    pub const NEUTRAL: Vocabulary = Vocabulary {
        ca_file: "a CA file",
        pin_setting: "a SHA-256 thumbprint",
        pin: |t| t.to_string(),
        timeout: "the request timeout",
        cluster: |path| format!("`{path}`"),
    };
}

/// A request that got no answer in time. No connection or TLS session in time is the
/// address's or the network's doing; a call that went unanswered is vCenter's (a loaded
/// appliance, a large inventory): only then is more time the remedy.
fn timeout(endpoint: &str, stage: Stage, limit: Duration, words: &Vocabulary) -> String {
    let limit = match limit.subsec_millis() {
        0 => format!("{}s", limit.as_secs()),
        _ => format!("{}ms", limit.as_millis()),
    };
    match stage {
        Stage::Connect | Stage::Handshake => format!(
            "vCenter {endpoint} did not answer in time ({stage}, within {limit}, the limit {} sets): check that the \
             address and port are vCenter's (its API is served over HTTPS, port 443 unless the address names \
             another) and that no firewall drops the traffic",
            words.timeout
        ),
        Stage::Call(_) => format!(
            "vCenter {endpoint} did not answer {stage} within {limit}, the limit {} sets: a loaded vCenter or a \
             large inventory can take longer; give it more time with {}",
            words.timeout, words.timeout
        ),
    }
}

fn unknown_certificate(
    endpoint: &str,
    problem: &CertificateProblem,
    thumbprint: &Thumbprint,
    words: &Vocabulary,
) -> String {
    format!(
        "the certificate of vCenter {endpoint} is not trusted ({problem}). If it is vCenter's certificate (compare its \
         SHA-256 thumbprint, at the end of this message, with the one the vSphere Client or the appliance shows), \
         give the CA that signed it (the VMCA root from the vCenter landing page) with {}, or pin its SHA-256 \
         thumbprint: {}",
        words.ca_file,
        (words.pin)(thumbprint)
    )
}

fn thumbprint_mismatch(endpoint: &str, got: &Thumbprint, words: &Vocabulary) -> String {
    format!(
        "the certificate of vCenter {endpoint} is not the one pinned with {}. If vCenter's certificate was renewed, \
         compare its SHA-256 thumbprint, at the end of this message, with the one the vSphere Client or the \
         appliance shows, and pin it: {}",
        words.pin_setting,
        (words.pin)(got)
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
    /// The message with its remedies in the front end's `words`: a refused certificate
    /// names where a CA is given and ends with the setting that pins it, an unanswered
    /// call names the setting of the limit. The other errors name no setting.
    pub fn worded(&self, words: &Vocabulary) -> String {
        match self {
            Error::Timeout { endpoint, stage, limit } => timeout(endpoint, *stage, *limit, words),
            Error::UnknownCertificate {
                endpoint,
                thumbprint,
                problem,
            } => unknown_certificate(endpoint, problem, thumbprint, words),
            Error::ThumbprintMismatch { endpoint, got, .. } => thumbprint_mismatch(endpoint, got, words),
            other => other.to_string(),
        }
    }

    /// The certificate vCenter presented, when it was refused.
    pub fn presented(&self) -> Option<&Thumbprint> {
        match self {
            Error::UnknownCertificate { thumbprint, .. } | Error::ThumbprintMismatch { got: thumbprint, .. } => {
                Some(thumbprint)
            }
            _ => None,
        }
    }

    /// The setting that pins the certificate vCenter presented, in the front end's
    /// `words` (an option and the thumbprint on a command line), for the refusals that
    /// end with it: a terminal shows it on a line of its own, unbroken, to be checked and
    /// copied.
    pub fn pin(&self, words: &Vocabulary) -> Option<String> {
        self.presented().map(words.pin)
    }

    /// The endpoint label every variant but `CaFile` carries.
    pub fn endpoint(&self) -> Option<&str> {
        match self {
            Error::Connect { endpoint, .. }
            | Error::Timeout { endpoint, .. }
            | Error::UnknownCertificate { endpoint, .. }
            | Error::ThumbprintMismatch { endpoint, .. }
            | Error::Tls { endpoint, .. }
            | Error::PlainHttp { endpoint }
            | Error::NotVsphere { endpoint, .. }
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

    /// A front end's names, marked so a test sees where each one lands.
    const WORDS: Vocabulary = Vocabulary {
        ca_file: "<ca file>",
        pin_setting: "<pin setting>",
        pin: |t| format!("<pin {t}>"),
        timeout: "<timeout>",
        cluster: |path| format!("<cluster {path}>"),
    };

    fn unknown(problem: CertificateProblem) -> Error {
        Error::UnknownCertificate {
            endpoint: "vc01".into(),
            thumbprint: Thumbprint([0xab; 32]),
            problem,
        }
    }

    #[test]
    fn an_unknown_certificate_names_its_thumbprint_and_where_a_ca_is_given() {
        let tp = Thumbprint([0xab; 32]);
        let e = unknown(CertificateProblem::UnknownIssuer { ca_file: None });
        let colon = tp.to_string();
        assert!(colon.starts_with("AB:AB:") && colon.len() == 32 * 3 - 1);
        let text = e.worded(&WORDS);
        assert!(text.ends_with(&format!("thumbprint: <pin {colon}>")), "{text}");
        assert!(text.contains("with <ca file>, or pin") && text.contains("vc01") && text.contains("not trusted"));
        assert!(
            text.contains("(it is signed by a CA this system does not trust)"),
            "{text}"
        );
        let neutral = e.to_string();
        assert_eq!(neutral, e.worded(&Vocabulary::NEUTRAL));
        assert!(
            neutral.ends_with(&format!("with a CA file, or pin its SHA-256 thumbprint: {colon}")),
            "{neutral}"
        );
    }

    #[test]
    fn a_certificate_refusal_ends_with_the_setting_that_pins_it_whole() {
        let (expected, got) = (Thumbprint([0x11; 32]), Thumbprint([0xab; 32]));
        let refusals = [
            unknown(CertificateProblem::UnknownIssuer { ca_file: None }),
            Error::ThumbprintMismatch {
                endpoint: "vc01".into(),
                expected,
                got,
            },
        ];
        for e in refusals {
            assert_eq!(e.presented(), Some(&got));
            let pin = e.pin(&WORDS).expect("a refused certificate has a pin");
            assert_eq!(pin, format!("<pin {got}>"));
            for (text, pin) in [(e.worded(&WORDS), pin), (e.to_string(), got.to_string())] {
                assert!(text.ends_with(&format!(": {pin}")), "{text}");
                // The thumbprint is said once, in the setting: a wrapped message never
                // breaks a second copy of it.
                assert_eq!(text.matches(&got.to_string()).count(), 1, "{text}");
                assert!(!text.contains(&expected.to_string()), "{text}");
                assert!(text.contains("vc01") && !text.contains('\n'), "{text}");
            }
        }
        let mismatch = Error::ThumbprintMismatch {
            endpoint: "vc01".into(),
            expected,
            got,
        };
        assert!(mismatch
            .worded(&WORDS)
            .contains("not the one pinned with <pin setting>."));
        let other = Error::Cancelled {
            endpoint: "vc01".into(),
        };
        assert_eq!((other.pin(&WORDS), other.presented()), (None, None));
        assert_eq!(other.worded(&WORDS), other.to_string());
    }

    #[test]
    fn a_refused_certificate_is_explained_without_the_tls_librarys_names() {
        let system = unknown(CertificateProblem::UnknownIssuer { ca_file: None }).to_string();
        assert!(system.contains("a CA this system does not trust"), "{system}");
        // With a CA file the refusal names that file: "give the CA" alone would send the
        // admin back to the file already given.
        let given = CertificateProblem::UnknownIssuer {
            ca_file: Some("/etc/pvrdma-doctor/vcenter.pem".into()),
        };
        assert_eq!(
            given.to_string(),
            "it is not signed by the CA in /etc/pvrdma-doctor/vcenter.pem"
        );
        let names = CertificateProblem::WrongName {
            names: vec!["vc01.lab".into(), "10.0.0.5".into()],
        };
        assert_eq!(
            names.to_string(),
            "it is not issued for the address given: it names vc01.lab, 10.0.0.5; give one of those in the vCenter address"
        );
        assert!(CertificateProblem::Expired.to_string().contains("expired"));
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
            stage: Stage::Handshake,
            limit: Duration::from_secs(30),
        };
        let text = late.worded(&WORDS);
        assert!(
            text.contains("(TLS handshake, within 30s, the limit <timeout> sets)"),
            "{text}"
        );
        assert!(text.contains("port 443"), "{text}");
        let http = Error::PlainHttp {
            endpoint: "vc01:80".into(),
        };
        assert!(
            http.to_string()
                .starts_with("vCenter vc01:80: this port speaks HTTP, not HTTPS;"),
            "{http}"
        );
        let web = Error::NotVsphere {
            endpoint: "vc01".into(),
            url: "https://vc01/sdk/vimServiceVersions.xml".into(),
            status: 200,
            content_type: Some("text/html".into()),
            body_excerpt: "<HTML><BODY>".into(),
        };
        assert!(
            web.to_string().starts_with(
                "vCenter vc01: this is not a vSphere API endpoint (https://vc01/sdk/vimServiceVersions.xml answered \
                 HTTP 200, text/html: <HTML><BODY>);"
            ),
            "{web}"
        );
    }

    #[test]
    fn an_unanswered_call_names_the_limit_and_where_it_is_raised() {
        let slow = Error::Timeout {
            endpoint: "vc01".into(),
            stage: Stage::Call("RetrievePropertiesEx"),
            limit: Duration::from_millis(1500),
        };
        let text = slow.worded(&WORDS);
        assert!(
            text.starts_with(
                "vCenter vc01 did not answer RetrievePropertiesEx within 1500ms, the limit <timeout> sets"
            ),
            "{text}"
        );
        assert!(text.ends_with("give it more time with <timeout>"), "{text}");
        assert!(!text.contains("port 443"), "{text}");
        assert!(
            slow.to_string().ends_with("give it more time with the request timeout"),
            "{slow}"
        );
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
