//! Where vCenter is and how its certificate is trusted: the vCenter address as admins
//! write it (`vc01`, `vc01:8443`, `https://vc01/sdk`), the SHA-256 thumbprint in the colon
//! form the vSphere Client shows, and the trust policy. Pure: nothing here connects.
use std::fmt;
use std::path::PathBuf;

/// The vSphere Web Services SDK endpoint: always HTTPS, by default on port 443 at `/sdk`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// A DNS name or an IP address; an IPv6 address without its brackets.
    pub host: String,
    pub port: u16,
    /// The SOAP service's path, `/sdk` unless the address names another.
    pub path: String,
}

/// Why an address is not a usable vCenter endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    #[error("the vCenter address is empty")]
    Empty,
    #[error(
        "`{0}`: plain http is refused: the vSphere API carries the login password, so TLS is required (write https:// or just the host name)"
    )]
    PlainHttp(String),
    #[error("`{0}`: unsupported scheme `{1}`: the vSphere API is served over https")]
    Scheme(String, String),
    #[error("`{0}`: no host name")]
    EmptyHost(String),
    #[error("`{0}`: bad port `{1}` (a number from 1 to 65535)")]
    BadPort(String, String),
    #[error("`{0}`: a user name in the address is not used: give it with the user option")]
    UserInAddress(String),
    #[error("`{0}`: a query or fragment in the address is not used")]
    QueryOrFragment(String),
    #[error("`{0}`: `{1}` is not a host name or an IP address")]
    BadHost(String, String),
    #[error("`{0}`: the path `{1}` has characters a URL path cannot hold")]
    BadPath(String, String),
}

impl Endpoint {
    pub const DEFAULT_PORT: u16 = 443;
    pub const DEFAULT_PATH: &'static str = "/sdk";

    /// Reads `vc01`, `vc01:8443`, `https://vc01/sdk`, `https://vc01:8443`,
    /// `[fe80::1]:8443`, `https://[::1]:8443/sdk`; a bare IPv6 address (`fe80::1`) is a host.
    pub fn parse(text: &str) -> Result<Endpoint, EndpointError> {
        let input = text.trim();
        if input.is_empty() {
            return Err(EndpointError::Empty);
        }
        let rest = match input.split_once("://") {
            Some((scheme, rest)) => {
                if scheme.eq_ignore_ascii_case("http") {
                    return Err(EndpointError::PlainHttp(input.into()));
                }
                if !scheme.eq_ignore_ascii_case("https") {
                    return Err(EndpointError::Scheme(input.into(), scheme.into()));
                }
                rest
            }
            None => input,
        };
        if rest.contains(['?', '#']) {
            return Err(EndpointError::QueryOrFragment(input.into()));
        }
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(EndpointError::UserInAddress(input.into()));
        }
        let (host, port) = split_authority(input, authority)?;
        if host.is_empty() {
            return Err(EndpointError::EmptyHost(input.into()));
        }
        let valid_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '%');
        if !host.chars().all(valid_char) || (host.contains(':') && host.parse::<std::net::Ipv6Addr>().is_err()) {
            return Err(EndpointError::BadHost(input.into(), host));
        }
        if !path.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(EndpointError::BadPath(input.into(), path.into()));
        }
        let path = match path.trim_end_matches('/') {
            "" => Self::DEFAULT_PATH.to_string(),
            p => p.to_string(),
        };
        Ok(Endpoint { host, port, path })
    }

    /// The host as it goes in a URL or a `Host` header: IPv6 addresses in brackets.
    pub fn host_for_url(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }

    /// `host:port` as a TCP connection or the `Host` header needs it.
    pub fn authority(&self) -> String {
        if self.port == Self::DEFAULT_PORT {
            self.host_for_url()
        } else {
            format!("{}:{}", self.host_for_url(), self.port)
        }
    }

    /// The short name for messages: the host, and the port when it is not 443.
    pub fn label(&self) -> String {
        if self.port == Self::DEFAULT_PORT {
            self.host.clone()
        } else {
            self.authority()
        }
    }
}

fn split_authority(input: &str, authority: &str) -> Result<(String, u16), EndpointError> {
    let port_of = |p: &str| match p.parse::<u16>() {
        Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(EndpointError::BadPort(input.into(), p.into())),
    };
    if let Some(bracketed) = authority.strip_prefix('[') {
        let Some((host, after)) = bracketed.split_once(']') else {
            return Err(EndpointError::BadHost(input.into(), authority.into()));
        };
        if host.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(EndpointError::BadHost(input.into(), host.into()));
        }
        return match after {
            "" => Ok((host.into(), Endpoint::DEFAULT_PORT)),
            _ => match after.strip_prefix(':') {
                Some(p) => Ok((host.into(), port_of(p)?)),
                None => Err(EndpointError::BadHost(input.into(), authority.into())),
            },
        };
    }
    match authority.matches(':').count() {
        0 => Ok((authority.into(), Endpoint::DEFAULT_PORT)),
        1 => {
            let (host, port) = authority.split_once(':').unwrap_or((authority, ""));
            Ok((host.into(), port_of(port)?))
        }
        // A bare IPv6 address: no port can be told apart from it.
        _ => Ok((authority.into(), Endpoint::DEFAULT_PORT)),
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "https://{}{}", self.authority(), self.path)
    }
}

