//! The simulated fleet: one russh server per host, and the client-side files that reach them.
use super::*;

/// Running simulated hosts plus the client-side files that reach them.
pub struct SimFleet {
    /// (host name, port) in scenario order.
    pub(super) hosts: Vec<(String, u16)>,
    pub(super) dir: tempfile::TempDir,
    seen: Arc<Mutex<Vec<String>>>,
    /// SSH connections accepted, per simulated host.
    logins: Arc<Mutex<BTreeMap<String, usize>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// What each live simulated host answers from; [`SimFleet::reload`] swaps it.
    cells: BTreeMap<String, HostCell>,
}

/// A new ECDSA P-256 key the demo's client logs in with, written to `dir/id_demo`: its
/// path and the public key the simulated hosts accept.
fn client_key(dir: &Path) -> anyhow::Result<(PathBuf, PublicKey)> {
    let client_key = PrivateKey::random(
        &mut rand::rng(),
        Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP256,
        },
    )
    .map_err(|e| anyhow::anyhow!("cannot generate the demo client key: {e}"))?;
    let key_path = dir.join("id_demo");
    let pem = client_key
        .to_openssh(LineEnding::LF)
        .map_err(|e| anyhow::anyhow!("cannot encode the demo client key: {e}"))?;
    write_private(&key_path, pem.as_bytes())?;
    Ok((key_path, client_key.public_key().clone()))
}

/// The simulated hosts bound to their ports, before any serves.
struct Bound {
    /// Each live host with its listener and host key.
    listeners: Vec<(HostCell, std::net::TcpListener, PrivateKey)>,
    cells: BTreeMap<String, HostCell>,
    /// (host name, port) of every host, down ones included, in scenario order.
    endpoints: Vec<(String, u16)>,
}

