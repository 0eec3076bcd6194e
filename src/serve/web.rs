//! `--web.config.file`: TLS and basic authentication in the file format of Prometheus'
//! exporter-toolkit ("Web configuration", prometheus/exporter-toolkit `docs/web-configuration.md`),
//! so one file serves all of a site's exporters:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: /etc/pvrdma-doctor/exporter.crt
//!   key_file: /etc/pvrdma-doctor/exporter.key
//!   min_version: TLS12          # or TLS13
//! basic_auth_users:
//!   prometheus: $2y$10$...      # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
//! ```
//!
//! Keys pvrdma-doctor does not implement (client certificates, cipher lists, HTTP/2,
//! response headers) are refused by name rather than silently ignored.
use serde::Deserialize;
use sha2::Digest;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_rustls::rustls;

/// The parsed web configuration.
pub struct WebConfig {
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    pub auth: Option<BasicAuth>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWeb {
    tls_server_config: Option<RawTls>,
    #[serde(default)]
    basic_auth_users: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTls {
    cert_file: PathBuf,
    key_file: PathBuf,
    min_version: Option<String>,
    max_version: Option<String>,
    /// Only `NoClientCert` (the default) is supported.
    client_auth_type: Option<String>,
}

impl WebConfig {
    /// Reads and checks the file (certificate and key included).
    pub fn load(path: &Path) -> anyhow::Result<WebConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read the web configuration {}: {e}", path.display()))?;
        let raw: RawWeb = if text.trim().is_empty() {
            RawWeb::default()
        } else {
            serde_norway::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        };
        let tls = raw
            .tls_server_config
            .map(|t| tls_acceptor(&t))
            .transpose()
            .map_err(|e| anyhow::anyhow!("{}: tls_server_config: {e:#}", path.display()))?;
        let auth = if raw.basic_auth_users.is_empty() {
            None
        } else {
            for (user, hash) in &raw.basic_auth_users {
                anyhow::ensure!(
                    !user.contains(':'),
                    "{}: basic_auth_users: a user name cannot hold ':'",
                    path.display()
                );
                hash.parse::<bcrypt::HashParts>().map_err(|e| {
                    anyhow::anyhow!("{}: basic_auth_users: {user}: not a bcrypt hash ({e})", path.display())
                })?;
            }
            Some(BasicAuth::new(raw.basic_auth_users))
        };
        Ok(WebConfig { tls, auth })
    }
}

fn tls_version(text: &str) -> anyhow::Result<&'static rustls::SupportedProtocolVersion> {
    match text {
        "TLS12" => Ok(&rustls::version::TLS12),
        "TLS13" => Ok(&rustls::version::TLS13),
        other => anyhow::bail!("{other:?}: pvrdma-doctor speaks TLS12 and TLS13"),
    }
}

