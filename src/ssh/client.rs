//! Opening an authenticated SSH connection to one ESXi host (possibly through ProxyJump
//! hops), with the algorithm lists, host-key policy and authentication order that work
//! against ESXi's FIPS-mode OpenSSH.
//!
//! Every way this can go wrong ends as a [`Failure`] whose message names the host and says
//! what to do, because the admin reading the report is not looking at a debug log.
use crate::collect::{ErrorKind, Failure};
use crate::ssh::known_hosts::{self, HostKeyStatus};
use russh::client::{self, AuthResult, Handle, KeyboardInteractiveAuthResponse};
use russh::keys::agent::client::AgentClient;
use russh::keys::{Algorithm, EcdsaCurve, HashAlg, PrivateKeyWithHashAlg, PublicKeyOrCertificate};
use russh::{cipher, kex, mac, MethodKind, Preferred};
use secrecy::{ExposeSecret, SecretString};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long listing the ssh-agent's keys may take; a live agent answers in milliseconds.
const AGENT_TIMEOUT: Duration = Duration::from_secs(3);

/// ESXi 8 offers only NIST ECDH, the DH groups and group-exchange. NIST first so a
/// handshake never falls to group-exchange, which russh computes slowly (seconds).
pub const KEX_ORDER: &[kex::Name] = &[
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
pub const CIPHER_ORDER: &[cipher::Name] = &[
    cipher::AES_256_GCM,
    cipher::AES_128_GCM,
    cipher::AES_256_CTR,
    cipher::AES_192_CTR,
    cipher::AES_128_CTR,
    cipher::CHACHA20_POLY1305,
];

/// ESXi offers no etm MACs; they stay acceptable for other servers.
pub const MAC_ORDER: &[mac::Name] = &[
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
pub fn preferred_for(known: &[Algorithm]) -> Preferred {
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

/// How host keys are judged.
#[derive(Debug, Clone)]
pub struct HostKeyPolicy {
    /// Files to check, in order (UserKnownHostsFile list, then the global ones).
    pub known_hosts: Vec<PathBuf>,
    /// Where `--accept-new` records a new key (the first user file).
    pub learn_to: Option<PathBuf>,
    pub accept_new: bool,
    /// When `accept_new` comes from ssh_config (`StrictHostKeyChecking accept-new/no`)
    /// rather than `--accept-new`: the `file:line`, so the run can warn about it.
    pub accept_new_from_config: Option<String>,
    /// `--insecure-skip-host-key-check`: accept anything. Never the default.
    pub insecure: bool,
    /// ssh_config `HostKeyAlias`: keys are looked up and recorded under this name, with
    /// no `[...]:port` decoration, as ssh does.
    pub host_key_alias: Option<String>,
}

impl HostKeyPolicy {
    /// The (name, port) known_hosts entries are matched against for a server.
    pub fn key_name<'a>(&'a self, hostname: &'a str, port: u16) -> (&'a str, u16) {
        match &self.host_key_alias {
            Some(alias) => (alias.as_str(), 22),
            None => (hostname, port),
        }
    }
}

/// One SSH server to log in to.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// How messages name it (`esx01:22`).
    pub label: String,
    /// Address to connect to (after ssh_config `HostName`).
    pub hostname: String,
    pub port: u16,
    pub user: String,
    /// Private keys to try, in order, after the agent.
    pub identity_files: Vec<PathBuf>,
    /// `IdentitiesOnly`: agent keys are offered only when they are one of `identity_files`
    /// (keeps a full agent from using up the server's MaxAuthTries).
    pub identities_only: bool,
    pub policy: HostKeyPolicy,
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
pub struct ClientHandler {
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
                let learned =
                    tokio::task::spawn_blocking(move || known_hosts::learn(&learn_path, &name, port, &key)).await;
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

/// Credentials shared by all hosts of a run.
/// `Debug` shows the password as redacted (secrecy).
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// Try keys from `SSH_AUTH_SOCK` first.
    pub use_agent: bool,
    /// Answer for keyboard-interactive / password.
    pub password: Option<SecretString>,
}

/// An authenticated connection; jump-host connections are kept alive with it.
pub struct Connection {
    pub handle: Handle<ClientHandler>,
    pub banner: Option<String>,
    _jumps: Vec<Handle<ClientHandler>>,
}

impl Connection {
    /// Closes the connection politely; errors do not matter any more at this point.
    pub async fn close(self) {
        let _ = self.handle.disconnect(russh::Disconnect::ByApplication, "", "en").await;
        for j in self._jumps.into_iter().rev() {
            let _ = j.disconnect(russh::Disconnect::ByApplication, "", "en").await;
        }
    }
}

/// Connects to `target` through `jumps` (in order) and authenticates on each.
/// The caller bounds this with `--connect-timeout`.
pub async fn connect(jumps: &[Endpoint], target: &Endpoint, creds: &Credentials) -> Result<Connection, Failure> {
    let mut handles: Vec<Handle<ClientHandler>> = Vec::new();
    let mut prev: Option<&Endpoint> = None;
    let mut last_banner = None;
    for hop in jumps.iter().chain(std::iter::once(target)) {
        let handle = match (handles.last(), prev) {
            (None, _) => {
                let addrs = resolve(hop).await?;
                let tcp = tcp_connect(hop, &addrs).await?;
                handshake(hop, tcp).await?
            }
            (Some(via), via_ep) => {
                let ch = via
                    .channel_open_direct_tcpip(hop.hostname.clone(), u32::from(hop.port), "127.0.0.1", 0)
                    .await
                    .map_err(|e| {
                        let via_label = via_ep.map(|v| v.label.as_str()).unwrap_or("jump host");
                        Failure::new(
                            ErrorKind::Unreachable,
                            format!(
                                "{}: the jump host {via_label} could not open a connection to it ({e}); check that {via_label} can reach {}:{} and allows TCP forwarding",
                                hop.label, hop.hostname, hop.port
                            ),
                        )
                    })?;
                handshake(hop, ch.into_stream()).await?
            }
        };
        let (mut handle, (_, banner)) = handle;
        // The password is the ESXi hosts' password: a jump host (often run by someone
        // else) must never receive it, so hops log in with the agent and keys only.
        let is_target = std::ptr::eq(hop, target);
        let hop_creds = if is_target {
            Cow::Borrowed(creds)
        } else {
            Cow::Owned(Credentials {
                use_agent: creds.use_agent,
                password: None,
            })
        };
        authenticate(hop, &mut handle, &hop_creds, is_target).await?;
        last_banner = banner.lock().ok().and_then(|b| b.clone());
        handles.push(handle);
        prev = Some(hop);
    }
    let handle = handles
        .pop()
        .ok_or_else(|| Failure::new(ErrorKind::Internal, format!("{}: no connection was made", target.label)))?;
    Ok(Connection {
        handle,
        banner: last_banner,
        _jumps: handles,
    })
}

async fn resolve(hop: &Endpoint) -> Result<Vec<std::net::SocketAddr>, Failure> {
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

fn dns_failure(hop: &Endpoint, why: &str) -> Failure {
    Failure::new(
        ErrorKind::Dns,
        format!(
            "{}: cannot resolve {:?} ({why}); check the host name, or map it with HostName in ~/.ssh/config",
            hop.label, hop.hostname
        ),
    )
}

async fn tcp_connect(hop: &Endpoint, addrs: &[std::net::SocketAddr]) -> Result<tokio::net::TcpStream, Failure> {
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
    Err(Failure::new(
        ErrorKind::Unreachable,
        format!(
            "{}: cannot connect to {addr} ({e}); check that the host is up and that SSH is enabled (ESXi: Host > Actions > Services > Enable Secure Shell)",
            hop.label
        ),
    ))
}

type Shared = (Arc<Mutex<Option<KeyVerdict>>>, Arc<Mutex<Option<String>>>);

async fn handshake<S>(hop: &Endpoint, stream: S) -> Result<(Handle<ClientHandler>, Shared), Failure>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
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
    let banner = Arc::new(Mutex::new(None));
    let handler = ClientHandler {
        hostname: hop.hostname.clone(),
        port: hop.port,
        policy: hop.policy.clone(),
        entries: Arc::new(entries),
        verdict: verdict.clone(),
        banner: banner.clone(),
    };
    match client::connect_stream(Arc::new(config), stream, handler).await {
        Ok(h) => Ok((h, (verdict, banner))),
        Err(e) => {
            let seen = verdict.lock().ok().and_then(|v| v.clone());
            Err(handshake_failure(hop, e, seen))
        }
    }
}

fn handshake_failure(hop: &Endpoint, e: russh::Error, seen: Option<KeyVerdict>) -> Failure {
    let (name, port) = hop.policy.key_name(&hop.hostname, hop.port);
    let name = known_hosts::host_key_name(name, port);
    match seen {
        Some(KeyVerdict::Unknown { fingerprint }) => Failure::new(
            ErrorKind::HostKeyUnknown,
            format!(
                "{}: host key {fingerprint} for {name} is not in known_hosts ({}); check the fingerprint on the host (`ssh-keygen -lf /etc/ssh/ssh_host_ecdsa_key.pub` in the ESXi shell) and rerun with --accept-new",
                hop.label,
                hop.policy
                    .known_hosts
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Some(KeyVerdict::Changed { fingerprint, at }) => Failure::new(
            ErrorKind::HostKeyChanged,
            format!(
                "{}: HOST KEY CHANGED: {name} now presents {fingerprint}, which differs from the key at {at}; this can be a reinstalled host or a man-in-the-middle. Verify the new key out of band, then remove the old line (`ssh-keygen -R '{name}'`)",
                hop.label
            ),
        ),
        Some(KeyVerdict::Revoked { fingerprint, at }) => Failure::new(
            ErrorKind::HostKeyChanged,
            format!(
                "{}: host key {fingerprint} is marked @revoked at {at}; refusing to connect",
                hop.label
            ),
        ),
        Some(KeyVerdict::LearnFailed { path, error }) => Failure::new(
            ErrorKind::Config,
            format!(
                "{}: cannot record the new host key in {} ({error}); fix the file's permissions",
                hop.label,
                path.display()
            ),
        ),
        Some(KeyVerdict::NowhereToLearn { fingerprint }) => Failure::new(
            ErrorKind::HostKeyUnknown,
            format!(
                "{}: host key {fingerprint} for {name} is unknown, and UserKnownHostsFile is none in ssh config, so accept-new has nowhere to record it; set UserKnownHostsFile to a file",
                hop.label
            ),
        ),
        None => match e {
            russh::Error::NoCommonAlgo { kind, theirs, .. } => Failure::new(
                ErrorKind::KeyExchange,
                format!(
                    "{}: no common {kind:?} algorithm with the server (it offers {}); pvrdma-doctor supports ESXi's FIPS lists (ECDH NIST, DH groups, AES-GCM/CTR, hmac-sha2)",
                    hop.label,
                    theirs.join(",")
                ),
            ),
            russh::Error::IO(io) => Failure::new(
                ErrorKind::Unreachable,
                format!(
                    "{}: the connection broke during the SSH handshake ({io}); the server may limit connections (MaxStartups) or not be an SSH server",
                    hop.label
                ),
            ),
            other => Failure::new(
                ErrorKind::KeyExchange,
                format!(
                    "{}: SSH handshake failed ({other}); check that port {} is an SSH server",
                    hop.label, hop.port
                ),
            ),
        },
    }
}

/// Tries, as OpenSSH does: agent keys, identity files, then the password through
/// keyboard-interactive (ESXi's PAM path), then the `password` method.
async fn authenticate(
    hop: &Endpoint,
    handle: &mut Handle<ClientHandler>,
    creds: &Credentials,
    is_target: bool,
) -> Result<(), Failure> {
    let user = hop.user.clone();
    let mut notes: Vec<String> = Vec::new();
    // `None` until the server has told us; OpenSSH also starts by simply trying.
    let mut remaining: Option<Vec<MethodKind>> = None;
    let allows = |r: &Option<Vec<MethodKind>>, m: MethodKind| r.as_ref().is_none_or(|v| v.contains(&m));
    let mut tried_keys: Vec<russh::keys::PublicKey> = Vec::new();
    let mut rsa_hash: Option<Option<HashAlg>> = None;

    if creds.use_agent && std::env::var_os("SSH_AUTH_SOCK").is_some() {
        // A stale SSH_AUTH_SOCK whose listener never answers must not use up the whole
        // connect timeout and hide that the keys on disk would have worked.
        let listed = tokio::time::timeout(AGENT_TIMEOUT, async {
            let mut agent = AgentClient::connect_env()
                .await
                .map_err(|e| format!("ssh-agent unreachable ({e})"))?;
            let ids = agent
                .request_identities()
                .await
                .map_err(|e| format!("ssh-agent did not list keys ({e})"))?;
            Ok::<_, String>((agent, ids))
        })
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "ssh-agent did not answer within {}s (SSH_AUTH_SOCK may be stale)",
                AGENT_TIMEOUT.as_secs()
            ))
        });
        match listed {
            Ok((mut agent, ids)) => {
                let wanted = configured_public_keys(&hop.identity_files);
                for id in ids {
                    if !allows(&remaining, MethodKind::PublicKey) {
                        break;
                    }
                    let key = id.public_key().into_owned();
                    if hop.identities_only && !wanted.iter().any(|w| w.key_data() == key.key_data()) {
                        continue;
                    }
                    let hash = if key.algorithm().is_rsa() {
                        rsa_hash_for(handle, &mut rsa_hash).await
                    } else {
                        None
                    };
                    match handle
                        .authenticate_publickey_with(&user, key.clone(), hash, &mut agent)
                        .await
                    {
                        Ok(AuthResult::Success) => return Ok(()),
                        Ok(AuthResult::Failure { remaining_methods, .. }) => {
                            notes.push(format!(
                                "agent key {} refused{}",
                                known_hosts::fingerprint(&key),
                                ed25519_hint(&key)
                            ));
                            remaining = Some(remaining_methods.to_vec());
                        }
                        Err(e) => notes.push(format!("agent signing failed ({e})")),
                    }
                    tried_keys.push(key);
                }
            }
            Err(e) => notes.push(e),
        }
    }

    for path in &hop.identity_files {
        if !allows(&remaining, MethodKind::PublicKey) {
            break;
        }
        if !path.is_file() {
            continue;
        }
        let key = match russh::keys::load_secret_key(path, None) {
            Ok(k) => k,
            Err(e) => {
                notes.push(format!(
                    "{} not usable ({e}; passphrase-protected keys must be loaded into ssh-agent)",
                    path.display()
                ));
                continue;
            }
        };
        let public = key.public_key().clone();
        if tried_keys.iter().any(|k| k.key_data() == public.key_data()) {
            continue;
        }
        let hash = if key.algorithm().is_rsa() {
            rsa_hash_for(handle, &mut rsa_hash).await
        } else {
            None
        };
        match handle
            .authenticate_publickey(&user, PrivateKeyWithHashAlg::new(Arc::new(key), hash))
            .await
        {
            Ok(AuthResult::Success) => return Ok(()),
            Ok(AuthResult::Failure { remaining_methods, .. }) => {
                notes.push(format!("{} refused{}", path.display(), ed25519_hint(&public)));
                remaining = Some(remaining_methods.to_vec());
            }
            Err(e) => return Err(broken_during_auth(hop, e)),
        }
        tried_keys.push(public);
    }

    if let Some(password) = &creds.password {
        if allows(&remaining, MethodKind::KeyboardInteractive) {
            match keyboard_interactive(handle, &user, password).await {
                Ok(KbdOutcome::Success) => return Ok(()),
                Ok(KbdOutcome::Refused(r)) => {
                    notes.push("password refused (keyboard-interactive)".into());
                    remaining = Some(r);
                }
                Ok(KbdOutcome::NotAPasswordPrompt(prompt)) => {
                    notes.push(format!(
                        "the server asked {prompt:?}, which is not a password prompt; pvrdma-doctor answers only password prompts (use a key for hosts with two-factor login)"
                    ));
                    // The exchange was abandoned mid-way: nothing else can follow on it.
                    remaining = Some(Vec::new());
                }
                Err(e) => return Err(broken_during_auth(hop, e)),
            }
        }
        if remaining.as_ref().is_some_and(|r| r.contains(&MethodKind::Password)) {
            match handle.authenticate_password(&user, password.expose_secret()).await {
                Ok(AuthResult::Success) => return Ok(()),
                Ok(AuthResult::Failure { .. }) => notes.push("password refused".into()),
                Err(e) => return Err(broken_during_auth(hop, e)),
            }
        } else if remaining
            .as_ref()
            .is_some_and(|r| !r.contains(&MethodKind::KeyboardInteractive))
        {
            notes.push("the server offers no password method (keyboard-interactive or password)".into());
        }
    } else if is_target {
        notes.push("no password given (set PVRDMA_DOCTOR_PASSWORD or use --ask-password)".into());
    } else {
        notes.push("jump hosts are logged in to with keys or the agent only, never with the ESXi password".into());
    }
    if tried_keys.is_empty() && !notes.iter().any(|n| n.contains("not usable")) {
        notes.insert(
            0,
            "no key found (agent, -i, IdentityFile, ~/.ssh/id_ecdsa, id_rsa, id_ed25519)".into(),
        );
    }
    Err(Failure::new(
        ErrorKind::Auth,
        format!(
            "{}: authentication as {user:?} failed: {}; put an RSA or ECDSA public key in /etc/ssh/keys-{user}/authorized_keys on the host, or give the password (if both are right, the host may be in lockdown mode: add {user:?} to its Exception Users)",
            hop.label,
            notes.join("; ")
        ),
    ))
}

