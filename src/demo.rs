//! `pvrdma-doctor demo`: a few simulated ESXi hosts, started in-process, diagnosed over
//! real SSH. It shows the main job on a fresh machine with no lab, and it is the harness
//! for the scaling benchmark.
//!
//! Each simulated host is a russh server on 127.0.0.1 with ESXi 8's algorithm lists, a
//! generated ECDSA host key, publickey and keyboard-interactive auth, that answers each
//! catalogue command line from `samples/<scenario>/<host>/` after an optional simulated
//! latency. A host directory holding only `host-error.json` is a closed port (a real
//! connection refused). The demo writes a temporary ssh_config (`Host esx01` → `HostName
//! 127.0.0.1`, `Port N`) and known_hosts, then goes through the same [`collect_live`] path
//! as a real run, so the report shows the scenario's host names.
use crate::catalogue::CATALOGUE;
use crate::collect::folder;
use crate::live::{collect_live, LiveOptions, LiveRun};
use anyhow::Context;
use russh::keys::ssh_key::LineEnding;
use russh::keys::{Algorithm, EcdsaCurve, PrivateKey, PublicKey};
use russh::server::{self, Auth, Msg, Server as _, Session};
use russh::{Channel, ChannelId, MethodKind, MethodSet};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

include!(concat!(env!("OUT_DIR"), "/demo_scenario.rs"));

/// What to simulate.
#[derive(Debug, Clone, Default)]
pub struct DemoOptions {
    /// A scenario directory on disk (`samples/<scenario>`); `None` = the embedded one.
    pub scenario: Option<PathBuf>,
    /// Simulate this many hosts, cycling through the scenario's hosts (`None` = as many
    /// as the scenario has).
    pub hosts: Option<usize>,
    /// Delay before each command answers, as a slow host would.
    pub latency: Duration,
}

/// One simulated host: its name and its capture files by file name.
#[derive(Debug, Clone)]
pub struct SimHost {
    pub name: String,
    pub files: BTreeMap<String, String>,
}

impl SimHost {
    /// A host whose capture is only a connection failure: its port is closed.
    pub fn is_down(&self) -> bool {
        folder::is_down(&|name| self.files.contains_key(name))
    }

    /// What the host prints for a command line: (stdout, stderr, exit status). Anything
    /// outside the catalogue gets busybox's answer for an unknown command.
    pub fn answer(&self, command: &str) -> (String, String, u32) {
        if let Some((id, keys)) = crate::catalogue::batch_keys(command) {
            return (self.batch_answer(id, &keys), String::new(), 0);
        }
        let Some(spec) = CATALOGUE.iter().find(|s| s.command == command) else {
            let word = command.split_whitespace().next().unwrap_or("");
            return (String::new(), format!("sh: {word}: not found\n"), 127);
        };
        let get =
            |name: &str| -> Result<Option<String>, std::convert::Infallible> { Ok(self.files.get(name).cloned()) };
        let Ok(files) = folder::read_output(spec.id, &get);
        match files {
            // A scenario's unreadable `.exit` answers 0, as the command most likely did.
            Some(files) => {
                let exit = files.exit_status().unwrap_or(0);
                (files.stdout, files.stderr, exit)
            }
            // Not captured in the scenario: the shape of a command ESXi does not know.
            None => (
                String::new(),
                format!("Error: Unknown command or namespace {command}\n"),
                1,
            ),
        }
    }
}

impl SimHost {
    /// What a concurrent batch prints for `keys`: the captured section of each key (empty
    /// when the capture has none), framed by its header and end marker as on a real host.
    fn batch_answer(&self, id: &str, keys: &[String]) -> String {
        let captured = self.files.get(&format!("{id}.txt")).map(String::as_str).unwrap_or("");
        let mut bodies: BTreeMap<&str, String> = BTreeMap::new();
        let mut current: Option<&str> = None;
        for line in captured.lines() {
            if let Some(key) = line.strip_prefix("==> ").and_then(|l| l.strip_suffix(" <==")) {
                current = Some(key.trim());
                bodies.entry(key.trim()).or_default();
            } else if line.starts_with("<== ") && line.ends_with(" ==>") {
                current = None;
            } else if let Some(body) = current.and_then(|k| bodies.get_mut(k)) {
                body.push_str(line);
                body.push('\n');
            }
        }
        let mut out = String::new();
        for key in keys {
            out.push_str(&format!("==> {key} <==\n"));
            // The batch keeps a query's output in a shell variable: trailing newlines go.
            let body = bodies.get(key.as_str()).map_or("", |b| b.trim_end_matches('\n'));
            if !body.is_empty() {
                out.push_str(body);
                out.push('\n');
            }
            out.push_str(&format!("<== {key} exit 0 ==>\n"));
        }
        out
    }
}