fn tls_acceptor(t: &RawTls) -> anyhow::Result<tokio_rustls::TlsAcceptor> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    if let Some(kind) = t.client_auth_type.as_deref() {
        anyhow::ensure!(
            kind == "NoClientCert",
            "client_auth_type {kind:?}: pvrdma-doctor does not verify client certificates; use basic_auth_users"
        );
    }
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&t.cert_file)
        .map_err(|e| anyhow::anyhow!("cert_file {}: {e}", t.cert_file.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("cert_file {}: {e}", t.cert_file.display()))?;
    anyhow::ensure!(
        !certs.is_empty(),
        "cert_file {}: no certificate in it",
        t.cert_file.display()
    );
    let key = PrivateKeyDer::from_pem_file(&t.key_file)
        .map_err(|e| anyhow::anyhow!("key_file {}: {e}", t.key_file.display()))?;
    let min = t.min_version.as_deref().map(tls_version).transpose()?;
    let max = t.max_version.as_deref().map(tls_version).transpose()?;
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = [&rustls::version::TLS12, &rustls::version::TLS13]
        .into_iter()
        .filter(|v| {
            let n = |x: &rustls::SupportedProtocolVersion| {
                if x.version == rustls::ProtocolVersion::TLSv1_2 {
                    12
                } else {
                    13
                }
            };
            min.is_none_or(|m| n(v) >= n(m)) && max.is_none_or(|m| n(v) <= n(m))
        })
        .collect();
    anyhow::ensure!(!versions.is_empty(), "min_version is above max_version");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| anyhow::anyhow!("the key does not fit the certificate: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// Users and their bcrypt hashes. A bcrypt check costs tens of milliseconds of CPU on
/// purpose, so checks run off the server thread, two at a time, and a user's correct
/// password is remembered (as a SHA-256 digest) to spare every later scrape the cost, as
/// the exporter-toolkit does.
///
/// A failed check takes as long whoever is named, so the time of a 401 does not tell
/// which users exist: an unknown user is checked against a hash made at load time with
/// the highest cost among the configured users (the same work as the most expensive
/// user), and a wrong password of a user whose hash is cheaper is answered no sooner
/// than a check at the highest cost takes (a moving average of those checks).
pub struct BasicAuth {
    users: BTreeMap<String, String>,
    verified: RefCell<HashSet<[u8; 32]>>,
    gate: Arc<tokio::sync::Semaphore>,
    /// A hash of a random password at the highest cost among the users.
    dummy: String,
    max_cost: u32,
    /// How long a check at `max_cost` takes (a moving average).
    slowest: std::cell::Cell<std::time::Duration>,
}

/// Remembered good passwords at most (a different password per scrape cannot grow
/// memory without bound).
const VERIFIED_CAP: usize = 256;

/// A hash's bcrypt cost (validated at load).
fn cost_of(hash: &str) -> u32 {
    hash.parse::<bcrypt::HashParts>()
        .map_or(bcrypt::DEFAULT_COST, |p| p.get_cost())
}

impl BasicAuth {
    fn new(users: BTreeMap<String, String>) -> Self {
        let max_cost = users.values().map(|h| cost_of(h)).max().unwrap_or(bcrypt::DEFAULT_COST);
        let secret: [u8; 16] = rand::random();
        let start = std::time::Instant::now();
        let dummy = bcrypt::hash(data_encoding::HEXLOWER.encode(&secret), max_cost).unwrap_or_default();
        let took = start.elapsed();
        BasicAuth {
            users,
            verified: RefCell::new(HashSet::new()),
            gate: Arc::new(tokio::sync::Semaphore::new(2)),
            dummy,
            max_cost,
            slowest: std::cell::Cell::new(took),
        }
    }

    /// Whether an `Authorization` header value names a user with the right password.
    pub async fn allows(&self, header: Option<&[u8]>) -> bool {
        let Some((user, password)) = header.and_then(decode_basic) else {
            return false;
        };
        let hash = self.users.get(&user).cloned();
        let mut digest = sha2::Sha256::new();
        digest.update(user.as_bytes());
        digest.update([0]);
        digest.update(password.as_bytes());
        digest.update([0]);
        digest.update(hash.as_deref().unwrap_or("").as_bytes());
        let key: [u8; 32] = digest.finalize().into();
        if hash.is_some() && self.verified.borrow().contains(&key) {
            return true;
        }
        let Ok(_permit) = self.gate.clone().acquire_owned().await else {
            return false;
        };
        let known = hash.is_some();
        let against = hash.unwrap_or_else(|| self.dummy.clone());
        let full_cost = cost_of(&against) >= self.max_cost;
        let start = tokio::time::Instant::now();
        let ok = tokio::task::spawn_blocking(move || bcrypt::verify(password, &against).unwrap_or(false))
            .await
            .unwrap_or(false)
            && known;
        if full_cost {
            // A moving average, so one check slowed by load does not set the pace.
            let took = start.elapsed();
            self.slowest.set((self.slowest.get() * 7 + took) / 8);
        }
        if ok {
            let mut v = self.verified.borrow_mut();
            if v.len() >= VERIFIED_CAP {
                v.clear();
            }
            v.insert(key);
        } else if !full_cost {
            tokio::time::sleep_until(start + self.slowest.get()).await;
        }
        ok
    }
}

/// `Basic base64(user:password)` → (user, password).
fn decode_basic(value: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(value).ok()?.trim();
    let (scheme, encoded) = text.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let bytes = data_encoding::BASE64.decode(encoded.trim().as_bytes()).ok()?;
    let pair = String::from_utf8(bytes).ok()?;
    let (u, p) = pair.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_decoded() {
        assert_eq!(
            decode_basic(b"Basic cHJvbTpzM2NyZXQ6eA=="),
            Some(("prom".into(), "s3cret:x".into()))
        );
        assert_eq!(decode_basic(b"Bearer abc"), None);
        assert_eq!(decode_basic(b"Basic !!!"), None);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn only_the_right_password_of_a_known_user_passes() {
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let auth = BasicAuth::new([("prom".to_string(), hash)].into_iter().collect());
        let header =
            |u: &str, p: &str| format!("Basic {}", data_encoding::BASE64.encode(format!("{u}:{p}").as_bytes()));
        assert!(auth.allows(Some(header("prom", "s3cret").as_bytes())).await);
        assert!(
            auth.allows(Some(header("prom", "s3cret").as_bytes())).await,
            "remembered"
        );
        assert!(!auth.allows(Some(header("prom", "wrong").as_bytes())).await);
        assert!(!auth.allows(Some(header("other", "s3cret").as_bytes())).await);
        assert!(!auth.allows(None).await);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_unknown_user_is_checked_at_the_highest_cost_among_the_users() {
        // `alice` sorts first and is the cheaper: the rule this replaced checked unknown
        // users against her hash, so a 401 came faster for a name that does not exist.
        let users = [
            ("alice".to_string(), bcrypt::hash("a", 4).unwrap()),
            ("prom".to_string(), bcrypt::hash("p", 6).unwrap()),
        ];
        let auth = BasicAuth::new(users.into_iter().collect());
        assert_eq!(auth.max_cost, 6);
        assert_eq!(
            cost_of(&auth.dummy),
            6,
            "the stand-in hash costs what the dearest user costs"
        );
        assert!(!auth.allows(Some(b"Basic bWFsbG9yeTpw")).await, "mallory:p");
        assert!(auth.allows(Some(b"Basic cHJvbTpw")).await, "prom:p");
    }
}