/// The public halves (`<key>.pub`) of the configured identity files that have one.
fn configured_public_keys(files: &[PathBuf]) -> Vec<russh::keys::PublicKey> {
    files
        .iter()
        .filter_map(|p| {
            let mut pub_path = p.clone().into_os_string();
            pub_path.push(".pub");
            std::fs::read_to_string(pub_path).ok()
        })
        .filter_map(|text| russh::keys::PublicKey::from_openssh(text.trim()).ok())
        .collect()
}

async fn rsa_hash_for(handle: &Handle<ClientHandler>, cache: &mut Option<Option<HashAlg>>) -> Option<HashAlg> {
    if let Some(h) = cache {
        return *h;
    }
    // Old servers without server-sig-algs get SHA-256, which every ESXi 7+ accepts.
    let h = match handle.best_supported_rsa_hash().await {
        Ok(Some(h)) => h,
        _ => Some(HashAlg::Sha256),
    };
    *cache = Some(h);
    h
}

fn ed25519_hint(key: &russh::keys::PublicKey) -> &'static str {
    if key.algorithm() == Algorithm::Ed25519 {
        " (ESXi in FIPS mode refuses ed25519 keys; use RSA or ECDSA)"
    } else {
        ""
    }
}

fn broken_during_auth(hop: &Endpoint, e: russh::Error) -> Failure {
    Failure::new(
        ErrorKind::Auth,
        format!("{}: the connection broke during authentication ({e})", hop.label),
    )
}

