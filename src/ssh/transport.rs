//! The transport half of a connection: algorithm preferences that work against ESXi's
//! FIPS-mode OpenSSH, name resolution, TCP connect, the handshake and the host-key check.
//! Every failure names the hop and says what to do.
use crate::ssh::endpoint::{Endpoint, HostKeyPolicy};
use crate::ssh::error::{SshError, SshErrorKind};
use crate::ssh::known_hosts::{self, HostKeyStatus};
use russh::client::{self, Handle};
use russh::keys::{Algorithm, EcdsaCurve, HashAlg, PublicKeyOrCertificate};
use russh::{cipher, kex, mac, Preferred};
use std::borrow::Cow;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// ESXi 8 offers only NIST ECDH, the DH groups and group-exchange. NIST first so a
/// handshake never falls to group-exchange, which russh computes slowly (seconds).
const KEX_ORDER: &[kex::Name] = &[
    kex::ECDH_SHA2_NISTP256,
    kex::ECDH_SHA2_NISTP384,
    kex::ECDH_SHA2_NISTP521,
    kex::DH_G14_SHA256,
    kex::DH_G16_SHA512,
    kex::DH_G18_SHA512,
    // Jump hosts are often ordinary Linux servers.
    kex::CURVE25519,
    kex::CURVE25519_PRE_RFC_8731,
    kex::DH_GEX_SHA256,
    kex::EXTENSION_SUPPORT_AS_CLIENT,
    kex::EXTENSION_OPENSSH_STRICT_KEX_AS_CLIENT,
];

/// ESXi's cipher list (AES only), then chacha for non-ESXi jump hosts.
const CIPHER_ORDER: &[cipher::Name] = &[
    cipher::AES_256_GCM,
    cipher::AES_128_GCM,
    cipher::AES_256_CTR,
    cipher::AES_192_CTR,
    cipher::AES_128_CTR,
    cipher::CHACHA20_POLY1305,
];

/// ESXi offers no etm MACs; they stay acceptable for other servers.
const MAC_ORDER: &[mac::Name] = &[
    mac::HMAC_SHA256,
    mac::HMAC_SHA512,
    mac::HMAC_SHA256_ETM,
    mac::HMAC_SHA512_ETM,
];

fn default_host_key_order() -> Vec<Algorithm> {
    vec![
        Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP256,
        },
        Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP384,
        },
        Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP521,
        },
        Algorithm::Rsa {
            hash: Some(HashAlg::Sha512),
        },
        Algorithm::Rsa {
            hash: Some(HashAlg::Sha256),
        },
        Algorithm::Ed25519,
    ]
}

/// The algorithm preferences for one host: key types already in known_hosts come first so
/// a host recorded with its RSA key is verified rather than reported unknown.
fn preferred_for(known: &[Algorithm]) -> Preferred {
    let mut keys: Vec<Algorithm> = Vec::new();
    for k in known {
        match k {
            Algorithm::Rsa { .. } => {
                for h in [Some(HashAlg::Sha512), Some(HashAlg::Sha256)] {
                    let a = Algorithm::Rsa { hash: h };
                    if !keys.contains(&a) {
                        keys.push(a);
                    }
                }
            }
            other => {
                if !keys.contains(other) {
                    keys.push(other.clone());
                }
            }
        }
    }
    for a in default_host_key_order() {
        if !keys.contains(&a) {
            keys.push(a);
        }
    }
    Preferred {
        kex: Cow::Borrowed(KEX_ORDER),
        key: Cow::Owned(keys),
        host_key_certificates: Cow::Borrowed(&[]),
        cipher: Cow::Borrowed(CIPHER_ORDER),
        mac: Cow::Borrowed(MAC_ORDER),
        compression: Cow::Borrowed(&[russh::compression::NONE]),
    }
}

/// What the host-key check saw, kept so the error message can say more than russh's
/// "Unknown server key".
#[derive(Debug, Clone)]
enum KeyVerdict {
    Unknown {
        fingerprint: String,
    },
    Changed {
        fingerprint: String,
        at: known_hosts::Location,
    },
    Revoked {
        fingerprint: String,
        at: known_hosts::Location,
    },
    LearnFailed {
        path: PathBuf,
        error: String,
    },
    /// accept-new with `UserKnownHostsFile none`: no file to record the key in.
    NowhereToLearn {
        fingerprint: String,
    },
}

/// The russh callbacks for one connection.
pub(crate) struct ClientHandler {
    hostname: String,
    port: u16,
    policy: HostKeyPolicy,
    /// This host's known_hosts lines, read once before the handshake.
    entries: Arc<known_hosts::HostEntries>,
    verdict: Arc<Mutex<Option<KeyVerdict>>>,
    banner: Arc<Mutex<Option<String>>>,
}

