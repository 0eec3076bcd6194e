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
pub use super::auth::BasicAuth;
use serde::Deserialize;
use std::collections::BTreeMap;
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