/// Reads a scenario from disk, or the embedded default.
pub fn load_scenario(dir: Option<&Path>) -> anyhow::Result<Vec<SimHost>> {
    load_scenario_from(dir, EMBEDDED_FILES)
}

/// Reads a scenario from disk, or the embedded one of `demo --probe` (hosts whose paths
/// are healthy, too small for jumbo frames, and cut off; see samples/probe-paths).
pub fn load_probe_scenario(dir: Option<&Path>) -> anyhow::Result<Vec<SimHost>> {
    load_scenario_from(dir, EMBEDDED_PROBE_FILES)
}

fn load_scenario_from(dir: Option<&Path>, embedded: &[(&str, &str, &str)]) -> anyhow::Result<Vec<SimHost>> {
    let mut hosts: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    match dir {
        None => {
            anyhow::ensure!(
                !embedded.is_empty(),
                "this build has no embedded demo scenario; pass --scenario samples/<scenario>"
            );
            for (host, file, content) in embedded {
                hosts
                    .entry((*host).to_string())
                    .or_default()
                    .insert((*file).to_string(), (*content).to_string());
            }
        }
        Some(root) => {
            let dirs = crate::collect::replay::host_dirs(root)
                .with_context(|| format!("cannot read scenario {}", root.display()))?;
            for (name, dir) in dirs {
                hosts.insert(name, crate::collect::replay::read_files(&dir)?);
            }
        }
    }
    anyhow::ensure!(
        !hosts.is_empty(),
        "the scenario holds no host directories (expected <scenario>/<host>/<command-id>.txt)"
    );
    Ok(hosts.into_iter().map(|(name, files)| SimHost { name, files }).collect())
}

/// Cycles the scenario's hosts to `n` hosts named `sim001`...; `None` keeps them as is.
pub fn scale_fleet(hosts: Vec<SimHost>, n: Option<usize>) -> Vec<SimHost> {
    let Some(n) = n else { return hosts };
    if hosts.is_empty() {
        return hosts;
    }
    let width = n.to_string().len().max(2);
    (0..n)
        .filter_map(|i| {
            hosts.get(i % hosts.len()).map(|h| {
                let mut files = h.files.clone();
                // Copies of a host must not share its vmknic addresses: two hosts with one
                // PVRDMA vmknic address cannot reach each other (vmknic-ipv4-unique).
                let round = i / hosts.len();
                if round > 0 {
                    if let Some(text) = files.get_mut(IPV4_FILE) {
                        *text = renumber_ipv4(text, round * hosts.len());
                    }
                }
                SimHost {
                    name: format!("sim{:0width$}", i + 1),
                    files,
                }
            })
        })
        .collect()
}

const IPV4_FILE: &str = "esxcli_network_ip_interface_ipv4_get.txt";

/// Moves the last octet of every IPv4 address in the `IPv4 Address` column of an
/// `ip interface ipv4 get` table up by `by` (wrapping within 1..=254), keeping the column
/// boundaries: a longer address takes spaces from the gap after it.
fn renumber_ipv4(text: &str, by: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let mut fields = line.split_whitespace();
        let (Some(_), Some(addr)) = (fields.next(), fields.next()) else {
            out.push_str(line);
            continue;
        };
        let parsed: Option<std::net::Ipv4Addr> = addr.parse().ok();
        let (Some(ip), true) = (parsed, n >= 2) else {
            out.push_str(line);
            continue;
        };
        let [a, b, c, d] = ip.octets();
        let last = (usize::from(d).saturating_sub(1) + by) % 254 + 1;
        let new = format!("{a}.{b}.{c}.{last}");
        let Some(at) = line.find(addr) else {
            out.push_str(line);
            continue;
        };
        let after = &line[at + addr.len()..];
        let grow = new.len().saturating_sub(addr.len());
        let spaces = after.len() - after.trim_start_matches(' ').len();
        if spaces < grow + 2 {
            out.push_str(line);
            continue;
        }
        out.push_str(&line[..at]);
        out.push_str(&new);
        out.push_str(&" ".repeat(addr.len() + spaces - new.len()));
        out.push_str(&after[spaces..]);
    }
    out
}