impl client::Handler for ClientHandler {
    type Error = russh::Error;

    async fn auth_banner(&mut self, banner: &str, _session: &mut client::Session) -> Result<(), Self::Error> {
        if let Ok(mut b) = self.banner.lock() {
            *b = Some(banner.to_string());
        }
        Ok(())
    }

    async fn check_server_key(&mut self, server_key: &PublicKeyOrCertificate) -> Result<bool, Self::Error> {
        if self.policy.insecure {
            return Ok(true);
        }
        let key = match server_key {
            PublicKeyOrCertificate::PublicKey { key, .. } => key.clone(),
            // Host certificates are not requested (Preferred.host_key_certificates is
            // empty); judge the certified key like a plain one if one arrives anyway.
            PublicKeyOrCertificate::Certificate(c) => russh::keys::PublicKey::new(c.public_key().clone(), ""),
        };
        let fingerprint = known_hosts::fingerprint(&key);
        let (name, port) = self.policy.key_name(&self.hostname, self.port);
        let status = self.entries.check(&key);
        let verdict = match status {
            HostKeyStatus::Known(_) => return Ok(true),
            HostKeyStatus::Changed(at) => KeyVerdict::Changed { fingerprint, at },
            HostKeyStatus::Revoked(at) => KeyVerdict::Revoked { fingerprint, at },
            HostKeyStatus::Unknown if self.policy.accept_new => {
                // Accepting without recording would trust every key on every run.
                let Some(path) = self.policy.learn_to.clone() else {
                    if let Ok(mut v) = self.verdict.lock() {
                        *v = Some(KeyVerdict::NowhereToLearn { fingerprint });
                    }
                    return Ok(false);
                };
                // File I/O under a process-wide lock: keep it off the async workers.
                let (name, learn_path) = (name.to_string(), path.clone());
                let hash = self.policy.hash_known_hosts;
                let learned =
                    tokio::task::spawn_blocking(move || known_hosts::learn(&learn_path, &name, port, &key, hash)).await;
                match learned {
                    Ok(Ok(())) => return Ok(true),
                    Ok(Err(e)) => KeyVerdict::LearnFailed {
                        path,
                        error: e.to_string(),
                    },
                    Err(e) => KeyVerdict::LearnFailed {
                        path,
                        error: e.to_string(),
                    },
                }
            }
            HostKeyStatus::Unknown => KeyVerdict::Unknown { fingerprint },
        };
        if let Ok(mut v) = self.verdict.lock() {
            *v = Some(verdict);
        }
        Ok(false)
    }
}

pub(crate) async fn resolve(hop: &Endpoint) -> Result<Vec<std::net::SocketAddr>, SshError> {
    match tokio::net::lookup_host((hop.hostname.as_str(), hop.port)).await {
        Ok(a) => {
            let v: Vec<_> = a.collect();
            if v.is_empty() {
                Err(dns_failure(hop, "no addresses"))
            } else {
                Ok(v)
            }
        }
        Err(e) => Err(dns_failure(hop, &e.to_string())),
    }
}

fn dns_failure(hop: &Endpoint, why: &str) -> SshError {
    SshError::at(
        SshErrorKind::Dns,
        hop,
        format!(
            "cannot resolve {:?} ({why}); check the host name, or map it with HostName in {}",
            hop.hostname, hop.config_source
        ),
    )
}

pub(crate) async fn tcp_connect(
    hop: &Endpoint,
    addrs: &[std::net::SocketAddr],
) -> Result<tokio::net::TcpStream, SshError> {
    let mut last = None;
    for a in addrs {
        match tokio::net::TcpStream::connect(a).await {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => last = Some((a, e)),
        }
    }
    let (addr, e) = match last {
        Some((a, e)) => (a.to_string(), e.to_string()),
        None => (hop.hostname.clone(), "no address".to_string()),
    };
    Err(SshError::at(
        SshErrorKind::Unreachable,
        hop,
        format!(
            "cannot connect to {addr} ({e}); check that the host is up and that SSH is enabled (ESXi host client: Host > Manage > Services > TSM-SSH > Start; vCenter: Host > Configure > Services > SSH > Start)"
        ),
    ))
}

/// What the server said about itself: its identification line and its pre-auth banner.
/// Messages use it to tell whether the server looks like ESXi before guessing at
/// ESXi-specific causes.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerInfo {
    version: Arc<Mutex<Vec<u8>>>,
    banner: Arc<Mutex<Option<String>>>,
}