/// How a keyboard-interactive exchange ended.
enum KbdOutcome {
    Success,
    /// Refused, with what the server still allows.
    Refused(Vec<MethodKind>),
    /// A hidden prompt that is not a password prompt (an OTP, a verification code): the
    /// ESXi password must not be typed into it, so the exchange stops there.
    NotAPasswordPrompt(String),
}

/// True for a prompt that asks for the password (ESXi's PAM asks "Password: ").
fn is_password_prompt(prompt: &str) -> bool {
    prompt.to_ascii_lowercase().contains("password")
}

/// The answers to one info request: the password for hidden password prompts, nothing for
/// echoed ones (informational); `Err(prompt)` for a hidden prompt that is not a password.
fn answers_for<'a>(
    prompts: impl IntoIterator<Item = (&'a str, bool)>,
    password: &SecretString,
) -> Result<Vec<String>, String> {
    prompts
        .into_iter()
        .map(|(prompt, echo)| {
            if echo {
                Ok(String::new())
            } else if is_password_prompt(prompt) {
                Ok(password.expose_secret().to_string())
            } else {
                Err(prompt.to_string())
            }
        })
        .collect()
}

/// Answers the server's password prompts with the password, and nothing else.
async fn keyboard_interactive(
    handle: &mut Handle<ClientHandler>,
    user: &str,
    password: &SecretString,
) -> Result<KbdOutcome, russh::Error> {
    let mut reply = handle
        .authenticate_keyboard_interactive_start(user, None::<String>)
        .await?;
    // PAM may ask more than once (e.g. an empty info round); a server that keeps asking
    // after this many rounds is not going to accept the password.
    for _ in 0..6 {
        match reply {
            KeyboardInteractiveAuthResponse::Success => return Ok(KbdOutcome::Success),
            KeyboardInteractiveAuthResponse::Failure { remaining_methods, .. } => {
                return Ok(KbdOutcome::Refused(remaining_methods.to_vec()))
            }
            KeyboardInteractiveAuthResponse::InfoRequest { prompts, .. } => {
                let answers = match answers_for(prompts.iter().map(|p| (p.prompt.as_str(), p.echo)), password) {
                    Ok(a) => a,
                    Err(prompt) => return Ok(KbdOutcome::NotAPasswordPrompt(prompt)),
                };
                reply = handle.authenticate_keyboard_interactive_respond(answers).await?;
            }
        }
    }
    Ok(KbdOutcome::Refused(Vec::new()))
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
    fn the_password_answers_only_password_prompts() {
        let pw = SecretString::from("hunter2-secret".to_string());
        assert_eq!(
            answers_for([("Password: ", false), ("Banner", true)], &pw),
            Ok(vec!["hunter2-secret".to_string(), String::new()])
        );
        assert_eq!(
            answers_for([("(root@esx01) PASSWORD for root:", false)], &pw),
            Ok(vec!["hunter2-secret".to_string()])
        );
        // A second factor must never receive the ESXi password.
        assert_eq!(
            answers_for([("Password: ", false), ("Verification code: ", false)], &pw),
            Err("Verification code: ".to_string())
        );
    }

    #[test]
    fn debug_output_never_shows_the_password() {
        let c = Credentials {
            use_agent: true,
            password: Some(SecretString::from("hunter2-secret".to_string())),
        };
        assert!(!format!("{c:?}").contains("hunter2-secret"));
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
}