/// Running simulated hosts plus the client-side files that reach them.
pub struct SimFleet {
    /// (host name, port) in scenario order.
    pub hosts: Vec<(String, u16)>,
    dir: tempfile::TempDir,
    seen: Arc<Mutex<Vec<String>>>,
    /// SSH connections accepted, per simulated host.
    logins: Arc<Mutex<BTreeMap<String, usize>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SimFleet {
    /// Starts one server per live host on its own runtime thread (so the client side can
    /// run its own runtime, as in a real run).
    pub fn start(hosts: Vec<SimHost>, latency: Duration) -> anyhow::Result<SimFleet> {
        let dir = tempfile::Builder::new()
            .prefix("pvrdma-doctor-demo-")
            .tempdir()
            .context("cannot create a temporary directory for the demo")?;
        let mut rng = rand::rng();
        let client_key = PrivateKey::random(
            &mut rng,
            Algorithm::Ecdsa {
                curve: EcdsaCurve::NistP256,
            },
        )
        .map_err(|e| anyhow::anyhow!("cannot generate the demo client key: {e}"))?;
        let key_path = dir.path().join("id_demo");
        let pem = client_key
            .to_openssh(LineEnding::LF)
            .map_err(|e| anyhow::anyhow!("cannot encode the demo client key: {e}"))?;
        write_private(&key_path, pem.as_bytes())?;
        let authorized = client_key.public_key().clone();
        let net = Arc::new(crate::simnet::SimNet::new(&hosts));

        let mut listeners = Vec::new();
        let mut endpoints = Vec::new();
        let mut known_hosts = String::new();
        let mut ssh_config = String::new();
        for h in hosts {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot listen on 127.0.0.1")?;
            let port = listener.local_addr()?.port();
            ssh_config.push_str(&format!(
                "Host {}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile {}\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile none\n\n",
                h.name,
                key_path.display(),
                dir.path().join("known_hosts").display()
            ));
            endpoints.push((h.name.clone(), port));
            if h.is_down() {
                // Dropping the listener closes the port: connecting gets a real refusal.
                drop(listener);
                continue;
            }
            let host_key = PrivateKey::random(
                &mut rng,
                Algorithm::Ecdsa {
                    curve: EcdsaCurve::NistP256,
                },
            )
            .map_err(|e| anyhow::anyhow!("cannot generate a demo host key: {e}"))?;
            let public = host_key
                .public_key()
                .to_openssh()
                .map_err(|e| anyhow::anyhow!("cannot encode a demo host key: {e}"))?;
            known_hosts.push_str(&format!("[127.0.0.1]:{port} {public}\n"));
            listener.set_nonblocking(true)?;
            listeners.push((Arc::new(h), listener, host_key));
        }
        std::fs::write(dir.path().join("known_hosts"), known_hosts)?;
        std::fs::write(dir.path().join("ssh_config"), ssh_config)?;

        let seen = Arc::new(Mutex::new(Vec::new()));
        let logins: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
        let logins_srv = logins.clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
        let seen_srv = seen.clone();
        let thread = std::thread::Builder::new()
            .name("demo-esxi-hosts".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                rt.block_on(async move {
                    let mut tasks = Vec::new();
                    for (host, std_listener, host_key) in listeners {
                        let listener = match tokio::net::TcpListener::from_std(std_listener) {
                            Ok(l) => l,
                            Err(e) => {
                                let _ = ready_tx.send(Err(e.to_string()));
                                return;
                            }
                        };
                        let config = Arc::new(esxi_like_config(host_key));
                        let mut server = SimServer {
                            host,
                            net: net.clone(),
                            latency,
                            authorized: authorized.clone(),
                            seen: seen_srv.clone(),
                            logins: logins_srv.clone(),
                        };
                        tasks.push(tokio::spawn(async move {
                            let _ = server.run_on_socket(config, &listener).await;
                        }));
                    }
                    let _ = ready_tx.send(Ok(()));
                    let _ = rx.await;
                    for t in tasks {
                        t.abort();
                    }
                });
                rt.shutdown_timeout(Duration::from_millis(200));
            })
            .context("cannot start the demo server thread")?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => anyhow::bail!("demo hosts failed to start: {e}"),
            Err(_) => anyhow::bail!("demo hosts failed to start"),
        }
        Ok(SimFleet {
            hosts: endpoints,
            dir,
            seen,
            logins,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// The ssh_config that maps each simulated host name to its port.
    pub fn ssh_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// Every command line the simulated hosts received, in arrival order.
    pub fn commands_seen(&self) -> Vec<String> {
        self.seen.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// How many SSH connections each simulated host accepted.
    pub fn logins(&self) -> BTreeMap<String, usize> {
        self.logins.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// `LiveOptions` aimed at the whole fleet through the generated config.
    pub fn live_options(&self, base: LiveOptions) -> LiveOptions {
        LiveOptions {
            targets: self.hosts.iter().map(|(n, _)| n.clone()).collect(),
            hosts_file: None,
            ssh_config: Some(self.ssh_config()),
            ssh_options: crate::ssh::config::CommandLineOptions::default(),
            login_user: None,
            identity_files: Vec::new(),
            accept_new: false,
            insecure_skip_host_key_check: false,
            // The simulated hosts must never see the user's real agent or ~/.ssh keys.
            only_given_keys: true,
            ..base
        }
    }
}

impl Drop for SimFleet {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.write_all(bytes)?;
    Ok(())
}

/// ESXi 8.0.2's server lists (research file §16): NIST ECDH and DH groups, AES, hmac-sha2.
fn esxi_like_config(host_key: PrivateKey) -> server::Config {
    use russh::{cipher, kex, mac, Preferred};
    server::Config {
        keys: vec![host_key],
        methods: MethodSet::from(&[MethodKind::PublicKey, MethodKind::KeyboardInteractive][..]),
        // A demo has nothing to protect; real sshd's delay would only slow the bench.
        auth_rejection_time: Duration::from_millis(0),
        auth_rejection_time_initial: Some(Duration::from_millis(0)),
        inactivity_timeout: Some(Duration::from_secs(120)),
        nodelay: true,
        preferred: Preferred {
            kex: Cow::Borrowed(&[
                kex::ECDH_SHA2_NISTP256,
                kex::ECDH_SHA2_NISTP384,
                kex::ECDH_SHA2_NISTP521,
                kex::DH_GEX_SHA256,
                kex::DH_G16_SHA512,
                kex::DH_G18_SHA512,
                kex::DH_G14_SHA256,
                kex::EXTENSION_SUPPORT_AS_SERVER,
                kex::EXTENSION_OPENSSH_STRICT_KEX_AS_SERVER,
            ]),
            key: Cow::Owned(vec![
                Algorithm::Ecdsa {
                    curve: EcdsaCurve::NistP256,
                },
                Algorithm::Rsa {
                    hash: Some(russh::keys::HashAlg::Sha256),
                },
                Algorithm::Rsa {
                    hash: Some(russh::keys::HashAlg::Sha512),
                },
            ]),
            host_key_certificates: Cow::Borrowed(&[]),
            cipher: Cow::Borrowed(&[
                cipher::AES_256_GCM,
                cipher::AES_128_GCM,
                cipher::AES_256_CTR,
                cipher::AES_192_CTR,
                cipher::AES_128_CTR,
            ]),
            mac: Cow::Borrowed(&[mac::HMAC_SHA256, mac::HMAC_SHA512]),
            compression: Cow::Borrowed(&[russh::compression::NONE]),
        },
        ..Default::default()
    }
}

/// The demo's only password, for keyboard-interactive (key auth is what the demo uses).
const DEMO_PASSWORD: &str = "demo";

struct SimServer {
    host: Arc<SimHost>,
    net: Arc<crate::simnet::SimNet>,
    latency: Duration,
    authorized: PublicKey,
    seen: Arc<Mutex<Vec<String>>>,
    logins: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl server::Server for SimServer {
    type Handler = SimSession;
    fn new_client(&mut self, _peer: Option<std::net::SocketAddr>) -> SimSession {
        if let Ok(mut m) = self.logins.lock() {
            *m.entry(self.host.name.clone()).or_default() += 1;
        }
        SimSession {
            host: self.host.clone(),
            net: self.net.clone(),
            latency: self.latency,
            authorized: self.authorized.clone(),
            seen: self.seen.clone(),
        }
    }
}

struct SimSession {
    host: Arc<SimHost>,
    net: Arc<crate::simnet::SimNet>,
    latency: Duration,
    authorized: PublicKey,
    seen: Arc<Mutex<Vec<String>>>,
}

impl server::Handler for SimSession {
    type Error = russh::Error;

    async fn authentication_banner(&mut self) -> Result<Option<String>, Self::Error> {
        Ok(Some(format!(
            "VMware ESXi 8.0.2 (simulated host {} for pvrdma-doctor demo)\n",
            self.host.name
        )))
    }

    async fn auth_publickey(&mut self, _user: &str, key: server::VerifiedPublicKey<'_>) -> Result<Auth, Self::Error> {
        if key.public_key.key_data() == self.authorized.key_data() {
            Ok(Auth::Accept)
        } else {
            Ok(Auth::reject())
        }
    }

    async fn auth_keyboard_interactive<'a>(
        &'a mut self,
        _user: &str,
        _submethods: &str,
        response: Option<server::Response<'a>>,
    ) -> Result<Auth, Self::Error> {
        match response {
            None => Ok(Auth::Partial {
                name: Cow::Borrowed(""),
                instructions: Cow::Borrowed(""),
                prompts: Cow::Owned(vec![(Cow::Borrowed("Password: "), false)]),
            }),
            Some(mut r) => {
                let ok = r.next().is_some_and(|a| a.as_ref() == DEMO_PASSWORD.as_bytes());
                Ok(if ok { Auth::Accept } else { Auth::reject() })
            }
        }
    }

    async fn channel_open_session(
        &mut self,
        _channel: Channel<Msg>,
        reply: server::ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        reply.accept().await;
        Ok(())
    }

    async fn exec_request(
        &mut self,
        channel: ChannelId,
        data: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        let command = String::from_utf8_lossy(data).into_owned();
        if let Ok(mut s) = self.seen.lock() {
            s.push(command.clone());
        }
        session.channel_success(channel)?;
        let (stdout, stderr, code) = self
            .net
            .answer(&self.host.name, &command)
            .unwrap_or_else(|| self.host.answer(&command));
        let handle = session.handle();
        let latency = self.latency;
        tokio::spawn(async move {
            tokio::time::sleep(latency).await;
            if !stdout.is_empty() {
                let _ = handle.data(channel, stdout.into_bytes()).await;
            }
            if !stderr.is_empty() {
                let _ = handle.extended_data(channel, 1, stderr.into_bytes()).await;
            }
            let _ = handle.exit_status_request(channel, code).await;
            let _ = handle.eof(channel).await;
            let _ = handle.close(channel).await;
        });
        Ok(())
    }
}

/// Starts the simulated fleet and diagnoses it through [`collect_live`]. `live` supplies
/// the run's timeouts, parallelism and progress; its targets and SSH settings are
/// replaced by the demo's own.
pub fn run_demo(opts: &DemoOptions, live: LiveOptions) -> anyhow::Result<LiveRun> {
    let scenario = if live.probe.is_some() {
        load_probe_scenario(opts.scenario.as_deref())?
    } else {
        load_scenario(opts.scenario.as_deref())?
    };
    let hosts = scale_fleet(scenario, opts.hosts);
    let fleet = SimFleet::start(hosts, opts.latency)?;
    let requested = live.targets.clone();
    let mut live = fleet.live_options(live);
    if !requested.is_empty() {
        live.targets = requested;
    }
    collect_live(&live)
}

#[cfg(test)]
mod renumber_tests {
    use super::*;

    #[test]
    fn scaled_copies_get_their_own_vmknic_addresses_in_the_same_columns() {
        let text = "Name  IPv4 Address  IPv4 Netmask   IPv4 Broadcast  Address Type  Gateway   DHCP DNS\n----  ------------  -------------  --------------  ------------  --------  --------\nvmk0  10.0.0.11     255.255.255.0  10.0.0.255      STATIC        10.0.0.1     false\nvmk1  10.10.10.11   255.255.255.0  10.10.10.255    STATIC        0.0.0.0      false\n";
        let moved = renumber_ipv4(text, 100);
        let rows = pvrdma_parsers::parse_ip_interface_ipv4_get(&moved).expect("still a table");
        let addresses: Vec<_> = rows.iter().map(|r| r.address.clone().unwrap_or_default()).collect();
        assert_eq!(addresses, ["10.0.0.111", "10.10.10.111"]);
        assert_eq!(rows[1].netmask.as_deref(), Some("255.255.255.0"));
        let hosts = vec![SimHost {
            name: "esx01".into(),
            files: [(IPV4_FILE.to_string(), text.to_string())].into_iter().collect(),
        }];
        let fleet = scale_fleet(hosts, Some(3));
        let files: Vec<&String> = fleet.iter().filter_map(|h| h.files.get(IPV4_FILE)).collect();
        assert_eq!(files[0], text, "the first copy is the scenario itself");
        assert!(files[1].contains("10.10.10.12 ") && files[2].contains("10.10.10.13 "));
    }
}