impl ServerInfo {
    /// The `SSH-2.0-...` line, once received.
    fn version(&self) -> Option<String> {
        let raw = self.version.lock().ok()?.clone();
        String::from_utf8_lossy(&raw)
            .lines()
            .find(|l| l.starts_with("SSH-"))
            .map(|l| l.trim_end().to_string())
    }

    /// The `Banner` text the server sent before authentication.
    fn banner(&self) -> Option<String> {
        self.banner.lock().ok()?.clone()
    }

    /// True when the identification line or the banner names VMware or ESXi. ESXi's
    /// OpenSSH identifies itself like any OpenSSH, so this is a hint, never a proof.
    pub(crate) fn looks_like_esxi(&self) -> bool {
        let text = format!(
            "{} {}",
            self.version().unwrap_or_default(),
            self.banner().unwrap_or_default()
        )
        .to_ascii_lowercase();
        text.contains("vmware") || text.contains("esxi")
    }
}

/// How much of the stream start is kept while looking for the identification line
/// (RFC 4253 allows other lines before it).
const VERSION_SCAN: usize = 8192;

/// Bytes read from the socket at once: a few of the server's packets (answers are sent
/// in pieces of a few KiB).
const READ_BUFFER: usize = 8 * 1024;

/// Passes a stream through, keeping a copy of what the server sends until its
/// identification line is complete (russh keeps that line private).
struct Recording<S> {
    inner: S,
    seen: Arc<Mutex<Vec<u8>>>,
    done: bool,
}

impl<S: AsyncRead + Unpin> AsyncRead for Recording<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if !self.done {
            let new = buf.filled().get(before..).unwrap_or_default().to_vec();
            let done = match self.seen.lock() {
                Ok(mut seen) => {
                    seen.extend_from_slice(&new);
                    let complete = seen
                        .split(|b| *b == b'\n')
                        .rev()
                        .skip(1)
                        .any(|line| line.starts_with(b"SSH-"));
                    complete || seen.len() >= VERSION_SCAN
                }
                Err(_) => true,
            };
            self.done = done;
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Recording<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Runs the SSH handshake on `stream` and checks the host key against the hop's policy.
pub(crate) async fn handshake<S>(hop: &Endpoint, stream: S) -> Result<(Handle<ClientHandler>, ServerInfo), SshError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (name, port) = hop.policy.key_name(&hop.hostname, hop.port);
    let (files, name) = (hop.policy.known_hosts.clone(), name.to_string());
    // Read once per connection, off the async workers; an unreadable file holds no keys.
    let entries = if hop.policy.insecure {
        known_hosts::HostEntries::default()
    } else {
        tokio::task::spawn_blocking(move || known_hosts::HostEntries::load(&files, &name, port))
            .await
            .unwrap_or_default()
    };
    let config = client::Config {
        preferred: preferred_for(&entries.algorithms()),
        // Keepalives detect a host that vanished mid-run; the command timeout is separate.
        keepalive_interval: Some(Duration::from_secs(15)),
        keepalive_max: 3,
        nodelay: true,
        // Messages queued per channel before the connection waits for us (russh's default
        // is 100 packets of 32 KiB): bounds what a flooding host holds in client memory
        // beyond the output budgets, 0.5 MiB per channel instead of 3 MiB.
        channel_buffer_size: 16,
        ..Default::default()
    };
    let verdict = Arc::new(Mutex::new(None));
    let info = ServerInfo::default();
    let handler = ClientHandler {
        hostname: hop.hostname.clone(),
        port: hop.port,
        policy: hop.policy.clone(),
        entries: Arc::new(entries),
        verdict: verdict.clone(),
        banner: info.banner.clone(),
    };
    let stream = Recording {
        // russh reads each packet with two reads (its length, then the rest): buffered,
        // the packets that arrived together cost one system call, not two each plus a
        // would-block read.
        inner: tokio::io::BufReader::with_capacity(READ_BUFFER, stream),
        seen: info.version.clone(),
        done: false,
    };
    match client::connect_stream(Arc::new(config), stream, handler).await {
        Ok(h) => Ok((h, info)),
        Err(e) => {
            let seen = verdict.lock().ok().and_then(|v| v.clone());
            Err(handshake_failure(hop, e, seen))
        }
    }
}