/// A port on 127.0.0.1 for every host, and the `ssh_config` and `known_hosts` in `dir`
/// that reach them. A host that is down gets its port closed again: connecting to it is
/// refused as by a real host.
fn bind_hosts(hosts: Vec<SimHost>, dir: &Path, key_path: &Path) -> anyhow::Result<Bound> {
    let mut bound = Bound {
        listeners: Vec::new(),
        cells: BTreeMap::new(),
        endpoints: Vec::new(),
    };
    let mut known_hosts = String::new();
    let mut ssh_config = String::new();
    for h in hosts {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot listen on 127.0.0.1")?;
        let port = listener.local_addr()?.port();
        ssh_config.push_str(&format!(
            "Host {}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile {}\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile none\n\n",
            h.name,
            key_path.display(),
            dir.join("known_hosts").display()
        ));
        bound.endpoints.push((h.name.clone(), port));
        if h.is_down() {
            // Dropping the listener closes the port: connecting gets a real refusal.
            drop(listener);
            continue;
        }
        let host_key = PrivateKey::random(
            &mut rand::rng(),
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
        let cell: HostCell = Arc::new(std::sync::RwLock::new(Arc::new(h)));
        bound.cells.insert(current(&cell).name.clone(), cell.clone());
        bound.listeners.push((cell, listener, host_key));
    }
    std::fs::write(dir.join("known_hosts"), known_hosts)?;
    std::fs::write(dir.join("ssh_config"), ssh_config)?;
    Ok(bound)
}

/// Serves every listener with the server `server_for` makes for its host, on a runtime
/// thread of its own; returns once all of them accept, with the sender that stops them
/// and the thread to join.
fn serve(
    listeners: Vec<(HostCell, std::net::TcpListener, PrivateKey)>,
    server_for: impl Fn(HostCell) -> SimServer + Send + 'static,
) -> anyhow::Result<(tokio::sync::oneshot::Sender<()>, std::thread::JoinHandle<()>)> {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
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
                    let mut server = server_for(host);
                    tasks.push(tokio::spawn(async move { server.accept_loop(config, listener).await }));
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
    Ok((tx, thread))
}

/// A simulated host's current files, shared by its server and sessions.
pub(super) type HostCell = Arc<std::sync::RwLock<Arc<SimHost>>>;

/// The host a cell holds now.
fn current(cell: &HostCell) -> Arc<SimHost> {
    match cell.read() {
        Ok(h) => h.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

impl SimFleet {
    /// Starts one server per live host on its own runtime thread (so the client side can
    /// run its own runtime, as in a real run).
    pub fn start(hosts: Vec<SimHost>, latency: Duration) -> anyhow::Result<SimFleet> {
        let dir = tempfile::Builder::new()
            .prefix("pvrdma-doctor-demo-")
            .tempdir()
            .context("cannot create a temporary directory for the demo")?;
        let (key_path, authorized) = client_key(dir.path())?;
        let net = Arc::new(crate::demo::simnet::SimNet::new(&hosts));
        let bound = bind_hosts(hosts, dir.path(), &key_path)?;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let logins: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
        let (seen_srv, logins_srv) = (seen.clone(), logins.clone());
        let server_for = move |host: HostCell| SimServer {
            host,
            net: net.clone(),
            latency,
            authorized: authorized.clone(),
            seen: seen_srv.clone(),
            logins: logins_srv.clone(),
        };
        let (shutdown, thread) = serve(bound.listeners, server_for)?;
        Ok(SimFleet {
            hosts: bound.endpoints,
            dir,
            seen,
            logins,
            shutdown: Some(shutdown),
            thread: Some(thread),
            cells: bound.cells,
        })
    }

    /// Reads the scenario directory again: from now on each new connection to a simulated
    /// host answers from its new files (a connection already open keeps the files it
    /// began with); see [`Reloader`].
    /// Returns the hosts of the directory left out.
    pub fn reload(&self, dir: &Path) -> anyhow::Result<Vec<String>> {
        self.reloader(dir).reload()
    }

    /// A handle that reloads `dir` into the running hosts, for a server that outlives
    /// this borrow (the exporter reloads before every probe).
    pub fn reloader(&self, dir: &Path) -> Reloader {
        Reloader {
            dir: dir.to_path_buf(),
            cells: self.cells.clone(),
            hosts: self.host_names(),
            last_warning: Mutex::new(None),
        }
    }

    /// The ssh_config that maps each simulated host name to its port.
    pub fn ssh_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// The simulated hosts' names, in scenario order (a closed port's included).
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Every command line the simulated hosts received, in arrival order.
    pub fn commands_seen(&self) -> Vec<String> {
        self.seen.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Forgets the command lines received so far (a long `watch` would keep them all).
    pub fn forget_commands(&self) {
        if let Ok(mut seen) = self.seen.lock() {
            *seen = Vec::new();
        }
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
            ssh_options: pvrdma_ssh_config::CommandLineOptions::default(),
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

/// Reads a scenario directory again into running simulated hosts. A host whose new files
/// are only `host-error.json` drops every new connection before the SSH banner (its SSH is
/// broken); hosts the directory adds, and hosts whose port was closed at start, are not
/// started: the set of listening ports stays as it began.
pub struct Reloader {
    dir: PathBuf,
    cells: BTreeMap<String, HostCell>,
    hosts: Vec<String>,
    last_warning: Mutex<Option<String>>,
}

impl Reloader {
    /// Swaps every listening host's files for the directory's. Returns the hosts of the
    /// directory that cannot answer: not simulated, or closed at start and now given
    /// answers.
    pub fn reload(&self) -> anyhow::Result<Vec<String>> {
        let mut left_out = Vec::new();
        for host in load_scenario(Some(&self.dir))? {
            match self.cells.get(&host.name) {
                Some(cell) => {
                    let mut slot = match cell.write() {
                        Ok(g) => g,
                        Err(poisoned) => poisoned.into_inner(),
                    };
                    *slot = Arc::new(host);
                }
                // Closed at start and still down: it answers as its files say.
                None if self.hosts.contains(&host.name) && host.is_down() => {}
                None => left_out.push(host.name),
            }
        }
        Ok(left_out)
    }

    /// [`Reloader::reload`], saying on stderr what went wrong only when it differs from
    /// what it said last time (a server reloads before every probe).
    pub fn reload_and_tell(&self) {
        let warning = match self.reload() {
            Ok(left_out) if left_out.is_empty() => None,
            Ok(left_out) => Some(format!(
                "{} not simulated: only the hosts listening since the start answer",
                pvrdma_nodeset::fold(&left_out)
            )),
            Err(e) => Some(format!(
                "cannot read the scenario {} again ({e:#}); the hosts keep their previous answers",
                self.dir.display()
            )),
        };
        let mut last = match self.last_warning.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if *last != warning {
            if let Some(w) = &warning {
                eprintln!("pvrdma-doctor: demo: {w}");
            }
            *last = warning;
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

pub(super) fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
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

/// ESXi 8.0.2's server lists (its effective sshd configuration, as a public deployment log
/// of a real host shows it): NIST ECDH and DH groups, AES, hmac-sha2.
pub(super) fn esxi_like_config(host_key: PrivateKey) -> server::Config {
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
pub(super) const DEMO_PASSWORD: &str = "demo";

pub(super) struct SimServer {
    host: HostCell,
    net: Arc<crate::demo::simnet::SimNet>,
    latency: Duration,
    authorized: PublicKey,
    seen: Arc<Mutex<Vec<String>>>,
    logins: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl SimServer {
    /// Accepts connections until aborted. While the host's current files say it is down
    /// (a reloaded scenario), each connection is closed before the SSH banner, as a host
    /// whose SSH service died does.
    async fn accept_loop(&mut self, config: Arc<server::Config>, listener: tokio::net::TcpListener) {
        while let Ok((socket, _peer)) = listener.accept().await {
            // The files this connection answers from, read once: the down check and the
            // answers agree even when a reload comes in between.
            let host = current(&self.host);
            if host.is_down() {
                drop(socket);
                continue;
            }
            let _ = socket.set_nodelay(true);
            let handler = self.session(host);
            let config = config.clone();
            tokio::spawn(async move {
                if let Ok(session) = server::run_stream(config, socket, handler).await {
                    let _ = session.await;
                }
            });
        }
    }
}

impl SimServer {
    /// A session answering from `host`'s files as they were when it was accepted: one
    /// connection (one collection) answers from one set of files, so a scenario edited
    /// while a collection is under way is seen by the next connection, not half of it by
    /// this one. (A reload between two writes of an edit still sees one of them.)
    fn session(&mut self, host: Arc<SimHost>) -> SimSession {
        if let Ok(mut m) = self.logins.lock() {
            *m.entry(host.name.clone()).or_default() += 1;
        }
        SimSession {
            host,
            net: self.net.clone(),
            latency: self.latency,
            authorized: self.authorized.clone(),
            seen: self.seen.clone(),
        }
    }
}

pub(super) struct SimSession {
    host: Arc<SimHost>,
    net: Arc<crate::demo::simnet::SimNet>,
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
        let host = &self.host;
        let (stdout, stderr, code) = self
            .net
            .answer(&host.name, &command)
            .unwrap_or_else(|| host.answer(&command));
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