impl std::str::FromStr for Endpoint {
    type Err = EndpointError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Endpoint::parse(s)
    }
}

/// The SHA-256 digest of a certificate's DER encoding, as the vSphere Client shows it
/// (`AA:BB:…:FF`) and as a front end pins it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Thumbprint(pub [u8; 32]);

/// Why a text is not a thumbprint. The message leaves the text out, since a command-line
/// parser already quotes an option's value before it (`invalid value 'AB:CD' for '<the
/// option>': not a SHA-256 thumbprint…`); where nothing quotes it, [`ThumbprintError::text`]
/// gives it to be named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThumbprintError {
    #[error(
        "a SHA-1 thumbprint: give the certificate's SHA-256 thumbprint (32 bytes, `AA:BB:…`), which the vSphere Client shows next to the SHA-1 one"
    )]
    Sha1(String),
    #[error("not a SHA-256 thumbprint: 32 bytes in hexadecimal, as `AA:BB:…` or without colons")]
    Invalid(String),
}

impl ThumbprintError {
    /// The text refused, as given (trimmed).
    pub fn text(&self) -> &str {
        match self {
            ThumbprintError::Sha1(t) | ThumbprintError::Invalid(t) => t,
        }
    }
}

impl Thumbprint {
    /// Reads the colon form (`AA:BB:…`, either case) or 64 hexadecimal digits.
    pub fn parse(text: &str) -> Result<Thumbprint, ThumbprintError> {
        let t = text.trim();
        let digits: String = if t.contains(':') {
            if !t.split(':').all(|pair| pair.len() == 2) {
                return Err(ThumbprintError::Invalid(t.into()));
            }
            t.split(':').collect()
        } else {
            t.into()
        };
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ThumbprintError::Invalid(t.into()));
        }
        if digits.len() == 40 {
            return Err(ThumbprintError::Sha1(t.into()));
        }
        if digits.len() != 64 {
            return Err(ThumbprintError::Invalid(t.into()));
        }
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte =
                u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).map_err(|_| ThumbprintError::Invalid(t.into()))?;
        }
        Ok(Thumbprint(bytes))
    }

    /// The thumbprint of a certificate given in DER.
    pub fn of_der(der: &[u8]) -> Thumbprint {
        use sha2::Digest as _;
        Thumbprint(sha2::Sha256::digest(der).into())
    }
}

impl fmt::Display for Thumbprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{b:02X}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Thumbprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Thumbprint({self})")
    }
}

impl std::str::FromStr for Thumbprint {
    type Err = ThumbprintError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Thumbprint::parse(s)
    }
}