fn handshake_failure(hop: &Endpoint, e: russh::Error, seen: Option<KeyVerdict>) -> SshError {
    let (name, port) = hop.policy.key_name(&hop.hostname, hop.port);
    let name = known_hosts::host_key_name(name, port);
    match seen {
        Some(KeyVerdict::Unknown { fingerprint }) => SshError::at(
            SshErrorKind::HostKeyUnknown,
            hop,
            format!(
                "host key {fingerprint} for {name} is not in known_hosts ({}); check the fingerprint on the host (`ssh-keygen -lf /etc/ssh/ssh_host_ecdsa_key.pub` in the ESXi shell) and rerun with --accept-new",
                hop.policy
                    .known_hosts
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Some(KeyVerdict::Changed { fingerprint, at }) => SshError::at(
            SshErrorKind::HostKeyChanged,
            hop,
            format!(
                "HOST KEY CHANGED: {name} now presents {fingerprint}, which differs from the key at {at}; this can be a reinstalled host or a man-in-the-middle. Verify the new key out of band, then remove the old line (`ssh-keygen -R '{name}'`)"
            ),
        ),
        Some(KeyVerdict::Revoked { fingerprint, at }) => SshError::at(
            SshErrorKind::HostKeyChanged,
            hop,
            format!(
                "host key {fingerprint} is marked @revoked at {at}; refusing to connect"
            ),
        ),
        Some(KeyVerdict::LearnFailed { path, error }) => SshError::at(
            SshErrorKind::Config,
            hop,
            format!(
                "cannot record the new host key in {} ({error}); fix the file's permissions",
                path.display()
            ),
        ),
        Some(KeyVerdict::NowhereToLearn { fingerprint }) => SshError::at(
            SshErrorKind::HostKeyUnknown,
            hop,
            format!(
                "host key {fingerprint} for {name} is unknown, and UserKnownHostsFile is none in ssh config, so accept-new has nowhere to record it; set UserKnownHostsFile to a file"
            ),
        ),
        None => match e {
            russh::Error::NoCommonAlgo { kind, theirs, .. } => SshError::at(
                SshErrorKind::KeyExchange,
                hop,
                format!(
                    "no common {kind:?} algorithm with the server (it offers {}); pvrdma-doctor supports ESXi's FIPS lists (ECDH NIST, DH groups, AES-GCM/CTR, hmac-sha2)",
                    theirs.join(",")
                ),
            ),
            russh::Error::IO(io) => SshError::at(
                SshErrorKind::Unreachable,
                hop,
                format!(
                    "the connection broke during the SSH handshake ({io}); the server may limit connections (MaxStartups) or not be an SSH server"
                ),
            ),
            other => SshError::at(
                SshErrorKind::KeyExchange,
                hop,
                format!(
                    "SSH handshake failed ({other}); check that port {} is an SSH server", hop.port
                ),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nist_ecdh_comes_first_and_group_exchange_last() {
        let p = preferred_for(&[]);
        assert_eq!(p.kex.first(), Some(&kex::ECDH_SHA2_NISTP256));
        let gex = p.kex.iter().position(|k| *k == kex::DH_GEX_SHA256);
        let g14 = p.kex.iter().position(|k| *k == kex::DH_G14_SHA256);
        assert!(matches!((g14, gex), (Some(a), Some(b)) if a < b));
        assert_eq!(p.cipher.first(), Some(&cipher::AES_256_GCM));
        assert_eq!(
            p.key.first(),
            Some(&Algorithm::Ecdsa {
                curve: EcdsaCurve::NistP256
            })
        );
    }

    #[test]
    fn host_key_types_already_known_are_asked_for_first() {
        let p = preferred_for(&[Algorithm::Rsa { hash: None }]);
        assert_eq!(
            p.key.first(),
            Some(&Algorithm::Rsa {
                hash: Some(HashAlg::Sha512)
            })
        );
        // The other types stay available, each once.
        let ecdsa = Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP256,
        };
        assert_eq!(p.key.iter().filter(|a| **a == ecdsa).count(), 1);
    }

    #[test]
    fn the_dns_hint_names_the_config_in_use() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("fleet.conf");
        std::fs::write(&file, "Host esx01\n  HostName esx01.lab.invalid\n").unwrap();
        let local = pvrdma_ssh_config::LocalContext::current(home.path());
        let with_f = pvrdma_ssh_config::SshConfig::load(&file, local.clone()).unwrap();
        let default = pvrdma_ssh_config::SshConfig::empty(local);
        for (config, hint) in [
            (&with_f, format!("HostName in {} (the -F file)", file.display())),
            (&default, "HostName in ~/.ssh/config".to_string()),
        ] {
            let flags = crate::ssh::plan::Flags::default();
            let planner = crate::ssh::plan::Planner {
                config,
                home: home.path(),
                flags: &flags,
            };
            let spec = crate::hosts::parse_host_spec("esx01").unwrap();
            let route = planner.route(&spec).unwrap();
            let e = dns_failure(&route.target, "Name or service not known");
            assert!(e.message.contains(&hint), "{}", e.message);
        }
    }
}