/// Which certificates vCenter may present. There is no insecure mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// The operating system's roots, and the name in the address must match.
    System,
    /// Only the certificates of this PEM file as roots (the VMCA root, downloadable from
    /// the vCenter landing page); the name must match.
    Ca(PathBuf),
    /// Exactly the leaf certificate with this SHA-256 thumbprint, whatever its name and
    /// issuer, as ssh pins a host key.
    Pinned(Thumbprint),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(s: &str) -> Endpoint {
        Endpoint::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn addresses_admins_write() {
        let cases = [
            ("vc01", "vc01", 443, "/sdk", "https://vc01/sdk", "vc01"),
            ("vc01:8443", "vc01", 8443, "/sdk", "https://vc01:8443/sdk", "vc01:8443"),
            ("https://vc01/sdk", "vc01", 443, "/sdk", "https://vc01/sdk", "vc01"),
            (
                "https://vc01:8443",
                "vc01",
                8443,
                "/sdk",
                "https://vc01:8443/sdk",
                "vc01:8443",
            ),
            (
                "https://vc01:8443/sdk",
                "vc01",
                8443,
                "/sdk",
                "https://vc01:8443/sdk",
                "vc01:8443",
            ),
            (
                "HTTPS://vc01.example.com/",
                "vc01.example.com",
                443,
                "/sdk",
                "https://vc01.example.com/sdk",
                "vc01.example.com",
            ),
            (
                "[fe80::1]:8443",
                "fe80::1",
                8443,
                "/sdk",
                "https://[fe80::1]:8443/sdk",
                "[fe80::1]:8443",
            ),
            (
                "https://[::1]:8443/sdk",
                "::1",
                8443,
                "/sdk",
                "https://[::1]:8443/sdk",
                "[::1]:8443",
            ),
            ("fe80::1", "fe80::1", 443, "/sdk", "https://[fe80::1]/sdk", "fe80::1"),
            (
                "https://10.0.0.5:443/custom/sdk/",
                "10.0.0.5",
                443,
                "/custom/sdk",
                "https://10.0.0.5/custom/sdk",
                "10.0.0.5",
            ),
        ];
        for (input, host, port, path, shown, label) in cases {
            let e = ep(input);
            assert_eq!(
                (e.host.as_str(), e.port, e.path.as_str()),
                (host, port, path),
                "{input}"
            );
            assert_eq!(e.to_string(), shown, "{input}");
            assert_eq!(e.label(), label, "{input}");
        }
    }

    #[test]
    fn refused_addresses_say_why() {
        let err = Endpoint::parse("http://vc01/sdk").unwrap_err();
        assert!(matches!(err, EndpointError::PlainHttp(_)));
        assert!(err.to_string().contains("TLS is required"), "{err}");
        assert_eq!(Endpoint::parse("  "), Err(EndpointError::Empty));
        assert!(matches!(Endpoint::parse("https://"), Err(EndpointError::EmptyHost(_))));
        assert!(matches!(
            Endpoint::parse("https://:8443/sdk"),
            Err(EndpointError::EmptyHost(_))
        ));
        for bad in ["vc01:0", "vc01:65536", "vc01:", "vc01:x", "[::1]:+1", "vc01:-1"] {
            assert!(matches!(Endpoint::parse(bad), Err(EndpointError::BadPort(..))), "{bad}");
        }
        assert!(matches!(Endpoint::parse("ftp://vc01"), Err(EndpointError::Scheme(..))));
        assert!(matches!(
            Endpoint::parse("https://root@vc01"),
            Err(EndpointError::UserInAddress(_))
        ));
        assert!(matches!(
            Endpoint::parse("vc01/sdk?x=1"),
            Err(EndpointError::QueryOrFragment(_))
        ));
        assert!(matches!(Endpoint::parse("[vc01]:443"), Err(EndpointError::BadHost(..))));
        assert!(matches!(Endpoint::parse("vc 01"), Err(EndpointError::BadHost(..))));
        assert!(matches!(Endpoint::parse("[::1"), Err(EndpointError::BadHost(..))));
        assert!(matches!(
            Endpoint::parse("vc01/my sdk"),
            Err(EndpointError::BadPath(..))
        ));
    }

    #[test]
    fn thumbprints_in_both_forms() {
        let colon = "9F:86:D0:81:88:4C:7D:65:9A:2F:EA:A0:C5:5A:D0:15:A3:BF:4F:1B:2B:0B:82:2C:D1:5D:6C:15:B0:F0:0A:08";
        // SHA-256("test"), the digest being checked as well.
        assert_eq!(Thumbprint::of_der(b"test").to_string(), colon);
        let lower = colon.to_lowercase();
        assert_eq!(Thumbprint::parse(&lower).unwrap().to_string(), colon);
        assert_eq!(Thumbprint::parse(&colon.replace(':', "")).unwrap().to_string(), colon);
        let sha1 = "A9:4A:8F:E5:CC:B1:9B:A6:1C:4C:08:73:D3:91:E9:87:98:2F:BB:D3";
        let e = Thumbprint::parse(&format!(" {sha1} ")).unwrap_err();
        assert!(matches!(e, ThumbprintError::Sha1(_)));
        // The message leaves the value to whoever quotes it (clap does): said once.
        assert_eq!(e.text(), sha1);
        assert!(!e.to_string().contains("A9:4A"), "{e}");
        for bad in [
            "",
            "9F:86",
            &colon[..colon.len() - 1],
            &format!("{colon}:00"),
            "9F:86:D0:8",
            "zz",
        ] {
            assert!(
                matches!(Thumbprint::parse(bad), Err(ThumbprintError::Invalid(_))),
                "{bad}"
            );
        }
        // Multi-block input: SHA-256 of the 1,000,000 "a" test vector (FIPS 180-2, appendix B.3).
        let million = vec![b'a'; 1_000_000];
        assert_eq!(
            Thumbprint::of_der(&million).to_string().replace(':', ""),
            "CDC76E5C9914FB9281A1C7E284D73E67F1809A48A497200E046D39CCC7112CD0"
        );
    }

    mod junk {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Anything typed is an endpoint or an error, and a parsed one reads back the same.
            #[test]
            fn endpoints_parse_or_fail_cleanly(s in "\\PC{0,40}") {
                if let Ok(e) = Endpoint::parse(&s) {
                    prop_assert_eq!(Endpoint::parse(&e.to_string()), Ok(e.clone()));
                    prop_assert!(!e.host.is_empty());
                }
            }

            #[test]
            fn url_like_input_never_panics(s in "(https?://)?\\[?[a-f0-9:.]{0,12}\\]?(:[0-9]{0,6})?(/[a-z]{0,4})?") {
                let _ = Endpoint::parse(&s);
            }

            #[test]
            fn thumbprints_parse_or_fail_cleanly(s in "\\PC{0,100}") {
                if let Ok(t) = Thumbprint::parse(&s) {
                    prop_assert_eq!(Thumbprint::parse(&t.to_string()), Ok(t));
                }
            }
        }
    }
}
